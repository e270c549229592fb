#!/usr/bin/env bash
# `traceprof run`: an option for every TRACEPROF_* variable, exit codes and
# signals passed through, the files written listed at the end.
. "$TP_TOP/test/lib/common.sh"
T="$BUILD/traceprof"
[ -x "$T" ] || die "$T not built"

[ "$("$T" --version)" = "traceprof $(cat "$TP_TOP/VERSION")" ] || die "--version: $("$T" --version)"

# Every variable of common/config.c has an option, named in --help with its default.
"$T" run --help | tr -s " \n" "  " >help.txt
vars=$(sed -n '/tp_config_names\[\] = {/,/NULL/p' "$TP_TOP/common/config.c" | grep -o '"TRACEPROF_[A-Z_]*"' | tr -d '"')
[ -n "$vars" ] || die "cannot read tp_config_names"
for v in $vars; do
	grep -q "$v; default:" help.txt || die "run --help has no option for $v"
done
echo "all $(echo "$vars" | wc -w) variables have an option"

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
# A signal sent to `traceprof run` reaches the program (which then saves its trace).
"$T" run --folder "$PWD/t3" -- "$BUILD/test/prog_demo_train" 3000 1 >t3.out 2>t3.err &
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
echo "run ok"
