# CUPTI's buffers handed over on a thread of CUPTI's own while the flush
# thread drains (collector/cupti_queue.c): the stand-in CUPTI
# (test/standin/fake_cupti.c) with FAKE_CUPTI_WORKER delivers its records
# from its worker thread every 100 us, one kernel a buffer, and says that it
# dropped 3 records with each buffer.  Every kernel arrives once, paired
# with its launch; the footer's dropped count is exactly what the stand-in
# said, and its refused buffers exactly those the stand-in was refused
# (when the worker outruns the flush thread, the stand-in keeps the records
# for its next try, as CUPTI does until its own buffers are full).
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -e "$SI/libcupti.so.13" ] && [ -e "$SI/libcuda.so.1" ] || die "stand-ins not built ($SI); run make check"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
prog="$BUILD/test/prog_cuda_calls"
# 300 launches 300 us apart (about 100 ms).
N=300
# run TAG FLUSH_MS: the program under traceprof with the stand-in's worker;
# checks the footer against what the stand-in said.
run() {
	local tag=$1 flush_ms=$2 out said
	out=$(FAKE_CUPTI_WORKER=1 FAKE_CUPTI_PER_BUFFER=1 FAKE_CUPTI_DROPPED=3 FAKE_CUPTI_REPORT=1 \
		TRACEPROF_FLUSH_MS=$flush_ms TRACEPROF_FOLDER=out-$tag \
		LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13" "$prog" launch $N 300 2>err-$tag.txt) ||
		die "$tag: the program failed: $(cat err-$tag.txt)"
	[ "$out" = "cuInit=0 get=0 launches=$N failed=0" ] || die "$tag: output changed: $out"
	grep '^traceprof:' err-$tag.txt && die "$tag: unexpected messages: $(cat err-$tag.txt)"
	said=$(sed -n 's/^fake_cupti: buffers=\([0-9]*\) refused=\([0-9]*\) dropped=\([0-9]*\)$/\1 \2 \3/p' err-$tag.txt)
	[ -n "$said" ] || die "$tag: no report from the stand-in: $(cat err-$tag.txt)"
	check_trace out-$tag/*.json >/dev/null || die "$tag: trace check failed"
	"$PYTHON" - "$tag" "$N" $said out-$tag/*.json <<'PY' || die "$tag: wrong GPU records or counts"
import json, sys
tag = sys.argv[1]
n, bufs, refused, dropped = (int(x) for x in sys.argv[2:6])
files = sys.argv[6:]
assert len(files) == 1, files
d = json.load(open(files[0]))
gpu = d["traceprof"]["gpu"]
assert gpu["cupti"] == "active", gpu
# One kernel a buffer: n buffers handed over, each with 3 drops said.
assert bufs == n and dropped == 3 * n, (bufs, dropped)
assert gpu["cupti_records_dropped"] == dropped, (gpu, dropped)
assert gpu["cupti_buffers_refused"] == refused, (gpu, refused)
if tag == "late":
    assert refused > 0, "the queue never filled"
ev = d["traceEvents"]
launches = [e for e in ev if e.get("ph") == "X" and e.get("name") == "cuLaunchKernel"]
kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
assert len(launches) == n, len(launches)
corr = sorted(k["args"].get("correlation", 0) for k in kernels)
assert len(kernels) == n and len(set(corr)) == n and 0 not in corr, (len(kernels), len(set(corr)))
assert corr == sorted(l["args"]["correlation"] for l in launches)
print("ok %s: %d buffers from the stand-in's worker, %d kernels once each, %d drops, %d refused"
      % (tag, bufs, len(kernels), dropped, refused))
PY
}
# The flush thread every 2 ms keeps up (32 buffers of room,
# TP_CUPTI_QUEUE_MAX, are about 10 ms of a late pass); every 200 ms it does
# not: the queue fills, CUPTI is refused buffers (counted) and keeps its records for
# its next try, and at exit the last flush is retried until it got every
# buffer it asked for.
run keep 2
run late 200
