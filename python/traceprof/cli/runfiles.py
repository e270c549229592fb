"""The trace files of a `traceprof run`: where the library will write
them (the folder template expanded with what is known before the
program starts), and the list of files written, printed at the end."""

import glob
import os
import re
import sys

from ..layout import LAUNCHERS, RUN_NAME_PLACEHOLDER, RUN_NAME_VARS, TEMPLATE_VARS
from ..traces.reader import JSON_RE
from ..traces.tail import footer_drops, footer_interrupted
from ..util import err, human_bytes, natural_key


def launcher_vars(env):
    """{rank} {local_rank} ... as the library reads them
    (common/launcher.c: tp_launcher_vars), from scripts/layout.spec's
    launcher table."""
    v = {"rank": "0", "local_rank": "0", "world_size": "1", "local_world_size": "1",
         "node_rank": "0"}
    for row in LAUNCHERS:
        names = row[1:]
        if not env.get(names[0]):
            continue
        for key, name in zip(("rank", "local_rank", "world_size", "local_world_size",
                              "node_rank"), names):
            if name and env.get(name, "").isdigit():
                v[key] = env[name]
        if (names[4] is None or not env.get(names[4], "").isdigit()) and \
                env.get(names[3], "").isdigit() and int(env[names[3]]) > 0:
            v["node_rank"] = str(int(v["rank"]) // int(env[names[3]]))
        break
    return v


_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                      r"[0-9a-fA-F]{12}")


def placeholder(value):
    """Whether a run-name variable's value names nothing stable: torchrun's
    "none", or a UUID made for one launch (common/launcher.c:
    tp_launcher_placeholder, scripts/layout.spec)."""
    return value == RUN_NAME_PLACEHOLDER or bool(_UUID_RE.fullmatch(value))


def run_name(env, fallback):
    """{run_name} as the library chooses it (common/launcher.c): the
    override TRACEPROF_RUN_NAME, else the first of scripts/layout.spec's
    RUN_NAME_VARS that is set and is not a placeholder, else fallback (the
    program's name)."""
    return env.get("TRACEPROF_RUN_NAME") or next(
        (env[v] for v in RUN_NAME_VARS if env.get(v) and not placeholder(env[v])),
        None) or fallback


def template_glob(tmpl, known, for_display=False):
    """The template as a glob pattern: known variables expanded (sanitised as
    the library does), the others ({pid}, {step}, ...) as '*'.  for_display:
    the same expansion as plain text for messages, the others left as
    {name}.  None for a template the library refuses (an unknown variable,
    a brace without its pair)."""
    esc = (lambda t: t) if for_display else glob.escape
    out = []
    i = 0
    while i < len(tmpl):
        c = tmpl[i]
        if tmpl.startswith("{{", i):
            out.append("{" if for_display else "[{]")
            i += 2
        elif tmpl.startswith("}}", i):
            out.append("}" if for_display else "[}]")
            i += 2
        elif c == "{":
            j = tmpl.find("}", i)
            if j < 0:
                return None
            name = tmpl[i + 1:j]
            if name not in TEMPLATE_VARS:
                return None
            val = known.get(name)
            if val is None:
                out.append("{%s}" % name if for_display else "*")
            else:
                val = "_" if val in (".", "..") else val.replace("/", "_")
                out.append(esc(val))
            i = j + 1
        elif c == "}":
            return None  # a lone '}': the library refuses the template
        else:
            out.append(esc(c))
            i += 1
    return "".join(out)


def snapshot(folder_glob):
    files = {}
    for d in glob.glob(folder_glob) if folder_glob else []:
        try:
            with os.scandir(d) as it:
                for e in it:
                    if e.name.startswith("."):
                        continue
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if not e.is_file(follow_symlinks=False):
                        continue
                    files[os.path.join(d, e.name)] = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            pass
    return files


def why_nothing(env):
    """Why a run may have written nothing, from its configuration, with the
    fix: the library says more from inside the program (its "no trace
    file:" line, preload/init.c), but only in a process that stepped or
    started CUDA; this covers the rest.  "" when the configuration explains
    nothing."""
    sched = env.get("TRACEPROF_SCHEDULE", "").strip()
    step = env.get("TRACEPROF_STEP", "").strip()
    if env.get("TRACEPROF_CAPTURE", "none").strip() not in ("", "none"):
        return ("--capture records only between cudaProfilerStart() and cudaProfilerStop(); "
                "the program called neither, or exited between them")
    if env.get("TRACEPROF_TRIGGER", "none").strip() not in ("", "none"):
        return "--trigger records only after the signal: send it to a rank (kill -%s PID)" % (
            env["TRACEPROF_TRIGGER"].strip().upper().replace("SIG", ""))
    if sched and step in ("", "api"):
        return ("the schedule counts steps, and nothing marks them unless the program calls "
                "traceprof_step(): for PyTorch, add --step torch; otherwise --step "
                "nvtx:NAME, call:FUNCTION or time:MS")
    if sched:
        return ("the program may have ended before the schedule's window opened "
                "(--schedule %s); see the \"no trace file:\" line above" % sched)
    return ""


def report_files(before, after, folder, keep0=False, why=""):
    # Natural order (rank1 before rank10, step7 before step11), not by time:
    # files of one save can share a timestamp, and ranks finish in any order.
    new = sorted((p for p, s in after.items() if before.get(p) != s), key=natural_key)
    if not new:
        if keep0:
            err("no trace file left in %s (--keep 0 deletes each file once saved and "
                "uploaded)" % folder)
        else:
            err("no trace file written in %s%s" % (folder, ": " + why if why else ""))
        return
    err("%d trace file%s written:" % (len(new), "" if len(new) == 1 else "s"))
    total_drops = total_intr = 0
    for path in new:
        drops = footer_drops(path) if JSON_RE.search(path) else None
        size = after[path][2]
        note = ""
        if drops:
            total_drops += drops
            total_intr += min(footer_interrupted(path), drops)
            note = ", %d events DROPPED" % drops
        sys.stderr.write("  %s (%s%s)\n" % (path, human_bytes(size), note))
    if total_intr:
        err("%d events were dropped because a signal handler recorded while the thread it "
            "interrupted was recording (not a buffer size issue)" % total_intr)
        total_drops -= total_intr
    if total_drops:
        err("%d events were dropped (buffers full); raise --buffer-events or lower "
            "--flush-ms" % total_drops)
