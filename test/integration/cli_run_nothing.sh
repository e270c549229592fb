#!/usr/bin/env bash
# Issue 42 item 2: every "nothing written" says why, with the fix.  Before,
# a run with a schedule that saved nothing ended with only "traceprof: no
# trace file written in traceprof_traces/NAME".  Now:
#   - a CUDA program that marks no step: the library's "no trace file: no
#     step was seen ... add `--step torch`" line, and the command's line
#     says the schedule counts steps and names --step torch;
#   - with a step source that saw none: "exited before its first step";
#   - a program that ended before the window: "exited after 1 step, before
#     the schedule's window opened at step 4";
#   - a process that neither stepped nor started CUDA (a shell), or a
#     forked child, prints no library line, and the command's line still
#     names the fix;
#   - a run that writes its file prints none of these.
. "$TP_TOP/test/lib/common.sh"
T="$BUILD/traceprof"
SI="$BUILD/standin"
[ -f "$SI/libcuda.so.1" ] || die "stand-ins not built ($SI); run make check"
prog="$BUILD/test/prog_steps"
[ -x "$prog" ] || die "$prog not built"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TRACEPROF_CUPTI=off
# A CUDA program that marks no step: cuInit over the stand-in driver, as a
# PyTorch script's first CUDA use does.
cat >cuda_nostep.py <<'PY'
import ctypes
print(ctypes.CDLL("libcuda.so.1").cuInit(0))
PY
sched=wait=3,warmup=1,active=2,repeat=1

# one NAME PATTERN: NAME.err holds exactly one line matching PATTERN.
one() {
	[ "$(grep -c -- "$2" "$1.err")" = 1 ] || die "$1: want one line matching '$2': $(cat "$1.err")"
}

"$T" run --run-name nostep --schedule $sched -- "$PYTHON" cuda_nostep.py >/dev/null 2>nostep.err ||
	die "nostep: the run failed: $(cat nostep.err)"
one nostep "^traceprof: no trace file: no step was seen, and the schedule (TRACEPROF_SCHEDULE=$sched) counts steps; for PyTorch, add \`--step torch\`"
one nostep "^traceprof: no trace file written in traceprof_traces/nostep: the schedule counts steps.*for PyTorch, add --step torch"
[ ! -e traceprof_traces/nostep ] || die "nostep: files written: $(ls traceprof_traces/nostep)"

"$T" run --run-name nofirst --step nvtx:never --schedule $sched -- "$PYTHON" cuda_nostep.py >/dev/null 2>nofirst.err ||
	die "nofirst: the run failed: $(cat nofirst.err)"
one nofirst "^traceprof: no trace file: the program exited before its first step (TRACEPROF_STEP saw none); the schedule (TRACEPROF_SCHEDULE=$sched) records from step 4"
one nofirst "^traceprof: no trace file written in traceprof_traces/nofirst: the program may have ended before the schedule's window opened"

"$T" run --run-name early --schedule $sched -- "$prog" 1 >/dev/null 2>early.err ||
	die "early: the run failed: $(cat early.err)"
one early "^traceprof: no trace file: the program exited after 1 step, before the schedule's window opened at step 4 (TRACEPROF_SCHEDULE=$sched); lower skip_first, wait or warmup, or run more steps"

# A forked child that exits normally (its destructors run) shares the
# parent's CUDA state and steps, but only the parent speaks: one line.
cat >cuda_fork.py <<'PY'
import ctypes, os, sys
ctypes.CDLL("libcuda.so.1").cuInit(0)
pid = os.fork()
if pid == 0:
    sys.exit(0)
os.waitpid(pid, 0)
PY
"$T" run --run-name forked --schedule $sched -- "$PYTHON" cuda_fork.py >/dev/null 2>forked.err ||
	die "forked: the run failed: $(cat forked.err)"
one forked "^traceprof: no trace file: no step was seen"

# A shell: no CUDA, no step: the library is silent, the command is not.
"$T" run --run-name shell --schedule $sched -- sh -c 'exit 0' >/dev/null 2>shell.err ||
	die "shell: the run failed: $(cat shell.err)"
[ "$(grep -c "no trace file:" shell.err)" = 0 ] || die "shell: the library spoke: $(cat shell.err)"
one shell "^traceprof: no trace file written in traceprof_traces/shell: the schedule counts steps"

# Enough steps: a file, and no excuse.
"$T" run --run-name enough --schedule $sched -- "$prog" 8 >/dev/null 2>enough.err ||
	die "enough: the run failed: $(cat enough.err)"
grep -q "no trace file" enough.err && die "enough: $(cat enough.err)"
grep -q "^traceprof: 1 trace file written" enough.err || die "enough: $(cat enough.err)"
echo "every nothing-written says why"
