"""An unmodified PyTorch training script (no traceprof import): an MLP and a
small transformer block (self-attention, layer norms, feed-forward), AdamW,
deterministic on the CPU, so that a run under traceprof prints exactly what
a plain run prints.  For test/integration/torch_ops.sh.

    torch_block.py STEPS
"""
import sys

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                       torch.nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 32)
        self.block = Block()
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.block(self.embed(x)).mean(1))


def setup():
    """The seeded model, optimizer and batch (bench/torch_cost.py runs the
    same loop)."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return model, opt, torch.randn(4, 6, 8), torch.randint(0, 4, (4,))


def main():
    steps = int(sys.argv[1])
    model, opt, x, y = setup()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print("losses", " ".join("%.6f" % v for v in losses))


if __name__ == "__main__":
    main()
