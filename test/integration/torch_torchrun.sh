# torchrun for real (issue 31; the torch venv of scripts/install-deps
# --with-optional): `traceprof run -- torchrun --nproc_per_node 2` of an
# unmodified DDP script (test/programs/torch_ddp.py: gloo on the CPU, an
# all-reduce per step), rank 1 sleeping 40 ms more in each step:
#   - one file per rank for the schedule's window, named by torchrun's RANK
#     (the launcher, which never steps, writes none), in the default folder
#     named after the script (traceprof_traces/torch_ddp), which `traceprof
#     run` also reports;
#   - the losses (all-reduced) are what they are without traceprof;
#   - merge puts both ranks on one timeline; summary --by rank names rank 1;
#   - --nnodes 2 on 127.0.0.1 (two torchrun "nodes", --node_rank 0 and 1,
#     one process each): the folder template n{node_rank}/l{local_rank}
#     puts rank 0 in n0/l0 and rank 1 in n1/l0.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' "torch without gloo"
run="$(dirname "$py")/torchrun"
[ -x "$run" ] || skip "no torchrun beside $py"
prog="$TP_TOP/test/programs/torch_ddp.py"
T="$BUILD/traceprof"
# A free port for each rendezvous.
port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export OMP_NUM_THREADS=1

plain=$(SLOW_RANK=1 SLEEP_MS=40 "$run" --nproc_per_node 2 --master_addr 127.0.0.1 --master_port "$(port)" \
	"$prog" 6 2>plain.err) || die "torchrun failed without traceprof: $(tail -5 plain.err)"
out=$(SLOW_RANK=1 SLEEP_MS=40 "$T" run --step torch --schedule wait=1,warmup=1,active=3,repeat=1 \
	-- "$run" --nproc_per_node 2 --master_addr 127.0.0.1 --master_port "$(port)" "$prog" 6 2>err.txt) ||
	die "torchrun failed under traceprof: $(tail -5 err.txt)"
[ "$out" = "$plain" ] || die "losses changed under traceprof: '$plain' vs '$out'"
files=$(cd traceprof_traces && find . -type f | sort | tr '\n' ' ')
[ "$files" = "./torch_ddp/rank0.step4.trace.json ./torch_ddp/rank1.step4.trace.json " ] ||
	die "want one file per rank in traceprof_traces/torch_ddp, got: $files"
grep -q "traceprof: 2 trace files written" err.txt && grep -q "torch_ddp/rank1.step4.trace.json" err.txt ||
	die "traceprof run did not report the ranks' files: $(grep traceprof: err.txt)"
check_trace traceprof_traces/torch_ddp/*.json >/dev/null
"$PYTHON" - traceprof_traces/torch_ddp/*.json <<'PY' || die "ranks' steps wrong"
import json, sys
for r, path in enumerate(sys.argv[1:]):
    t = json.load(open(path))
    di = t["distributedInfo"]
    assert (di["rank"], di["world_size"], di["backend"]) == (r, 2, "torchrun"), di
    steps = sorted(e["name"] for e in t["traceEvents"] if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
    assert steps == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"], (path, steps)
print("one file per rank, steps 2-4 ok")
PY
"$T" merge -o merged.json traceprof_traces/torch_ddp 2>merge.err || die "merge failed: $(cat merge.err)"
"$PYTHON" - merged.json <<'PY' || die "merged timeline wrong"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = sorted(e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name")
assert len(names) == 2 and names[0].startswith("rank 0") and names[1].startswith("rank 1"), names
steps = [e for e in ev if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")]
assert len({e["pid"] for e in steps}) == 2 and len(steps) == 6, len(steps)
print("merged:", names)
PY
"$T" summary --by rank traceprof_traces/torch_ddp >byrank.txt 2>byrank.err || die "summary --by rank failed: $(cat byrank.err)"
grep -qi "straggler.*rank 1" byrank.txt || die "summary --by rank did not name rank 1: $(cat byrank.txt)"
grep -i straggler byrank.txt

# Issue 42 item 1: no --master_port (torch 2.15's torchrun then gives its
# workers a UUID for TORCHELASTIC_RUN_ID) and no schedule (the documented
# default).  The files are the ranks' own, in traceprof_traces/torch_ddp
# where `traceprof run` says; the agent, whose own CUDA calls would have
# made a rank0 file labelled "rank 0: torchrun", writes none.  Before the
# fix: the ranks' files in traceprof_traces/<uuid>/, the agent's
# rank0.step0 in torch_ddp/, and only that one listed.
rm -rf traceprof_traces
SLOW_RANK=-1 "$T" run --step torch -- "$run" --nproc_per_node 2 "$prog" 2 >def.out 2>def.err ||
	die "torchrun without --master_port failed under traceprof: $(tail -5 def.err)"
files=$(cd traceprof_traces && find . -type f | sort | tr '\n' ' ')
case "$files" in
"./torch_ddp/rank0.step"*".trace.json ./torch_ddp/rank1.step"*".trace.json ") ;;
*) die "no --master_port, no schedule: want rank0 and rank1 in traceprof_traces/torch_ddp, got: $files" ;;
esac
[ "$(echo "$files" | wc -w)" = 2 ] || die "more than the ranks' files: $files"
grep -q "traceprof: 2 trace files written" def.err || die "traceprof run did not list both: $(grep traceprof: def.err)"
"$PYTHON" - traceprof_traces/torch_ddp/*.json <<'PY' || die "the files are not the ranks'"
import json, sys
for r, path in enumerate(sys.argv[1:]):
    t = json.load(open(path))
    assert t["distributedInfo"]["rank"] == r, (path, t["distributedInfo"])
    names = [e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "process_name"]
    assert not any("torchrun" in n for n in names), (path, names)
print("no --master_port, no schedule: rank0 and rank1 in torch_ddp")
PY

# --nnodes 2 on loopback, one process per node.
p=$(port)
for n in 0 1; do
	SLOW_RANK=-1 "$T" run -q --folder "$PWD/nn/n{node_rank}/l{local_rank}" --step torch \
		--schedule wait=1,active=2,repeat=1 -- \
		"$run" --nnodes 2 --node_rank $n --nproc_per_node 1 --master_addr 127.0.0.1 --master_port "$p" \
		"$prog" 3 >node$n.out 2>node$n.err &
	eval "pid$n=$!"
done
wait "$pid0" || die "node 0 failed: $(tail -5 node0.err)"
wait "$pid1" || die "node 1 failed: $(tail -5 node1.err)"
files=$(cd nn && find . -type f | sort | tr '\n' ' ')
[ "$files" = "./n0/l0/rank0.step2.trace.json ./n1/l0/rank1.step2.trace.json " ] ||
	die "--nnodes 2: want n0/l0/rank0 and n1/l0/rank1, got: $files"
echo "torchrun ok"
