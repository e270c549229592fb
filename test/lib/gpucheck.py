"""Checks of a trace recorded on a real GPU (test/integration/gpu_*.sh):
CUPTI's events, their pairing with the host calls that caused them, and the
clock they share with the host side.  Only the tests that run where a GPU
answers use it; the stand-in tests check the same rules on made-up
records."""

# A GPU event's start may precede its call's start by this much and its end
# follow its step's end by this much (microseconds): the rounding of two
# clock conversions (3 decimals each), not a tolerance for a wrong clock,
# which is off by milliseconds to years.
SLACK_US = 1.0

# What host call each kind of GPU event may come from (lowercase
# substrings of its name).
CAUSES = {
    "kernel": ("launch",),
    "gpu_memcpy": ("memcpy",),
    "gpu_memset": ("memset",),
    "cuda_sync": ("synchronize", "wait"),
}
GPU_CATS = tuple(CAUSES)


def fail(msg):
    raise SystemExit("FAIL: " + msg)


def check_footer(d, label):
    """CUPTI was active and lost nothing; the host side dropped nothing."""
    tp = d["traceprof"]
    gpu = tp["gpu"]
    if gpu["cupti"] != "active":
        fail("%s: cupti %r" % (label, gpu["cupti"]))
    for k in ("cupti_records_dropped", "cupti_buffers_refused", "gpu_events_lost"):
        if gpu[k] != 0:
            fail("%s: %s = %r" % (label, k, gpu[k]))
    if tp["events_dropped"] != 0:
        fail("%s: %d host events dropped" % (label, tp["events_dropped"]))
    props = d.get("deviceProperties") or []
    if not props or not props[0].get("name") or not props[0].get("numSms"):
        fail("%s: deviceProperties %r" % (label, props))
    return props[0]["name"]


def steps_of(d, label, steps):
    """{N: ProfilerStep#N event} for exactly the steps expected."""
    found = {}
    for e in d["traceEvents"]:
        if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"):
            n = int(e["name"].split("#")[1])
            if n in found:
                fail("%s: two events %s" % (label, e["name"]))
            found[n] = e
    if sorted(found) != list(steps):
        fail("%s: steps %r, want %r" % (label, sorted(found), list(steps)))
    return found


def host_by_correlation(events, label):
    """{correlation: host API event}; a number is never given twice."""
    by = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            c = e.get("args", {}).get("correlation")
            if c is None:
                continue
            if c in by:
                fail("%s: correlation %r on %s and %s" % (label, c, by[c]["name"], e["name"]))
            by[c] = e
    return by


def step_of(steps, ts):
    for n, s in steps.items():
        if s["ts"] <= ts <= s["ts"] + s["dur"]:
            return n
    return None


def check_gpu_window(d, label, steps, counts, shared=False):
    """One trace file: footer, steps, every GPU event of the categories in
    `counts` (exact numbers), their pairing, flows and times.  `shared`: the
    program's runtime calls are interposed too, so a kernel's launch names
    its kernel.  Returns a short summary (what caused what, the closest a GPU
    event came to its step's end)."""
    device = check_footer(d, label)
    ev = d["traceEvents"]
    st = steps_of(d, label, steps)
    host = host_by_correlation(ev, label)
    gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
    for cat, want in counts.items():
        got = sum(1 for e in gpu if e["cat"] == cat)
        if got != want:
            fail("%s: %d %s events, want %d" % (label, got, cat, want))
    # Arrows: an id each, s at the call, f at the GPU event; by where they end.
    by_id = {}
    for e in ev:
        if e.get("cat") == "ac2g":
            if e["ph"] in by_id.setdefault(e["id"], {}):
                fail("%s: arrow id %r used twice" % (label, e["id"]))
            by_id[e["id"]][e["ph"]] = e
    arrows = {}
    for fl in by_id.values():
        if set(fl) != {"s", "f"}:
            fail("%s: half an arrow: %r" % (label, fl))
        f = fl["f"]
        arrows.setdefault((f["pid"], f["tid"], f["ts"]), []).append(fl["s"])
    causes = {}
    margin = None
    for g in gpu:
        a = g.get("args", {})
        if "stream" not in a or g["tid"] != a["stream"]:
            fail("%s: GPU event without its stream: %r" % (label, g))
        c = a.get("correlation")
        h = host.get(c)
        if h is None and g["cat"] == "cuda_sync":
            # CUDA also synchronizes inside calls that are not numbered
            # (cudaFree, cudaMemcpy to pageable memory, ...).
            causes[("cuda_sync", "(unnumbered call)")] = causes.get(("cuda_sync", "(unnumbered call)"), 0) + 1
            continue
        if h is None:
            fail("%s: %s %r (correlation %r) pairs with no host call" % (label, g["cat"], g["name"], c))
        if not any(w in h["name"].lower() for w in CAUSES[g["cat"]]):
            fail("%s: %s %r caused by %s" % (label, g["cat"], g["name"], h["name"]))
        causes.setdefault((g["cat"], h["name"]), 0)
        causes[(g["cat"], h["name"])] += 1
        if shared and g["cat"] == "kernel" and "Graph" not in h["name"] and \
                h["args"].get("kernel") != g["name"]:
            fail("%s: kernel %r launched as %r" % (label, g["name"], h["args"].get("kernel")))
        # On the host's clock: after its call started, within its call's step.
        if g["ts"] + SLACK_US < h["ts"]:
            fail("%s: %s %r starts %.3f us before its call %s" %
                 (label, g["cat"], g["name"], h["ts"] - g["ts"], h["name"]))
        n = step_of(st, h["ts"])
        if n is None:
            fail("%s: call %s at %.3f is in no step" % (label, h["name"], h["ts"]))
        end, step_end = g["ts"] + g["dur"], st[n]["ts"] + st[n]["dur"]
        if g["cat"] != "cuda_sync" and end > step_end + SLACK_US:
            fail("%s: %s %r ends %.3f us after its step %d" % (label, g["cat"], g["name"],
                                                              end - step_end, n))
        margin = step_end - end if margin is None else min(margin, step_end - end)
        starts = arrows.get((g["pid"], g["tid"], g["ts"]), [])
        if not [x for x in starts if (x["pid"], x["tid"], x["ts"]) == (h["pid"], h["tid"], h["ts"])]:
            fail("%s: no arrow from %s to %s %r" % (label, h["name"], g["cat"], g["name"]))
    # One stream runs one kernel at a time.
    by_stream = {}
    for g in gpu:
        if g["cat"] == "kernel":
            by_stream.setdefault((g["pid"], g["tid"]), []).append(g)
    for ks in by_stream.values():
        ks.sort(key=lambda e: e["ts"])
        for p, q in zip(ks, ks[1:]):
            if q["ts"] + SLACK_US < p["ts"] + p["dur"]:
                fail("%s: kernels overlap on stream %r: %r then %r" % (label, p["tid"], p, q))
    return "%s; %s; %d streams; closest to a step's end: %.1f us" % (
        device, ", ".join("%d %s <- %s" % (v, k[0], k[1]) for k, v in sorted(causes.items())),
        len(by_stream), margin if margin is not None else -1)
