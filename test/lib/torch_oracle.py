"""An independent oracle for traceprof's schedule: torch.profiler.schedule and
the action table of torch.profiler.profile, transcribed from PyTorch's source
(../shared/seeds/torch-profiler-source.txt) into plain Python.

simulate(params, nsteps) runs `nsteps` calls of profile.step() followed by
profile.stop() and returns the saved windows as (first_step, last_step)
tuples, plus the warnings torch would emit.
"""

NONE, WARMUP, RECORD, RECORD_AND_SAVE = "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"


def schedule(wait, warmup, active, repeat=0, skip_first=0):
    assert wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0

    def schedule_fn(step):
        assert step >= 0
        if step < skip_first:
            return NONE
        step -= skip_first
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return NONE
        elif mod_step < wait + warmup:
            return WARMUP
        return RECORD if mod_step < num_steps - 1 else RECORD_AND_SAVE

    return schedule_fn


def default_schedule(_step):
    return RECORD


# (prev, cur) -> actions, as in torch.profiler.profile.__init__.
ACTION_MAP = {
    (NONE, NONE): [],
    (NONE, WARMUP): ["prepare"],
    (NONE, RECORD): ["prepare", "start"],
    (NONE, RECORD_AND_SAVE): ["prepare", "start"],
    (WARMUP, NONE): ["warn", "start", "stop"],
    (WARMUP, WARMUP): [],
    (WARMUP, RECORD): ["start"],
    (WARMUP, RECORD_AND_SAVE): ["start"],
    (RECORD, NONE): ["warn", "stop"],
    (RECORD, WARMUP): ["warn", "stop"],
    (RECORD, RECORD): [],
    (RECORD, RECORD_AND_SAVE): [],
    (RECORD_AND_SAVE, NONE): ["stop", "ready"],
    (RECORD_AND_SAVE, WARMUP): ["stop", "ready", "prepare"],
    (RECORD_AND_SAVE, RECORD): ["stop", "ready", "prepare", "start"],
    (RECORD_AND_SAVE, RECORD_AND_SAVE): ["stop", "ready", "prepare", "start"],
    (WARMUP, None): ["start", "stop"],
    (RECORD, None): ["stop", "ready"],
    (RECORD_AND_SAVE, None): ["stop", "ready"],
}


def simulate(fn, nsteps):
    saved, warnings = [], 0
    state = {"start": None, "last": None}

    def transit(prev, cur, step):
        nonlocal warnings
        for a in ACTION_MAP.get((prev, cur), []):
            if a == "warn":
                warnings += 1
            elif a == "start":
                state["start"] = step
            elif a == "stop":
                state["last"] = step - 1
            elif a == "ready":
                # A window saved after start_trace at `start` and stop_trace
                # before `step`.
                if state["start"] is not None and state["last"] >= state["start"]:
                    saved.append((state["start"], state["last"]))
                state["start"] = None

    step = 0
    action = fn(step)
    transit(NONE, action, 0)
    for _ in range(nsteps):
        prev = action
        step += 1
        action = fn(step)
        transit(prev, action, step)
    # stop(): the current step ends at exit.
    transit(action, None, step + 1)
    return saved, warnings


def parse(text):
    kv = dict(p.split("=") for p in text.split(",")) if text else {}
    return schedule(int(kv.get("wait", 0)), int(kv.get("warmup", 0)), int(kv["active"]),
                    int(kv.get("repeat", 0)), int(kv.get("skip_first", 0)))


if __name__ == "__main__":
    import sys
    fn = parse(sys.argv[1]) if sys.argv[1] else default_schedule
    saved, _ = simulate(fn, int(sys.argv[2]))
    for a, b in saved:
        print(a, b)
