# TRACEPROF_COMPRESS round trip: the same run written plain, zstd and gzip
# (and once more at a fast zstd level);
# the compressed files end in .zst / .gz, the real zstd -d / gzip -d tools
# decompress them, the JSON parses, the events match the plain run's, and no
# temporary file is left behind.
. "$TP_TOP/test/lib/common.sh"
command -v zstd >/dev/null || skip "no zstd tool"
command -v gzip >/dev/null || skip "no gzip tool"
prog="$BUILD/test/prog_steps"
[ -x "$prog" ] || skip "$prog not built"

for mode in none zstd gzip; do
	out=$(TRACEPROF_COMPRESS=$mode TRACEPROF_SAMPLE_MS=0 TRACEPROF_FOLDER="$TP_TMP/$mode" \
		TRACEPROF_BUFFER_EVENTS=1048576 traced "$prog" 6 2 200)
	[ "$out" = done ] || die "$mode: program output '$out'"
done

# No temporary files ('.NAME.tmp.PID.N') anywhere.
left=$(find "$TP_TMP" -name '.*tmp*' | head -5)
[ -z "$left" ] || die "temporary files left: $left"

n_plain=$(ls "$TP_TMP/none" | wc -l)
[ "$n_plain" = 1 ] || die "expected one plain file, got: $(ls "$TP_TMP/none")"
ls "$TP_TMP/none"/*.json >/dev/null || die "plain file does not end in .json"
zst=$(ls "$TP_TMP/zstd"/*.json.zst) || die "zstd: no file ending .json.zst: $(ls "$TP_TMP/zstd")"
gz=$(ls "$TP_TMP/gzip"/*.json.gz) || die "gzip: no file ending .json.gz: $(ls "$TP_TMP/gzip")"
[ "$(ls "$TP_TMP/zstd" | wc -l)" = 1 ] || die "zstd: extra files: $(ls "$TP_TMP/zstd")"
[ "$(ls "$TP_TMP/gzip" | wc -l)" = 1 ] || die "gzip: extra files: $(ls "$TP_TMP/gzip")"

# The real tools, with their integrity checks.
zstd -q -t "$zst" || die "zstd -t rejects $zst"
gzip -t "$gz" || die "gzip -t rejects $gz"
zstd -q -d "$zst" -o "$TP_TMP/from_zstd.json" || die "zstd -d failed"
gzip -dc "$gz" >"$TP_TMP/from_gzip.json" || die "gzip -d failed"

"$PYTHON" - "$TP_TMP"/none/*.json "$TP_TMP/from_zstd.json" "$TP_TMP/from_gzip.json" <<'PY'
import json, sys
from collections import Counter

def load(path):
    with open(path) as f:
        d = json.load(f)
    ev = d["traceEvents"]
    assert d["traceprof"]["events_dropped"] == 0, (path, "dropped events")
    # Timestamps differ between runs; names, phases and categories do not.
    return Counter((e["ph"], e.get("cat"), e["name"]) for e in ev if e["ph"] != "M"), d

plain, dp = load(sys.argv[1])
assert sum(plain.values()) > 6 * 200, sum(plain.values())
for path, mode in zip(sys.argv[2:], ("zstd", "gzip")):
    got, d = load(path)
    assert got == plain, (mode, sum(got.values()), sum(plain.values()), (got - plain), (plain - got))
    assert d["traceprof"]["configuration"]["TRACEPROF_COMPRESS"] == mode, d["traceprof"]["configuration"]
print("events per file:", sum(plain.values()))
PY
# A fast (negative) zstd level: the file is as valid, and the footer says
# which level wrote it.
out=$(TRACEPROF_COMPRESS=zstd TRACEPROF_ZSTD_LEVEL=-5 TRACEPROF_SAMPLE_MS=0 \
	TRACEPROF_FOLDER="$TP_TMP/fast" traced "$prog" 2 1 50)
[ "$out" = done ] || die "zstd -5: program output '$out'"
fast=$(ls "$TP_TMP/fast"/*.json.zst) || die "zstd -5: no .json.zst file: $(ls "$TP_TMP/fast")"
zstd -q -t "$fast" || die "zstd -t rejects $fast"
zstd -q -dc "$fast" | "$PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
assert d["traceprof"]["configuration"]["TRACEPROF_ZSTD_LEVEL"] == "-5", d["traceprof"]["configuration"]
assert any(e.get("name", "").startswith("ProfilerStep#") for e in d["traceEvents"])
' || die "zstd -5: the decompressed trace is wrong"

# zstd in libzstd's own threads (TRACEPROF_ZSTD_THREADS=2), on 15 MB of JSON
# (several of zstd's jobs): one valid frame with the same events as a plain
# run of the same program.
for t in 0 2; do
	out=$(TRACEPROF_COMPRESS=$([ $t = 0 ] && echo none || echo zstd) TRACEPROF_ZSTD_THREADS=$t \
		TRACEPROF_SAMPLE_MS=0 TRACEPROF_BUFFER_EVENTS=1048576 TRACEPROF_FOLDER="$TP_TMP/mt$t" \
		traced "$prog" 4 2 12000 2>mt$t.err)
	[ "$out" = done ] || die "zstd threads $t: program output '$out'"
	grep -q '^traceprof:' mt$t.err && die "zstd threads $t: $(cat mt$t.err)"
done
mt=$(ls "$TP_TMP/mt2"/*.json.zst) || die "zstd threads: no .json.zst file: $(ls "$TP_TMP/mt2")"
zstd -q -t "$mt" || die "zstd -t rejects $mt"
zstd -q -d "$mt" -o "$TP_TMP/from_mt.json" || die "zstd -d failed on $mt"
"$PYTHON" - "$TP_TMP"/mt0/*.json "$TP_TMP/from_mt.json" <<'PY'
import json, sys
from collections import Counter
def load(path):
    d = json.load(open(path))
    assert d["traceprof"]["events_dropped"] == 0, path
    return Counter((e["ph"], e.get("cat"), e["name"]) for e in d["traceEvents"] if e["ph"] != "M"), d
plain, _ = load(sys.argv[1])
got, d = load(sys.argv[2])
assert sum(plain.values()) > 40000, sum(plain.values())
assert got == plain, (sum(got.values()), sum(plain.values()))
assert d["traceprof"]["configuration"]["TRACEPROF_ZSTD_THREADS"] == "2", d["traceprof"]["configuration"]
print("zstd with 2 threads:", sum(got.values()), "events")
PY

echo "compress round trip ok: $(du -b "$TP_TMP"/none/*.json | cut -f1) bytes plain," \
	"$(du -b "$zst" | cut -f1) zstd, $(du -b "$gz" | cut -f1) gzip"
