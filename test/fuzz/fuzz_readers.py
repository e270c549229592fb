#!/usr/bin/env python3
"""Fuzz target over the command's readers (issue 43 item 2): every reader
fails in one `traceprof:` line, never a traceback.

    fuzz_readers.py [--seconds S] [--replay-only]

Replays every file under test/fuzz/crashes/ first (crashes found earlier,
kept as tests), then, for S seconds (default 20), mutates the seeds in
test/fuzz/corpus/ (bytes changed, tokens inserted, bytes removed, the file
cut, the footer's table's text edited, seeds joined; a seeded random
mutator, so that a time bound stays reproducible: the seed is printed, and
TP_FUZZ_SEED repeats a run) and runs, in this process,
`summary`, `summary --by step`, `summary --by rank`, `merge` and `export
--parquet` (when pyarrow is there) on each.  A command may succeed or fail
with SystemExit; anything else is a crash: the input is written to
test/fuzz/crashes/ (when TP_FUZZ_SAVE=1) and the script exits 1 with its
traceback."""

import contextlib
import io
import os
import random
import shutil
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from traceprof.cli.main import main as tp_main  # noqa: E402

try:
    import pyarrow  # noqa: F401
    HAVE_ARROW = True
except ImportError:
    HAVE_ARROW = False


def commands(path, work):
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    for f in ("merged.json",):
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(work, f))
    cmds = [["summary", path], ["summary", path, "--by", "step"],
            ["summary", path, "--by", "rank"], ["summary", path, "--from-events"],
            ["merge", "-o", os.path.join(work, "merged.json"), path]]
    if HAVE_ARROW:
        cmds.append(["export", "--parquet", out, path])
    return cmds


def run_one(path, work):
    """None, or (argv, the traceback) of the first command that crashed."""
    for argv in commands(path, work):
        err = io.StringIO()
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                tp_main(argv)
        except SystemExit:
            pass
        except Exception:  # noqa: BLE001 - a crash is what is looked for
            return argv, traceback.format_exc()
        if "Traceback" in err.getvalue():
            return argv, err.getvalue()
    return None


def name_of(seed):
    # The trace's extension, which picks the reader (.json, .json.gz, .pftrace).
    base = os.path.basename(seed)
    return "input" + base[base.index("."):]


# What is inserted, and what a table's text is replaced with.
_TOKENS = [b"{", b"}", b"[", b"]", b",", b'"', b"null", b"1e999", b"-", b"9" * 30,
           b"\\u0000", b"\xff", b'"x":', b"NaN", b"\n  ],\n  \"traceprof\": {"]
_TABLE = [b"null", b"[]", b'"a"', b"1" + b"0" * 400, b"-1", b"[1,2]", b"{}", b"true", b"1.5",
          b'["a","b",1,2,3,4]']


def mutate(rnd, b, datas, seeds):
    """1 to 4 edits: a byte set, a token inserted, bytes removed, the file
    cut, the footer's table's text changed, another seed appended."""
    for _ in range(rnd.randint(1, 4)):
        kind = rnd.choice(["set", "ins", "del", "cut", "table", "table", "join"])
        at = rnd.randrange(max(1, len(b)))
        if kind == "set" and b:
            b[at] = rnd.randrange(256)
        elif kind == "ins":
            b[at:at] = rnd.choice(_TOKENS)
        elif kind == "del":
            del b[at:at + rnd.randint(1, 64)]
        elif kind == "cut":
            del b[at:]
        elif kind == "table":
            t = bytes(b).rfind(b'"rows"')
            if t >= 0:
                t += rnd.randint(0, 400)
                b[t:t + rnd.randint(0, 8)] = rnd.choice(_TABLE)
        else:
            b += datas[rnd.choice(seeds)]
    return b


def fixed(work):
    """Files that cannot be read and outputs that cannot be made: each
    command fails with exactly one traceprof: line."""
    seed = os.path.join(HERE, "corpus", "demo.json")
    afile = os.path.join(work, "afile")
    with open(afile, "w"):
        pass
    empty_dir = os.path.join(work, "emptydir")
    os.makedirs(empty_dir, exist_ok=True)
    missing = os.path.join(work, "missing.json")
    cases = [["summary", missing], ["summary", "--by", "step", afile],
             ["summary", "--by", "rank", missing], ["summary", empty_dir],
             ["summary", "--by", "rank", empty_dir], ["merge", "-o", os.path.join(work, "m.json"),
                                                      missing],
             ["merge", "-o", os.path.join(afile, "x.json"), seed],
             ["merge", "-o", os.path.join(work, "m.json"), afile]]
    if os.access("/proc/self/mem", os.R_OK):
        cases.append(["summary", "/proc/self/mem"])  # read(2) fails: EIO
    if HAVE_ARROW:
        cases += [["export", "--parquet", os.path.join(afile, "out"), seed],
                  ["export", "--parquet", os.path.join(work, "o1"), missing],
                  ["export", "--parquet", afile, seed]]
    for argv in cases:
        err = io.StringIO()
        rc = 0
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                rc = tp_main(argv)
        except SystemExit as e:
            rc = e.code
        except Exception:  # noqa: BLE001
            print("FAIL: traceprof %s:\n%s" % (" ".join(argv), traceback.format_exc()))
            return 1
        lines = err.getvalue().splitlines()
        if not rc or len(lines) != 1 or not lines[0].startswith("traceprof: "):
            print("FAIL: traceprof %s: exit %r, stderr %r (one traceprof: line expected)"
                  % (" ".join(argv), rc, err.getvalue()))
            return 1
    print("ok: %d unreadable inputs and outputs that cannot be made: one line each"
          % len(cases))
    return 0


def replay(work):
    d = os.path.join(HERE, "crashes")
    n = 0
    for f in sorted(os.listdir(d)):
        if f.startswith("."):
            continue
        ext = f[f.index("."):] if "." in f else ".json"
        p = os.path.join(work, "crash" + ext)
        shutil.copyfile(os.path.join(d, f), p)
        r = run_one(p, work)
        if r:
            print("FAIL: test/fuzz/crashes/%s: traceprof %s:\n%s" % (f, " ".join(r[0]), r[1]))
            return 1
        n += 1
    print("ok: %d crashes found earlier replay without a traceback" % n)
    return 0


def main():
    argv = sys.argv[1:]
    seconds = 20.0
    if argv[:1] == ["--seconds"]:
        seconds, argv = float(argv[1]), argv[2:]
    work = tempfile.mkdtemp()
    try:
        if replay(work) or fixed(work):
            return 1
        if argv[:1] == ["--replay-only"]:
            return 0
        seeds = sorted(os.path.join(HERE, "corpus", f)
                       for f in os.listdir(os.path.join(HERE, "corpus")))
        datas = {s: open(s, "rb").read() for s in seeds}
        # CI (CI=true) runs one fixed sequence, checked before each landing,
        # so that a merge is never refused by a new input found that day;
        # a developer's run explores a new one each time.
        seed = int(os.environ.get("TP_FUZZ_SEED") or
                   (1 if os.environ.get("CI") else time.time_ns() % (1 << 32)))
        print("fuzz seed %d (TP_FUZZ_SEED=%d repeats this run)" % (seed, seed))
        rnd = random.Random(seed)
        stop = time.monotonic() + seconds
        found = []
        count = [0]
        while time.monotonic() < stop and not found:
            name = rnd.choice(seeds)
            b = mutate(rnd, bytearray(datas[name]), datas, seeds)
            p = os.path.join(work, name_of(name))
            with open(p, "wb") as f:
                f.write(b)
            count[0] += 1
            r = run_one(p, work)
            if r:
                found.append((bytes(b), name_of(name), r))
        if found:
            data, name, (cmd, tb) = found[0]
            if os.environ.get("TP_FUZZ_SAVE") == "1":
                keep = os.path.join(HERE, "crashes", "%d%s" % (len(os.listdir(
                    os.path.join(HERE, "crashes"))), name[len("input"):]))
                with open(keep, "wb") as f:
                    f.write(data)
                print("saved as %s" % keep)
            print("FAIL: traceprof %s crashed on a mutated %s:\n%s" % (" ".join(cmd), name, tb))
            return 1
        print("ok: %d mutated inputs in %.0f s, no traceback" % (count[0], seconds))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
