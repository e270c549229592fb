# The less common paths through nn.Module and the dispatcher (issue 41
# item 7), each an unmodified script (test/programs/torch_misc.py, 5 SGD
# steps on the CPU, losses printed with float.hex) run without traceprof
# and under `traceprof run --step torch --pytorch modules,ops --schedule
# wait=1,warmup=1,active=2,repeat=1`: the same stdout, exit code and stderr
# (less traceprof: lines), and one window of ProfilerStep#2 and #3 whose
# every module and op event lies inside a step:
#   - checkpoint: activation checkpointing, block 0 non-reentrant, block 1
#     reentrant, both with dropout: each block's forward is recorded twice
#     in a step (the forward and its recomputation in backward), and the
#     recomputation replays the same random numbers (same losses);
#   - func: torch.func per-sample gradients (functional_call under
#     vmap(grad(...))): the model's modules are recorded in the
#     transformed call as in the plain one, twice a step (the grad pass
#     and the loss printed after the step);
#   - jit: a torch.jit.trace'd model: one module event for the traced
#     model (TorchScript runs its submodules without Python hooks) and its
#     ops, forward and backward.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch, torch.func, torch.utils.checkpoint' "torch with torch.func does not import"
. "$TP_TOP/test/lib/frameworks.sh"
prog="$TP_TOP/test/programs/torch_misc.py"
sched=wait=1,warmup=1,active=2,repeat=1

fw_same checkpoint "$sched" "$py" "$prog" checkpoint 5
fw_check --steps 2,3 --module "nn.Module: Net*1" --module "nn.Module: Block blocks.0*2" \
	--module "nn.Module: Block blocks.1*2" --module "nn.Module: Dropout blocks.1.drop*2" \
	--module "nn.Module: Linear head*1" --op aten::tanh --op aten::dropout --op CheckpointFunctionBackward \
	--op "autograd::engine::evaluate_function: TanhBackward0" checkpoint/*.json

fw_same func "$sched" "$py" "$prog" func 5
fw_check --steps 2,3 --module "nn.Module: Net*2" --module "nn.Module: Block blocks.0*2" \
	--module "nn.Module: Linear head*2" --op aten::mm --op aten::tanh func/*.json

fw_same jit "$sched" "$py" "$prog" jit 5
fw_check --steps 2,3 --module "nn.Module: TopLevelTracedModule*1" --op aten::mm --op aten::tanh \
	--op "autograd::engine::evaluate_function: TanhBackward0" jit/*.json
echo "torch misc ok"
