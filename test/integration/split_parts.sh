# TRACEPROF_MAX_FILE_MB=1: a window of several MB of JSON is split into
# numbered parts, each valid JSON below the cap with its own metadata, whose
# traceprof object says "part i of n", and together they hold exactly the
# events of the same run written unsplit.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_steps"
[ -x "$prog" ] || skip "$prog not built"

run() { # folder, extra variables...
	local dir=$1
	shift
	out=$(env TRACEPROF_SAMPLE_MS=0 TRACEPROF_BUFFER_EVENTS=1048576 TRACEPROF_FOLDER="$dir" "$@" \
		LD_PRELOAD="$TP_PRELOAD" "$prog" 4 2 12000)
	[ "$out" = done ] || die "program output '$out'"
}
run "$TP_TMP/split" TRACEPROF_MAX_FILE_MB=1
run "$TP_TMP/whole"
for mode in zstd gzip; do
	run "$TP_TMP/split_$mode" TRACEPROF_MAX_FILE_MB=1 TRACEPROF_COMPRESS=$mode
done
left=$(find "$TP_TMP" -name '.*tmp*' | head -5)
[ -z "$left" ] || die "temporary files left: $left"

"$PYTHON" - "$TP_TMP" <<'PY'
import glob, gzip, json, os, re, sys
from collections import Counter

tmp = sys.argv[1]
CAP = 1 << 20

def events(d):
    return Counter((e["ph"], e.get("cat"), e["name"]) for e in d["traceEvents"] if e["ph"] != "M")

whole = glob.glob(os.path.join(tmp, "whole", "*"))
assert len(whole) == 1, whole
with open(whole[0]) as f:
    w = json.load(f)
assert w["traceprof"]["part"] == 1 and w["traceprof"]["parts"] == 1, w["traceprof"]
want = events(w)
assert sum(want.values()) > 4 * 12000, sum(want.values())

def check(folder, opener):
    files = sorted(glob.glob(os.path.join(tmp, folder, "*")))
    assert len(files) >= 3, (folder, files)
    nums = []
    got = Counter()
    for path in files:
        m = re.search(r"\.part(\d+)\.json(\.zst|\.gz)?$", path)
        assert m, ("part file name", path)
        raw = opener(path)
        assert len(raw) <= CAP, (path, len(raw), "over the 1 MB cap")
        d = json.loads(raw)
        tp = d["traceprof"]
        nums.append(int(m.group(1)))
        assert tp["part"] == int(m.group(1)), (path, tp["part"])
        assert tp["parts"] == len(files), (path, tp["parts"], len(files))
        assert tp["events_dropped"] == 0, path
        # Each part is a trace of its own: metadata, header fields.
        names = {e["name"] for e in d["traceEvents"] if e["ph"] == "M"}
        assert {"process_name", "thread_name"} <= names, (path, names)
        assert "distributedInfo" in d and "baseTimeNanoseconds" in d, path
        got += events(d)
    assert sorted(nums) == list(range(1, len(files) + 1)), nums
    assert got == want, (folder, sum(got.values()), sum(want.values()), got - want, want - got)
    print(folder, len(files), "parts,", sum(got.values()), "events")

def plain(p):
    with open(p, "rb") as f:
        return f.read()

def zstd(p):
    import subprocess
    return subprocess.run(["zstd", "-q", "-d", "-c", p], check=True, capture_output=True).stdout

check("split", plain)
check("split_gzip", lambda p: gzip.open(p).read())
import shutil
if shutil.which("zstd"):
    check("split_zstd", zstd)
PY

# Drops in a split window: every part repeats the window's counts, and the
# warnings (the library's and `traceprof run`'s) count them once, naming the
# last part.  A ring of 8192 records and 4 threads of 300000 instants: the
# flush thread cannot keep up, and what it writes passes 1 MB.
"$BUILD/traceprof" run --folder "$TP_TMP/drops" --buffer-events 8192 --max-file-mb 1 -- \
	"$BUILD/test/prog_rel_account" burst 4 300000 >/dev/null 2>drops.err ||
	die "traceprof run failed: $(cat drops.err)"
"$PYTHON" - "$TP_TMP/drops" drops.err <<'PY'
import glob, json, re, sys
# In part order: by name, part10 would come before part2.
def part_no(f):
    m = re.search(r"\.part(\d+)\.json$", f)
    return int(m.group(1)) if m else 0
files = sorted(glob.glob(sys.argv[1] + "/*.json"), key=part_no)
tps = [json.load(open(f))["traceprof"] for f in files]
assert len(files) >= 2, ("want a split window", files)
dropped = tps[-1]["events_dropped"]
assert dropped > 0, "no drops: the test needs a ring the flush thread cannot keep up with"
assert all(t["parts"] == len(files) and t["events_dropped"] == dropped for t in tps), tps
err = open(sys.argv[2]).read()
lib = re.findall(r"traceprof: (\d+) events were dropped \(buffers full\) in (\S+);", err)
assert lib == [(str(dropped), files[-1])], (lib, files[-1], err)
run = re.findall(r"traceprof: (\d+) events were dropped \(buffers full\); raise --buffer", err)
assert run == [str(dropped)], (run, dropped, err)
print("drops of a split window counted once:", dropped, "over", len(files), "parts")
PY
