"""Checks the windows of a framework's training run under
`traceprof run --step torch --pytorch modules,ops` (test/integration/torch_hf.sh,
torch_lightning.sh, torch_accelerate.sh, torch_fsdp.sh, torch_misc.sh):

    torch_window.py --steps 2,3 [--module NAME[*COUNT]]... [--op NAME]... [--range NAME]... [--no-modules]
                    [--world N] FILE...

  - the files together hold exactly the ProfilerStep#k given, each once per
    file (a file per rank holds them all);
  - every module event ("nn.Module: ...") and op event (cat cpu_op) lies
    inside one of its file's steps, and none was left unfinished;
  - each step holds each --module name (COUNT times exactly, when given: the
    calls of that module in one training step) and each --op, and at least
    one module event (unless --no-modules) and one op event, and each
    --range (a user_annotation: record_function() ranges such as FSDP's);
  - with --world N: N files, one per rank 0..N-1 (distributedInfo), each of
    world_size N.
Prints one line per file: its steps and how many module and op events."""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", required=True)
    ap.add_argument("--module", action="append", default=[])
    ap.add_argument("--op", action="append", default=[])
    ap.add_argument("--range", action="append", default=[])
    ap.add_argument("--no-modules", action="store_true")
    ap.add_argument("--world", type=int)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    want = ["ProfilerStep#%s" % s for s in a.steps.split(",")]
    need = []
    for m in a.module:
        name, _, count = m.partition("*")
        need.append((name, int(count) if count else None))
    ranks = []
    for path in a.files:
        doc = json.load(open(path))
        di = doc["distributedInfo"]
        ranks.append(di["rank"])
        assert a.world is None or di["world_size"] == a.world, "%s: %s" % (path, di)
        ev = doc["traceEvents"]
        X = [e for e in ev if e.get("ph") == "X"]
        steps = sorted((e for e in X if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
        got = [s["name"] for s in steps]
        assert got == want, "%s: steps %s, want %s" % (path, got, want)
        mods = [e for e in X if e["name"].startswith("nn.Module: ")]
        ops = [e for e in X if e.get("cat") == "cpu_op"]
        left = [e for e in mods + ops if (e.get("args") or {}).get("unfinished")]
        assert not left, "%s: %d events never ended, e.g. %s" % (path, len(left), left[:2])

        def inside(e, s):
            return s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"]

        out = [e for e in mods + ops if not any(inside(e, s) for s in steps)]
        assert not out, "%s: %d events outside the steps, e.g. %s" % (path, len(out), out[:2])
        for s in steps:
            sm = [e["name"] for e in mods if inside(e, s)]
            so = set(e["name"] for e in ops if inside(e, s))
            assert sm or a.no_modules, "%s %s: no module events" % (path, s["name"])
            assert so, "%s %s: no op events" % (path, s["name"])
            for name, count in need:
                n = sm.count(name)
                assert n and (count is None or n == count), \
                    "%s %s: %d of %r, want %s; it has %s" % (path, s["name"], n, name, count or ">0",
                                                          sorted(set(sm))[:30])
            sr = set(e["name"] for e in X if e.get("cat") == "user_annotation" and inside(e, s))
            for r in a.range:
                assert r in sr, "%s %s: no range %s; it has %s" % (path, s["name"], r, sorted(sr)[:30])
            for op in a.op:
                assert op in so, "%s %s: no %s; it has %s" % (path, s["name"], op, sorted(so)[:30])
        print("%s: %s, %d module and %d op events" % (path, " ".join(got), len(mods), len(ops)))
    if a.world is not None:
        assert sorted(ranks) == list(range(a.world)), "ranks %s, want 0..%d" % (ranks, a.world - 1)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("FAIL:", e, file=sys.stderr)
        sys.exit(1)
