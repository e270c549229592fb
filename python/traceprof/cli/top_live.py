"""`traceprof top`'s model: where a job's live files are, reading them, and
what each process is doing now (its status word, the call it is stalled
in) and which one is the straggler.  The screen (top_screen.py) and the
plain and JSON snapshots (top.py) show what snapshot() returns.

The live file (docs/live.md) is written by each traced process's flush
thread about once a second, replaced atomically (write a dot file, then
rename), as <trace folder>/.live/<host>.<pid>.json."""

import glob
import json
import os
import time

from .ranks import _job_median, _median, robust, verdict
from .runfiles import launcher_vars, run_name, template_glob

LIVE_SUBDIR = ".live"
DEFAULT_FOLDER = "traceprof_traces/{run_name}"

# A file not rewritten for this many of its own update periods is "stale":
# its process was killed (SIGKILL, OOM killer), its node is gone, or its
# flush thread cannot run.  Never less than STALE_MIN_S, so that a reader
# on another node whose clock is a little ahead does not call every
# process stale between two writes.
STALE_INTERVALS = 5
STALE_MIN_S = 3.0

# Keys every live file holds, and the types they may have (None: null).
_N = type(None)
_SCHEMA = (("host", (str,)), ("pid", (int,)), ("program", (str,)), ("rank", (int, _N)),
           ("local_rank", (int, _N)), ("world_size", (int, _N)), ("run", (str,)),
           ("interval_ms", (int,)), ("updated_ns", (int,)), ("started_ns", (int,)),
           ("state", (str,)), ("exit_status", (int, _N)), ("step", (int,)),
           ("step_started_ns", (int, _N)), ("steps", (list,)), ("last_step", (int, _N)),
           ("recording", (bool,)), ("window", (dict, _N)), ("events", (int,)),
           ("dropped", (int,)), ("top", (list,)), ("threads", (list,)))


class LiveError(Exception):
    """No live file to show: the message names the folder and the fix."""


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def check(doc):
    """None when doc is a live file's object, else why not (one phrase)."""
    if not isinstance(doc, dict) or doc.get("traceprofLive") != 1:
        return "not a traceprof live file (no \"traceprofLive\": 1)"
    for key, types in _SCHEMA:
        if key not in doc:
            return "no \"%s\"" % key
        v = doc[key]
        # (JSON's true is a Python bool, and a bool is an int to isinstance.)
        if (bool in types) != isinstance(v, bool) or not isinstance(v, types):
            return "\"%s\" is %s" % (key, json.dumps(v)[:40])
    if doc["state"] not in ("running", "finished"):
        return "\"state\" is %s" % json.dumps(doc["state"])[:40]
    if not all(_int(d) and d >= 0 for d in doc["steps"]):
        return "\"steps\" holds something else than durations in ns"
    return None


def read_file(path):
    """(live object, None) or (None, why it was skipped)."""
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 22)
    except FileNotFoundError:
        return None, "gone while read (replaced or removed)"
    except OSError as e:
        return None, e.strerror or str(e)
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        return None, "not JSON (%s)" % str(e)[:60]
    why = check(doc)
    return (None, why) if why else (doc, None)


def _live_names(d):
    """The live files of folder d: <host>.<pid>.json, not the writers' dot
    files (.<name>.tmp, being written)."""
    try:
        with os.scandir(d) as it:
            return sorted(os.path.join(d, e.name) for e in it
                          if e.name.endswith(".json") and not e.name.startswith("."))
    except OSError:
        return []


def live_dirs(folder, env=None):
    """(the folders of live files to read, what was looked at, for
    messages).  folder: what the user gave (None: the default).  A folder
    given may be a .live folder itself (or TRACEPROF_LIVE_DIR's), a trace
    folder holding .live/, or a folder of run folders (each with its
    .live/).  Without one: TRACEPROF_LIVE_DIR, else the folder `traceprof
    run` writes to (TRACEPROF_FOLDER, default traceprof_traces/{run_name},
    with the run name from the environment as the library chooses it;
    unknown variables, the run name without one, match every folder)."""
    env = os.environ if env is None else env
    if folder is not None:
        if not os.path.isdir(folder):
            raise LiveError("top: '%s' is not a folder; give a trace folder (traceprof run's "
                            "--folder, TRACEPROF_FOLDER), its .live folder, or a folder of "
                            "run folders" % folder)
        own = os.path.join(folder, LIVE_SUBDIR)
        if os.path.basename(os.path.normpath(folder)) == LIVE_SUBDIR or \
                (not os.path.isdir(own) and _live_names(folder)):
            return [folder], folder
        dirs = [own] if os.path.isdir(own) else []
        dirs += sorted(glob.glob(os.path.join(glob.escape(folder), "*", LIVE_SUBDIR)))
        return dirs, os.path.join(folder, LIVE_SUBDIR)
    live = env.get("TRACEPROF_LIVE_DIR")
    var, tmpl = ("TRACEPROF_LIVE_DIR", live) if live else \
        ("TRACEPROF_FOLDER", env.get("TRACEPROF_FOLDER") or DEFAULT_FOLDER)
    known = dict(launcher_vars(env))
    for k in ("rank", "local_rank", "world_size", "local_world_size", "node_rank"):
        known.pop(k)  # every rank's folder, not this shell's
    rn = run_name(env, None)
    if rn:
        known["run_name"] = rn
    pat = template_glob(tmpl, known)
    if pat is None:
        raise LiveError("top: %s=%s is not a folder template the library takes; fix it or "
                        "give the folder: traceprof top FOLDER" % (var, tmpl))
    shown = template_glob(tmpl, known, True) or tmpl
    if not live:
        pat, shown = os.path.join(pat, LIVE_SUBDIR), os.path.join(shown, LIVE_SUBDIR)
    else:
        shown += " (TRACEPROF_LIVE_DIR)"
    return sorted(d for d in glob.glob(pat) if os.path.isdir(d)), shown


def read_all(dirs):
    """(live objects with their "_path", skipped [(path, why)])."""
    docs, skipped = [], []
    for d in dirs:
        for path in _live_names(d):
            doc, why = read_file(path)
            if doc is None:
                skipped.append((path, why))
            else:
                doc["_path"] = path
                docs.append(doc)
    return docs, skipped


def pick_run(docs, run=None, every=False):
    """(the live objects of the run to show, its name, the other runs'
    names).  run: the one asked for (--run); every (--all): all of them
    (name None).  Otherwise the run that wrote last."""
    runs = {}
    for d in docs:
        runs.setdefault(d["run"], []).append(d)
    if every or not runs:
        return docs, None, sorted(runs)
    if run is None:
        run = max(runs, key=lambda r: (max(d["updated_ns"] for d in runs[r]), r))
    return runs.get(run, []), run, sorted(r for r in runs if r != run)


def _fmt_payload(p):
    if not isinstance(p, dict) or not p:
        return ""
    shown = ["%s=%s" % (k, v) for k, v in p.items() if v is not None]
    return " {%s}" % ", ".join(shown) if shown else ""


def python_stack(t):
    """A thread's Python stack as its live file gives it (--python-stack):
    [{"func", "file"}, ...] innermost first, or None."""
    py = t.get("python") if isinstance(t, dict) else None
    frames = py.get("frames") if isinstance(py, dict) else None
    if not isinstance(frames, list) or not frames:
        return None
    out = [{"func": str(f.get("func")), "file": str(f.get("file"))}
           for f in frames if isinstance(f, dict)]
    return out or None


def _python_only(doc):
    """A stalled process with no open call or range but a Python stack
    (its main thread's, else the first): what stuck_in() returns then."""
    ts = [t for t in doc["threads"] if python_stack(t)]
    if not ts:
        return None
    t = min(ts, key=lambda t: (t.get("tid") != doc["pid"], str(t.get("tid"))))
    return {"thread": t.get("tid"), "thread_name": t.get("name"), "kind": None, "name": None,
            "since_ns": None, "seconds": None, "payload": None, "path": [],
            "python": python_stack(t)}


def stuck_in(doc, now_ns):
    """What a stalled process is inside: of each thread's innermost open
    call or range, the one open longest among those entered since the
    current step began (the step that does not end; a range opened in an
    earlier step, such as an epoch's, is not where this step waits), or of
    all when none was.  A dict (thread, kind, name, since_ns, seconds,
    payload, path: the thread's open entries, outermost first, python: the
    thread's Python stack, innermost first, or None), or None.  A process
    with nothing open but a thread's Python stack gets that stack (kind and
    name None)."""
    cands = []
    for t in doc["threads"]:
        opens = t.get("open") if isinstance(t, dict) else None
        if not isinstance(opens, list) or not opens:
            continue
        e = opens[-1]
        if not isinstance(e, dict) or not _int(e.get("since_ns")):
            continue
        cands.append((e["since_ns"], t, e, opens))
    if not cands:
        return _python_only(doc)
    start = doc["step_started_ns"]
    inside = [c for c in cands if start is None or c[0] >= start]
    since, t, e, opens = min(inside or cands, key=lambda c: c[0])
    out = {"thread": t.get("tid"), "thread_name": t.get("name"), "kind": e.get("kind"),
           "name": str(e.get("name")), "since_ns": since,
           "seconds": max(0.0, (now_ns - since) / 1e9), "payload": e.get("payload") or None,
           "path": [{"kind": o.get("kind"), "name": o.get("name"), "since_ns": o.get("since_ns"),
                     "payload": o.get("payload") or None}
                    for o in opens if isinstance(o, dict)],
           "python": python_stack(t)}
    return out


# Python frames named on a stalled process's line, innermost first.
PY_SHOWN = 5


def describe_python(frames):
    """`python: sync < train_step < main < <module>` (the functions,
    innermost first, at most PY_SHOWN), or ""."""
    if not frames:
        return ""
    names = [f["func"] for f in frames[:PY_SHOWN]]
    return "python: %s%s" % (" < ".join(names), " < ..." if len(frames) > PY_SHOWN else "")


def describe_stuck(s, step_s):
    """`stalled 12 s in cudaStreamSynchronize`, with the enclosing range
    that carries a payload (NCCL's collective) when the innermost has
    none."""
    if s is None or s["name"] is None:
        text = "stalled %.0f s (no open call or range)" % step_s
        py = describe_python(s and s["python"])
        return text + "; " + py if py else text
    text = "stalled %.0f s in %s%s" % (s["seconds"], s["name"], _fmt_payload(s["payload"]))
    if not s["payload"]:
        for o in reversed(s["path"][:-1]):
            if o.get("payload"):
                text += ", inside %s%s" % (o.get("name"), _fmt_payload(o["payload"]))
                break
    py = describe_python(s["python"])
    return text + "; " + py if py else text


def _parent(doc):
    """The pid a forked child was forked from (parent_pid; files written
    before that key have none), else None."""
    p = doc.get("parent_pid")
    return p if _int(p) and p > 0 else None


def judge(doc, now_ns, stall_after):
    """One process's row: its status word (finished, stale, worker,
    stalled, recording, running) and figures."""
    steps = doc["steps"]
    interval = max(doc["interval_ms"], 1) / 1e3
    ago = (now_ns - doc["updated_ns"]) / 1e9
    row = {"rank": doc["rank"], "local_rank": doc["local_rank"], "host": doc["host"],
           "pid": doc["pid"], "program": doc["program"], "run": doc["run"], "step": doc["step"],
           "last_step": doc["last_step"], "steps": len(steps),
           "last_step_ns": steps[-1] if steps else None,
           "median_step_ns": _median(steps) if steps else None,
           "updated_s_ago": round(ago, 3), "recording": doc["recording"],
           "window": doc["window"], "events": doc["events"], "dropped": doc["dropped"],
           "exit_status": doc["exit_status"], "top": doc["top"], "file": doc["_path"],
           "parent_pid": _parent(doc), "in": None, "detail": ""}
    start = doc["step_started_ns"]
    step_s = (now_ns - start) / 1e9 if start is not None else None
    row["step_s"] = None if step_s is None else round(step_s, 3)
    if doc["state"] == "finished":
        row["status"] = "finished"
        if doc["exit_status"] is not None:
            row["detail"] = "finished, exit %d" % doc["exit_status"]
    elif ago > max(STALE_INTERVALS * interval, STALE_MIN_S):
        row["status"] = "stale"
        row["detail"] = "stale: no update for %.0f s" % ago
    elif row["parent_pid"] is not None and not steps:
        # A forked child that never stepped (a DataLoader worker): not a rank
        # of its own, and its step, its parent's at the fork, is not one it
        # waits in (the library writes no step start for it).
        row["status"] = "worker"
        row["detail"] = "worker of pid %d%s" % (row["parent_pid"],
                                                ", recording" if doc["recording"] else "")
    elif doc["step"] >= 0 and step_s is not None and step_s >= stall_after:
        row["status"] = "stalled"
        row["in"] = stuck_in(doc, now_ns)
        row["detail"] = describe_stuck(row["in"], step_s)
    else:
        row["status"] = "recording" if doc["recording"] else "running"
    row["detail"] = row["detail"] or row["status"]
    return row


def straggler(rows):
    """(the row summary --by rank would name, the median of the candidates'
    median steps in ns): ranks.verdict, the longest median of the recent
    steps, the trimmed mean and then the lowest rank breaking ties, among
    the processes with steps that are neither stalled nor stale.  (None,
    None) with fewer than two."""
    cand = [r for r in rows if r["steps"] and r["status"] not in ("stalled", "stale")]
    if len(cand) < 2:
        return None, None
    table = []
    for i, r in enumerate(cand):
        durs = [d / 1e3 for d in r["_durs"]]
        med, trim, mad = robust(durs)
        key = r["rank"] if r["rank"] is not None else r["pid"]
        table.append((key, len(durs), sum(durs) / len(durs), min(durs), max(durs), 0,
                      med, trim, mad, None, i))
    best, _ = verdict(table)
    return cand[best[10]], _median([r["median_step_ns"] for r in cand])


class _Durs:
    def __init__(self, durs):
        self.durs = durs


def snapshot(dirs, where, run=None, every=False, stall_after=60.0, now_ns=None):
    """Everything top shows, as one dict (--json prints it).  Raises
    LiveError when there is nothing to show."""
    if not dirs:
        raise LiveError("top: no live folder at %s; is the job running under traceprof (each "
                        "process writes <trace folder>/.live/<host>.<pid>.json once a second "
                        "unless TRACEPROF_LIVE=0)? Give its trace folder: traceprof top FOLDER"
                        % where)
    docs, skipped = read_all(dirs)
    if not docs:
        if skipped:
            raise LiveError("top: no readable live file in %s: %d skipped (%s: %s); were they "
                            "written by this version of traceprof?" % (
                                ", ".join(dirs), len(skipped), skipped[0][0], skipped[0][1]))
        raise LiveError("top: no live files in %s; the job has not started yet, or runs with "
                        "TRACEPROF_LIVE=0 or TRACEPROF_LIVE_DIR elsewhere" % ", ".join(dirs))
    docs, name, others = pick_run(docs, run, every)
    if not docs:
        raise LiveError("top: no live file of run '%s' in %s; its runs: %s" % (
            run, ", ".join(dirs), ", ".join(others)))
    now_ns = time.time_ns() if now_ns is None else now_ns
    rows = []
    for d in docs:
        r = judge(d, now_ns, stall_after)
        r["_durs"] = d["steps"]
        rows.append(r)
    steps = {i: _Durs(r["_durs"]) for i, r in enumerate(rows) if r["_durs"]}
    job_med = _job_median(steps) if steps else None
    for r in rows:
        m = r["median_step_ns"]
        r["vs_job"] = round(m / job_med, 4) if m is not None and job_med else None
    s, mid = straggler(rows)
    for r in rows:
        del r["_durs"]
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return {"traceprofTop": 1, "run": name, "other_runs": others, "folders": dirs,
            "now_ns": now_ns, "stall_after_s": stall_after,
            "job": {"processes": len(rows), "median_step_ns": job_med,
                    "steps_per_s": round(1e9 / job_med, 4) if job_med else None,
                    "status": counts},
            "straggler": None if s is None else {
                "rank": s["rank"], "host": s["host"], "pid": s["pid"],
                "median_step_ns": s["median_step_ns"], "vs_job": s["vs_job"],
                "median_rank_step_ns": mid,
                "vs_median_rank": round(s["median_step_ns"] / mid, 4) if mid else None},
            "processes": rows,
            "skipped": [{"file": p, "why": w} for p, w in skipped]}
