# Hugging Face transformers' Trainer under traceprof (issue 41 item 7; the
# torch venv's transformers, scripts/install-deps --with-optional): an
# unmodified script (test/programs/hf_trainer.py: a 2-layer GPT-2 from a
# GPT2Config with tiny dimensions, token ids from torch, nothing downloaded,
# 5 AdamW steps on the CPU) run without traceprof and under `traceprof run
# --step torch --pytorch modules,ops --schedule wait=1,warmup=1,active=2,repeat=1`:
#   - the same stdout (each logged loss and grad norm in float.hex, a
#     SHA-256 of the parameters after training), exit code and stderr (less
#     traceprof: lines);
#   - one window of exactly ProfilerStep#2 and #3 (a step per optimizer
#     step, through accelerate's optimizer wrapper), each holding one event
#     per module call of the forward (GPT2LMHeadModel, its blocks,
#     attention, MLP, the lm_head, with their qualified names) and the ops
#     (addmm, scaled_dot_product_attention, the backward), none outside.
#   - gradient_accumulation_steps=2 (4 optimizer steps): a step is one
#     optimizer step (Accelerate's optimizer wrapper skips the inner step()
#     of the passes that only accumulate), so each step holds two forwards;
#   - again with TrainingArguments(torch_compile=True) (backend aot_eager:
#     Dynamo and AOTAutograd without inductor's C++ build, which would take
#     minutes here): the same checks, less the per-module counts.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch, transformers' "no transformers (scripts/install-deps --with-optional installs it)"
. "$TP_TOP/test/lib/frameworks.sh"
prog="$TP_TOP/test/programs/hf_trainer.py"
sched=wait=1,warmup=1,active=2,repeat=1

fw_same hf "$sched" "$py" "$prog" "$PWD/out" 5
args=()
for m in "GPT2LMHeadModel" "GPT2Model transformer" "Embedding transformer.wte" \
	"GPT2Block transformer.h.0" "GPT2Block transformer.h.1" "GPT2Attention transformer.h.1.attn" \
	"Conv1D transformer.h.0.attn.c_attn" "GPT2MLP transformer.h.1.mlp" \
	"Dropout transformer.h.0.mlp.dropout" "LayerNorm transformer.ln_f" "Linear lm_head"; do
	args+=(--module "nn.Module: $m*1")
done
fw_check --steps 2,3 "${args[@]}" --op aten::addmm --op aten::scaled_dot_product_attention \
	--op "autograd::engine::evaluate_function: AddmmBackward0" hf/*.json

fw_same hf_acc "$sched" "$py" "$prog" "$PWD/out_a" 4 --accumulate 2
fw_check --steps 2,3 --module "nn.Module: GPT2LMHeadModel*2" --module "nn.Module: GPT2Block transformer.h.1*2" \
	--op "autograd::engine::evaluate_function: AddmmBackward0" hf_acc/*.json

# torch.compile: the module hooks stay out of Dynamo's sight
# (pyboot/traceprof_compile.py), so the losses, stderr and graph breaks are
# those of the untraced run, and the compiled model's call is recorded.
fw_same hf_compile "$sched" "$py" "$prog" "$PWD/out_c" 5 --compile
fw_check --steps 2,3 --op aten::addmm hf_compile/*.json
echo "hf Trainer ok"
