# Holistic Trace Analysis (HTA) reads traceprof's traces (issue 20): a
# 4-rank folder with GPU kernels (stand-in driver and CUPTI), steps and
# markers; its analyses (steps, temporal, kernel, idle time, queue length,
# launch stats, memory bandwidth, GPU user annotations, critical path) run
# without raising, and every kernel is attributed to the marker it was
# launched in (Kineto's gpu_user_annotation events).  HTA runs with
# HTA_DISABLE_NS_ROUNDING=1: its default rounding (ts up, end down to whole
# us) gives sub-us calls negative durations, and its critical path then
# fails.  And HTA's rank pattern reads the rank of merged files: each rank's
# windows merged into one file, the folder of those files read as 4 ranks.
#
# HTA is HolisticTraceAnalysis from PyPI, in the torch venv that
# scripts/install-deps --with-optional makes (issue 31); a copy at
# $TRACEPROF_HTA_DIR/hta is used instead when that variable is set.  Without
# either the test is skipped.
. "$TP_TOP/test/lib/common.sh"
if [ -n "${TRACEPROF_HTA_DIR:-}" ]; then
	[ -d "$TRACEPROF_HTA_DIR/hta" ] || skip "no Holistic Trace Analysis package at $TRACEPROF_HTA_DIR/hta"
	HPY=/usr/bin/python3
	export PYTHONPATH="$TRACEPROF_HTA_DIR"
else
	HPY=$(tp_venv_python torch) || skip "no torch venv with HolisticTraceAnalysis (scripts/install-deps --with-optional makes it)"
fi
"$HPY" -c 'import hta, pandas, plotly, networkx' 2>/dev/null ||
	skip "$HPY lacks hta, pandas, plotly or networkx (scripts/install-deps --with-optional)"
SI="$BUILD/standin"
[ -e "$SI/libcupti.so.13" ] && [ -e "$SI/libcuda.so.1" ] || die "stand-ins not built ($SI); run make check"
prog="$BUILD/test/prog_gpu_steps"
[ -x "$prog" ] || die "$prog not built"

STEPS=6 KERNELS=4
for r in 0 1 2 3; do
	out=$(RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r LOCAL_WORLD_SIZE=4 LD_LIBRARY_PATH="$SI" \
		LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13" TRACEPROF_FOLDER=ranks "$prog" $STEPS $KERNELS 10)
	[ "$out" = "steps=$STEPS launches=$((STEPS * KERNELS * 2)) failed=0" ] || die "rank $r: $out"
	# Two windows of this rank, merged into one file per rank.
	RANK=$r WORLD_SIZE=4 LD_LIBRARY_PATH="$SI" LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13" \
		TRACEPROF_FOLDER=win$r TRACEPROF_SCHEDULE=wait=1,active=2,repeat=2 "$prog" 8 2 10 >/dev/null
	mkdir -p merged
	"$BUILD/traceprof" merge -o merged/rank$r.json win$r 2>/dev/null
done
check_trace ranks/*.json merged/*.json >/dev/null || die "trace check failed"

HTA_DISABLE_NS_ROUNDING=1 "$HPY" "$TP_TOP/test/lib/readers/hta_check.py" \
	ranks 4 $((STEPS * KERNELS * 2)) || die "HTA's analyses failed"

"$HPY" - <<'PY'
import logging, warnings
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
from hta.common.trace_file import create_rank_to_trace_dict_from_dir
ok, ranks = create_rank_to_trace_dict_from_dir("merged")
assert ok and sorted(ranks) == [0, 1, 2, 3], ranks
assert all(ranks[r].endswith("rank%d.json" % r) for r in ranks), ranks
print("HTA reads the rank of each merged file:", sorted(ranks))
PY
