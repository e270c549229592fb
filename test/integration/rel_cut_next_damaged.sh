# The next run's finishing of cut windows (collector/cut*.c, issue 44) reads
# files a death left, on the flush thread of a program that has nothing to
# do with them: whatever their bytes, it must never harm that program.  A
# plain LD_PRELOAD writer of .json.gz, .json.zst, .pftrace and .pftrace.zst
# is killed mid-window; its temporary file is copied 16 times under the
# same dead pid, each copy damaged differently (cut at a random byte, bytes
# flipped, a run zeroed, a piece repeated; seeded), and the next run into
# the folder must exit 0 with its own output and window, and account for
# every copy: finished into a trace (one cut at a byte is finished into a
# trace every reader opens, holding its whole frames or packets) or left
# hidden and named for `traceprof recover`.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_die"
[ -x "$prog" ] || die "$prog not built"
command -v zstd >/dev/null || skip "no zstd command"
"$PYTHON" - "$prog" <<'PY'
import os, random, re, signal, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel

prog = sys.argv[1]
check = rel.Checks()
rng = random.Random(44)

def damage(data, k):
    """Copy k of data: 0-5 cut at a byte, the rest other damage."""
    n = len(data)
    if k < 6:
        return data[:rng.randrange(n // 10, n)], True
    b = bytearray(data)
    if k < 10:
        for _ in range(k - 5):
            i = rng.randrange(n // 10, n)
            b[i] ^= 1 << rng.randrange(8)
    elif k < 13:
        i = rng.randrange(n // 10, n)
        b[i:i + 64] = bytes(len(b[i:i + 64]))
    else:
        i = rng.randrange(n // 10, n)
        b[i:i] = b[i - 200:i]
    return bytes(b), False

for fmt, comp, ext in (("json", "gzip", ".json.gz"), ("json", "zstd", ".json.zst"),
                       ("perfetto", "none", ".pftrace"), ("perfetto", "zstd", ".pftrace.zst")):
    label = ext[1:]
    folder = "damaged_" + label.replace(".", "_")
    def env(sched):
        return rel.die_env(folder, True, {"TRACEPROF_COMPRESS": comp, "TRACEPROF_FORMAT": fmt,
                                          "TRACEPROF_SCHEDULE": sched})
    p = subprocess.Popen([prog, "loop", "0", "20"], env=env("wait=1,active=100000"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid, ended, death = rel.run_die(p, signal.SIGKILL, after=2.0)
    p.communicate(timeout=60)
    temps = rel.temp_files(folder)
    if not check(len(temps) == 1, "%s: one temporary file (%s)" % (label, temps)):
        continue
    with open(temps[0], "rb") as f:
        orig = f.read()
    os.unlink(temps[0])
    stem = os.path.basename(temps[0]).rsplit(".", 1)[0]
    cut_only = set()
    for k in range(16):
        data, whole = damage(orig, k)
        name = os.path.join(folder, "%s.%d" % (stem, 100 + k))
        with open(name, "wb") as f:
            f.write(data)
        if whole:
            cut_only.add(name)
    r = subprocess.run([prog, "exit", "20", "20"], env=env("wait=1,active=2,repeat=1"),
                       capture_output=True, timeout=180)
    out, err = r.stdout.decode(), r.stderr.decode()
    check(r.returncode == 0 and out.count("ended") == 20,
          "%s: the next run exits 0 with its own output (%d; %s)" % (label, r.returncode, err[-300:]))
    files = rel.trace_files(folder)
    mine = [f for f in files if ".step2." in os.path.basename(f)]
    check(len(mine) == 1, "%s: the next run saved its own window (%s)" % (label, files))
    finished = re.findall(r"finished (\S+): the cut window", err)
    left = rel.temp_files(folder)
    m = re.search(r"(\d+) cut windows? of processes that died left", err)
    check(len(finished) + len(left) == 16 and len(left) == (int(m.group(1)) if m else 0),
          "%s: every copy finished (%d) or left and named (%d): %r" % (label, len(finished), len(left), err[-500:]))
    check(not [n for n in left if n in cut_only] or comp != "none",
          "%s: every copy cut at a byte is finished (left: %s)" % (label, [n for n in left if n in cut_only]))
    bad = []
    for f in finished:
        try:
            t = rel.load_trace(f)
            if not isinstance(t.get("traceprof", {}).get("cut"), dict):
                bad.append((f, "no cut"))
        except Exception as e:  # noqa: BLE001 (only the copies cut at a byte must read)
            bad.append((f, str(e)[:80]))
    # A flipped byte no checksum covers (in a plain .pftrace's string) can
    # reach the output, as recover would copy it; there, the copies cut at
    # a byte (6) must still read.
    if comp != "none":
        check(not bad, "%s: the finished copies read as cut traces (%s)" % (label, bad[:3]))
    else:
        check(len(finished) - len(bad) >= len(cut_only),
              "%s: at least the copies cut at a byte read as cut traces (%d of %d; %s)"
              % (label, len(finished) - len(bad), len(finished), bad[:3]))
check.done()
PY
