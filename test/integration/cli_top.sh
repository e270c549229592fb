#!/usr/bin/env bash
# `traceprof top --once` and `--json` (issue 46 item 2) on live files a
# writer process rewrites while top reads them (test/lib/genlive.py: the
# format of docs/live.md, without the library): 8 ranks, rank 3's steps
# twice as long (the straggler), rank 5 stalled in cudaStreamSynchronize
# inside ncclAllReduce (its seconds grow between two snapshots), rank 6's
# file no longer updated (stale), rank 7 finished, rank 0 recording.  Then
# the folders top finds (the default one, a folder of runs, TRACEPROF_LIVE_DIR,
# --run/--all), a malformed file (skipped and counted), and the errors.
. "$TP_TOP/test/lib/common.sh"
[ -z "${TP_SANITIZER:-}" ] || skip "traceprof top is Python only: nothing for $TP_SANITIZER to check"
T="$TP_TOP/scripts/traceprof"
GEN="$TP_TOP/test/lib/genlive.py"
PY=$("$PYTHON" -c 'import sys; print(sys.executable)')
top() { "$PY" "$T" top "$@"; }

mkdir -p traceprof_traces/train/.live
"$PY" "$GEN" traceprof_traces/train/.live job --duration 60 --interval-ms 100 --step-ms 100 &
writer=$!
trap 'touch traceprof_traces/train/.live/stop; wait $writer 2>/dev/null || true' EXIT

# Until rank 6's file is stale (no update for 3 s: 5 intervals, at least
# 3 s) and rank 5 stalled (--stall-after 2).
for i in $(seq 100); do
	if top traceprof_traces/train --once --stall-after 2 >once.txt 2>err.txt &&
		grep -q '^rank 6 .*stale' once.txt && grep -q '^rank 5 .*stalled' once.txt; then
		break
	fi
	sleep 0.2
done
cat once.txt
grep -q '^rank 6 .*stale: no update for [0-9]* s' once.txt || die "rank 6 not stale: $(cat once.txt err.txt)"
grep -Eq '^rank 5 .*step 6 .*stalled [0-9]+ s in cudaStreamSynchronize, inside ncclAllReduce \{op=sum, bytes=4194304\}$' once.txt ||
	die "rank 5 not stalled in cudaStreamSynchronize inside ncclAllReduce: $(cat once.txt)"
grep -q '^rank 7 .*step 4 .*finished, exit 0$' once.txt || die "rank 7 not finished: $(cat once.txt)"
grep -q '^rank 0 .*recording$' once.txt || die "rank 0 not recording: $(cat once.txt)"
grep -q '^rank 1 .*running$' once.txt || die "rank 1 not running: $(cat once.txt)"
grep -Eq '^straggler: rank 3 \(median step 2[0-9.]+ms, \+(9[0-9]|10[0-9])\.[0-9]% against the median rank' once.txt ||
	die "straggler is not rank 3: $(cat once.txt)"
grep -Eq '^job: median step (9[7-9]|10[0-3])\.[0-9]+ms, [0-9.]+ steps/s; 1 finished, 1 recording, 4 running, 1 stale, 1 stalled$' once.txt ||
	die "job line: $(cat once.txt)"
[ "$(grep -c '^rank ' once.txt)" = 8 ] || die "not 8 process lines: $(cat once.txt)"
# Slowest first: stalled and stale, then rank 3.
[ "$(grep '^rank ' once.txt | sed -n 3p | cut -c1-6)" = "rank 3" ] || die "order: $(cat once.txt)"
top traceprof_traces/train --once --stall-after 2 --sort rank >byrank.txt
[ "$(grep '^rank ' byrank.txt | cut -c1-6 | tr '\n' ,)" = "rank 0,rank 1,rank 2,rank 3,rank 4,rank 5,rank 6,rank 7," ] ||
	die "--sort rank: $(cat byrank.txt)"

# --json, twice: rank 5's seconds in its call grow; the other figures agree.
top traceprof_traces/train --json --stall-after 2 >a.json
sleep 1.2
top traceprof_traces/train --json --stall-after 2 >b.json
"$PY" - a.json b.json <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def by_rank(s):
    return {p["rank"]: p for p in s["processes"]}
ra, rb = by_rank(a), by_rank(b)
assert sorted(ra) == list(range(8)), sorted(ra)
# Slowest first, as --once: the stalled and stale ones, then rank 3.
assert [p["rank"] for p in b["processes"]][2] == 3, [p["rank"] for p in b["processes"]]
st = {r: p["status"] for r, p in rb.items()}
assert st == {0: "recording", 1: "running", 2: "running", 3: "running", 4: "running",
              5: "stalled", 6: "stale", 7: "finished"}, st
for s in (ra, rb):
    i = s[5]["in"]
    assert (i["kind"], i["name"], i["thread_name"]) == ("cuda", "cudaStreamSynchronize", "python"), i
    assert [x["name"] for x in i["path"]] == ["Model", "ncclAllReduce", "cudaStreamSynchronize"], i
grow = rb[5]["in"]["seconds"] - ra[5]["in"]["seconds"]
assert 1.0 <= grow < 30.0, ("stalled seconds did not grow by the time between the snapshots", grow)
assert rb[5]["step_s"] > ra[5]["step_s"] and rb[5]["step"] == 6, (ra[5], rb[5])
assert rb[1]["step"] > ra[1]["step"], "rank 1 did not advance"
assert b["straggler"]["rank"] == 3 and 1.9 < b["straggler"]["vs_median_rank"] < 2.1, b["straggler"]
assert 1.9 < rb[3]["vs_job"] < 2.1 and 194e6 <= rb[3]["median_step_ns"] <= 206e6, rb[3]
job = b["job"]
assert 97e6 <= job["median_step_ns"] <= 103e6 and b["run"] == "synthetic", job
assert abs(job["steps_per_s"] - 1e9 / job["median_step_ns"]) < 1e-3, job
assert rb[7]["exit_status"] == 0 and b["skipped"] == [], (rb[7], b["skipped"])
print("json ok: rank 5 stalled %.1f s then %.1f s" % (ra[5]["in"]["seconds"], rb[5]["in"]["seconds"]))
PY
touch traceprof_traces/train/.live/stop
wait $writer
trap - EXIT

# Where top looks.  The default folder: traceprof run's
# (traceprof_traces/{run_name}), the run named by the environment...
TRACEPROF_RUN_NAME=train top --once >def.txt 2>&1 || die "default folder: $(cat def.txt)"
grep -q '^run synthetic: 8 processes in traceprof_traces/train/.live' def.txt || die "default: $(cat def.txt)"
# ... or without a run name, every run folder, the run written last shown.
mkdir -p traceprof_traces/other/.live
"$PY" - <<'PY'
import sys
sys.path.insert(0, __import__("os").environ["TP_TOP"] + "/test/lib")
import genlive
genlive.write("traceprof_traces/other/.live", genlive.doc("h", 7, 0, 1, run="other", step=3))
PY
top --once >runs.txt 2>&1 || die "no run name: $(cat runs.txt)"
grep -q '^run other: 1 process in traceprof_traces/other/.live, .* (also: synthetic; --run NAME or --all)' runs.txt ||
	die "several runs: $(cat runs.txt)"
top --once --run synthetic | grep -q '^run synthetic: 8 processes' || die "--run synthetic"
top traceprof_traces --once --all >all.txt
grep -q '^every run: 9 processes in traceprof_traces/other/.live, traceprof_traces/train/.live' all.txt ||
	die "--all: $(cat all.txt)"
top traceprof_traces/other/.live --once | grep -q '^run other: 1 process' || die ".live folder given"
mkdir elsewhere && cp traceprof_traces/other/.live/h.7.json elsewhere/
TRACEPROF_LIVE_DIR=elsewhere top --once | grep -q '^run other: 1 process in elsewhere,' || die "TRACEPROF_LIVE_DIR"
TRACEPROF_FOLDER=traceprof_traces/{run_name} TRACEPROF_RUN_NAME=other top --once |
	grep -q '^run other: 1 process' || die "TRACEPROF_FOLDER"

# A malformed or half-written file is skipped and counted.
echo '{"traceprofLive":1,"host":"h"' >traceprof_traces/other/.live/h.8.json
echo '{"traceprofLive":1}' >traceprof_traces/other/.live/h.9.json
echo '{"partial' >traceprof_traces/other/.live/.h.10.json.tmp
top traceprof_traces/other --once >sk.txt 2>sk.err || die "malformed file: $(cat sk.err)"
grep -q '^run other: 1 process' sk.txt || die "skipped: $(cat sk.txt)"
grep -q '^traceprof: note: 2 live files skipped (traceprof_traces/other/.live/h.8.json: not JSON' sk.err ||
	die "skipped files not counted: $(cat sk.err)"
top traceprof_traces/other --json 2>/dev/null | "$PY" -c '
import json, sys
s = json.load(sys.stdin)
assert [(k["file"].split("/")[-1], k["why"]) for k in s["skipped"]][1] == ("h.9.json", "no \"host\""), s["skipped"]'

# Errors: one traceprof: line with a hint, exit 1, no traceback.
expect_err() {
	local want=$1; shift
	if "$@" >out.txt 2>err.txt; then die "$* succeeded: $(cat out.txt)"; fi
	grep -q "^traceprof: top: $want" err.txt || die "$*: $(cat err.txt)"
	[ "$(wc -l <err.txt)" = 1 ] || die "$*: more than one line: $(cat err.txt)"
}
expect_err "'nosuch' is not a folder; give a trace folder" top nosuch --once
mkdir empty empty/.live
expect_err "no live files in empty/.live; the job has not started yet" top empty --once
expect_err "no live folder at nowhere/.live" env TRACEPROF_RUN_NAME=x TRACEPROF_FOLDER=nowhere "$PY" "$T" top --once
mkdir bad && echo '[1]' >bad/a.1.json
expect_err "no readable live file in bad: 1 skipped (bad/a.1.json: not a traceprof live file" top bad --json
expect_err "no live file of run 'nosuch'" top traceprof_traces --once --run nosuch
expect_err "the view needs a terminal; use --once" top traceprof_traces/other
echo "top --once/--json ok"
