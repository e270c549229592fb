"""The module events of test/programs/torch_modules_life.py, checked for
torch_modules_c.sh and torch_modules_py.sh:

    torch_modules_check.py TRACE.json "ORDER" ROUNDS RAISED

ORDER: the script's "order" line (the class of each top-level model, in
turn); RAISED: "ends" when a forward that raised must end before its
parent's next child starts (always_call), "late" when it may end at its
parent's end (the Python hooks without always_call).  Checks: one complete
event per module call, none left open and no end without its begin; models
named by their own class; nesting; the raising forward's end; a second
thread's events on that thread; a model whose child raised a
BaseException (no always_call) ends, with that child, before the next model
starts (4 such models: 3 caught, then SystemExit out of the program)."""
import json
import sys

ev = json.load(open(sys.argv[1]))["traceEvents"]
order = sys.argv[2].split()
rounds = int(sys.argv[3])
late = sys.argv[4] == "late"
mods = sorted((e for e in ev if e.get("ph") == "X" and e["name"].startswith("nn.Module: ")),
              key=lambda e: (e["tid"], e["ts"], -e["dur"]))
left = [e for e in mods if (e.get("args") or {}).get("unfinished")]
assert not left, "%d module events never ended, e.g. %s" % (len(left), left[:2])
ends = [e for e in ev if e.get("ph") == "i" and e.get("name", "").startswith("nn.Module: ")]
assert not ends, "ends without their begin: %s" % ends[:2]
tids = sorted(set(e["tid"] for e in mods), key=lambda t: -sum(1 for e in mods if e["tid"] == t))
assert len(tids) == 2, "want module events on 2 threads, got %d" % len(tids)
main = [e for e in mods if e["tid"] == tids[0]]
side = [e for e in mods if e["tid"] == tids[1]]
# Every module call has its complete event: 2 per model, 3 per Catcher, 3
# per Net (after the rounds: 3 with a fresh Alpha after each, and the last).
want = rounds * 5 + 3 * 5 + 3
assert len(main) == want, "main thread: %d module events, want %d" % (len(main), want)
assert [e["name"] for e in side] == ["nn.Module: Beta", "nn.Module: ReLU inner"], side
tops = [e["name"][len("nn.Module: "):] for e in main
        if e["name"] in ("nn.Module: Alpha", "nn.Module: Beta")]
assert tops == order, "models named out of turn (a stale name?): %s vs %s" % (tops[:12], order[:12])


def inside(a, b):
    return b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"]


i = 0
while i < len(main):
    top = main[i]
    if top["name"] == "nn.Module: Net":
        first, raiser = sorted(main[i + 1:i + 3], key=lambda e: e["name"])
        assert first["name"] == "nn.Module: Identity first" and raiser["name"] == "nn.Module: Raiser raiser", main[i:i + 3]
        assert inside(first, top) and inside(raiser, top), main[i:i + 3]
        if i + 3 < len(main):
            assert top["ts"] + top["dur"] <= main[i + 3]["ts"], \
                "a model a BaseException went through ends after the next one starts: %s" % main[i:i + 4]
        i += 3
    elif top["name"] == "nn.Module: Catcher":
        # Ended late, the raising forward may hold the next child: by name.
        boom, after = sorted(main[i + 1:i + 3], key=lambda e: e["name"])
        assert boom["name"] == "nn.Module: Boom boom" and after["name"] == "nn.Module: Identity after", main[i:i + 3]
        assert inside(boom, top) and inside(after, top), main[i:i + 3]
        if not late:
            assert boom["ts"] + boom["dur"] <= after["ts"], \
                "the raising forward's end is missing or late: %s" % main[i:i + 3]
        i += 3
    else:
        inner = main[i + 1]
        want = {"nn.Module: Alpha": "nn.Module: Linear inner", "nn.Module: Beta": "nn.Module: ReLU inner"}
        assert inner["name"] == want[top["name"]] and inside(inner, top), main[i:i + 2]
        i += 2
