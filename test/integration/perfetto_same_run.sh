# TRACEPROF_FORMAT=perfetto against the JSON of the same runs (issue 19 item
# 3): each program runs twice, once per format, with the same input; the
# .pftrace is decoded by the real protoc with Perfetto's published schema
# (test/lib/pftrace.py) and must hold the same slice names and counts, the
# same instants and counter samples as the JSON, with every track's begins
# and ends balanced.  Programs: demo_train (markers, steps, a counter, CUDA
# runtime calls through the stand-in runtime) and cuda_calls with the CUPTI
# stand-in (kernels on a GPU track, flows).  Also: the format changes no
# output of the program, and the footer's counts are in the file.
. "$TP_TOP/test/lib/common.sh"
"$PYTHON" -c "import sys; sys.path.insert(0, '$TP_TOP/test/lib'); import pftrace; r = pftrace.skip_reason(); print(r or ''); sys.exit(77 if r else 0)" >why.txt || skip "$(cat why.txt)"
SI="$BUILD/standin"
[ -e "$SI/libcupti.so.13" ] && [ -e "$SI/libcuda.so.1" ] || die "stand-ins not built ($SI); run make check"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_both() { # NAME PRELOAD-EXTRA CMD...
	local name=$1 extra=$2
	shift 2
	local plain
	plain=$("$@" 2>/dev/null) || die "$name: the program failed without traceprof"
	for fmt in json perfetto; do
		out=$(TRACEPROF_FORMAT=$fmt TRACEPROF_FOLDER=$name-$fmt LD_PRELOAD="$TP_PRELOAD${extra:+:$extra}" \
			"$@" 2>$name-$fmt.err) || die "$name/$fmt: the program failed: $(cat $name-$fmt.err)"
		[ "$out" = "$plain" ] || die "$name/$fmt: output changed"
		grep -q '^traceprof:' $name-$fmt.err && die "$name/$fmt: unexpected messages: $(cat $name-$fmt.err)"
	done
	ls $name-perfetto/*.pftrace >/dev/null 2>&1 || die "$name: no .pftrace written: $(ls -R $name-perfetto)"
	ls $name-perfetto/*.json >/dev/null 2>&1 && die "$name: a .json file in the perfetto folder"
	for pf in $name-perfetto/*.pftrace; do
		js=$name-json/$(basename "$pf" .pftrace).json
		[ -e "$js" ] || die "$name: no JSON counterpart $js for $pf"
		"$PYTHON" "$TP_TOP/test/lib/pftrace.py" --compare "$pf" "$js" || die "$name: $pf differs from $js"
	done
}

run_both demo "" "$BUILD/test/prog_demo_train" 4 1
run_both cupti "$SI/libcupti.so.13" "$BUILD/test/prog_cuda_calls" launch 50
# The GPU events, the arrows and the footer are there.
"$PYTHON" - <<'PY'
import glob, sys
sys.path.insert(0, __import__("os").environ["TP_TOP"] + "/test/lib")
import pftrace
(f,) = glob.glob("cupti-perfetto/*.pftrace")
t = pftrace.decode(f)
ev = pftrace.events(t)
kern = [e for e in ev if e[0] == "TYPE_SLICE_BEGIN" and e[1] == "standin_kernel"]
assert len(kern) == 50, len(kern)
flows_out = sum(len(e[5].get("flow_ids", [])) for e in ev)
flows_in = sum(len(e[5].get("terminating_flow_ids", [])) + len(e[5].get("flow_ids", [])) for e in ev if e[1] == "standin_kernel")
assert flows_out >= 50 and flows_in >= 50, (flows_out, flows_in)
text = open(f, "rb").read()
assert b"events_written" in text, "the footer's counts are not in the file"
print("perfetto: %d kernels, flows, footer" % len(kern))
PY
