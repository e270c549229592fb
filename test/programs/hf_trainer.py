"""An unmodified Hugging Face Trainer script (no traceprof import): a 2-layer
GPT-2 built from a GPT2Config with tiny dimensions (nothing downloaded: no
pretrained weights, no tokenizer; the token ids come from a torch
generator), trained on the CPU for STEPS optimizer steps.  It prints what
must not change under traceprof, exactly: each logged loss and grad norm
(float.hex) and a SHA-256 of every parameter after training.  For
test/integration/torch_hf.sh.

    hf_trainer.py OUTDIR STEPS [--compile] [--accumulate N]
        --compile: TrainingArguments(torch_compile=True) with the aot_eager
          backend (Dynamo and AOTAutograd, without inductor's C++ build)
        --accumulate N: gradient_accumulation_steps=N (N forward/backward
          passes per optimizer step; Accelerate's optimizer wrapper skips
          the step() of the others)
"""
import hashlib
import sys

import torch
from transformers import (GPT2Config, GPT2LMHeadModel, PrinterCallback, Trainer,
                          TrainingArguments)
from transformers.utils import logging as hf_logging


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, length, vocab):
        g = torch.Generator().manual_seed(1)
        self.ids = torch.randint(0, vocab, (n, length), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def main():
    out, steps = sys.argv[1], int(sys.argv[2])
    compile_ = "--compile" in sys.argv
    acc = int(sys.argv[sys.argv.index("--accumulate") + 1]) if "--accumulate" in sys.argv else 1
    hf_logging.set_verbosity_error()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=64, n_positions=16, n_embd=32, n_layer=2, n_head=2,
                     resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1)
    model = GPT2LMHeadModel(cfg)
    kw = {}
    if compile_:
        kw = {"torch_compile": True, "torch_compile_backend": "aot_eager"}
    args = TrainingArguments(output_dir=out, max_steps=steps, per_device_train_batch_size=4,
                             learning_rate=1e-3, logging_steps=1, save_strategy="no",
                             report_to="none", disable_tqdm=True, use_cpu=True, seed=0,
                             dataloader_num_workers=0, gradient_accumulation_steps=acc, **kw)
    trainer = Trainer(model=model, args=args, train_dataset=Tokens(4 * steps * acc, 16, 64))
    # The printer writes train_runtime and samples per second: times.
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    for log in trainer.state.log_history:
        if "loss" in log:
            print("step", log["step"], "loss", float(log["loss"]).hex(),
                  "grad_norm", float(log["grad_norm"]).hex())
    h = hashlib.sha256()
    for name, p in sorted(trainer.model.named_parameters()):
        h.update(name.encode())
        h.update(p.detach().contiguous().numpy().tobytes())
    print("parameters", h.hexdigest())


if __name__ == "__main__":
    main()
