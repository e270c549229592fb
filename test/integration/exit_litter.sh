#!/usr/bin/env bash
# A forked child that ends with _exit() or _Exit() runs no saving code, so
# its open window is lost; it leaves no file either, hidden or not (issue 41
# item 8).  A DataLoader worker ends so (multiprocessing's os._exit()), and
# each one used to leave a 0-byte ".pid<N>.rank0.step0.trace.json.tmp.<N>.1"
# in the trace folder, run after run.  test/programs/exit_litter.c: the
# parent's fork child records, has its temporary file, and ends with _exit /
# _Exit; a vfork child's _exit (in the parent's memory) removes nothing of
# the parent's; the parent's file is saved.  Then Python's os._exit() in a
# forked child, as multiprocessing does.  With the live files on, as by
# default: the child's live file goes too (it would stay "running" for
# `traceprof top` forever), the program's own stays.
. "$TP_TOP/test/lib/common.sh"
unset TRACEPROF_LIVE
# the trace folder's files but the live ones.
files() { (cd "$1" && find . -type f -not -path './.live/*' | sort | tr '\n' ' '); }
P="$BUILD/test/prog_exit_litter"
[ -x "$P" ] || die "$P not built"
# The program itself ends with _exit() once its file exists: its window's
# temporary file stays, for traceprof run / recover to finish as a cut
# window (docs/guarantees.md).  Under the sanitizers too (their _exit
# interceptor comes first and chains to the library's), where the forks
# below cannot run.
mkdir -p "$TP_TMP/t_self"
TRACEPROF_FOLDER="$TP_TMP/t_self" TRACEPROF_FLUSH_MS=10 traced "$P" "$TP_TMP/t_self" self \
	>self.out 2>self.err || die "self: failed: $(cat self.err)"
[ "$(cat self.out)" = "parent tmp before: 1" ] || die "self: the program saw $(cat self.out)"
files=$(files "$TP_TMP/t_self")
[ "$(live_count "$TP_TMP/t_self")" = 1 ] || die "self: want its live file, got: $(ls -A "$TP_TMP/t_self/.live")"
case "$files" in
"./.rank0.step0.trace.$TP_EXT.tmp."*) echo "self: keeps $files" ;;
*) die "self: want the window's temporary file, got: $files" ;;
esac
if [ -n "${TP_SANITIZER:-}" ]; then
	# docs/development.md: gcc 12's ASan allocator is not fork-safe, and
	# TSan cannot start a thread after a multi-threaded fork.
	echo "fork cases: SKIP under $TP_SANITIZER"
	exit 0
fi

for how in _exit _Exit; do
	rm -rf "$TP_TMP/t_$how"
	mkdir -p "$TP_TMP/t_$how"
	TRACEPROF_FOLDER="$TP_TMP/t_$how" TRACEPROF_FLUSH_MS=10 TRACEPROF_SCHEDULE=wait=0,warmup=0,active=1 \
		traced "$P" "$TP_TMP/t_$how" $how \
		>$how.out 2>$how.err || die "$how: failed: $(cat $how.err)"
	want="parent tmp before: 1
child tmp: 1
vfork child: 127
parent tmp after: 1
parent tmp of step 1: 1"
	[ "$(cat $how.out)" = "$want" ] || die "$how: the program saw
$(cat $how.out)
--- instead of
$want"
	files=$(files "$TP_TMP/t_$how")
	[ "$(live_count "$TP_TMP/t_$how")" = 1 ] ||
		die "$how: want the parent's live file only, got: $(ls -A "$TP_TMP/t_$how/.live")"
	[ "$files" = "./rank0.step0.trace.$TP_EXT ./rank0.step1.trace.$TP_EXT " ] ||
		die "$how: want the parent's two files only, got: $files"
	echo "$how: $files"
done

# Python: a forked child that records (an instant) ends with os._exit(0)
# after its flush thread made its file.
cat >fk.py <<'PY'
import glob, os, sys, time
import traceprof
folder = sys.argv[1]
traceprof.instant("parent")
pid = os.fork()
if pid == 0:
    traceprof.instant("child")
    for _ in range(300):
        if glob.glob(os.path.join(folder, ".*.tmp.%d.*" % os.getpid())):
            break
        time.sleep(0.01)
    print("child tmp:", bool(glob.glob(os.path.join(folder, ".*.tmp.%d.*" % os.getpid()))))
    sys.stdout.flush()
    os._exit(0)
os.waitpid(pid, 0)
PY
PYTHONPATH="$TP_TOP/python" TRACEPROF_FOLDER="$TP_TMP/t_py" TRACEPROF_FLUSH_MS=10 traced \
	"$PYTHON" fk.py "$TP_TMP/t_py" >py.out 2>py.err || die "python: failed: $(cat py.err)"
grep -qx "child tmp: True" py.out || die "python: the child had no temporary file to leave: $(cat py.out py.err)"
files=$(files "$TP_TMP/t_py")
[ "$(live_count "$TP_TMP/t_py")" = 1 ] || die "python: want the parent's live file only, got: $(ls -A "$TP_TMP/t_py/.live")"
[ "$files" = "./rank0.step0.trace.$TP_EXT " ] || die "python: want the parent's file only, got: $files"
echo "python os._exit: $files"
