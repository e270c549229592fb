"""An unmodified PyTorch Lightning script (no traceprof import): a small
LightningModule (embedding, a transformer encoder layer, a head; dropout on)
trained by Lightning's Trainer on the CPU for STEPS optimizer steps, with
Lightning's closure-based optimizer step.  Prints each step's loss exactly
(float.hex) and a SHA-256 of the parameters after training.  For
test/integration/torch_lightning.sh.

    lightning_tiny.py OUTDIR STEPS
"""
import hashlib
import sys

import pytorch_lightning as pl
import torch
import torch.nn.functional as F


class Tiny(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(32, 16)
        self.encoder = torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.1,
                                                        batch_first=True)
        self.head = torch.nn.Linear(16, 32)
        self.losses = []

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids)))

    def training_step(self, batch, _idx):
        ids, = batch
        logits = self(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 32), ids[:, 1:].reshape(-1))
        self.losses.append(loss.detach().item())
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-2)


def main():
    out, steps = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(1)
    pl.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(1)
    data = torch.utils.data.TensorDataset(torch.randint(0, 32, (4 * steps, 12), generator=g))
    loader = torch.utils.data.DataLoader(data, batch_size=4, num_workers=0)
    model = Tiny()
    trainer = pl.Trainer(default_root_dir=out, max_steps=steps, accelerator="cpu", devices=1,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, deterministic=True)
    trainer.fit(model, loader)
    print("losses", " ".join(float(v).hex() for v in model.losses))
    h = hashlib.sha256()
    for name, p in sorted(model.named_parameters()):
        h.update(name.encode())
        h.update(p.detach().contiguous().numpy().tobytes())
    print("parameters", h.hexdigest())


if __name__ == "__main__":
    main()
