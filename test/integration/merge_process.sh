# traceprof merge keeps one process one process (issue 20, item 6): the
# windows of one process (TRACEPROF_SCHEDULE with repeat), and the parts of
# one split window (TRACEPROF_MAX_FILE_MB), merge into one process group with
# the process's own pid; another rank's process with the same pid still gets
# a pid of its own.  And the merged file states its rank the way Holistic
# Trace Analysis finds it (item 2): its pattern "rank":\s+(\d+) must give the
# rank, for a merge of one rank's windows and for a merge of several ranks.
# Each file's traceName is its own name (item 3: it was the name of the
# window's first step, while the file is named after its last).
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_steps"
[ -x "$prog" ] || skip "$prog not built"

# Rank 1: two windows (steps 1-2 and 4-5) of one process.
env RANK=1 WORLD_SIZE=2 TRACEPROF_FOLDER=windows TRACEPROF_SCHEDULE=wait=1,active=2,repeat=2 \
	LD_PRELOAD="$TP_PRELOAD" "$prog" 8 1 3 >/dev/null
# Rank 1: one window split into parts.
env RANK=1 WORLD_SIZE=2 TRACEPROF_FOLDER=parts TRACEPROF_MAX_FILE_MB=1 TRACEPROF_SAMPLE_MS=0 \
	TRACEPROF_BUFFER_EVENTS=1048576 LD_PRELOAD="$TP_PRELOAD" "$prog" 4 2 6000 >/dev/null
# Rank 0: a merge of the windows of rank 1 and one window of another
# process, given rank 0 (its own pid, and one made equal below).
env RANK=0 WORLD_SIZE=2 TRACEPROF_FOLDER=rank0 LD_PRELOAD="$TP_PRELOAD" "$prog" 3 >/dev/null

"$BUILD/traceprof" merge -o windows.json windows 2>merge1.txt || die "merge: $(cat merge1.txt)"
"$BUILD/traceprof" merge -o parts.json parts 2>merge2.txt || die "merge: $(cat merge2.txt)"
mkdir -p both
cp windows/*.json rank0/*.json both/
"$BUILD/traceprof" merge -o both.json both 2>merge3.txt || die "merge: $(cat merge3.txt)"

"$PYTHON" - <<'PY'
import glob, json, re, sys

def load(f):
    return json.load(open(f))

def pids(d, cats=("user_annotation",)):
    return {e["pid"] for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") in cats}

def names(d):
    return {e["pid"]: e["args"]["name"] for e in d["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "process_name"}

fails = []
for f in sorted(glob.glob("windows/*.json") + glob.glob("parts/*.json")):
    tn = load(f).get("traceName")
    if tn != f.split("/")[-1]:
        fails.append("%s: traceName %r" % (f, tn))
nwin = len(glob.glob("windows/*.json"))
nparts = len(glob.glob("parts/*.json"))
assert nwin == 2, glob.glob("windows/*.json")
assert nparts >= 3, glob.glob("parts/*.json")
orig_w = {p for f in glob.glob("windows/*.json") for p in pids(load(f))}
orig_p = {p for f in glob.glob("parts/*.json") for p in pids(load(f))}
assert len(orig_w) == 1 and len(orig_p) == 1, (orig_w, orig_p)

for out, orig, what in (("windows.json", orig_w, "2 windows"), ("parts.json", orig_p,
                                                                   "%d parts" % nparts)):
    d = load(out)
    got = pids(d)
    if got != orig:
        fails.append("%s of one process merged into pids %s, not its own %s" % (
            what, sorted(got), sorted(orig)))
    nm = names(d)
    host = [p for p, n in nm.items() if p in got]
    if len(nm) != len(set(nm)) or len(host) != 1:
        fails.append("%s: process names %s" % (what, nm))
    # Item 2: Holistic Trace Analysis's own pattern finds rank 1.
    first = next((m for line in open(out) for m in [re.search(r'"rank":\s+(\d+)', line)] if m),
                 None)
    if not first or int(first.group(1)) != 1:
        fails.append("%s: HTA's rank pattern found %s, not rank 1" % (
            out, first.group(0) if first else None))

# Two ranks: rank 0's process and rank 1's windows are two processes, each
# with its own pid, and the merge says rank 0.
d = load("both.json")
got = pids(d)
if len(got) != 2:
    fails.append("rank 0 and rank 1's 2 windows merged into %d processes: %s" % (
        len(got), names(d)))
first = next((m for line in open("both.json") for m in [re.search(r'"rank":\s+(\d+)', line)]
              if m), None)
if not first or int(first.group(1)) != 0:
    fails.append("both.json: HTA's rank pattern found %s, not rank 0" % (first and first.group(0)))

for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
# The same pid in two ranks stays two processes: rank 0's file with rank
# 1's pid written in (and its process named for it).
pid1=$("$PYTHON" -c 'import glob,json; d=json.load(open(sorted(glob.glob("windows/*.json"))[0])); print(next(e["pid"] for e in d["traceEvents"] if e.get("ph")=="X"))')
pid0=$("$PYTHON" -c 'import glob,json; d=json.load(open(glob.glob("rank0/*.json")[0])); print(next(e["pid"] for e in d["traceEvents"] if e.get("ph")=="X"))')
mkdir -p same
cp windows/*.json same/
sed "s/\"pid\":$pid0\([,}]\)/\"pid\":$pid1\1/g; s/(pid $pid0)/(pid $pid1)/g" rank0/*.json >same/rank0.json
"$BUILD/traceprof" merge -o same.json same 2>merge4.txt || die "merge: $(cat merge4.txt)"
"$PYTHON" - "$pid1" <<'PY'
import json, sys
pid = int(sys.argv[1])
d = json.load(open("same.json"))
got = {e["pid"] for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "user_annotation"}
assert len(got) == 2 and pid in got, ("two ranks with one pid", got)
print("merge keeps processes: windows and parts of one process merge into it; "
      "one pid in two ranks stays two")
PY
check_trace windows.json parts.json both.json same.json >/dev/null || die "trace check failed"
