# Multi-rank: Open MPI's mpirun runs 4 ranks of a test program under the
# library; each rank writes its own rank-named file with the right
# distributedInfo and all share one baseTimeNanoseconds.  The same with
# torchrun-style variables set by a shell loop.  When build/traceprof has a
# merge subcommand, the 4 files are merged and the result checked.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_steps"
[ -x "$prog" ] || die "$prog not built"

check_ranks() { # FOLDER LAUNCHER
	"$PYTHON" - "$1" "$2" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import rel
folder, launcher = sys.argv[1], sys.argv[2]
traces = rel.load_all(folder)
by_name = {os.path.basename(p): t for p, t in traces.items()}
want = ["rank%d.step3.trace.json" % r for r in range(4)]
if sorted(by_name) != want:
    rel.fail("%s: expected %s, got %s" % (folder, want, sorted(by_name)))
bases = set()
for r in range(4):
    t = by_name["rank%d.step3.trace.json" % r]
    d = t["distributedInfo"]
    if d.get("rank") != r or d.get("world_size") != 4:
        rel.fail("%s: rank %d has distributedInfo %r" % (folder, r, d))
    if launcher == "torchrun" and (d.get("local_rank") != r or d.get("local_world_size") != 4):
        rel.fail("torchrun: rank %d local fields wrong: %r" % (r, d))
    steps = [e for e in t["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")]
    if len(steps) < 3:
        rel.fail("%s: rank %d has %d ProfilerStep events" % (folder, r, len(steps)))
    bases.add(t["baseTimeNanoseconds"])
if len(bases) != 1:
    rel.fail("%s: ranks disagree on baseTimeNanoseconds: %r" % (folder, bases))
print("ok   %s: 4 rank files, distributedInfo right, one base time" % folder)
PY
}

# torchrun-style environment, set by a shell loop.
pids=""
for r in 0 1 2 3; do
	RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 LOCAL_WORLD_SIZE=4 GROUP_RANK=0 TORCHELASTIC_RUN_ID=job42 \
		TRACEPROF_FOLDER='torchrun/{run_name}' traced "$prog" 3 1 >/dev/null 2>"torch$r.err" &
	pids="$pids $!"
done
for p in $pids; do wait "$p" || die "a torchrun-style rank failed"; done
check_ranks torchrun/job42 torchrun

# Open MPI.
if ! command -v mpirun >/dev/null; then
	skip "mpirun not installed (openmpi-bin); the torchrun-style part passed"
fi
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
# shellcheck disable=SC2086
timeout 120 mpirun $root --oversubscribe -np 4 \
	-x LD_PRELOAD="$TP_PRELOAD" -x TRACEPROF_FOLDER=mpi \
	${TP_SANITIZER:+-x ASAN_OPTIONS -x TSAN_OPTIONS} \
	"$prog" 3 1 >mpi.out 2>mpi.err || {
	tail -20 mpi.err
	die "mpirun failed"
}
check_ranks mpi openmpi

# traceprof merge, when another engineer's command has it.
tp="$BUILD/traceprof"
if [ -x "$tp" ] && "$tp" merge --help >/dev/null 2>&1; then
	"$tp" merge -o merged.json mpi/rank*.json >merge.out 2>&1 ||
		"$tp" merge mpi/rank*.json >merged.json 2>merge.out ||
		die "traceprof merge failed: $(tail -5 merge.out)"
	"$PYTHON" - <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TP_TOP"], "test", "lib"))
import json, rel
m = json.load(open("merged.json"))
ev = m["traceEvents"] if isinstance(m, dict) else m
pids = {e.get("pid") for e in ev if e.get("ph") == "X"}
if len(pids) != 4:
    rel.fail("merged trace has %d processes, want 4" % len(pids))
steps = {}
for e in ev:
    if e.get("name", "").startswith("ProfilerStep#"):
        steps.setdefault(e["name"], []).append(e["ts"])
for name, ts in steps.items():
    if len(ts) != 4:
        rel.fail("merged: %s appears %d times, want 4" % (name, len(ts)))
print("ok   merged: 4 processes, every ProfilerStep on each rank")
PY
else
	echo "note: $tp merge not available; the merge check is skipped"
fi
echo PASS
