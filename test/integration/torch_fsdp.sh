# FSDP2 (torch.distributed.fsdp.fully_shard) under traceprof (issue 41 item
# 7): an unmodified script (test/programs/torch_fsdp2.py: a CPU device mesh,
# each block and the whole model sharded, AdamW, 5 steps) under torchrun
# --nproc_per_node 2 with gloo, run without traceprof and under `traceprof
# run --step torch --pytorch modules,ops --schedule wait=1,warmup=1,active=2,repeat=1`:
#   - the same stdout (losses averaged over the ranks in float.hex, a
#     SHA-256 of the full parameters gathered from the shards), exit code
#     and stderr (less traceprof: lines);
#   - one file per rank, each a window of exactly ProfilerStep#2 and #3
#     holding one event per module call (fully_shard renames the classes:
#     FSDPNet, FSDPBlock blocks.0), the ops with FSDP's collectives
#     (c10d::_allgather_base_, c10d::_reduce_scatter_base_) and FSDP's own
#     record_function ranges (FSDP::pre_forward (blocks.0), ...).
# A torch without fully_shard, or whose gloo cannot run it on the CPU, is a
# SKIP that says so.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' "torch without gloo"
"$py" -c 'from torch.distributed.fsdp import fully_shard; from torch.distributed.device_mesh import init_device_mesh' 2>/dev/null ||
	skip "this torch ($("$py" -c 'import torch; print(torch.__version__)')) has no torch.distributed.fsdp.fully_shard (FSDP2)"
. "$TP_TOP/test/lib/frameworks.sh"
bin=$(dirname "$py")
[ -x "$bin/torchrun" ] || skip "no torchrun beside $py"
prog="$TP_TOP/test/programs/torch_fsdp2.py"

# A torch whose gloo lacks what FSDP2 needs on the CPU
# (all_gather_into_tensor, reduce_scatter_tensor) fails without traceprof
# already: a SKIP.
fw_unsupported() {
	grep -Eqi 'gloo|not supported|does not support|NotImplementedError|unsupported' "$1" || return 0
	skip "FSDP2 does not run on the CPU with this torch's gloo: $(grep -Ei 'gloo|support|NotImplemented' "$1" | tail -1)"
}
fw_same fsdp wait=1,warmup=1,active=2,repeat=1 \
	"$bin/torchrun" --nproc_per_node 2 --master_addr 127.0.0.1 --master_port @PORT "$prog" 5
[ "$(ls fsdp)" = "$(printf 'rank0.step3.trace.json\nrank1.step3.trace.json')" ] ||
	die "want one file per rank, got: $(ls fsdp)"
args=()
for m in "FSDPNet" "Linear embed" "FSDPBlock blocks.0" "FSDPBlock blocks.1" "Linear blocks.1.fc2" "Linear head"; do
	args+=(--module "nn.Module: $m*1")
done
fw_check --steps 2,3 --world 2 "${args[@]}" --op aten::addmm --op c10d::_allgather_base_ \
	--op c10d::_reduce_scatter_base_ --range "FSDP::pre_forward (blocks.0)" \
	--range "FSDP::post_backward_reduce (blocks.1)" fsdp/*.json
echo "fsdp2 ok"
