# TRACEPROF_ON_SAVE's shells are never the program's children (issue 17,
# item 5): a program that forks its own child (exit status 7) and calls
# wait() while uploads run must get its child with status 7, then ECHILD,
# and count exactly one SIGCHLD, its own child's.  The uploads still run and
# their results are still reported.
. "$TP_TOP/test/lib/common.sh"
P="$BUILD/test/prog_onsave_wait"
mkdir up
out=$(TRACEPROF_SCHEDULE=wait=0,warmup=0,active=1 TRACEPROF_LOG=info \
	TRACEPROF_ON_SAVE='sleep 0.3; cp "$1" up/' TRACEPROF_FOLDER="$TP_TMP/t" \
	traced "$P" 8 2>err.txt) || { cat err.txt; die "program failed: $out"; }
echo "$out"
echo "$out" | grep -qx "wait1 child 7" || { cat err.txt; die "wait() did not return the program's own child with status 7: $out"; }
echo "$out" | grep -qx "wait2 ECHILD" || die "a second wait() found a process the program never started: $out"
echo "$out" | grep -qx "sigchld 1" || die "SIGCHLDs for processes the program never started: $out"
n_local=$(ls t/*.json | wc -l)
n_up=$(ls up/*.json | wc -l)
n_done=$(grep -c "TRACEPROF_ON_SAVE: done for" err.txt || true)
[ "$n_local" -ge 8 ] && [ "$n_up" = "$n_local" ] && [ "$n_done" = "$n_local" ] ||
	{ cat err.txt; die "files $n_local, uploaded $n_up, reported done $n_done"; }
for f in t/*.json; do cmp "$f" "up/$(basename "$f")" || die "copy of $f differs"; done
# A failing command is still reported with its status.
out=$(TRACEPROF_SCHEDULE=wait=0,warmup=0,active=1 TRACEPROF_ON_SAVE='exit 5' \
	TRACEPROF_FOLDER="$TP_TMP/f" traced "$P" 2 2>err.txt) || { cat err.txt; die "program failed: $out"; }
echo "$out" | grep -qx "wait1 child 7" || die "failing uploads: wait() got $out"
grep -q "TRACEPROF_ON_SAVE.*failed with exit status 5" err.txt || die "failure not reported: $(cat err.txt)"
echo "on-save outside the program's children ok"
