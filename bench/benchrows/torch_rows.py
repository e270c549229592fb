"""bench/run's rows 9 (the PyTorch hooks) and 10 (Python stacks), and the
memory of many threads (row 8's second part)."""
import glob
import os
import re
import shutil
import subprocess
import sys

from .common import (BUILD, HERE, QUICK, TRIALS, footers, kv, med, plain_env, row, run, spread,
                     tmpdir, traced_env)

# ---- 9: PyTorch hooks ------------------------------------------------------------------

def torch_venv_python():
    """The torch venv's python (scripts/install-deps --with-optional), or None."""
    venvs = os.environ.get("TP_VENVS") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "traceprof", "venvs")
    py = os.path.join(venvs, "torch", "bin", "python")
    return py if os.access(py, os.X_OK) else None


def torch_python():
    for py in (torch_venv_python(), sys.executable, "/usr/bin/python3"):
        if py is None:
            continue
        try:
            if subprocess.run([py, "-c", "import torch"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=120).returncode == 0:
                return py
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None


def bench_torch():
    py = torch_python()
    if py is None:
        row(9, "PyTorch hooks", "SKIP", "", "", "PyTorch not installed (scripts/install-deps --with-optional makes the torch venv)")
        return
    prog = os.path.join(HERE, "torch_hooks.py")
    boot = os.path.join(HERE, "..", "python", "traceprof", "pyboot")
    trials = "5" if QUICK else "15"
    cuda = subprocess.run([py, "-c", "import torch; print(int(torch.backends.cuda.is_built()))"],
                          stdout=subprocess.PIPE, text=True).stdout.strip() == "1"

    def measure(what, extra):
        folder = tmpdir("torch")
        try:
            env = traced_env(folder, {"TRACEPROF_BUFFER_EVENTS": str(1 << 20)})
            if extra is not None:
                env.update(extra)
                env["PYTHONPATH"] = boot
            return kv(run([py, prog, what, trials], env=env, timeout=600).stdout)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    cases = [("modules", "nn.Module forward call, --pytorch modules", {"TRACEPROF_PYTORCH": "modules"}),
             ("optimizer", "optimizer step(), --step torch", {"TRACEPROF_STEP": "torch"})]
    if cuda:
        cases.append(("ops", "ATen op, --pytorch ops", {"TRACEPROF_PYTORCH": "ops"}))
        cases.append(("ops", "ATen op, --pytorch ops,shapes", {"TRACEPROF_PYTORCH": "ops,shapes"}))
    else:
        row(9, "ATen op, --pytorch ops", "SKIP", "", "", "PyTorch built without CUDA (no NVTX emission)")
    base = {}
    for what, label, extra in cases:
        try:
            if what not in base:
                base[what] = measure(what, None)
            got = measure(what, extra)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            row(9, label, "FAILED", "", "", str(e)[:60])
            continue
        b = base[what]
        row(9, label + ": added per call", "%.0f ns" % (got["median_ns"] - b["median_ns"]),
            "%.0f-%.0f" % (got["min_ns"] - b["max_ns"], got["max_ns"] - b["min_ns"]))
        row(9, "  %s: without / with, per call" % what,
            "%.0f / %.0f ns" % (b["median_ns"], got["median_ns"]))
    bench_torch_loop(py, boot, cuda)
    bench_torch_ab(py, boot)
    bench_torch_instr(py, boot)


def bench_torch_loop(py, boot, cuda):
    """A training loop side by side (bench/torch_cost.py: the loop of
    test/programs/torch_block.py): plain, torch.profiler recording CPU
    activity every iteration, and traceprof's options, in interleaved rounds
    (each round runs every case once, in the same order); per case the
    median over rounds of each run's median iteration time.  Goals (issue
    31): steps + modules add at most a quarter of what torch.profiler adds,
    ops at most half."""
    prog = os.path.join(HERE, "torch_cost.py")
    rounds, iters = (3, 100) if QUICK else (7, 200)
    cases = [("plain", "plain", None),
             ("torch.profiler (CPU)", "profiler", None),
             ("--step torch", "plain", {"TRACEPROF_STEP": "torch"}),
             ("--step torch --pytorch modules", "plain",
              {"TRACEPROF_STEP": "torch", "TRACEPROF_PYTORCH": "modules"})]
    if cuda:
        cases.append(("--step torch --pytorch modules,ops", "plain",
                      {"TRACEPROF_STEP": "torch", "TRACEPROF_PYTORCH": "modules,ops"}))
    cases.append(("--step torch --pytorch modules --python-stack", "plain",
                  {"TRACEPROF_STEP": "torch", "TRACEPROF_PYTORCH": "modules",
                   "TRACEPROF_PYTHON_STACK": "1"}))
    got = {label: [] for label, _, _ in cases}
    for _ in range(rounds):
        for label, mode, extra in cases:
            folder = tmpdir("torchloop")
            try:
                if extra is None:
                    env = dict(os.environ)
                    env.pop("LD_PRELOAD", None)
                else:
                    env = traced_env(folder, {"TRACEPROF_BUFFER_EVENTS": str(1 << 20)})
                    env.update(extra)
                    env["PYTHONPATH"] = boot
                got[label].append(kv(run([py, prog, mode, str(iters)], env=env, timeout=600).stdout)["median_us"])
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                row(9, "loop, " + label, "FAILED", "", "", str(e)[:60])
                return
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    base = med(got["plain"])
    prof = med(got["torch.profiler (CPU)"]) - base
    for label, _, _ in cases:
        m = med(got[label])
        added = m - base
        target = verdict = ""
        if label.startswith("--step") and "ops" not in label and "python-stack" not in label:
            target = "<= %.0f us (1/4 of torch.profiler's)" % (prof / 4)
            verdict = "ok" if added <= prof / 4 else "over"
        elif "ops" in label:
            target = "<= %.0f us (1/2 of torch.profiler's)" % (prof / 2)
            verdict = "ok" if added <= prof / 2 else "over"
        row(9, "loop iteration, " + label, "%.0f us (%+.0f us, %+.1f%%)" % (m, added, 100 * added / base),
            spread(got[label], "%.0f"), target, verdict)


def bench_torch_ab(py, boot):
    """The same loop with every case in one process (bench/torch_ab.py):
    blocks of iterations rotate through plain, torch.profiler, traceprof's
    module hooks and operator emission, so that what differs from one
    process to the next (the loop's spread above) is the same for all.
    The goals of issue 31, against torch.profiler's added time in the same
    process."""
    prog = os.path.join(HERE, "torch_ab.py")
    blocks, per = (10, 5) if QUICK else (40, 10)
    folder = tmpdir("torchab")
    try:
        env = traced_env(folder, {"TRACEPROF_BUFFER_EVENTS": str(1 << 20), "TRACEPROF_STEP": "torch",
                                  "TRACEPROF_PYTORCH": "modules,ops", "PYTHONPATH": boot})
        got = kv(run([py, prog, str(blocks), str(per)], env=env, timeout=900).stdout)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        row(9, "one process, cases in turn", "FAILED", "", "", str(e)[:60])
        return
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    base = got["plain_wall"] / 1000
    prof = got["profiler_wall"] / 1000 - base
    row(9, "one process, %d blocks of %d iterations per case: plain" % (blocks, per),
        "%.0f us (cpu %.0f us)" % (base, got["plain_cpu"] / 1000))
    for case, label, share in (("profiler", "torch.profiler (CPU)", None),
                               ("modules", "traceprof module hooks", 4),
                               ("ops", "traceprof module hooks + ops (observer)", 2),
                               ("ops_nvtx", "traceprof module hooks + ops (NVTX emission)", None)):
        if case + "_wall" not in got:
            continue
        added = got[case + "_wall"] / 1000 - base
        cpu = (got[case + "_cpu"] - got["plain_cpu"]) / 1000
        target = verdict = ""
        if share:
            target = "<= %.0f us (1/%d of torch.profiler's)" % (prof / share, share)
            verdict = "ok" if added <= prof / share else "over"
        row(9, "  " + label, "%+.0f us (%+.1f%%), cpu %+.0f us" % (added, 100 * added / base, cpu), "",
            target, verdict)


CG_CTL_C = """#include <valgrind/callgrind.h>
void tp_cg_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void tp_cg_zero(void) { CALLGRIND_ZERO_STATS; }
void tp_cg_dump(const char *s) { CALLGRIND_DUMP_STATS_AT(s); }
"""


def bench_torch_instr(py, boot):
    """The cases of bench_torch_ab in instructions of the training thread
    (bench/torch_instr.py under callgrind): what the wall time's spread
    cannot decide."""
    label = "one process, instructions per iteration (callgrind, training thread)"
    if not shutil.which("valgrind") or not os.path.exists("/usr/include/valgrind/callgrind.h"):
        row(9, label, "SKIP", "", "", "valgrind or valgrind/callgrind.h missing")
        return
    prog = os.path.join(HERE, "torch_instr.py")
    iters, rounds = (1, 1) if QUICK else (3, 2)
    work = tmpdir("torchinstr")
    try:
        src, so = os.path.join(work, "cgctl.c"), os.path.join(work, "libcgctl.so")
        with open(src, "w") as f:
            f.write(CG_CTL_C)
        run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-o", so, src])
        env = traced_env(os.path.join(work, "traces"), {
            "TRACEPROF_BUFFER_EVENTS": str(1 << 20), "TRACEPROF_STEP": "torch",
            "TRACEPROF_PYTORCH": "modules,ops", "PYTHONPATH": boot})
        pre = env.pop("LD_PRELOAD")
        run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes",
             "--callgrind-out-file=" + os.path.join(work, "o.%p"), "--trace-children=yes",
             "env", "LD_PRELOAD=" + pre, py, prog, so, str(iters), str(rounds)],
            env=env, timeout=1800)
        got = {}
        for path in glob.glob(os.path.join(work, "o.*-01")):
            with open(path) as f:
                text = f.read(1 << 16)
            m = re.search(r"Client Request: (\w+)-\d+", text)
            n = re.search(r"^summary: (\d+)", text, re.M)
            if m and n:
                got.setdefault(m.group(1), []).append(int(n.group(1)) / iters)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        row(9, label, "FAILED", "", "", str(e)[:60])
        return
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if set(got) != {"plain", "profiler", "modules", "ops"}:
        row(9, label, "FAILED", "", "", "cases seen: %s" % sorted(got))
        return
    base = med(got["plain"])
    prof = med(got["profiler"]) - base
    row(9, label + ": plain", "%.2fM" % (base / 1e6))
    for case, what, share in (("profiler", "torch.profiler (CPU)", None),
                              ("modules", "traceprof module hooks", 4),
                              ("ops", "traceprof module hooks + ops (observer)", 2)):
        added = med(got[case]) - base
        target = verdict = ""
        if share:
            target = "<= %.2fM (1/%d of torch.profiler's)" % (prof / share / 1e6, share)
            verdict = "ok" if added <= prof / share else "over"
        row(9, "  " + what, "%+.2fM (%.2f of torch.profiler's)" % (added / 1e6, added / prof), "",
            target, verdict)


# ---- 10: Python stacks ----------------------------------------------------------------

def bench_python_stack():
    probe = os.path.join(BUILD, "standin", "scope", "libprobe13.so")
    if not os.path.exists(probe):
        row(10, "--python-stack per CUDA call", "SKIP", "", "", "%s not built" % probe)
        return
    prog = os.path.join(HERE, "python_stack.py")
    boot = os.path.join(HERE, "..", "python", "traceprof", "pyboot")
    trials = "5" if QUICK else "15"
    # pydll: the capture with the GIL held (plain LD_PRELOAD, no pyboot);
    # cdll: the shadow stack kept by pyboot's profile function, read without
    # the GIL; calls: what that profile function adds to each Python call.
    cases = [("pydll", 8, "PyDLL, GIL held, depth 8: added per CUDA call", False),
             ("pydll", 32, "PyDLL, GIL held, depth 32: added per CUDA call", False),
             ("cdll", 8, "CDLL, shadow stack, depth 8: added per CUDA call", True),
             ("cdll", 32, "CDLL, shadow stack, depth 32: added per CUDA call", True),
             ("calls", 8, "profile function: added per Python call", True)]
    for kind, depth, label, with_boot in cases:
        got = {}
        try:
            for mode in ("off", "on"):
                folder = tmpdir("pystack")
                try:
                    extra = {"TRACEPROF_BUFFER_EVENTS": str(1 << 20), "TRACEPROF_CUPTI": "off",
                             "TRACEPROF_PYTHON_STACK": "1" if mode == "on" else "0"}
                    if with_boot:
                        extra["PYTHONPATH"] = boot
                    env = traced_env(folder, extra)
                    got[mode] = kv(run([sys.executable, prog, probe, kind, str(depth), trials],
                                       env=env, timeout=600).stdout)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            row(10, "--python-stack, " + label, "FAILED", "", "", str(e)[:60])
            continue
        b, w = got["off"], got["on"]
        row(10, "--python-stack, " + label, "%.0f ns" % (w["median_ns"] - b["median_ns"]),
            "%.0f-%.0f" % (w["min_ns"] - b["max_ns"], w["max_ns"] - b["min_ns"]))
        row(10, "  off / on, per call", "%.0f / %.0f ns" % (b["median_ns"], w["median_ns"]))


def bench_threads_memory():
    # Issue 17, item 4: 1,000 short-lived threads one after another, each
    # recording 4 events (build/test/prog_threads_mem prints its own VmHWM at
    # its end).  Resident memory must follow the live threads, not the
    # threads ever seen.
    prog = os.path.join(BUILD, "test", "prog_threads_mem")
    if not os.access(prog, os.X_OK):
        row(8, "1,000 sequential short threads: peak RSS", "SKIP", "", "", "%s not built" % prog)
        return
    vals = {}
    for mode in ("without", "with"):
        hwms = []
        for t in range(TRIALS if not QUICK else 1):
            folder = tmpdir("thrmem")
            try:
                env = plain_env() if mode == "without" else traced_env(folder)
                out = run([prog, "1000", "4"], env=env).stdout
                if mode == "with":
                    written, dropped, _ = footers(folder)
                    if written < 4000 or dropped:
                        raise RuntimeError("threads_mem: %d written, %d dropped (want 4000, 0)"
                                           % (written, dropped))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            hwms.append(int(re.search(r"vmhwm_kb (\d+)", out).group(1)) / 1024)
        vals[mode] = hwms
    w = med(vals["with"])
    row(8, "1,000 sequential threads x 4 events: peak RSS (VmHWM)", "%.1f MiB" % w,
        spread(vals["with"]), "<= 256 MB", "met" if w <= 256 * 1e6 / 2**20 else "MISSED")
    row(8, "  same without traceprof", "%.1f MiB" % med(vals["without"]), spread(vals["without"]))
