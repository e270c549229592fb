"""A training loop whose model is torch.compile'd, for
test/integration/torch_compile.sh: an unmodified-style script (no
traceprof import) that prints everything a traced run must reproduce bit
for bit.

    torch_compile.py HOW BACKEND DYNAMIC FULLGRAPH [STEPS]

HOW: "module" (torch.compile(model)), "method" (model.compile()) or
"function" (a compiled function that calls the model); BACKEND: eager,
aot_eager or inductor; DYNAMIC: 1 for dynamic=True (the batch size changes
each step), 0 for the default; FULLGRAPH: 1 for fullgraph=True, 0 for a
model with a graph break of its own (a print in forward; the test then
compares the graph_break counters).  Prints each step's loss (float.hex),
a hash of the gradients' bytes, a draw of the RNG after the loop, the
compiled output's hash, and Dynamo's counters: graph breaks, graphs,
captured calls and recompiles.
"""
import hashlib
import sys

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.drop = torch.nn.Dropout(0.25)

    def forward(self, x):
        return self.drop(torch.nn.functional.gelu(self.lin(x)))


class Net(torch.nn.Module):
    def __init__(self, breaks):
        super().__init__()
        self.inp = torch.nn.Linear(8, 16)
        self.blocks = torch.nn.Sequential(Block(), Block())
        self.norm = torch.nn.LayerNorm(16)
        self.out = torch.nn.Linear(16, 4)
        self.breaks = breaks

    def forward(self, x):
        h = self.blocks(torch.relu(self.inp(x)))
        if self.breaks:
            print("forward", tuple(h.shape))  # a graph break of the program's own
        return self.out(self.norm(h))


def digest(tensors):
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def main():
    how, backend, dynamic, full = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    torch.manual_seed(0)
    model = Net(breaks=not full)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    kw = dict(backend=backend, fullgraph=full, dynamic=True if dynamic else None)
    if how == "module":
        run = torch.compile(model, **kw)
    elif how == "method":
        model.compile(**kw)
        run = model
    else:
        @torch.compile(**kw)
        def run(x):
            return model(x) * 1.5
    for i in range(steps):
        x = torch.randn(6 + (i if dynamic else 0), 8)
        y = run(x)
        loss = y.square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", i, "loss", loss.item().hex(), "out", digest([y]),
              "grads", digest(p.grad for p in model.parameters()))
    print("params", digest(model.parameters()))
    print("rng", torch.rand(3).tolist())
    from torch._dynamo.utils import counters
    print("graph_breaks", sum(counters["graph_break"].values()))
    for k in ("graph_break", "stats", "recompiles", "frames"):
        print(k, sorted(counters[k].items()))


if __name__ == "__main__":
    main()
