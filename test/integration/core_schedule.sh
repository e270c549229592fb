# The step schedule against an independent transcription of torch.profiler's
# schedule and action table (test/lib/torch_oracle.py): for many parameter
# sets and step counts, the windows traceprof saves are exactly the ones torch
# saves, and each file holds exactly the ProfilerStep#N events of its steps.
. "$TP_TOP/test/lib/common.sh"
"$PYTHON" - <<'PY'
import glob, json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test/lib"))
import torch_oracle as tor

prog = os.path.join(os.environ["BUILD"], "test/prog_steps")
cases = [("", 0), ("", 4), ("active=1", 3), ("active=1", 0)]
for sched in ["wait=1,warmup=1,active=2", "wait=1,warmup=1,active=2,repeat=1",
              "wait=0,warmup=0,active=3", "wait=2,warmup=0,active=1,repeat=2",
              "skip_first=3,wait=1,warmup=1,active=1", "wait=0,warmup=2,active=1",
              "warmup=1,active=2,repeat=3,skip_first=1", "wait=3,warmup=1,active=4,repeat=0"]:
    for n in (0, 1, 2, 3, 5, 8, 13):
        cases.append((sched, n))
fails = 0
for i, (sched, n) in enumerate(cases):
    folder = f"out{i}"
    env = dict(os.environ, LD_PRELOAD=os.environ["TP_PRELOAD"], TRACEPROF_FOLDER=folder,
               TRACEPROF_LOG="error")
    if sched:
        env["TRACEPROF_SCHEDULE"] = sched
    r = subprocess.run([prog, str(n), "0", "1"], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "done\n", (sched, n, r)
    got = []
    for f in glob.glob(os.path.join(folder, "*.json")):
        d = json.load(open(f))
        a, b = d["traceprof"]["steps"]
        got.append((a, b))
        steps = sorted(int(e["name"].split("#")[1]) for e in d["traceEvents"]
                       if e.get("name", "").startswith("ProfilerStep#"))
        if steps != list(range(a, b + 1)):
            print(f"FAIL {sched!r} n={n}: {f} has ProfilerStep {steps}, want {a}..{b}")
            fails += 1
        if os.path.basename(f) != f"rank0.step{b}.trace.json":
            print(f"FAIL {sched!r} n={n}: file name {f}, want step {b}")
            fails += 1
    fn = tor.parse(sched) if sched else tor.default_schedule
    want, _ = tor.simulate(fn, n)
    if n == 0:
        # prog_steps with no iteration records nothing: traceprof writes no
        # file for such a process (issue 16), where torch would save its
        # implicit first step.
        want = []
    if sorted(got) != sorted(want):
        print(f"FAIL {sched!r} n={n}: saved windows {sorted(got)}, torch saves {sorted(want)}")
        fails += 1
print(f"{len(cases)} schedule cases, {fails} failures")
sys.exit(1 if fails else 0)
PY
