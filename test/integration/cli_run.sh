#!/usr/bin/env bash
# `traceprof run`: an option for every TRACEPROF_* variable, exit codes and
# signals passed through, the files written listed at the end.
. "$TP_TOP/test/lib/common.sh"
T="$BUILD/traceprof"
[ -x "$T" ] || die "$T not built"

[ "$("$T" --version)" = "traceprof $(cat "$TP_TOP/VERSION")" ] || die "--version: $("$T" --version)"

# Every variable of the library (a row of common/options.def, which
# config.c's parser is made from) has an option, named in --help with its default.
"$T" run --help | tr -s " \n" "  " >help.txt
vars=$(grep -o '^TP_OPT_[A-Z]*("TRACEPROF_[A-Z_]*"' "$TP_TOP/common/options.def" | grep -o 'TRACEPROF_[A-Z_]*')
[ -n "$vars" ] || die "cannot read the rows of common/options.def"
for v in $vars; do
	grep -q "$v; default:" help.txt || die "run --help has no option for $v"
done
echo "all $(echo "$vars" | wc -w) variables have an option"

# The files written are listed in natural order (step7 before step11; issue
# 21 item 13), whatever their timestamps: touch-free check of the listing.
"$T" run --folder "$PWD/nat" --schedule wait=2,warmup=1,active=1 -- "$BUILD/test/prog_steps" 12 \
	>/dev/null 2>nat.err || die "natural order run failed: $(cat nat.err)"
listed=$(sed -n 's#^  .*/\(rank0\.step[0-9]*\)\.trace\.json.*#\1#p' nat.err | tr '\n' ' ')
[ "$listed" = "rank0.step3 rank0.step7 rank0.step11 " ] || die "files not listed in natural order: $listed"
echo "natural order ok"

# Exit code pass-through.
set +e
TRACEPROF_FOLDER=$PWD/t1 "$T" run -q -- sh -c 'exit 3'; rc=$?
set -e
[ $rc = 3 ] || die "exit 3 came back as $rc"
# Signal pass-through: the child dies of SIGTERM, so does `traceprof run`.
set +e
bash -c '"$0" run -q --folder "$1" -- sh -c "kill -TERM \$\$"; exit $?' "$T" "$PWD/t2"; rc=$?
set -e
[ $rc = 143 ] || die "a child killed by SIGTERM came back as $rc (want 143)"
# Under a sanitizer its runtime (preloaded with the library) catches SIGSEGV
# itself and reports it (ASan then exits 1); handle_segv=0 leaves the
# signal's default action, as without the sanitizer.
segv_env=()
case "${TP_SANITIZER:-}" in
asan) segv_env=("ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0") ;;
tsan) segv_env=("TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0") ;;
esac
set +e
env "${segv_env[@]}" bash -c '"$0" run -q --folder "$1" -- sh -c "kill -SEGV \$\$"; exit $?' "$T" "$PWD/t2"; rc=$?
set -e
[ $rc = $((128 + 11)) ] || die "a child killed by SIGSEGV came back as $rc"
# A signal sent to `traceprof run` reaches the program (which then saves its
# trace: --save-on-signal, the opt-in handlers).
"$T" run --folder "$PWD/t3" --save-on-signal 1 -- "$BUILD/test/prog_demo_train" 3000 1 >t3.out 2>t3.err &
pid=$!
for i in $(seq 100); do grep -q "step 1 done" t3.out && break; sleep 0.1; done
kill -TERM $pid
set +e
wait $pid; rc=$?
set -e
[ $rc = 143 ] || { cat t3.err; die "run killed by SIGTERM returned $rc"; }
ls t3/*.json >/dev/null 2>&1 || { cat t3.err; die "no trace saved after SIGTERM"; }
# A missing program: 127, like the shell.
set +e
"$T" run -q -- ./no-such-program 2>err.txt; rc=$?
set -e
[ $rc = 127 ] || die "missing program: $rc"

# Options reach the library; the files written are listed with their sizes.
"$T" run --folder "$PWD/t4/{run_name}" --run-name myrun --filename 'r{rank}.s{step}.json' \
	--schedule wait=1,warmup=1,active=2 --compress gzip -- "$BUILD/test/prog_demo_train" 6 1 \
	>out.txt 2>err.txt || { cat err.txt; die "run failed"; }
cat err.txt
grep -q "trace files\? written" err.txt || die "no list of files"
grep -q "t4/myrun/r0.s3.json.gz" err.txt || die "file list: $(cat err.txt)"
check_trace t4/myrun/*.json.gz
"$T" summary t4/myrun/r0.s3.json.gz --by step >steps.txt
grep -q "ProfilerStep#2" steps.txt || die "summary of the run's file: $(cat steps.txt)"
# A bad value: the library's message, the program still runs.
"$T" run --folder "$PWD/t5" --buffer-events 100 -- true 2>err.txt || die "bad option value broke the program"
grep -q "TRACEPROF_BUFFER_EVENTS" err.txt || die "no message for a bad value: $(cat err.txt)"
# The report names the folder with the variables it knows expanded.
TRACEPROF_FOLDER="$PWD/t6/{run_name}" "$T" run --buffer-events 100 -- true 2>err.txt ||
	die "bad option value broke the program"
grep -qF "no trace file written in $PWD/t6/true" err.txt || die "report: $(cat err.txt)"
# TRACEPROF_LIB chooses the library and is not passed on (no unknown-variable warning).
TRACEPROF_LIB="$TP_LIB" "$T" run --folder "$PWD/t6" -- true 2>err.txt
! grep -q "TRACEPROF_LIB: unknown" err.txt || die "TRACEPROF_LIB leaked to the program"

# A flag option does not swallow the program when "--" is left out (issue
# 21 item 6): its value is taken only when it is a 0/1 word.
out=$("$T" run -q --folder "$PWD/t7" --overwrite sh -c 'echo "ran $0"' 2) || die "run --overwrite PROG failed"
[ "$out" = "ran 2" ] || die "run --overwrite sh -c ... 2 ran something else: $out"
out=$("$T" run -q --folder "$PWD/t7" --with-stack 1 --overwrite echo hi) || die "run --with-stack 1 failed"
[ "$out" = "hi" ] || die "run --with-stack 1 --overwrite echo hi: $out"
out=$("$T" run -q --folder "$PWD/t7" --with-stack --stack-depth 4 echo ho) || die "run --with-stack PROG failed"
[ "$out" = "ho" ] || die "run --with-stack --stack-depth 4 echo ho: $out"

# A misspelt variable gets the closest known name (issue 21 item 9).
TRACEPROF_SCHEDUL=wait=1 "$T" run -q --folder "$PWD/t8" -- true 2>err.txt
grep -q "TRACEPROF_SCHEDUL: unknown variable, ignored; did you mean TRACEPROF_SCHEDULE?" err.txt ||
	die "no fix named for TRACEPROF_SCHEDUL: $(cat err.txt)"
TRACEPROF_XYZZY=1 "$T" run -q --folder "$PWD/t8" -- true 2>err.txt
grep -q "TRACEPROF_XYZZY: unknown variable, ignored; see the README" err.txt ||
	die "a far-fetched fix for TRACEPROF_XYZZY: $(cat err.txt)"

# A signal sent while `traceprof run` starts waits for the program (issue
# 21 item 7).  It is sent once Python has loaded its json module (traceprof
# imports it near its top, before the set-up): the moment is found in
# /proc/PID/maps, not guessed.  The trigger signal is forwarded once the
# program's library catches it, so the program captures, not dies.
for attempt in 1 2 3; do
	rm -rf t9
	"$T" run -q --folder "$PWD/t9" --trigger SIGUSR2 --trigger-steps 1 -- \
		"$BUILD/test/prog_demo_train" 40 1 >t9.out 2>t9.err &
	pid=$!
	seen=0
	for i in $(seq 4000); do
		if grep -q "_json" /proc/$pid/maps 2>/dev/null; then seen=1; break; fi
		kill -0 $pid 2>/dev/null || break
		sleep 0.002
	done
	kill -USR2 $pid 2>/dev/null || true
	set +e
	wait $pid; rc=$?
	set -e
	[ $seen = 1 ] || [ $rc = 0 ] || { cat t9.err; die "traceprof run failed ($rc)"; }
	[ $seen = 1 ] || { echo "json module not seen in the maps (attempt $attempt)"; continue; }
	[ $rc = 0 ] || { cat t9.err; die "traceprof run got SIGUSR2 at start and returned $rc"; }
	ls t9/*.json >/dev/null 2>&1 || { cat t9.err; die "the early trigger did not capture"; }
	break
done
[ $seen = 1 ] || skip "this Python's json module is built in: no moment to send the signal at"
echo "run ok"

