# More threads named with nvtxNameOsThread than the process keeps names for
# (1024): the names past them are counted in the footer's
# thread_names_lost, exactly, and said in one traceprof: line.  The same
# name given again to a thread takes no room.  Before, the 1025th name and
# later were lost uncounted.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_nvtx_edge"
[ -x "$prog" ] || skip "prog_nvtx_edge not built (no CUDA toolkit headers?)"
# 1024 names (the first given twice): all kept.  1100: 76 lost.
for n in 1024 1100; do
	out=$(TRACEPROF_FOLDER=out$n traced "$prog" names $n 2>err$n.txt) || die "names $n run failed"
	[ "$out" = "ok" ] || die "names $n printed: $out"
done
grep -q "thread names" err1024.txt && die "1024 names: a loss was said: $(cat err1024.txt)"
[ "$(grep -c '^traceprof: 76 thread names given with nvtxNameOsThread were not kept' err1100.txt)" = 1 ] ||
	die "1100 names: no single line saying 76 were not kept: $(cat err1100.txt)"
"$PYTHON" - <<'PY' || die "thread_names_lost wrong"
import sys
sys.path.insert(0, __import__("os").environ["TP_TOP"] + "/test/lib")
from rel import load_trace, trace_files
for n, want in ((1024, 0), (1100, 76)):
    files = trace_files("out%d" % n)
    assert len(files) == 1, files
    tp = load_trace(files[0])["traceprof"]
    assert tp.get("thread_names_lost") == want, (n, tp.get("thread_names_lost"), want)
    assert tp.get("categories_lost") == 0, tp
print("ok: 0 of 1024 and 76 of 1100 names lost")
PY
echo ok
