# Issue 17 item 6: a program that forbids file calls to its own thread with
# a seccomp filter (kill action; without TSYNC, so traceprof's thread is not
# filtered) and then exits must exit 0 with a complete trace: the final
# save runs on traceprof's flush thread, not on the exiting thread.
. "$TP_TOP/test/lib/common.sh"
unset TRACEPROF_LIVE # as by default: the live file is on
prog="$BUILD/test/prog_rel_own"
[ -x "$prog" ] || skip "$prog not built"
plain=$("$prog" seccomp) || die "without the library: exit $?"
case "$plain" in SKIP*) skip "${plain#SKIP: }" ;; esac
[ "$plain" = ok ] || die "without the library: $plain"
rc=0
out=$(TRACEPROF_FOLDER="$TP_TMP/tr" traced "$prog" seccomp 2>err) || rc=$?
[ $rc = 0 ] && [ "$out" = ok ] || die "exit $rc (signal $((rc - 128)) if > 128), output '$out': $(cat err)"
[ -z "$(find "$TP_TMP/tr" -name '.*tmp*')" ] || die "temporary file left"
check_trace "$TP_TMP"/tr/*
"$PYTHON" - "$TP_TMP/tr" <<'PY'
import glob, os, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel
files = glob.glob(sys.argv[1] + "/*")
assert len(files) == 1, files
ev = rel.load_trace(files[0])["traceEvents"]
n = sum(1 for e in ev if e.get("name") == "work")
steps = sorted(int(e["name"][13:]) for e in ev if e["name"].startswith("ProfilerStep#"))
assert n == 6000, n
assert steps == list(range(7)), steps
print("complete:", n, "markers, steps", steps)
PY
