"""`traceprof recover [FOLDER...]`: finishes the windows of processes that
died before their window ended (SIGKILL, the OOM killer, abort(), a crash)
into traces every reader opens: cut files.

While a window records, the library's flush thread puts what it has
written into the window's hidden temporary file every half second
(collector/parts.c, TP_FL_DISK_NS): whole events, each on its own line,
and for .zst/.gz a compressed stream decodable up to there.  The file's
header names the window (layout.DOC_WINDOW: its final name with the step
left open, the part, the first step, the host and the pid).  A process
that dies leaves that file behind; this command keeps every whole event
in it, closes the JSON, adds a footer whose `cut` member says why, when
and what may be missing, and puts it in place under the name the window
would have had, after the last step it holds.  The temporary file is then
removed.

A temporary file is left alone while its process may still run: its pid
is alive on this host, or it was written on another host (--any-host
takes those too, for a job whose nodes are all gone).  Perfetto files
(.pftrace) are finished the same way, packet by packet (recover_pf.py)."""

import datetime
import gzip
import json
import os
import re
import socket
import subprocess
import sys

from .. import layout as L
from ..util import err, fail, human_bytes, version
from .recover_pf import gunzip_chunks

USAGE = """usage: traceprof recover [--any-host] [--keep] [FOLDER...]

Finishes the trace windows of processes that died (killed, crashed, out of
memory) into cut traces: every whole event the window's hidden temporary
file holds, a footer that says it was cut, named as the window would have
been after its last step.  FOLDER (default traceprof_traces) is searched
with its subfolders.

  --any-host   also finish files written on other hosts (their processes
               cannot be looked up from here: use it once the job is over)
  --keep       keep the temporary files after finishing them
"""

TEMP_RE = re.compile(r"^\.(?P<final>.+)\.tmp\.(?P<pid>\d+)\.(?P<n>\d+)$")
STEP_RE = re.compile(r'"name":"' + re.escape(L.STEP_PREFIX) + r'(\d+)"')


def temp_files(folders):
    """(path, final name, pid) of every hidden temporary trace file under
    the folders, in name order."""
    out = []
    for top in folders:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                m = TEMP_RE.match(name)
                if m:
                    out.append((os.path.join(dirpath, name), m.group("final"), int(m.group("pid"))))
    return out


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Lines:
    """The decompressed lines of a possibly cut file: plain, gzip (up to
    its last whole member) or zstd (up to its last whole frame).  A cut
    stream ends the lines; it is no error."""

    def __init__(self, path, final):
        """final: the file's final name, whose extension says the codec."""
        self.proc = None
        self.gz = final.endswith(".gz")
        if final.endswith(".zst"):
            self.proc = subprocess.Popen(["zstd", "-dcq", "--", path], stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL)
            self.f = self.proc.stdout
        else:
            self.f = open(path, "rb")

    def __iter__(self):
        if not self.gz:
            yield from self.f
            return
        # gzip by hand: the gzip module raises at a stream without its end
        # before handing over what it decoded.
        rest = b""
        for data in gunzip_chunks(self.f):
            lines = (rest + data).split(b"\n")
            rest = lines.pop()
            for line in lines:
                yield line + b"\n"
        if rest:
            yield rest

    def close(self):
        self.f.close()
        if self.proc:
            self.proc.kill()
            self.proc.wait()


def _open_out(path, final):
    """A writer into path, compressed as final's extension says."""
    if final.endswith(".zst"):
        f = open(path, "wb")
        proc = subprocess.Popen(["zstd", "-q", "-c"], stdin=subprocess.PIPE, stdout=f)
        return proc.stdin, lambda: (proc.stdin.close(), proc.wait(), f.close())
    if final.endswith(".gz"):
        g = gzip.open(path, "wb")
        return g, g.close
    f = open(path, "wb")
    return f, f.close


def _unique(folder, name, ext=".json"):
    """name, or name with ".1", ".2", ... before its ext when taken, as
    the library names a file whose final name exists."""
    if not os.path.exists(os.path.join(folder, name)):
        return name
    i = name.find(ext)
    head, tail = (name[:i], name[i:]) if i >= 0 else (name, "")
    k = 1
    while os.path.exists(os.path.join(folder, "%s.%d%s" % (head, k, tail))):
        k += 1
    return "%s.%d%s" % (head, k, tail)


def finish(path, final, pid, keep=False):
    """Finishes one temporary file into a cut trace.  Returns a dict (out,
    events, first_step, last_step, rank, pid), or None with a message when
    the file holds no whole header (nothing to keep)."""
    folder = os.path.dirname(path)
    mtime = os.stat(path).st_mtime
    lines = _Lines(path, final)
    header = []
    window = {}
    rank = None
    it = iter(lines)
    for line in it:
        header.append(line)
        text = line.decode("utf-8", "replace").strip()
        if text.startswith('"%s"' % L.DOC_WINDOW):
            try:
                window = json.loads("{" + text.rstrip(",") + "}")[L.DOC_WINDOW]
            except ValueError:
                window = {}
        if text.startswith('"%s"' % L.DOC_DISTRIBUTED_INFO):
            m = re.search(r'"%s":\s*(-?\d+)' % L.DI_RANK, text)
            rank = int(m.group(1)) if m else None
        if text.startswith('"%s"' % L.DOC_TRACE_EVENTS):
            break
    else:
        lines.close()
        return None
    if not isinstance(window, dict):
        window = {}
    first_step = window.get(L.WINDOW_FIRST_STEP)
    tmp_out = os.path.join(folder, ".%s.recover.%d" % (final, os.getpid()))
    out, close_out = _open_out(tmp_out, final)
    events = 0
    last_step = None
    last_us = None
    devices_in_header = any(('"%s"' % L.DOC_DEVICE_PROPERTIES).encode() in h for h in header)
    last_write = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc) \
        .isoformat(timespec="milliseconds")
    # The head says it is cut too (traces/cut.py reads it there).
    header.insert(len(header) - 1, ('  "%s": %s,\n' % (L.DOC_CUT, json.dumps(
        {"last_write": last_write}))).encode())
    try:
        out.writelines(header)
        sep = b""
        for line in it:
            body = line.rstrip(b"\n").rstrip(b",")
            if not body.startswith(b"{"):
                break  # not an event line: the writer's end, never in a cut file
            if not line.endswith(b"\n"):
                # The writer puts the separator before an event: a line
                # without its newline is the file's last, whole only when
                # the process died at a flush, not in a write.
                try:
                    ev = json.loads(body)
                except ValueError:
                    break
                if isinstance(ev, dict) and isinstance(ev.get("ts"), (int, float)):
                    last_us = ev["ts"] + (ev.get("dur") or 0)
            out.write(sep + body)
            sep = b",\n"
            events += 1
            m = STEP_RE.search(body.decode("utf-8", "replace"))
            if m:
                last_step = int(m.group(1))
        # The process's name, as the writer puts it at a window's end
        # (collector/footer.c; the program's name is not known here).
        # Readers need it: HTA fails on a trace whose events have no args
        # at all (KeyError 'stream'), as a CPU-only cut window's may.
        for meta in _process_meta(pid, rank):
            out.write(sep + json.dumps(meta, separators=(",", ":")).encode())
            sep = b",\n"
        out.write(b"\n")
        if last_step is None:
            last_step = first_step if isinstance(first_step, int) else 0
        part = window.get(L.WINDOW_PART, 1)
        name = _unique(folder, _final_name(window, final, last_step, ".json"), ".json")
        cut = _cut(pid, last_write)
        if last_us is not None:
            cut["last_event_end_us"] = last_us
        footer = _footer(part, first_step, last_step, events, cut)
        tail = "  ],\n  %s%s" % (json.dumps(L.DOC_FOOTER) + ": ", json.dumps(footer))
        if not devices_in_header:
            tail += ',\n  "%s": []' % L.DOC_DEVICE_PROPERTIES
        shown = re.sub(r"\.(zst|gz)$", "", name)
        tail += ',\n  "%s": %s\n}\n' % (L.DOC_TRACE_NAME, json.dumps(shown))
        out.write(tail.encode())
    finally:
        lines.close()
        close_out()
    os.rename(tmp_out, os.path.join(folder, name))
    if not keep:
        os.unlink(path)
    return {"out": os.path.join(folder, name), "events": events, "rank": rank, "pid": pid,
            "first_step": first_step, "last_step": last_step, "window": window,
            "size": os.path.getsize(os.path.join(folder, name))}


def _final_name(window, final, last_step, ext):
    """The name the window would have had after last_step: its header's
    pattern, ".partK" before ext for a part after the first, the
    compression's extension; final's when the header has no pattern."""
    name_pattern = window.get(L.WINDOW_NAME)
    part = window.get(L.WINDOW_PART, 1)
    if not (name_pattern and isinstance(name_pattern, str)):
        return final
    name = name_pattern.replace(L.WINDOW_STEP_FIELD, str(last_step))
    if isinstance(part, int) and part > 1:
        i = name.find(ext)
        name = (name[:i] + ".part%d" % part + name[i:]) if i >= 0 else name + ".part%d" % part
    for z in (".zst", ".gz"):
        if final.endswith(z) and not name.endswith(z):
            name += z
    return name


def _cut(pid, last_write):
    """The footer's `cut` member."""
    return {
        "reason": "the process (pid %d) ended before the window did" % pid,
        "last_write": last_write,
        "events_missing": None,
        "missing": "the events recorded after the file's last flush (every %g s) and "
                   "the GPU records not yet handed over; not counted" % 0.5,
        "recovered_by": "traceprof recover %s" % version(),
    }


def _footer(part, first_step, last_step, events, cut):
    part = part if isinstance(part, int) else 1
    return {
        "version": version(),
        "part": part,
        "parts": part,
        "steps": [first_step if isinstance(first_step, int) else last_step, last_step],
        "events_written": events,
        L.FOOTER_CUT: cut,
    }


def _last_write(path):
    return datetime.datetime.fromtimestamp(os.stat(path).st_mtime, datetime.timezone.utc) \
        .isoformat(timespec="milliseconds")


def finish_pftrace(path, final, pid, keep=False):
    """finish() for a Perfetto window (recover_pf.py): every whole packet,
    then its name and a footer saying it was cut."""
    from . import recover_pf
    folder = os.path.dirname(path)
    last_write = _last_write(path)
    tmp_out = os.path.join(folder, ".%s.recover.%d" % (final, os.getpid()))
    out, close_out = _open_out(tmp_out, final)
    try:
        s = recover_pf.copy(path, final, out)
        if s is not None:
            first_step = s.window.get(L.WINDOW_FIRST_STEP)
            last_step = s.last_step
            if last_step is None:
                last_step = first_step if isinstance(first_step, int) else 0
            name = _unique(folder, _final_name(s.window, final, last_step, ".pftrace"),
                           ".pftrace")
            footer = _footer(s.window.get(L.WINDOW_PART, 1), first_step, last_step, s.events,
                             _cut(pid, last_write))
            out.write(recover_pf.end(s, re.sub(r"\.(zst|gz)$", "", name), footer))
    finally:
        close_out()
    if s is None:
        os.unlink(tmp_out)
        return None
    os.rename(tmp_out, os.path.join(folder, name))
    if not keep:
        os.unlink(path)
    return {"out": os.path.join(folder, name), "events": s.events, "rank": s.rank, "pid": pid,
            "first_step": first_step, "last_step": last_step, "window": s.window,
            "size": os.path.getsize(os.path.join(folder, name))}


def recover(folders, any_host=False, keep=False, pids=None, report=None):
    """Finishes every dead process's temporary file under the folders;
    pids: only those (traceprof run's job).  Returns the list of finish()
    results; report(result) is called for each."""
    host = socket.gethostname()
    done = []
    for path, final, pid in temp_files(folders):
        if pids is not None and pid not in pids:
            continue
        if path.endswith(".recover.%d" % os.getpid()):
            continue
        try:
            written_on = _window_host(path, final)
            if written_on not in (None, host) and not any_host:
                err("%s: written on %s, whose processes cannot be looked up from here; "
                    "run traceprof recover --any-host once the job is over" % (path, written_on))
                continue
            if (written_on in (None, host)) and pid_alive(pid) and pid != os.getpid():
                continue  # still running: its window is not over
            pf = final.endswith(".pftrace") or ".pftrace." in final
            r = (finish_pftrace if pf else finish)(path, final, pid, keep=keep)
        except OSError as e:
            err("%s: cannot finish it (%s)" % (path, e.strerror or e))
            continue
        if r is None:
            err("%s: no whole header in it (the process died as the file began); removed" % path)
            if not keep:
                try:
                    os.unlink(path)
                except OSError:
                    pass
            continue
        done.append(r)
        if report:
            report(r)
        for gone in rotate(r):
            err("rotation: deleted %s (the process kept its newest %d windows, "
                "TRACEPROF_NUM_TRACES_TO_KEEP; the cut one counts as one)"
                % (gone, r["window"][L.WINDOW_KEEP]))
    return done


def _process_meta(pid, rank):
    """The metadata events naming a cut window's process."""
    name = ("rank %d (pid %d, cut)" % (rank, pid)) if isinstance(rank, int) else "pid %d (cut)" % pid
    return [{"ph": "M", "name": L.META_PROCESS_NAME, "pid": pid, "tid": 0, "args": {"name": name}},
            {"ph": "M", "name": L.META_PROCESS_SORT_INDEX, "pid": pid, "tid": 0,
             "args": {"sort_index": rank if isinstance(rank, int) else 0}}]


def _head_window(path, final):
    """The DOC_WINDOW member of a file's header (a dict), or None when it
    has none (older files, other writers)."""
    if ".pftrace" in final:
        from . import recover_pf
        return recover_pf.head_window(path, final)
    lines = _Lines(path, final)
    try:
        for i, line in enumerate(lines):
            text = line.decode("utf-8", "replace").strip()
            if text.startswith('"%s"' % L.DOC_WINDOW):
                try:
                    w = json.loads("{" + text.rstrip(",") + "}")[L.DOC_WINDOW]
                    return w if isinstance(w, dict) else None
                except ValueError:
                    return None
            if text.startswith('"%s"' % L.DOC_TRACE_EVENTS) or i > 20:
                return None
    finally:
        lines.close()
    return None


def _window_host(path, final):
    """The host the header names, or None when it has none (older files)."""
    w = _head_window(path, final)
    return w.get(L.WINDOW_HOST) if w else None


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def rotate(r):
    """Rotation (TRACEPROF_NUM_TRACES_TO_KEEP) as the dead process would
    have done it at the cut window's save: the library deletes the oldest
    windows it wrote beyond its newest N (collector/rotate.c), and its
    rotation died with it.  The files it wrote are those of the cut file's
    folder whose header names the same host, pid and name pattern; a
    window's parts count as one (by first step); the cut window, the
    newest, stays.  Returns the paths deleted."""
    w = r.get("window") or {}
    keep = _int(w.get(L.WINDOW_KEEP))
    first = _int(w.get(L.WINDOW_FIRST_STEP))
    if keep is None or keep <= 0 or first is None:
        return []
    folder = os.path.dirname(r["out"])
    wins = {first: []}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.startswith(".") or path == r["out"] or \
                not re.search(r"\.(json|pftrace)(\.gz|\.zst)?$", name) or not os.path.isfile(path):
            continue
        try:
            h = _head_window(path, name)
        except OSError:
            continue
        if not h or _int(h.get(L.WINDOW_PID)) != r["pid"] or \
                h.get(L.WINDOW_HOST) != w.get(L.WINDOW_HOST) or \
                h.get(L.WINDOW_NAME) != w.get(L.WINDOW_NAME):
            continue
        fs = _int(h.get(L.WINDOW_FIRST_STEP))
        if fs is not None and fs < first:
            wins.setdefault(fs, []).append(path)
    gone = []
    for fs in sorted(wins)[:max(0, len(wins) - keep)]:
        for path in wins[fs]:
            try:
                os.unlink(path)
                gone.append(path)
            except OSError as e:
                err("rotation: cannot delete %s: %s" % (path, e.strerror or e))
    return gone


def describe(r, how=None):
    """One line for a finished cut window; how: what ended the process
    ("SIGKILL"), when known."""
    who = "rank %s (pid %d)" % (r["rank"], r["pid"]) if r["rank"] is not None else "pid %d" % r["pid"]
    steps = ("steps %s-%s" % (r["first_step"], r["last_step"])
             if r["first_step"] is not None and r["first_step"] != r["last_step"]
             else "step %s" % r["last_step"])
    return "%s: window %s cut %s; saved %d events in %s (%s)" % (
        who, steps, "by " + how if how else "when the process ended", r["events"], r["out"],
        human_bytes(r["size"]))


def cmd_recover(argv):
    any_host = keep = False
    folders = []
    for a in argv:
        if a in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        if a == "--any-host":
            any_host = True
        elif a == "--keep":
            keep = True
        elif a.startswith("-"):
            sys.stderr.write(USAGE)
            fail("recover: unknown option '%s'" % a)
        else:
            folders.append(a)
    if not folders:
        folders = ["traceprof_traces"]
    for f in folders:
        if not os.path.isdir(f):
            fail("recover: '%s' is not a folder; give the trace folder (traceprof run's "
                 "--folder, TRACEPROF_FOLDER)" % f)
    done = recover(folders, any_host=any_host, keep=keep,
                   report=lambda r: err(describe(r)))
    if not done:
        err("no cut window to finish in %s" % ", ".join(folders))
    return 0
