#!/usr/bin/env bash
# Issue 19 item 4: drops, fork, exit and signals keep every guarantee in
# the Perfetto format too.  The reliability tests run again, unchanged but
# for the format, with TRACEPROF_FORMAT=perfetto in their environment; they
# read the .pftrace files through test/lib/rel.py (the same object as the
# JSON: events, the footer's counts, the header's rank and base):
#   rel_account      written + dropped == produced, per thread and step
#   rel_life         fork (followed or not), exec, exit from a thread,
#                    pthread_exit from main, SIGINT/SIGTERM with and without
#                    the program's handlers: same status and output, one
#                    complete file each
#   rel_own_signals  SIGTERM then SIGINT during the final save
#   rel_own_exit     exit() within TRACEPROF_EXIT_TIMEOUT_S
#   rel_own_fork     forks while windows are saved
#   rel_own_rotate   TRACEPROF_NUM_TRACES_TO_KEEP counts windows of parts
#   rel_burst        bursts that outrun the writer: 0 dropped by default
#   cli_onsave       TRACEPROF_ON_SAVE, with keep 0 and 1, failing commands
#   rel_own_fds, rel_own_chdir, rel_own_seccomp, rel_threads_mem,
#   rel_strings, rel_wrappers   the program's descriptors, working directory,
#                    seccomp filter, thread churn, hostile names, wrapper
#                    scripts
. "$TP_TOP/test/lib/common.sh"
# (each test's common.sh derives TP_EXT=pftrace from it)
export TRACEPROF_FORMAT=perfetto
root=$TP_TMP
ran=0
for t in rel_account rel_life rel_own_signals rel_own_exit rel_own_fork rel_own_rotate rel_burst \
	cli_onsave rel_own_fds rel_own_chdir rel_own_seccomp rel_threads_mem rel_strings rel_wrappers; do
	mkdir "$root/$t"
	rc=0
	TP_TMP="$root/$t" bash "$TP_TOP/test/integration/$t.sh" >"$root/$t.log" 2>&1 || rc=$?
	if [ $rc = 77 ]; then
		echo "$t: $(grep -m1 '^SKIP' "$root/$t.log")"
		continue
	fi
	grep '^NOTE' "$root/$t.log" || true
	[ $rc = 0 ] || { tail -30 "$root/$t.log"; die "$t with TRACEPROF_FORMAT=perfetto (exit $rc)"; }
	# Each must have written .pftrace files, and no JSON trace.
	if [ "$t" != rel_own_fork ] && [ "$t" != rel_own_exit ]; then
		[ -n "$(find "$root/$t" -name '*.pftrace*' | head -1)" ] || die "$t: no .pftrace written"
	fi
	# (rel_own_chdir plants a file of a trace's name, not a trace)
	json=$(find "$root/$t" -name '*.trace.json' -type f -exec grep -l '"traceEvents"' {} + | head -1 || true)
	[ -z "$json" ] || die "$t: JSON written in the perfetto format: $json"
	echo "$t: passed with TRACEPROF_FORMAT=perfetto"
	ran=$((ran + 1))
done
[ $ran -gt 0 ] || skip "every reliability test skipped"
