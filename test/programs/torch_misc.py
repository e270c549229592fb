"""Unmodified PyTorch training scripts (no traceprof import) that take the
less common paths through nn.Module and the dispatcher, each deterministic on
the CPU and printing its losses exactly (float.hex), so that a run under
traceprof must print what a plain run prints.  For
test/integration/torch_misc.sh.

    torch_misc.py MODE STEPS
      checkpoint  activation checkpointing (torch.utils.checkpoint): block 0
                  non-reentrant, block 1 reentrant, each with dropout, so the
                  recomputation in backward must replay the same random
                  numbers (a hook that used the RNG would change the losses)
      func        per-sample gradients with torch.func (functional_call,
                  vmap, grad), their mean set as .grad, then SGD.step()
      jit         a torch.jit.trace'd model trained with SGD
"""
import sys

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.drop = torch.nn.Dropout(0.25)

    def forward(self, x):
        return x + self.drop(torch.tanh(self.fc(x)))


class Net(torch.nn.Module):
    def __init__(self, ckpt=False):
        super().__init__()
        self.ckpt = ckpt
        self.embed = torch.nn.Linear(8, 16)
        self.blocks = torch.nn.ModuleList([Block(16), Block(16)])
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        x = self.embed(x)
        for i, b in enumerate(self.blocks):
            if self.ckpt:
                x = checkpoint(b, x, use_reentrant=(i == 1))
            else:
                x = b(x)
        return self.head(x)


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(12, 8, generator=g), torch.randint(0, 4, (12,), generator=g)


def run_checkpoint(steps):
    model = Net(ckpt=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def run_func(steps):
    from torch.func import functional_call, grad, vmap
    model = Net().eval()  # no dropout: per-sample randomness is not the point here
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()

    def loss_of(params, xi, yi):
        logits = functional_call(model, params, (xi.unsqueeze(0),))
        return F.cross_entropy(logits, yi.unsqueeze(0))

    per_sample = vmap(grad(loss_of), in_dims=(None, 0, 0))
    out = []
    for _ in range(steps):
        params = {k: v.detach() for k, v in model.named_parameters()}
        grads = per_sample(params, x, y)
        for k, p in model.named_parameters():
            p.grad = grads[k].mean(0)
        opt.step()
        with torch.no_grad():
            out.append(F.cross_entropy(model(x), y).item())
    return out


def run_jit(steps):
    x, y = data()
    model = torch.jit.trace(Net().eval(), (x,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def main():
    mode, steps = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    out = {"checkpoint": run_checkpoint, "func": run_func, "jit": run_jit}[mode](steps)
    print(mode, "losses", " ".join(float(v).hex() for v in out))


if __name__ == "__main__":
    main()
