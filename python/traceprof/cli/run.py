"""`traceprof run`: the command line, then the program run with the
library preloaded, its signals forwarded and its exit status passed
through."""

import argparse
import os
import re
import signal
import socket
import sys
import time
import uuid

from . import sigmask
from .options import RUN_OPTIONS
from .runenv import (check_library_version, find_library, is_traceprof_library, preload_safe,
                     python_boot, sanitizer_runtime)
from .runfiles import (launcher_vars, report_files, run_name, snapshot, template_glob,
                       why_nothing)
from .sigmask import RUN_SIGNALS
from ..util import err, fail, version


def build_run_parser():
    p = argparse.ArgumentParser(
        prog="traceprof run",
        usage="traceprof run [OPTIONS] [--] PROGRAM [ARGS...]",
        description="Runs PROGRAM with libtraceprof.so preloaded and prints the trace files "
                    "it wrote.  Each option sets the TRACEPROF_* variable named in its help; "
                    "an option not given leaves the variable as it is in the environment "
                    "(else the library's default, shown).  The program's exit status and "
                    "signals pass through.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    for opt, var, dflt, kind, hlp in RUN_OPTIONS:
        text = "%s [%s; default: %s]" % (hlp, var, dflt)
        dest = var
        if kind == "bool":
            p.add_argument(opt, dest=dest, nargs="?", const="1", metavar="0|1", help=text)
        elif isinstance(kind, list):
            p.add_argument(opt, dest=dest, choices=kind, help=text)
        else:
            p.add_argument(opt, dest=dest, metavar="VALUE", help=text)
    p.add_argument("--quiet", "-q", action="store_true",
                   help="do not print the list of files written at the end")
    p.add_argument("program", nargs=argparse.REMAINDER, help="the program and its arguments")
    return p


_BOOL_WORDS = {"0", "1", "true", "false", "yes", "no", "on", "off"}


def split_run_args(argv):
    """argv with "--" inserted where the program starts, when it is not
    there: at the first word that is neither an option nor an option's
    value.  A flag option (--overwrite, --with-stack) takes the next word
    as its value only when it is 0/1/true/false/yes/no/on/off, so that
    `run --overwrite ./prog 2` runs `./prog 2`."""
    kinds = {opt: kind for opt, var, dflt, kind, hlp in RUN_OPTIONS}
    i = 0
    while i < len(argv):
        w = argv[i]
        if w == "--":
            return argv
        if not w.startswith("-") or w == "-":
            return argv[:i] + ["--"] + argv[i:]
        if "=" in w or w not in kinds:
            i += 1  # --opt=value, --quiet, -q, --help, or argparse's error
        elif kinds[w] == "bool":
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            i += 2 if nxt is not None and nxt.lower() in _BOOL_WORDS else 1
        else:
            i += 2
    return argv



def program_name(argv):
    """The default {run_name}: the program's basename, or for a Python
    interpreter the script's name without ".py" (train for `python3
    train.py`) or the module of -m; the interpreter's own name for -c, - and
    no program; for torchrun, Composer's launcher and `accelerate launch`,
    the name of their script.  common/launcher.c's lch_program_name() is the
    same rule (the library applies it in each process it is loaded in)."""
    name = os.path.basename(argv[0])
    rest = argv[1:]
    if re.fullmatch(r"python[0-9.]*", name):
        name, rest = _python_target(name, rest)
    if name in ("torchrun", "torch.distributed.run", "composer") or \
            name == "accelerate" and rest[:1] == ["launch"]:
        # Its script's name, shared by the launcher and its workers.
        for a in rest:
            if not a.startswith("-") and a.endswith(".py") and len(a) > 3:
                return _script(a)
    return name


def _script(a):
    b = os.path.basename(a)
    return b[:-3] if b.endswith(".py") and len(b) > 3 else b


def _python_target(name, argv):
    """(what python runs, the arguments after it) for program_name()."""
    args = iter(enumerate(argv, 1))
    for i, a in args:
        if not a.startswith("-"):
            return _script(a) or name, argv[i:]
        if a in ("-", "--"):
            return name, []
        if a.startswith("--"):
            if a == "--check-hash-based-pycs":
                next(args, None)
            continue
        for k, c in enumerate(a[1:], 2):
            if c not in "cmWX":
                continue
            j, val = (i, a[k:]) if a[k:] else next(args, (None, None))
            if c == "c" or val is None:
                return name, []
            if c == "m":
                return val or name, argv[j:]
            break
    return name, []

def cmd_run(argv):
    p = build_run_parser()
    argv = split_run_args(argv)
    # Everything after "--" (or from the first non-option word) is the program.
    if "--" in argv:
        k = argv.index("--")
        opts, prog = argv[:k], argv[k + 1:]
        a = p.parse_args(opts)
        if a.program:
            p.error("unexpected arguments before '--': %s" % " ".join(a.program))
        a.program = prog
    else:
        a = p.parse_args(argv)
    if not a.program:
        p.error("no program given: traceprof run [OPTIONS] -- PROGRAM [ARGS...]")

    lib = find_library()
    check_library_version(lib, version())
    env = dict(os.environ)
    env.pop("TRACEPROF_LIB", None)  # ours, not the library's: it would warn
    for opt, var, dflt, kind, hlp in RUN_OPTIONS:
        val = getattr(a, var)
        if val is not None:
            env[var] = val
    python_boot(env)
    # One run id for every process this command starts, whatever launcher
    # comes between (the files' footers, run_id): summary --by rank refuses
    # to mix runs.  An id the caller set (an outer traceprof run) is kept.
    if not env.get("TRACEPROF_RUN_ID"):
        env["TRACEPROF_RUN_ID"] = str(uuid.uuid4())
    pre = env.get("LD_PRELOAD", "")
    parts = [x for x in re.split(r"[: ]+", pre) if x and os.path.realpath(x) != lib]
    # Another traceprof in the program's LD_PRELOAD (an installed copy while
    # this command runs from a build tree, or the reverse): this command's
    # library takes its place, since the options given here are for it.
    others = [x for x in parts if is_traceprof_library(x)]
    if others:
        err("LD_PRELOAD holds another traceprof library (%s); using %s in its place"
            % (", ".join(others), lib))
        parts = [x for x in parts if x not in others]
    rt = sanitizer_runtime(lib)
    env["LD_PRELOAD"] = ":".join(([rt] if rt else []) + [preload_safe(lib)] + parts)

    # Where the files will be: the folder template with what we know.
    known = launcher_vars(env)
    rn = run_name(env, program_name(a.program) or "traceprof")
    known["run_name"] = rn
    known["hostname"] = socket.gethostname()
    folder = env.get("TRACEPROF_FOLDER") or "traceprof_traces/{run_name}"
    # Looked at with only the host known: the workers' run name and ranks
    # are theirs (a torchrun --rdzv-id, a Slurm step's variables), not
    # this command's, and their files are listed wherever they landed.
    folder_glob = template_glob(folder, {"hostname": known["hostname"]})
    # An earlier run's cut windows: in this run's own folder only.
    finish_cut_windows(template_glob(folder, known), None, None, earlier=True)
    before = snapshot(folder_glob)

    # Signals: block the ones we forward and SIGCHLD, and take them with
    # sigtimedwait, whose siginfo tells a terminal's signal (the child, in
    # the same process group, got it too: not forwarded again) from one sent
    # with kill.  A kill to the whole group reached the child too, and its
    # siginfo is the same as that of a kill to us alone: the sentinel, a
    # process of our group that blocks every signal, tells them apart (see
    # Sentinel).
    fwd = RUN_SIGNALS
    waitset = fwd | {signal.SIGCHLD}
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, waitset)
    old_mask = sigmask.RUN_MASK0 if sigmask.RUN_MASK0 is not None else blocked
    sentinel = Sentinel()
    # Signals that came before the program existed: each is forwarded once
    # it runs, whoever sent it (a terminal's ^C did not reach it either).
    early = []
    while True:
        info = signal.sigtimedwait(fwd, 0)
        if info is None:
            break
        early.append(info.si_signo)
        sentinel.consume(info.si_signo)
    # SIGPIPE and SIGXFSZ: Python ignores them at start-up, and an ignored
    # signal stays ignored across exec; the program gets them as it would
    # from a shell.  (What the caller had is lost: Python does not keep it.)
    try:
        pid = os.posix_spawnp(a.program[0], a.program, env, setsigmask=old_mask,
                              setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    except OSError as e:
        sentinel.close()
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        fail("%s: %s" % (a.program[0], e.strerror or e), 127 if e.errno == 2 else 126)
    started = time.monotonic()
    trigger = trigger_signal(env.get("TRACEPROF_TRIGGER", ""))

    def forward(sig):
        # The trigger signal kills a program that has not installed the
        # library's handler yet (its constructor runs after exec): wait
        # for the handler (SigCgt) during the first seconds.
        if sig == trigger:
            while time.monotonic() - started < 5.0 and not catches(pid, sig):
                time.sleep(0.01)
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    for sig in early:
        forward(sig)
    status = None
    while status is None:
        info = signal.sigtimedwait(waitset, 1.0)
        if info is not None and info.si_signo in fwd:
            # SI_USER (0) / SI_QUEUE (-1) / SI_TKILL (-6): sent by a process,
            # to us alone unless the sentinel got it too.
            if (info.si_code in (0, -1, -6) and info.si_pid != pid and
                    not sentinel.got(info.si_signo)):
                forward(info.si_signo)
            sentinel.consume(info.si_signo)
            continue
        try:
            r, st = os.waitpid(pid, os.WNOHANG | os.WUNTRACED | os.WCONTINUED)
        except ChildProcessError:
            st, r = 0, pid
        if r != pid:
            continue
        if os.WIFSTOPPED(st):
            stop_with(pid, os.WSTOPSIG(st))
        elif not os.WIFCONTINUED(st):
            status = st
    sentinel.close()

    finish_cut_windows(folder_glob, pid, status)
    report_library_cuts(before, snapshot(folder_glob), pid, status)
    if not a.quiet:
        report_files(before, snapshot(folder_glob), template_glob(folder, known, True) or folder,
                     env.get("TRACEPROF_NUM_TRACES_TO_KEEP", "").strip() == "0",
                     why_nothing(env))
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        sys.stderr.flush()
        try:
            import resource
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the child's crash, not ours
        except (ImportError, ValueError, OSError):
            pass
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
        time.sleep(0.5)
        sys.exit(128 + sig)
    signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _killed_by(r, pid, status):
    """The signal that ended the process of cut window r ("SIGKILL"), when
    it is the launcher's child (pid, its wait status); else None."""
    if r["pid"] != pid or status is None or not os.WIFSIGNALED(status):
        return None
    try:
        return signal.Signals(os.WTERMSIG(status)).name
    except ValueError:
        return "signal %d" % os.WTERMSIG(status)


def finish_cut_windows(folder_glob, pid, status, earlier=False):
    """Finishes the windows that the job's processes (or, earlier=True,
    those of an earlier run into the same folder) left unfinished when they
    died: cut traces (recover.py), each reported on one line."""
    import glob
    from .recover import describe, recover
    folders = glob.glob(folder_glob) if folder_glob else []
    if not folders:
        return

    def report(r):
        err(("an earlier run's " if earlier else "") + describe(r, _killed_by(r, pid, status)))
    try:
        recover(folders, report=report)
    except OSError as e:
        err("cannot finish the cut windows in %s (%s)" % (", ".join(folders), e))


def report_library_cuts(before, after, pid, status):
    """Reports, as finish_cut_windows() does, the cut windows of the job's
    processes that another process's library finished while the job ran
    (collector/cut.c: a rank that opened the folder after another died), so
    that the report says "rank N ...: window steps a-b cut ...; saved N
    events" whoever finished the file."""
    from .recover import describe
    from ..layout import DI_RANK, DOC_DISTRIBUTED_INFO, DOC_WINDOW, WINDOW_PID
    from ..traces.cut import library_cut
    for path in sorted(p for p, s in after.items() if before.get(p) != s):
        got = library_cut(path)
        if got is None:
            continue
        footer, head = got
        window = head.get(DOC_WINDOW) if isinstance(head.get(DOC_WINDOW), dict) else {}
        di = head.get(DOC_DISTRIBUTED_INFO) if isinstance(head.get(DOC_DISTRIBUTED_INFO), dict) else {}
        steps = footer.get("steps") if isinstance(footer.get("steps"), list) else [None, None]
        r = {"pid": window.get(WINDOW_PID), "rank": di.get(DI_RANK), "out": path,
             "first_step": steps[0] if steps else None, "last_step": steps[-1] if steps else None,
             "events": footer.get("events_written") or 0, "size": after[path][2]}
        if not isinstance(r["pid"], int):
            continue
        err("%s, finished by %s" % (describe(r, _killed_by(r, pid, status)),
                                     footer["cut"]["recovered_by"]))


def trigger_signal(text):
    """The signal number of a TRACEPROF_TRIGGER value ("SIGUSR2", "USR2",
    "12"), or None."""
    t = text.strip().upper()
    if t.isdigit():
        return int(t)
    if t and not t.startswith("SIG"):
        t = "SIG" + t
    return getattr(signal, t, None) if t.startswith("SIG") and "_" not in t else None


def catches(pid, sig):
    """True when process pid has a handler for sig, or is gone (or /proc
    cannot tell: then there is nothing to wait for)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("State:") and "Z" in line.split()[1:2]:
                    return True
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return True


class Sentinel:
    """A child of the launcher, in its process group, that blocks every
    signal and consumes one only when told to.

    kill(-pgrp, sig) queues sig to every process of the group before it
    returns, the sentinel included; kill(launcher, sig) does not reach it.
    So when the launcher takes a signal sent by a process, sig pending in
    the sentinel (/proc/PID/status ShdPnd) means it was sent to the group,
    which the program is in: it has it already and must not get it twice.
    The launcher then has the sentinel consume it, and waits for the answer,
    so that the next signal is judged afresh.

    Limits: a kill to the launcher alone that comes while the same signal
    from a group send is still pending in the sentinel is taken for part of
    that send (the two coalesce in the program too when it has not run in
    between); one that comes between the last look for early signals and
    the program's start is taken for a group send if it was one.  Where
    the sentinel cannot be made (fork fails), every signal sent by a
    process is forwarded, as before."""

    def __init__(self):
        self.pid = None
        self.sock = None
        try:
            a, b = socket.socketpair()
        except OSError:
            return
        try:
            pid = os.fork()
        except OSError:
            a.close()
            b.close()
            return
        if pid == 0:  # the sentinel
            try:
                a.close()
                signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
                # Not holding the caller's stdin/stdout/stderr: a pipe
                # closes when the launcher ends, as without us.
                fd = os.open(os.devnull, os.O_RDWR)
                for i in (0, 1, 2):
                    os.dup2(fd, i)
                while True:
                    data = b.recv(64)
                    if not data:
                        break
                    for sig in data:
                        signal.sigtimedwait({sig}, 0)
                    b.sendall(data[-1:])
            finally:
                os._exit(0)
        b.close()
        a.settimeout(0.5)
        self.pid, self.sock = pid, a

    def got(self, sig):
        """True when sig is pending in the sentinel."""
        if self.pid is None:
            return False
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("ShdPnd:"):
                        return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
        except (OSError, ValueError, IndexError):
            pass
        return False

    def consume(self, sig):
        """Has the sentinel take sig if it is pending there; waits for it
        (at most 0.5 s: a stopped sentinel answers late, and the launcher
        must not wait on it)."""
        if self.sock is None:
            return
        try:
            self.sock.sendall(bytes([sig]))
            self.sock.recv(1)
        except OSError:
            pass

    def close(self):
        if self.sock is None:
            return
        self.sock.close()
        self.sock = None
        try:
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def stop_with(pid, sig):
    """The program stopped (^Z, SIGSTOP, a background read): the launcher
    stops too, so that the shell sees its job stopped and takes the
    terminal back.  A shell's fg or bg continues the whole group, the
    program with us; a SIGCONT sent to the launcher alone is passed on."""
    if state(pid) != "T":
        return  # already continued
    own = sig
    if sig not in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU) or \
            signal.getsignal(sig) != signal.SIG_DFL:
        own = signal.SIGSTOP
    os.kill(os.getpid(), own)
    # Here once continued.
    if state(pid) == "T":
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def state(pid):
    """The one-letter state of process pid ("" when gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""
