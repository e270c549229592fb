#!/usr/bin/env bash
# Issue 42 item 5: `summary` takes what users hand it: a file, a run's
# folder, or the folder of runs (traceprof_traces/).  Before the fix,
# `summary traceprof_traces/demo --by step` printed only "Is a directory",
# and `summary traceprof_traces --by rank` said there were no files, with no
# word that the runs are in subfolders.  Every refusal is one `traceprof:`
# line with a hint (no traceback), exit status 2 (1 for a missing path, as
# before).
. "$TP_TOP/test/lib/common.sh"
T="$BUILD/traceprof"
prog="$BUILD/test/prog_steps"
[ -x "$prog" ] || die "$prog not built"
"$T" run -q --run-name demo -- "$prog" 4 >/dev/null || die "run demo failed"

# one_error NAME ARGS...: the command fails (1 or 2) with one stderr
# line, a traceprof: line; prints it.
one_error() {
	local name=$1
	shift
	set +e
	"$T" summary "$@" >"$name.out" 2>"$name.err"
	local rc=$?
	set -e
	[ $rc = 2 ] || [ $rc = 1 ] || die "$name: exit status $rc, want 1 or 2: $(cat "$name.err")"
	[ "$(wc -l <"$name.err")" = 1 ] && grep -q "^traceprof: " "$name.err" ||
		die "$name: not one traceprof: line: $(cat "$name.err")"
	cat "$name.err"
}

# A run's folder with one trace, and the folder of runs holding that run.
for what in traceprof_traces/demo traceprof_traces; do
	"$T" summary --by step "$what" >step.out 2>step.err || die "summary --by step $what: $(cat step.err)"
	grep -q "^steps: 3;.*; left out: ProfilerStep#0 (start-up, .*), ProfilerStep#4 (teardown, .*)$" step.out || die "summary --by step $what: $(cat step.out)"
	grep -q "reading its one trace, traceprof_traces/demo/rank0.step4.trace.json" step.err ||
		die "summary $what did not say which file it read: $(cat step.err)"
	"$T" summary --by rank "$what" >rank.out 2>rank.err || die "summary --by rank $what: $(cat rank.err)"
	grep -q "rank 0\|^ *0 " rank.out || die "summary --by rank $what: $(cat rank.out)"
done
echo "a run's folder and the folder of one run: read"

# Two runs: the folder of runs is refused, naming them and what to type.
"$T" run -q --run-name other -- "$prog" 3 >/dev/null || die "run other failed"
one_error runs --by rank traceprof_traces
grep -q "folder of 2 runs (demo, other): name one, e.g. traceprof summary --by rank traceprof_traces/demo" runs.err ||
	die "runs: no hint: $(cat runs.err)"
"$T" summary --by rank --all-runs traceprof_traces >all.out 2>all.err ||
	die "--all-runs of the folder of runs failed: $(cat all.err)"
grep -q "reading its 2 runs together (--all-runs)" all.err || die "--all-runs: $(cat all.err)"
one_error runs_step --by step traceprof_traces
grep -q "summary --by step traceprof_traces/demo" runs_step.err || die "runs_step: no hint: $(cat runs_step.err)"

# A run's folder with several files (a schedule that repeats): summary of
# one file says so and names one, or --by rank.
"$T" run -q --run-name cycles --schedule wait=1,warmup=0,active=1,repeat=2 -- "$prog" 6 >/dev/null ||
	die "run cycles failed"
[ "$(ls traceprof_traces/cycles | wc -l)" = 2 ] || die "cycles: $(ls traceprof_traces/cycles)"
one_error several --by step traceprof_traces/cycles
grep -q "2 trace files here; summary --by step reads one: name one, e.g. traceprof_traces/cycles/rank0.step" several.err ||
	die "several: no hint: $(cat several.err)"

# Nothing at all.
mkdir -p empty
one_error empty --by step empty
grep -q "empty: no .json.*name a trace file" empty.err || die "empty: $(cat empty.err)"
one_error missing --by step nosuch
echo "summary folders ok"
