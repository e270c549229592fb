"""Module events through the library's C hooks (test/integration/
torch_modules_c.sh): an unmodified-style script, no traceprof import.

    torch_modules_life.py ROUNDS

Prints which hooks PyTorch holds ("hooks builtin" when both global forward
hooks are builtin functions, the library's), then, each round:
  - builds a fresh model of one of two classes (Alpha or Beta, alternating)
    in a function and drops it after one call, so that CPython reuses the
    freed modules' addresses for the next round's other class;
  - calls a module whose forward raises inside a module that catches it;
  - calls a model on a second thread.
Then, for each BaseException that is no Exception (KeyboardInterrupt,
SystemExit, GeneratorExit: PyTorch's always_call hooks do not run for
them), calls a model whose child raises it, catches it, and calls a fresh
Alpha (whose names must not be lost).  It ends by raising SystemExit (exit
status 0) from inside a model.
Prints the class of every top-level model called, in order, so the test can
match each event's name against it, and how many addresses held a model of
each class in turn.
"""
import sys
import threading

import torch


class Alpha(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.inner(x)


class Beta(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.ReLU()

    def forward(self, x):
        return self.inner(x)


class Boom(torch.nn.Module):
    def forward(self, x):
        raise ValueError("boom")


class Catcher(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.boom = Boom()
        self.after = torch.nn.Identity()

    def forward(self, x):
        try:
            self.boom(x)
        except ValueError:
            pass
        return self.after(x)


class Raiser(torch.nn.Module):
    def __init__(self, exc):
        super().__init__()
        self.exc = exc

    def forward(self, x):
        raise self.exc()


class Net(torch.nn.Module):
    def __init__(self, exc):
        super().__init__()
        self.first = torch.nn.Identity()
        self.raiser = Raiser(exc)

    def forward(self, x):
        return self.raiser(self.first(x))


def once(cls, x):
    m = cls()
    m(x)
    return id(m)


def main():
    rounds = int(sys.argv[1])
    mm = torch.nn.modules.module
    hooks = list(mm._global_forward_pre_hooks.values()) + list(mm._global_forward_hooks.values())
    kinds = sorted(set(type(h).__name__ for h in hooks))
    print("hooks", ",".join(kinds) or "none")
    x = torch.zeros(2)
    catcher = Catcher()
    order = []
    ids = {}
    for i in range(rounds):
        cls = (Alpha, Beta)[i % 2]
        ids.setdefault(once(cls, x), set()).add(cls.__name__)
        order.append(cls.__name__)
        catcher(x)
    t = threading.Thread(target=lambda: Beta()(x), name="side")
    t.start()
    t.join()
    for exc in (KeyboardInterrupt, SystemExit, GeneratorExit):
        try:
            Net(exc)(x)
        except exc:
            pass
        once(Alpha, x)
        order.append("Alpha")
    print("order", " ".join(order))
    # How many addresses held a model of each class in turn: the test needs
    # one, or stale names could not show.
    print("reused", sum(1 for v in ids.values() if len(v) == 2))
    sys.stdout.flush()
    Net(SystemExit)(x)


if __name__ == "__main__":
    main()
