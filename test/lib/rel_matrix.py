"""The never-break-the-host matrix (test/integration/rel_matrix.sh).

Each case runs the host program (build/test/prog_rel_host) twice with the
same environment and limits, once without and once with the library, and
compares the exit status, stdout and the program's own stderr (stderr less
the lines starting with "traceprof:").  Then, by the case's kind:
  config  exactly one traceprof line, naming the variable; no file written
  io      at least one traceprof line containing `expect`; no temporary file
          left behind; no final file in the broken folder
  warn    exactly one traceprof line containing `expect`
  ok      traceprof lines only matching `allow`; every trace written is a
          valid, complete trace
Cases run two at a time.  Usage: rel.py matrix PROGRAM LIB WORKDIR
"""
import concurrent.futures
import os
import re
import resource
import shutil
import subprocess
import sys

import rel

LAUNCHER_VARS = (
    "RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE GROUP_RANK TORCHELASTIC_RUN_ID "
    "SLURM_JOB_ID SLURM_PROCID SLURM_LOCALID SLURM_NTASKS SLURM_NTASKS_PER_NODE "
    "SLURM_NODEID PMI_RANK PMI_SIZE MPI_LOCALRANKID MPI_LOCALNRANKS").split()


def b(x):
    return x if isinstance(x, bytes) else x.encode()


class Case:
    def __init__(self, name, env, kind, expect=None, setup=None, fsize=None, allow=(),
                 args=(), folder=None):
        self.name, self.env, self.kind, self.expect = name, env, kind, expect
        self.setup, self.fsize, self.allow, self.args = setup, fsize, allow, args
        self.folder = folder  # where an io case's files would go


def cases(work, mounts):
    C = []

    def cfg(var, values, expect_var=None):
        for v in values:
            C.append(Case("%s=%r" % (var, v), {var: v}, "config", expect_var or var))

    # ---- every variable's invalid values --------------------------------
    cfg("TRACEPROF_ENABLE", ["2", "maybe", "", b"\xff", " 1", "1 ", "-1"])
    cfg("TRACEPROF_LOG", ["verbose", "", b"\xff\xfe", "warn ", "3"])
    cfg("TRACEPROF_SCHEDULE", [
        "", "active=0", "wait=1", "active=1,active=2", "active=-1", "active=1,",
        "foo=1,active=1", "active=1;wait=2", "active=99999999999999999999", "active",
        ",active=1", "active=1\nwait=1", b"active=\xff", "active= 1", "active=1,repeat=x",
        "ACTIVE=1", "active=1,,wait=1", "=1", "active=0x10", "a" * 600])
    cfg("TRACEPROF_FOLDER", [
        "", "{nope}", "out/{rank", "out}", "{}", "{RANK}", b"\xff{x}", "x" * 600,
        "out/{run_name}/{steps}", "a\nb/{oops}"])
    cfg("TRACEPROF_FILENAME", [
        "", "a/b.json", "{nope}.json", "{step", "x}", "{pid}{", "rank{rank}.{Step}.json"])
    cfg("TRACEPROF_RUN_NAME", ["", "r" * 600])
    cfg("TRACEPROF_NUM_TRACES_TO_KEEP",
        ["-2", "abc", "", "1e3", "99999999999999999999", "1000001", "+3", "3 "])
    cfg("TRACEPROF_OVERWRITE", ["2", "", "y", "nope"])
    cfg("TRACEPROF_BUFFER_EVENTS", [
        "0", "15", "1000", "-1", "33554432", "99999999999999999999", "", "1k", "0x400",
        "4294967296", "65536.0"])
    cfg("TRACEPROF_FLUSH_MS", ["0", "10001", "-5", "", "fast"])
    cfg("TRACEPROF_CLOCK", ["rdtsc", "", "tsc "])
    cfg("TRACEPROF_STEP", [
        "", "nvtx:", "call:", "call:foo-bar", "call:f:0", "call:f:x", "time:0", "time:",
        "time:-1", "bogus", "time:86400001", "call:f:-1", b"call:\xff"])
    cfg("TRACEPROF_TRIGGER", ["", "SIGKILL", "9", "SIGRTMIN+999", "USR3", "SIGSEGV", "RTMIN+"])
    cfg("TRACEPROF_TRIGGER_STEPS", ["-1", "x", "1000000001"])
    cfg("TRACEPROF_CUPTI", ["maybe", ""])
    cfg("TRACEPROF_WITH_STACK", ["2", ""])
    cfg("TRACEPROF_STACK_DEPTH", ["0", "57", "x"])
    cfg("TRACEPROF_COMPRESS", ["bzip2", "", "ZSTD1"])
    cfg("TRACEPROF_ZSTD_LEVEL", ["0", "20", "x"])
    cfg("TRACEPROF_MAX_FILE_MB", ["0", "1048577", "x", ""])
    cfg("TRACEPROF_SAMPLE_MS", ["-1", "3600001", "x"])
    cfg("TRACEPROF_FOLLOW_FORK", ["2", ""])
    cfg("TRACEPROF_FOLLOW_EXEC", ["x", ""])
    # Launcher variables that are not numbers.
    for var, val in (("RANK", "abc"), ("RANK", "-1"), ("RANK", b"\xff"),
                     ("OMPI_COMM_WORLD_RANK", "x"), ("SLURM_PROCID", "1.5"),
                     ("PMI_RANK", "1e2")):
        C.append(Case("%s=%r" % (var, val), {var: val}, "config", var))
    C.append(Case("RANK too big", {"RANK": "99999999999999999999999"}, "config", "RANK"))
    C.append(Case("WORLD_SIZE=0", {"RANK": "0", "WORLD_SIZE": "0"}, "config", "WORLD_SIZE"))
    C.append(Case("LOCAL_RANK=x", {"RANK": "1", "LOCAL_RANK": "x"}, "config", "LOCAL_RANK"))
    C.append(Case("OMPI size=0", {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "0"},
                  "config", "OMPI_COMM_WORLD_SIZE"))
    # Every variable is checked even when TRACEPROF_ENABLE=0 turns profiling
    # off: a typo is reported before it matters.
    C.append(Case("ENABLE=0 with junk", {"TRACEPROF_ENABLE": "0", "TRACEPROF_FLUSH_MS": "x"},
                  "config", "TRACEPROF_FLUSH_MS"))
    # Two bad variables: still one line (the first).
    C.append(Case("two bad", {"TRACEPROF_LOG": "x", "TRACEPROF_FLUSH_MS": "0"}, "config",
                  "TRACEPROF_LOG"))

    # ---- odd but valid: no message at all --------------------------------
    ok = []
    ok.append(("ENABLE=off", {"TRACEPROF_ENABLE": "off"}))
    ok.append(("ENABLE=TRUE", {"TRACEPROF_ENABLE": "TRUE"}))
    ok.append(("defaults", {}))
    ok.append(("LOG=error", {"TRACEPROF_LOG": "error"}))
    ok.append(("FLUSH_MS=1", {"TRACEPROF_FLUSH_MS": "1"}))
    ok.append(("FLUSH_MS=10000", {"TRACEPROF_FLUSH_MS": "10000"}))
    ok.append(("schedule repeat", {"TRACEPROF_SCHEDULE": "wait=1,warmup=1,active=1,repeat=1"}))
    ok.append(("schedule open at exit", {"TRACEPROF_SCHEDULE": "skip_first=4,active=100"}))
    ok.append(("schedule huge active", {"TRACEPROF_SCHEDULE": "active=999999999999999999"}))
    ok.append(("run name non-UTF-8", {"TRACEPROF_RUN_NAME": b"run\xff\xfe\"\\x"}))
    ok.append(("run name '..'", {"TRACEPROF_RUN_NAME": ".."}))
    ok.append(("run name with slash", {"TRACEPROF_RUN_NAME": "a/../../b"}))
    ok.append(("folder with spaces", {"TRACEPROF_FOLDER": "out dir/with 'quotes' \"x\""}))
    ok.append(("folder with newline", {"TRACEPROF_FOLDER": "out\nnl/{rank}"}))
    ok.append(("folder non-UTF-8", {"TRACEPROF_FOLDER": b"out\xc3\x28/{run_name}"}))
    ok.append(("folder braces", {"TRACEPROF_FOLDER": "out{{x}}/{{{rank}}}"}))
    ok.append(("filename all vars", {"TRACEPROF_FILENAME":
               "{run_name}.{rank}.{local_rank}.{world_size}.{local_world_size}.{node_rank}."
               "{step}.{batch}.{pid}.{hostname}.json"}))
    ok.append(("filename no .json", {"TRACEPROF_FILENAME": "trace"}))
    ok.append(("compress zstd", {"TRACEPROF_COMPRESS": "zstd", "TRACEPROF_ZSTD_LEVEL": "19"}))
    ok.append(("compress gzip", {"TRACEPROF_COMPRESS": "GZIP"}))
    ok.append(("tiny parts", {"TRACEPROF_MAX_FILE_MB": "1"}))
    ok.append(("keep 1", {"TRACEPROF_NUM_TRACES_TO_KEEP": "1",
                          "TRACEPROF_SCHEDULE": "active=1"}))
    ok.append(("overwrite", {"TRACEPROF_OVERWRITE": "yes"}))
    ok.append(("clock monotonic", {"TRACEPROF_CLOCK": "MONOTONIC"}))
    ok.append(("trigger never sent", {"TRACEPROF_TRIGGER": "SIGUSR2"}))
    ok.append(("step time", {"TRACEPROF_STEP": "time:1"}))
    ok.append(("step nvtx", {"TRACEPROF_STEP": b"nvtx:\xff*"}))
    if os.environ.get("TP_SANITIZER") != "tsan":  # libunwind crashes under TSan
        ok.append(("stack", {"TRACEPROF_WITH_STACK": "1", "TRACEPROF_STACK_DEPTH": "56"}))
    ok.append(("cupti off", {"TRACEPROF_CUPTI": "off", "TRACEPROF_SAMPLE_MS": "0"}))
    ok.append(("empty launcher vars", {"RANK": "", "PMI_RANK": "", "SLURM_PROCID": ""}))
    ok.append(("rank beyond world", {"RANK": "7", "WORLD_SIZE": "2"}))
    ok.append(("follow off", {"TRACEPROF_FOLLOW_FORK": "0", "TRACEPROF_FOLLOW_EXEC": "0"}))
    ok.append(("absolute folder", {"TRACEPROF_FOLDER": os.path.join(work, "abs", "{rank}")}))
    ok.append(("on-save empty", {"TRACEPROF_ON_SAVE": ""}))
    for name, env in ok:
        C.append(Case(name, env, "ok"))
    # A window that never opens: the library says why nothing was written
    # (issue 42 item 2), and only that.
    C.append(Case("never records", {"TRACEPROF_SCHEDULE": "skip_first=999999999999999999,active=1"},
                  "ok", allow=(r"no trace file: the program exited after \d+ steps?, before the "
                               r"schedule's window opened",)))
    # The largest ring: 2^24 64-byte records, 1 GiB faulted in per recording
    # thread.  The main thread alone records (no worker threads): with the
    # default two workers a step, each of its 13 threads had a ring of its
    # own and the program reached 13.6 GB (issue 21).  Every test stays
    # under 2 GB (test/run-all measures it).
    C.append(Case("BUFFER_EVENTS=2^24", {"TRACEPROF_BUFFER_EVENTS": "16777216"}, "ok",
                  args=("6", "0", "20", "3")))
    # Valid, but the program outruns a tiny ring: a drop warning is allowed.
    C.append(Case("BUFFER_EVENTS=16", {"TRACEPROF_BUFFER_EVENTS": "16"}, "ok",
                  allow=(r"events were dropped",), args=("6", "4", "2000")))

    # Without CUDA in the process a call: step source may say it counts nothing.
    C.append(Case("step call", {"TRACEPROF_STEP": "call:cudaLaunchKernel:3"}, "ok",
                  allow=(r"TRACEPROF_STEP",)))

    # ---- warnings: one line ----------------------------------------------
    C.append(Case("unknown variable", {"TRACEPROF_FOLDR": "x"}, "warn", "TRACEPROF_FOLDR"))
    C.append(Case("unknown variable, non-UTF-8", {"TRACEPROF_\xff".encode("latin-1"): "1"},
                  "warn", "unknown variable"))

    def existing(folder, name):
        def f(cwd):
            d = os.path.join(cwd, folder)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, name), "w") as fh:
                fh.write("precious\n")
        return f
    C.append(Case("existing final file", {"TRACEPROF_FOLDER": "out"}, "warn", "exists",
                  setup=existing("out", "rank0.step6.trace.json")))

    # ---- I/O problems: a message, no temporary file, same behaviour ------
    def make_file(rel_path):
        def f(cwd):
            with open(os.path.join(cwd, rel_path), "w") as fh:
                fh.write("not a folder\n")
        return f
    C.append(Case("folder is a file", {"TRACEPROF_FOLDER": "afile"}, "io", "afile",
                  setup=make_file("afile"), folder="afile"))
    C.append(Case("parent is a file", {"TRACEPROF_FOLDER": "afile/sub/{rank}"}, "io",
                  "afile", setup=make_file("afile"), folder="afile"))
    C.append(Case("folder in /proc", {"TRACEPROF_FOLDER": "/proc/self/traceprof-nope"}, "io",
                  "/proc/self/traceprof-nope"))
    C.append(Case("folder is /dev/null", {"TRACEPROF_FOLDER": "/dev/null/x"}, "io",
                  "/dev/null"))
    C.append(Case("name too long", {"TRACEPROF_FOLDER": "out",
                                     "TRACEPROF_FILENAME": "n" * 300 + ".json"},
                  "io", "expands to", folder="out"))
    def final_is_dir(cwd):
        os.makedirs(os.path.join(cwd, "out", "rank0.step6.trace.json", "inside"))
    C.append(Case("final name is a folder, overwrite", {"TRACEPROF_FOLDER": "out",
                                                         "TRACEPROF_OVERWRITE": "1"},
                  "io", "failed", setup=final_is_dir, folder="out"))
    # Full disk as RLIMIT_FSIZE: the limit applies to both runs.
    for lim, args in ((0, ()), (1, ()), (4096, ("6", "4", "400")), (200000, ("8", "4", "3000"))):
        C.append(Case("RLIMIT_FSIZE=%d" % lim, {"TRACEPROF_FOLDER": "out"}, "io", "fail",
                      fsize=lim, args=args, folder="out"))
    C.append(Case("RLIMIT_FSIZE=1 gzip", {"TRACEPROF_FOLDER": "out",
                                          "TRACEPROF_COMPRESS": "gzip"},
                  "io", "fail", fsize=1, folder="out"))
    if "ro" in mounts:
        C.append(Case("read-only folder", {"TRACEPROF_FOLDER": mounts["ro"] + "/{rank}"},
                      "io", mounts["ro"], folder=mounts["ro"]))
    if "tiny" in mounts:
        # Each case its own folder: two run at once on the same tmpfs.
        for k, (name, extra) in enumerate((("full tmpfs", {}),
                                           ("full tmpfs, parts", {"TRACEPROF_MAX_FILE_MB": "1"}),
                                           ("full tmpfs, zstd", {"TRACEPROF_COMPRESS": "zstd"}))):
            d = os.path.join(mounts["tiny"], str(k))
            env = {"TRACEPROF_FOLDER": d}
            env.update(extra)
            C.append(Case(name, env, "io", "No space left", args=("8", "4", "3000"),
                          folder=d))
    return C


def base_env():
    env = {k: v for k, v in os.environb.items()
           if not k.startswith(b"TRACEPROF_") and not k.startswith(b"OMPI_")
           and k.decode("latin-1") not in LAUNCHER_VARS and k != b"LD_PRELOAD"}
    env[b"LC_ALL"] = b"C"
    return env


def run_one(prog, lib, work, idx, case, preload):
    cwd = os.path.join(work, "case%03d" % idx)
    os.makedirs(cwd)
    base_cwd = cwd + ".base"
    os.makedirs(base_cwd)
    if case.setup:
        case.setup(cwd)
        case.setup(base_cwd)
    env = base_env()
    for k, v in case.env.items():
        env[b(k)] = b(v)
    args = [prog] + list(case.args or ("6", "2", "20", "3"))

    def limits():
        if case.fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (case.fsize, case.fsize))

    def run(preload_value, where):
        e = dict(env)
        if preload_value:
            e[b"LD_PRELOAD"] = b(preload_value)
        p = subprocess.run(args, env=e, cwd=where, capture_output=True, timeout=60,
                           preexec_fn=limits)
        return p
    without = run(None, base_cwd)
    with_lib = run(preload, cwd)
    errs = []
    if without.returncode != with_lib.returncode:
        errs.append("exit status %s without the library, %s with it" %
                    (without.returncode, with_lib.returncode))
    if without.stdout != with_lib.stdout:
        errs.append("stdout differs: %r vs %r" % (without.stdout[-300:], with_lib.stdout[-300:]))
    lines0, prog0 = rel.tp_lines(without.stderr)
    lines, prog_err = rel.tp_lines(with_lib.stderr)
    if lines0:
        errs.append("traceprof lines without the library?! %r" % lines0)
    if prog0 != prog_err:
        errs.append("the program's own stderr differs: %r vs %r" % (prog0[-400:], prog_err[-400:]))
    text = [l.decode("utf-8", "replace") for l in lines]
    if case.kind in ("config", "warn"):
        if len(lines) != 1:
            errs.append("expected exactly one traceprof line, got %d: %r" % (len(lines), text))
        elif case.expect not in text[0]:
            errs.append("the line does not name %r: %r" % (case.expect, text[0]))
    if case.kind == "config":
        made = [os.path.join(r, f) for r, _d, fs in os.walk(cwd) for f in fs]
        if made:
            errs.append("files written despite the configuration error: %r" % made[:5])
    if case.kind == "io":
        # A program that cannot run under the limit by itself (a sanitizer's
        # runtime writing a file at RLIMIT_FSIZE=0) has nothing to compare.
        if without.returncode >= 0 and not any(case.expect in t for t in text):
            errs.append("no traceprof line mentions %r: %r" % (case.expect, text))
        if case.folder:
            folder = case.folder if os.path.isabs(case.folder) else os.path.join(cwd, case.folder)
            if os.path.isdir(folder):
                tmp = rel.temp_files(folder)
                if tmp:
                    errs.append("temporary files left behind: %r" % tmp)
                for p in rel.trace_files(folder):
                    try:
                        rel.load_trace(p)
                    except Exception as ex:  # noqa: BLE001
                        errs.append("a final file that is not a complete trace: %s: %s" % (p, ex))
    if case.kind == "ok":
        bad = [t for t in text if not any(re.search(a, t) for a in case.allow)]
        if bad:
            errs.append("unexpected traceprof lines: %r" % bad)
        if rel.temp_files(cwd):
            errs.append("temporary files left behind: %r" % rel.temp_files(cwd))
        for p in rel.trace_files(cwd):
            try:
                rel.load_trace(p)
            except Exception as ex:  # noqa: BLE001
                errs.append("invalid trace %s: %s" % (p, ex))
        if case.name == "defaults" and not rel.trace_files(cwd):
            errs.append("no trace written with the defaults")
    return case, text, errs


def try_mount(path, opts):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", path],
                       capture_output=True)
    return r.returncode == 0


def main(argv):
    prog, lib, work = argv[0], argv[1], argv[2]
    preload = os.environ["TP_PRELOAD"]  # test/lib/common.sh
    mounts, mounted = {}, []
    if os.geteuid() == 0:
        if try_mount(os.path.join(work, "tiny"), "size=16k"):
            mounts["tiny"] = os.path.join(work, "tiny")
            mounted.append(mounts["tiny"])
        if try_mount(os.path.join(work, "ro"), "ro,size=64k"):
            mounts["ro"] = os.path.join(work, "ro")
            mounted.append(mounts["ro"])
    else:
        ro = os.path.join(work, "ro")
        os.makedirs(ro)
        os.chmod(ro, 0o555)
        mounts["ro"] = ro
    if "tiny" not in mounts:
        print("note: no tmpfs mount (not root or no CAP_SYS_ADMIN); full disk is tested "
              "with RLIMIT_FSIZE only")
    all_cases = cases(work, mounts)
    failed = 0
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
            futs = [ex.submit(run_one, prog, lib, work, i, c, preload)
                    for i, c in enumerate(all_cases)]
            for f in futs:
                case, text, errs = f.result()
                status = "FAIL" if errs else "ok  "
                print("%s %-7s %s%s" % (status, case.kind, case.name[:70],
                                        ("  | " + text[0][:110]) if text else ""))
                for e in errs:
                    print("       " + e)
                failed += bool(errs)
    finally:
        for m in mounted:
            subprocess.run(["umount", "-l", m])
    print("%d cases, %d failed" % (len(all_cases), failed))
    return 1 if failed else 0
