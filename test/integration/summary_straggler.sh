# Issue 42 item 4: summary --by rank names the straggler of real jobs
# (torchrun, 2 ranks, gloo on the CPU, the torch venv;
# test/programs/torch_ddp_work.py):
#   - DistributedDataParallel where rank 1 trains on 4 times the batch:
#     DDP's all-reduce makes every step as long as the slowest rank's, so
#     only the time in collectives (gloo's ranges and c10d's operators,
#     --pytorch ops) tells: rank 1 waits least.  The losses are what they
#     are without traceprof; the tables and the events give the same rows;
#   - no schedule, each rank training alone, rank 0 sleeping 4 s before its
#     loop (start-up, in step 0) and rank 1 20 ms more in every step: the
#     median names rank 1 (the mean named rank 0);
#   - the two runs' files in one folder are refused (two run ids, as
#     traceprof run gives each run its own) with one traceprof: line;
#     --all-runs counts them together.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' "torch without gloo"
run="$(dirname "$py")/torchrun"
[ -x "$run" ] || skip "no torchrun beside $py"
prog="$TP_TOP/test/programs/torch_ddp_work.py"
T="$BUILD/traceprof"
C="$TP_TOP/test/lib/sumcmp.py"
port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export OMP_NUM_THREADS=1
trun() { # NAME ARGS...: torchrun of the program, 2 ranks
	n=$1
	shift
	"$run" --nproc_per_node 2 --master_addr 127.0.0.1 --master_port "$(port)" "$prog" "$@" 2>"$n.err" ||
		die "$n: torchrun failed: $(tail -5 "$n.err")"
}
rank_csv() { # NAME FILES...: the CSV from the tables, checked against the events'
	n=$1
	shift
	"$T" summary --by rank --csv "$@" >"$n.csv" 2>"$n.verdict" || die "$n: summary --by rank: $(cat "$n.verdict")"
	"$T" summary --by rank --csv --from-events "$@" >"$n.ev.csv" 2>"$n.ev.verdict" ||
		die "$n: summary --by rank --from-events: $(cat "$n.ev.verdict")"
	"$PYTHON" "$C" "$n.csv" "$n.ev.csv" || die "$n: the tables and the events differ"
	# The same rank for the same reason (the times printed may differ in
	# their last digit: the JSON's durations are rounded to the ns).
	v() { sed -E 's/^(straggler: rank [0-9]+ \((waits|median step)).*/\1/' "$1"; }
	[ "$(v "$n.verdict")" = "$(v "$n.ev.verdict")" ] && [ -n "$(v "$n.verdict")" ] ||
		die "$n: verdicts differ: $(cat "$n.verdict" "$n.ev.verdict")"
	cat "$n.verdict"
}

# DDP, rank 1 with 4 times the work.
export WORK_RANK=1 WORK_X=4
plain=$(trun plain 12) || exit 1
out=$("$T" run -q --step torch --pytorch ops --schedule wait=1,warmup=1,active=8,repeat=1 \
	--folder "$PWD/ddp" -- "$run" --nproc_per_node 2 --master_addr 127.0.0.1 \
	--master_port "$(port)" "$prog" 12 2>ddp.err) || die "ddp: traced torchrun failed: $(tail -5 ddp.err)"
[ "$out" = "$plain" ] || die "losses changed under traceprof: '$plain' vs '$out'"
rank_csv ddp ddp
grep -q "^straggler: rank 1 (waits .* a step in collectives, the least" ddp.verdict ||
	die "ddp: the straggler is not rank 1 by its wait: $(cat ddp.verdict ddp.csv)"
"$PYTHON" - ddp.csv <<'PY' || die "ddp: rank 0 should wait longer than rank 1"
import csv, sys
r = {int(x["rank"]): x for x in csv.DictReader(open(sys.argv[1]))}
w0, w1 = float(r[0]["comm_us_per_step"]), float(r[1]["comm_us_per_step"])
m0, m1 = float(r[0]["median_us"]), float(r[1]["median_us"])
# Synchronous: the medians within a quarter of each other, so that the
# steps alone could not tell; rank 0 waits for rank 1's three extra batches.
assert abs(m0 - m1) < 0.25 * max(m0, m1), (m0, m1)
assert w0 > 1.5 * w1, (w0, w1)
print("ddp: medians %.1f / %.1f ms, in collectives %.1f / %.1f ms a step" % (m0 / 1e3, m1 / 1e3, w0 / 1e3, w1 / 1e3))
PY
unset WORK_RANK WORK_X

# No schedule: start-up in step 0.
STARTUP_RANK=0 STARTUP_MS=4000 SLEEP_RANK=1 SLEEP_MS=20 SYNC=none "$T" run -q --step torch \
	--folder "$PWD/nosched" -- "$run" --nproc_per_node 2 --master_addr 127.0.0.1 \
	--master_port "$(port)" "$prog" 10 >/dev/null 2>nosched.err || die "nosched: traced torchrun failed: $(tail -5 nosched.err)"
# The launcher's own file (a rank 0 of world size 1) where it writes one.
workers=$("$PYTHON" - nosched/* <<'PY'
import json, sys
print(" ".join(p for p in sys.argv[1:] if json.load(open(p))["distributedInfo"]["world_size"] == 2))
PY
)
[ "$(echo $workers | wc -w)" = 2 ] || die "nosched: want 2 workers' files, got: $(ls nosched)"
# shellcheck disable=SC2086
rank_csv nosched $workers
grep -q "^straggler: rank 1 (median step" nosched.verdict ||
	die "nosched: the straggler is not rank 1: $(cat nosched.verdict nosched.csv)"
# Rank 0's 4 s start-up is step 0, labelled start-up by the library: left
# out of every rank's statistics (issue 42 item 3), and the median would
# not have been moved by it anyway.
"$PYTHON" - nosched.csv <<'PY' || die "nosched: rank 0's start-up step counted in its statistics"
import csv, sys
r = {int(x["rank"]): x for x in csv.DictReader(open(sys.argv[1]))}
assert r[0]["slowest_step"] != "0" and float(r[0]["max_us"]) < 1e6, r[0]
print("nosched: rank 0's slowest step counted %.3f s" % (float(r[0]["max_us"]) / 1e6))
PY

# Two runs in one folder.
cp nosched/rank0.*.json ddp/ 2>/dev/null || cp $workers ddp/
if "$T" summary --by rank ddp >mix.out 2>mix.err; then
	die "two runs in one folder were counted together: $(cat mix.out)"
fi
# Both runs are traceprof run's: their footers' run ids differ.
[ "$(wc -l <mix.err)" = 1 ] && grep -q "^traceprof: these files mix runs: 2 run ids (the footers' run_id: " mix.err &&
	grep -q -- "--all-runs" mix.err || die "the refusal is not one line naming the runs: $(cat mix.err)"
cat mix.err
"$T" summary --by rank --all-runs ddp >all.out 2>all.err || die "--all-runs refused: $(cat all.err)"
grep -q "^straggler: rank " all.out || die "--all-runs: no verdict: $(cat all.out)"
echo "straggler ok"
