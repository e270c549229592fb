"""An unmodified training script (no traceprof import) for
test/integration/torch_tensorboard.sh: an MLP with named submodules, SGD,
deterministic on the CPU.

    torch_tb.py STEPS [--own DIR]
        --own DIR: the script profiles itself with torch.profiler
        (with_stack=True, schedule wait=1, warmup=1, active=3, repeat=1,
        the steps counted by prof.step()) and writes TensorBoard's
        *.pt.trace.json into DIR with tensorboard_trace_handler: the
        reference that traceprof's trace of the same script is compared to.

Prints the losses, which a traced run must print unchanged."""
import sys

import torch
import torch.nn.functional as F


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU())
        self.head = torch.nn.Linear(64, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


def step(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 32)
    y = torch.randint(0, 4, (16,))
    losses = []
    if "--own" in sys.argv:
        out = sys.argv[sys.argv.index("--own") + 1]
        prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU],
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
            on_trace_ready=torch.profiler.tensorboard_trace_handler(out, worker_name="torch"),
            with_stack=True)
        with prof:
            for _ in range(steps):
                losses.append(step(model, opt, x, y))
                prof.step()
    else:
        for _ in range(steps):
            losses.append(step(model, opt, x, y))
    print("losses", " ".join("%.6f" % v for v in losses))


main()
