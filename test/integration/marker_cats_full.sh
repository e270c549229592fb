# More distinct lists of marker categories than the process keeps (256):
# the events past them keep the bare category "user_annotation" (their
# args.categories has the text) and are counted in the footer's
# categories_lost, exactly, said in one traceprof: line.  A list already
# kept still shows.  Before, they were left out of "cat" uncounted.
. "$TP_TOP/test/lib/common.sh"
py=$("$PYTHON" -c 'import sys; print(sys.executable)')
cat >cats.py <<'PY'
import traceprof
for i in range(300):
    traceprof.marker("m%d" % i, categories=["c%d" % i]).instant()
traceprof.marker("again", categories=["c0"]).instant()
print("done")
PY
PYTHONPATH="$TP_TOP/python" "$BUILD/traceprof" run -q --folder "$PWD/t" -- "$py" cats.py \
	>out.txt 2>err.txt || { cat err.txt; die "cats.py under traceprof failed"; }
grep -q done out.txt || die "cats.py did not finish"
[ "$(grep -c '^traceprof: 44 events kept only the category user_annotation' err.txt)" = 1 ] ||
	die "no single line saying 44 events lost their categories: $(cat err.txt)"
"$PYTHON" - t/*.json <<'PY' || die "categories_lost wrong"
import json, sys
assert len(sys.argv) == 2, sys.argv
d = json.load(open(sys.argv[1]))
assert d["traceprof"].get("categories_lost") == 44, d["traceprof"].get("categories_lost")
assert d["traceprof"].get("thread_names_lost") == 0, d["traceprof"]
cat = {e["name"]: e for e in d["traceEvents"] if e.get("ph") == "i"}
assert len(cat) == 301, len(cat)
for i in range(300):
    e = cat["m%d" % i]
    assert e["args"]["categories"] == "c%d" % i, e
    assert e["cat"] == ("user_annotation,c%d" % i if i < 256 else "user_annotation"), e
assert cat["again"]["cat"] == "user_annotation,c0", cat["again"]
print("ok: 44 of 300 lists lost, counted")
PY
echo ok
