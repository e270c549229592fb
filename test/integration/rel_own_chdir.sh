# Issue 17 item 2: a relative TRACEPROF_FOLDER is resolved once, at start;
# after the program's chdir() into a folder that holds a file of the same
# relative name, traces still go to the first folder and rotation (keep 1,
# or keep 0 after a TRACEPROF_ON_SAVE command) deletes only its own files,
# and a TRACEPROF_ON_SAVE command gets the saved file's absolute path.
# With the live file on, as by default: its folder (.live) is resolved at
# start too, and is all that keep 0 leaves.
. "$TP_TOP/test/lib/common.sh"
unset TRACEPROF_LIVE
prog="$BUILD/test/prog_rel_own"
[ -x "$prog" ] || skip "$prog not built"

run() { # name, variables...
	local name=$1
	shift
	mkdir -p "$TP_TMP/$name/start" "$TP_TMP/$name/other/out"
	echo foreign >"$TP_TMP/$name/other/out/rank0.step0.trace.json"
	out=$(cd "$TP_TMP/$name/start" && env TRACEPROF_SCHEDULE=active=1 TRACEPROF_FOLDER=out "$@" \
		LD_PRELOAD="$TP_PRELOAD" "$prog" chdir ../other 5 2>"$TP_TMP/$name.err") ||
		die "$name: exit $?: $(cat "$TP_TMP/$name.err")"
	[ "$out" = ok ] || die "$name: $out"
	[ "$(cat "$TP_TMP/$name/other/out/rank0.step0.trace.json" 2>/dev/null)" = foreign ] ||
		die "$name: the program's own rank0.step0.trace.json was deleted or changed"
	extra=$(ls -A "$TP_TMP/$name/other/out" | grep -v '^rank0.step0.trace.json$' || true)
	[ -z "$extra" ] || die "$name: traces written after chdir into the program's folder: $extra"
}
run keep1 TRACEPROF_NUM_TRACES_TO_KEEP=1
# keep 1: only the newest window stays, in the folder of the start.
left=$(ls "$TP_TMP/keep1/start/out")
[ "$left" = rank0.step5.trace.$TP_EXT ] || die "keep1: left $left"
# The upload of step 0's file ends after the chdir: its deletion comes then.
run keep0 TRACEPROF_NUM_TRACES_TO_KEEP=0 'TRACEPROF_ON_SAVE=sleep 0.5'
left=$(ls -A "$TP_TMP/keep0/start/out")
[ "$left" = .live ] || die "keep0: uploaded files not deleted: $left"
grep -q '"finished"' "$TP_TMP"/keep0/start/out/.live/*.json || die "keep0: no finished live file"
# The command gets the file's absolute path: it runs in the program's
# working directory of the moment (../other after the chdir), where the
# relative path out/rank0.step0.trace.json names the program's own file.
mkdir -p "$TP_TMP/copies"
run copy "COPIES=$TP_TMP/copies" 'TRACEPROF_ON_SAVE=cp {path} "$COPIES/" && echo {path} >>"$COPIES.paths"'
[ -s "$TP_TMP/copies.paths" ] || die "copy: the command never ran: $(cat "$TP_TMP/copy.err")"
grep -v '^/' "$TP_TMP/copies.paths" && die "copy: the command got a relative path"
saved=$(ls "$TP_TMP/copy/start/out")
[ "$(ls "$TP_TMP/copies")" = "$saved" ] || die "copy: copied $(ls "$TP_TMP/copies"), saved $saved"
for f in $saved; do
	cmp -s "$TP_TMP/copies/$f" "$TP_TMP/copy/start/out/$f" || die "copy: $f is not the saved trace"
done
echo ok
