#!/usr/bin/env bash
# Issue 46 item 3, NCCL's payload: a process blocked in cudaStreamSynchronize
# inside an NCCL-style NVTX range with an extended payload
# (test/programs/nvtx_payload.c's last ncclAllReduce: comm 0xabc123, 1 MiB,
# op Max, on the stand-in runtime whose STANDIN_SYNC_SLEEP_* make the call
# block) shows the range's decoded fields in its live file ("payload", as the
# trace's args) and in `traceprof top --once`: `stalled N s in
# cudaStreamSynchronize, inside ncclAllReduce {comm=..., bytes=..., op=Max}`.
# A range of an unknown schema around it shows {} and is counted once in the
# footer's undecoded payloads, not at every update.
# Steps: TRACEPROF_STEP=nvtx:ncclAllReduce, so the blocked collective's step
# does not end.  The program's output is unchanged.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
P="$BUILD/test/prog_nvtx_payload"
[ -x "$P" ] || skip "prog_nvtx_payload not built (no CUDA toolkit headers?)"
[ -e "$SI/libcudart.so.13" ] || die "not built ($SI); run make check"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset TRACEPROF_LIVE TRACEPROF_LIVE_DIR
PY=$("$PYTHON" -c 'import sys; print(sys.executable)')

plain=$(STANDIN_SYNC_SLEEP_AT=1 STANDIN_SYNC_SLEEP_MS=10 "$P" 2 stall) || die "untraced run failed"
[ "$plain" = "done" ] || die "untraced output: $plain"

STANDIN_SYNC_SLEEP_AT=1 STANDIN_SYNC_SLEEP_MS=8000 TRACEPROF_STEP=nvtx:ncclAllReduce \
	TRACEPROF_RUN_NAME=payjob TRACEPROF_FOLDER="$TP_TMP/t" traced "$P" 2 stall >out.txt 2>err.txt &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT

"$PYTHON" - "$TP_TMP/t/.live" <<'PY' || die "live file while blocked: $(cat "$TP_TMP"/t/.live/*.json 2>&1)"
import glob, json, os, sys, time
d = sys.argv[1]
t0 = time.time()
while time.time() - t0 < 20:
    for p in glob.glob(os.path.join(d, "*.json")):
        j = json.load(open(p))
        for t in j["threads"]:
            if [o["name"] for o in t["open"]] == ["unknown_outer", "ncclAllReduce",
                                                   "cudaStreamSynchronize"]:
                out, nv, cu = t["open"]
                assert out["payload"] == {}, out  # its schema was never registered
                assert nv["kind"] == "nvtx" and cu["kind"] == "cuda", t
                # The trace's args for this payload (nvtx_payload.sh), domain aside.
                assert nv["payload"] == {"comm": "0xabc123", "bytes": 1 << 20, "op": "Max"}, nv
                assert cu["payload"] == {}, cu
                print("payload:", json.dumps(nv["payload"]))
                sys.exit(0)
    time.sleep(0.1)
sys.exit("never saw the thread inside ncclAllReduce and cudaStreamSynchronize")
PY

# top: stalled (no step for 1 s), in the call, inside the collective with its fields.
line=""
for _ in $(seq 50); do
	"$PY" "$TP_TOP/python/traceprof" top "$TP_TMP/t" --once --stall-after 1 >once.txt 2>top.err ||
		die "top --once failed: $(cat top.err)"
	line=$(grep 'stalled [0-9]* s in cudaStreamSynchronize' once.txt) && break
	sleep 0.2
done
echo "$line" | grep -q 'stalled [0-9]* s in cudaStreamSynchronize, inside ncclAllReduce {comm=0xabc123, bytes=1048576, op=Max}' ||
	die "top --once: $(cat once.txt top.err)"
echo "top: $line"

wait $pid || die "traced run failed: $(cat err.txt)"
trap - EXIT
[ "$(cat out.txt)" = "done" ] || die "traced output changed: $(cat out.txt err.txt)"
# The footer counts the two payloads of the unknown schema once each, not at
# every update of the live file that showed one open for seconds.
"$PYTHON" - "$TP_TMP/t" <<'PY' || die "footer's nvtx_payloads"
import glob, json, sys
fs = glob.glob(sys.argv[1] + "/*.json")
assert len(fs) == 1, fs
f = json.load(open(fs[0]))["traceprof"]["nvtx_payloads"]
assert f == {"schemas": 3, "enums": 1, "undecoded": 2}, f
PY
echo "PASS"
