#!/usr/bin/env bash
# Issue 43 item 4: a decompression bomb of one huge name is refused quickly
# in bounded memory by every command that reads traces (traces/reader.py's
# limit, --max-value-mb).  1 GiB of a name in about 1 MB of .json.gz and of
# .json.zst (one compressed frame of 1 MiB of "a", repeated: both formats
# read concatenated members as one stream), and a .pftrace whose packet
# length says 1 TiB: `summary --from-events`, `merge` and `export --parquet`
# each fail with one `traceprof:` line naming the limit, within 60 s
# (seconds in practice; the old reader took minutes and 2 GB: it decoded the
# value again from its start after each 4 MiB chunk), at a peak resident set
# under 200 MiB (run-all's line shows this test's whole peak).  Raised with
# --max-value-mb, a name of 20 MiB is read.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
command -v zstd >/dev/null || skip "no zstd command"
py=$(python_where 'import pyarrow') || true

"$PYTHON" - <<'PY' || die "making the bombs failed"
import gzip, subprocess
mib = b"a" * (1 << 20)
head = b'{"baseTimeNanoseconds": 1700000000000000000, "traceEvents": [{"ph": "X", "name": "'
tail = b'", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}'
def zst(b):
    return subprocess.run(["zstd", "-q", "-19", "-c"], input=b, stdout=subprocess.PIPE,
                          check=True).stdout
for ext, comp in ((".json.gz", lambda b: gzip.compress(b, 9)), (".json.zst", zst)):
    one = comp(mib)
    with open("bomb" + ext, "wb") as f:
        f.write(comp(head))
        for _ in range(1024):
            f.write(one)
        f.write(comp(tail))
with open("ok.json.gz", "wb") as f:
    f.write(gzip.compress(head + b"a" * (20 << 20) + tail))
n, length = 1 << 40, bytearray()
while n >= 0x80:
    length.append((n & 0x7F) | 0x80)
    n >>= 7
length.append(n)
with open("bomb.pftrace", "wb") as f:
    f.write(bytes([1 << 3 | 2]) + bytes(length) + b"\0" * 4096)
PY
ls -l bomb.json.gz bomb.json.zst

# refused CMD...: the command fails within 60 s, under 200 MiB, with one
# `traceprof:` line saying the value is past the limit.
refused() {
	local rc=0 mib
	mib=$("$PYTHON" -c '
import resource, subprocess, sys
try:
    r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,
                       stderr=open("err.txt", "w"), timeout=60)
    rc = r.returncode
except subprocess.TimeoutExpired:
    rc = "timeout"
print(rc, int(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))' "$@") ||
		die "$*: the measuring failed"
	echo "$* -> exit ${mib% *}, peak ${mib#* } MiB: $(cat err.txt)"
	[ "${mib% *}" = 1 ] || die "$*: exit ${mib% *}, not 1 (refused): $(head -c 300 err.txt)"
	[ "${mib#* }" -lt 200 ] || die "$*: peak resident set ${mib#* } MiB (bounded: under 200)"
	[ "$(wc -l <err.txt)" = 1 ] || die "$*: not one line: $(head -c 300 err.txt)"
	grep -q '^traceprof: .*: a value at byte [0-9]* is larger than 16 MiB: not read .*--max-value-mb' err.txt ||
		die "$*: not the limit's message: $(cat err.txt)"
}
for f in bomb.json.gz bomb.json.zst; do
	refused "$PYTHON" "$T" summary --from-events $f
	refused "$PYTHON" "$T" merge -o merged.json $f
	[ -z "$py" ] || refused "$py" "$T" export --parquet out $f
done
refused "$PYTHON" "$T" summary bomb.pftrace
refused "$PYTHON" "$T" merge -o merged.pftrace bomb.pftrace

# The limit raised: read.
"$PYTHON" "$T" summary --from-events ok.json.gz >ok.out 2>&1 && die "a 20 MiB name read under a 16 MiB limit"
"$PYTHON" "$T" summary --from-events --max-value-mb 32 ok.json.gz >ok.out 2>&1 ||
	die "--max-value-mb 32 did not read a 20 MiB name: $(cat ok.out)"
grep -q "all events: 1 names, 1 calls" ok.out || die "the 20 MiB name's summary: $(tail -2 ok.out)"
# A bad limit: one line naming the option.
"$PYTHON" "$T" summary --max-value-mb 0 ok.json.gz >bad.out 2>&1 && die "--max-value-mb 0 accepted"
grep -q -- "--max-value-mb 0: give a size in MiB from 1 to" bad.out || die "--max-value-mb 0: $(cat bad.out)"
echo "PASS"
