#!/usr/bin/env bash
# `traceprof top --once` on the live files the library writes (issue 46,
# "Prove it"): 8 processes of test/programs/live_ranks.c on the stand-in
# runtime (RANK=0..7), rank 3's steps twice as long, rank 5 blocked in
# cudaStreamSynchronize at its step 6 (the stand-in's STANDIN_SYNC_SLEEP_AT
# knob).  While they run, top names rank 3 the straggler and shows rank 5
# stalled in cudaStreamSynchronize, its seconds growing between two
# snapshots; after they exit, every rank is finished.
. "$TP_TOP/test/lib/common.sh"
[ -z "${TP_SANITIZER:-}" ] || skip "live_ranks runs the live files' writer under $TP_SANITIZER; this test reads them with top"
SI="$BUILD/standin"
P="$BUILD/test/prog_live_ranks"
[ -x "$P" ] && [ -e "$SI/libcudart.so.13" ] ||
	skip "no $P or $SI (the library's live files, issue 46 items 1 and 3, and make check's programs)"
T="$TP_TOP/scripts/traceprof"
PY=$("$PYTHON" -c 'import sys; print(sys.executable)')
top() { "$PY" "$T" top "$@"; }
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export WORLD_SIZE=8 TRACEPROF_RUN_NAME=topjob TRACEPROF_FOLDER="$TP_TMP/traces/{run_name}"
unset TRACEPROF_LIVE TRACEPROF_LIVE_DIR

# 40 steps of 150 ms (rank 3: 300 ms); rank 5's 7th synchronization (its
# step 6: steps count from 0) blocks 8 s.
pids=""
for r in 0 1 2 3 4 5 6 7; do
	if [ $r = 5 ]; then
		RANK=$r LOCAL_RANK=$r STANDIN_SYNC_SLEEP_AT=7 STANDIN_SYNC_SLEEP_MS=8000 \
			traced "$P" 40 150 3 >"r$r.out" 2>"r$r.err" &
	else
		RANK=$r LOCAL_RANK=$r traced "$P" 40 150 3 >"r$r.out" 2>"r$r.err" &
	fi
	pids="$pids $!"
done
trap 'kill $pids 2>/dev/null || true' EXIT

# Until rank 5 is stalled (--stall-after 2) and every rank has steps.
for i in $(seq 100); do
	if top --once --stall-after 2 >once.txt 2>err.txt &&
		grep -q '^rank 5 .*stalled [0-9]* s in cudaStreamSynchronize' once.txt &&
		[ "$(grep -c '^rank .* median [0-9]' once.txt)" = 8 ]; then
		break
	fi
	sleep 0.2
done
cat once.txt err.txt
grep -q "^run topjob: 8 processes in $TP_TMP/traces/topjob/.live" once.txt || die "header: $(cat once.txt err.txt)"
grep -Eq '^rank 5 .*step 6 .*stalled [0-9]+ s in cudaStreamSynchronize$' once.txt ||
	die "rank 5 not stalled in cudaStreamSynchronize at step 6: $(cat once.txt err.txt)"
grep -q '^straggler: rank 3 ' once.txt || die "straggler is not rank 3: $(cat once.txt)"
for r in 0 1 2 3 4 6 7; do
	grep -Eq "^rank $r .*(running|recording)\$" once.txt || die "rank $r: $(cat once.txt)"
done
top --json --stall-after 2 >a.json
sleep 1.2
top --json --stall-after 2 >b.json
"$PY" - a.json b.json <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ra, rb = ({p["rank"]: p for p in s["processes"]} for s in (a, b))
assert sorted(rb) == list(range(8)), sorted(rb)
for r in (ra, rb):
    assert r[5]["status"] == "stalled" and r[5]["in"]["name"] == "cudaStreamSynchronize", r[5]
    assert r[5]["in"]["kind"] == "cuda", r[5]["in"]
grow = rb[5]["in"]["seconds"] - ra[5]["in"]["seconds"]
assert grow >= 1.0, ("rank 5's seconds in cudaStreamSynchronize did not grow", ra[5]["in"],
                     rb[5]["in"])
assert b["straggler"]["rank"] == 3 and 1.6 < b["straggler"]["vs_median_rank"] < 2.4, b["straggler"]
assert rb[1]["step"] > ra[1]["step"] or rb[1]["status"] == "finished", (ra[1], rb[1])
print("rank 5 in cudaStreamSynchronize %.1f s, then %.1f s; straggler rank 3 at %.2fx" % (
    ra[5]["in"]["seconds"], rb[5]["in"]["seconds"], b["straggler"]["vs_median_rank"]))
PY
for p in $pids; do wait $p || die "a rank failed: $(cat r*.err)"; done
trap - EXIT
top --once >end.txt 2>&1 || die "after the exit: $(cat end.txt)"
cat end.txt
[ "$(grep -c '^rank [0-7] .*step .* finished, exit 0$' end.txt)" = 8 ] || die "not every rank finished: $(cat end.txt)"
echo "top on the library's live files ok"
