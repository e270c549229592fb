# Hugging Face Accelerate under traceprof (issue 41 item 7; the torch venv's
# accelerate, scripts/install-deps --with-optional): an unmodified script
# (test/programs/accelerate_tiny.py: an MLP with dropout, AdamW and a
# DataLoader through Accelerator.prepare(), accelerator.backward(), 5 steps
# on the CPU) run without traceprof and under `traceprof run --step torch
# --pytorch modules,ops --schedule wait=1,warmup=1,active=2,repeat=1`:
#   1. torchrun --nproc_per_node 2 (Accelerate's MULTI_CPU: DDP over gloo);
#   2. accelerate launch --cpu (one process; more would need mpirun).
# Each: the same stdout (the losses averaged over the ranks in float.hex, a
# SHA-256 of the parameters), exit code and stderr (less traceprof: lines);
# one file per rank, each a window of exactly ProfilerStep#2 and #3 holding
# one event per module call (under DDP: DistributedDataParallel, then the
# model as "module" and its submodules as module.encoder.0 ...) and the
# ops, with DDP's gradient all-reduce (c10d::allreduce_) in each step of
# the two-process run.  The launchers (torchrun, accelerate), which never
# step, write no file.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch.distributed as d, accelerate; assert d.is_available() and d.is_gloo_available()' \
	"no accelerate, or torch without gloo (scripts/install-deps --with-optional installs accelerate)"
. "$TP_TOP/test/lib/frameworks.sh"
bin=$(dirname "$py")
[ -x "$bin/torchrun" ] && [ -x "$bin/accelerate" ] || skip "no torchrun or accelerate beside $py"
prog="$TP_TOP/test/programs/accelerate_tiny.py"
sched=wait=1,warmup=1,active=2,repeat=1

fw_same acc2 "$sched" "$bin/torchrun" --nproc_per_node 2 --master_addr 127.0.0.1 --master_port @PORT "$prog" 5
grep -q '^processes 2 distributed DistributedType.MULTI_CPU$' acc2.out0 || die "not two processes: $(cat acc2.out0)"
args=()
for m in "DistributedDataParallel" "MLP module" "Sequential module.encoder" "Linear module.encoder.0" \
	"Dropout module.encoder.2" "Linear module.head"; do
	args+=(--module "nn.Module: $m*1")
done
[ "$(ls acc2)" = "$(printf 'rank0.step3.trace.json\nrank1.step3.trace.json')" ] ||
	die "torchrun: want one file per rank, got: $(ls acc2)"
fw_check --steps 2,3 --world 2 "${args[@]}" --op aten::addmm --op c10d::allreduce_ \
	--op "autograd::engine::evaluate_function: AddmmBackward0" acc2/*.json

fw_same acc1 "$sched" "$bin/accelerate" launch --cpu "$prog" 5
grep -q '^processes 1 distributed DistributedType.NO$' acc1.out0 || die "not one process: $(cat acc1.out0)"
[ "$(ls acc1)" = rank0.step3.trace.json ] || die "accelerate launch: want one file, got: $(ls acc1)"
fw_check --steps 2,3 --world 1 --module "nn.Module: MLP*1" --module "nn.Module: Linear encoder.0*1" \
	--module "nn.Module: Linear head*1" --op aten::addmm acc1/*.json
echo "accelerate ok"
