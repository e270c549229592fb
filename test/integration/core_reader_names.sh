#!/usr/bin/env bash
# Issue 42 item 7: file names keep every reader's pattern.  With the
# README's TensorBoard name (rank{rank}.{step}.pt.trace.json, which the
# plugin finds as *.pt.trace.json only):
#   - a second run into the same folder gets a unique number before
#     ".pt.trace.json" (rank0.4.1.pt.trace.json), not before ".json"
#     (before the fix: rank0.4.pt.trace.1.json, which TensorBoard ignores);
#   - gzip keeps it (*.pt.trace.json.gz, which TensorBoard reads too);
#   - parts of a window split by TRACEPROF_MAX_FILE_MB are named
#     rank0.4.partK.pt.trace.json (before: rank0.4.pt.trace.partK.json).
# The default name keeps its form (rank0.step4.trace.1.json).
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_steps"
[ -x "$prog" ] || die "$prog not built"
tb='rank{rank}.{step}.pt.trace.json'
run() { # folder, extra variables..., then the program's arguments after --
	local dir=$1
	shift
	local vars=()
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	out=$(env TRACEPROF_SAMPLE_MS=0 TRACEPROF_FOLDER="$dir" "${vars[@]}" LD_PRELOAD="$TP_PRELOAD" \
		"$prog" "$@" 2>/dev/null)
	[ "$out" = done ] || die "program output '$out'"
}
names() { (cd "$1" && ls | sort -V | tr '\n' ' '); }

for i in 1 2 3; do run tb TRACEPROF_FILENAME="$tb" -- 4; done
got=$(names tb)
[ "$got" = "rank0.4.pt.trace.json rank0.4.1.pt.trace.json rank0.4.2.pt.trace.json " ] ||
	die "reruns with the TensorBoard name: $got"
for i in 1 2; do run tbgz TRACEPROF_FILENAME="$tb" TRACEPROF_COMPRESS=gzip -- 4; done
got=$(names tbgz)
[ "$got" = "rank0.4.pt.trace.json.gz rank0.4.1.pt.trace.json.gz " ] || die "gzip reruns: $got"
for i in 1 2; do run plain -- 4; done
got=$(names plain)
[ "$got" = "rank0.step4.trace.json rank0.step4.trace.1.json " ] || die "default name reruns: $got"

# A window of several MB split into 1 MB parts.
run parts TRACEPROF_FILENAME="$tb" TRACEPROF_MAX_FILE_MB=1 TRACEPROF_BUFFER_EVENTS=1048576 -- 4 2 3000
got=$(names parts)
case "$got" in
"rank0.4.part1.pt.trace.json rank0.4.part2.pt.trace.json "*) ;;
*) die "parts with the TensorBoard name: $got" ;;
esac
for f in tb/* parts/*; do
	case "$f" in *.pt.trace.json) ;; *) die "$f: not *.pt.trace.json" ;; esac
done
echo "reader names ok: $(names tb)| $(names parts)"
