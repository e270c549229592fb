# PyTorch Lightning's Trainer under traceprof (issue 41 item 7; the torch
# venv's pytorch-lightning, scripts/install-deps --with-optional): an
# unmodified script (test/programs/lightning_tiny.py: embedding, a
# TransformerEncoderLayer with dropout, a head; 5 AdamW steps on the CPU
# through Lightning's closure-based optimizer step) run without traceprof
# and under `traceprof run --step torch --pytorch modules,ops --schedule
# wait=1,warmup=1,active=2,repeat=1`:
#   - the same stdout (losses in float.hex, a SHA-256 of the parameters),
#     exit code and stderr (Lightning's own lines; less traceprof: lines);
#   - one window of exactly ProfilerStep#2 and #3, each with one event per
#     module call (the LightningModule by its class, its submodules by
#     their qualified names) and the ops, forward and backward.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch, pytorch_lightning' "no pytorch_lightning (scripts/install-deps --with-optional installs it)"
. "$TP_TOP/test/lib/frameworks.sh"

fw_same lightning wait=1,warmup=1,active=2,repeat=1 "$py" "$TP_TOP/test/programs/lightning_tiny.py" "$PWD/out" 5
args=()
for m in "Tiny" "Embedding embed" "TransformerEncoderLayer encoder" "MultiheadAttention encoder.self_attn" \
	"Linear encoder.linear1" "Dropout encoder.dropout2" "LayerNorm encoder.norm2" "Linear head"; do
	args+=(--module "nn.Module: $m*1")
done
fw_check --steps 2,3 "${args[@]}" --op aten::addmm --op aten::embedding \
	--op "autograd::engine::evaluate_function: EmbeddingBackward0" lightning/*.json
echo "lightning ok"
