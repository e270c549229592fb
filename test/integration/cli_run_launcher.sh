#!/usr/bin/env bash
# Issue 42 item 1: the files are where `traceprof run` says, whatever the
# launcher puts in its variables.  A stand-in torchrun (a Python script
# named torchrun, as pip installs it: `python .../torchrun ...` in
# /proc/self/cmdline) makes three CUDA calls of its own, as torch 2.15's
# agent does, then starts two workers `python train_ddp.py` with torchrun's
# variables and a TORCHELASTIC_RUN_ID that is a UUID (torchrun without
# --master_port), "none", empty, or a real --rdzv-id.  With no schedule:
#   - the workers' files are rank0/rank1 in traceprof_traces/train_ddp (a
#     UUID, "none" or empty is no run name), or in the --rdzv-id's folder;
#   - the agent writes no file (before: rank0.step0.trace.json, "rank 0:
#     torchrun", in train_ddp/, beside the real rank 0);
#   - `traceprof run` lists exactly the files written, wherever they
#     landed (before: "no trace file written in traceprof_traces/train_ddp"
#     when the workers wrote elsewhere).
# `accelerate launch` (a script named accelerate) is a launcher too.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -f "$SI/libcudart.so.13" ] || die "stand-ins not built ($SI); run make check"
T="$BUILD/traceprof"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p bin
cat >bin/torchrun <<PY
#!$(command -v "$PYTHON")
# A stand-in for torchrun's agent: its own CUDA calls, then the workers.
import ctypes, os, subprocess, sys
rt = ctypes.CDLL("libcudart.so.13")
n = ctypes.c_int()
for _ in range(3):
    rt.cudaGetDeviceCount(ctypes.byref(n))
script = [a for a in sys.argv[1:] if a.endswith(".py")][0]
procs = []
for r in range(2):
    env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2",
               LOCAL_WORLD_SIZE="2", GROUP_RANK="0",
               TORCHELASTIC_RUN_ID=os.environ.get("FAKE_RUN_ID", "none"))
    procs.append(subprocess.Popen([sys.executable, "-u", script], env=env))
sys.exit(max(p.wait() for p in procs))
PY
cp bin/torchrun bin/accelerate
chmod +x bin/torchrun bin/accelerate
cat >train_ddp.py <<'PY'
import ctypes, os
rt = ctypes.CDLL("libcudart.so.13")
n = ctypes.c_int()
for _ in range(5):
    rt.cudaGetDeviceCount(ctypes.byref(n))
# One write(2): the two workers share the terminal (print() writes its
# pieces one by one, which interleave).
os.write(1, ("rank %s count %d\n" % (os.environ["RANK"], n.value)).encode())
PY

uuid=07a29c41-71d6-4b8e-9f0a-d226471ea2cc
# check NAME LAUNCHER RUN_ID FOLDER: runs the stand-in launcher under
# `traceprof run` and checks the files and the listing.
check() {
	local name=$1 launcher=$2 id=$3 folder=$4
	rm -rf traceprof_traces
	FAKE_RUN_ID=$id "$T" run -- "bin/$launcher" $( [ "$launcher" = accelerate ] && echo launch) \
		--nproc_per_node 2 train_ddp.py >"$name.out" 2>"$name.err" ||
		die "$name: the run failed: $(tail -5 "$name.err")"
	[ "$(sort "$name.out")" = "$(printf 'rank 0 count 1\nrank 1 count 1')" ] ||
		die "$name: the workers' output changed: $(cat "$name.out")"
	files=$(find traceprof_traces -type f | sort | tr '\n' ' ')
	[ "$files" = "$folder/rank0.step0.trace.json $folder/rank1.step0.trace.json " ] ||
		die "$name: want rank0 and rank1 in $folder, got: $files"
	grep -q "^traceprof: 2 trace files written:" "$name.err" ||
		die "$name: traceprof run did not list the two files: $(grep traceprof: "$name.err")"
	for r in 0 1; do
		grep -qx "  $folder/rank$r.step0.trace.json (.*)" "$name.err" ||
			die "$name: rank $r's file not listed: $(cat "$name.err")"
	done
	"$PYTHON" - "$folder" <<'PY' || die "$name: the files are not the workers'"
import json, sys
for r in (0, 1):
    t = json.load(open("%s/rank%d.step0.trace.json" % (sys.argv[1], r)))
    assert t["distributedInfo"]["rank"] == r, t["distributedInfo"]
    calls = [e for e in t["traceEvents"] if e.get("name") == "cudaGetDeviceCount"]
    assert len(calls) == 5, len(calls)   # the worker's five, none of the agent's
PY
	echo "$name: $files"
}
check uuid torchrun "$uuid" traceprof_traces/train_ddp
check none torchrun none traceprof_traces/train_ddp
check empty torchrun "" traceprof_traces/train_ddp
check rdzv_id torchrun job7 traceprof_traces/job7
check accelerate accelerate "$uuid" traceprof_traces/train_ddp
echo "launcher files ok"
