# Issue 17 item 3: a program forking while windows are being saved.  The
# child's atfork handler must reset (never free) what the parent's flush
# thread owns: that thread may be in the middle of freeing it.  A stress
# loop: 2 threads (one records short steps, each its own saved window, the
# other forks), up to 300 children per mode; every child must exit 0.
. "$TP_TOP/test/lib/common.sh"
unset TRACEPROF_LIVE # as by default: the live file is on
prog="$BUILD/test/prog_rel_own"
[ -x "$prog" ] || skip "$prog not built"
n=${TP_FORK_CHILDREN:-300}
# A sanitizer makes each fork and child exit several times slower.
[ -z "${TP_SANITIZER:-}" ] || n=${TP_FORK_CHILDREN:-90}
follows="0 1"
# TSan keeps the parent's threads in its registry after fork(); a thread
# the child starts (its flush thread) can get the pthread id of one of them
# (glibc reuses their stacks in the child) and TSan aborts with "dup thread
# with used id": its limitation, so under TSan only children that start no
# thread.
[ "${TP_SANITIZER:-}" != tsan ] || { follows=0; n=${TP_FORK_CHILDREN:-30}; }
for follow in $follows; do
	for round in 1 2 3; do
		[ $follow = 1 ] && [ $round = 3 ] && break
		d="$TP_TMP/f$follow-$round"
		out=$(TRACEPROF_SCHEDULE=active=1 TRACEPROF_FOLLOW_FORK=$follow TRACEPROF_FOLDER="$d" \
			TRACEPROF_NUM_TRACES_TO_KEEP=2 traced "$prog" fork $((n / 3)) 2>"$TP_TMP/err") ||
			die "follow=$follow: parent exit $?: $(tail -5 "$TP_TMP/err")"
		[ "$out" = "children failed: 0" ] ||
			die "follow=$follow round $round: $out; $(tail -5 "$TP_TMP/err")"
		rm -rf "$d"
	done
done
echo ok
