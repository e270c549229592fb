#!/usr/bin/env bash
# Issue 42 item 4, third bullet: runs do not mix.  Each file's footer names
# its run (run_id, run_id_from) and when its process started recording
# (start_unix_ns):
#   - `traceprof run` gives every process it launches one id (here two
#     ranks, started by one shell line): `summary --by rank` reads them as
#     one run;
#   - three runs into one folder: refused by their run ids, one traceprof:
#     line naming them and --all-runs (before, the refusal only named
#     rank 0's processes: no run id existed);
#   - the rules without `traceprof run` (plain LD_PRELOAD):
#     TORCHELASTIC_RUN_ID (not "none"), SLURM_JOB_ID.SLURM_STEP_ID,
#     PMIX_NAMESPACE, else the parent process.
. "$TP_TOP/test/lib/common.sh"
T="$BUILD/traceprof"
prog="$BUILD/test/prog_steps"
[ -x "$prog" ] || die "$prog not built"
now_ns() { "$PYTHON" -c 'import time; print(time.time_ns())'; }

# footer FILE: "run_id run_id_from start_unix_ns" of the file's footer.
footer() {
	"$PYTHON" - "$1" <<'PY'
import json, sys
ft = json.load(open(sys.argv[1]))["traceprof"]
print("%s|%s|%s" % (ft.get("run_id"), ft.get("run_id_from"), ft.get("start_unix_ns")))
PY
}

# 1. One run of two ranks: one id, from traceprof run; accepted.
t0=$(now_ns)
"$T" run -q --folder "$PWD/one" -- sh -c "RANK=0 WORLD_SIZE=2 '$prog' 4 & RANK=1 WORLD_SIZE=2 '$prog' 4 & wait" \
	>one.out 2>one.err || die "one run of two ranks: $(cat one.err)"
t1=$(now_ns)
ls one
[ "$(ls one/*.json | wc -l)" = 2 ] || die "want two files: $(ls one)"
f0=$(footer one/rank0.*.json) f1=$(footer one/rank1.*.json)
[ "${f0%%|*}" = "${f1%%|*}" ] || die "the two ranks of one run have two ids: $f0 / $f1"
case "$f0" in *-*-*-*-*"|TRACEPROF_RUN_ID|"*) ;; *) die "rank 0's run id is not traceprof run's UUID: $f0" ;; esac
for f in "$f0" "$f1"; do
	start=${f##*|}
	[ "$start" -ge "$t0" ] && [ "$start" -le "$t1" ] || die "start_unix_ns $start not within the run ($t0..$t1)"
done
echo "one run: $f0 / $f1"
"$T" summary --by rank one >one.sum 2>one.serr || die "one run refused: $(cat one.serr)"
grep -q "^ranks: 2" one.sum || die "one run: not two ranks: $(cat one.sum)"

# 2. Three runs into one folder: refused by their ids; --all-runs counts them.
for i in 1 2 3; do
	"$T" run -q --folder "$PWD/three" -- "$prog" 3 >/dev/null 2>run$i.err || die "run $i: $(cat run$i.err)"
done
[ "$(ls three/*.json | wc -l)" = 3 ] || die "want three files: $(ls three)"
if "$T" summary --by rank three >mix.out 2>mix.err; then
	die "three runs in one folder were counted together: $(cat mix.out)"
fi
[ "$(wc -l <mix.err)" = 1 ] && grep -q "^traceprof: these files mix runs: 3 run ids (the footers' run_id: " mix.err &&
	grep -q -- "--all-runs" mix.err || die "the refusal is not one line naming the run ids: $(cat mix.err)"
cat mix.err
"$T" summary --by rank --all-runs three >all.out 2>all.err || die "--all-runs refused: $(cat all.err)"
grep -q "^ranks: 1" all.out || die "--all-runs: $(cat all.out)"

# 3. The ids without traceprof run.
# idof NAME VAR=VALUE...: the footer of prog_steps run with those variables.
idof() {
	local n=$1
	shift
	echo "$BASHPID" >"$n.ppid" # env's parent: this (sub)shell
	env -u TRACEPROF_RUN_ID -u TORCHELASTIC_RUN_ID -u SLURM_JOB_ID -u SLURM_STEP_ID -u PMIX_NAMESPACE \
		"$@" TRACEPROF_FOLDER="$PWD/$n" LD_PRELOAD="$TP_PRELOAD" "$prog" 2 >/dev/null 2>"$n.err" ||
		die "$n: $(cat "$n.err")"
	footer "$(ls "$n"/*.json | head -1)"
}
got=$(idof te TORCHELASTIC_RUN_ID=abc-1)
[ "${got%|*}" = "abc-1|TORCHELASTIC_RUN_ID" ] || die "TORCHELASTIC_RUN_ID: $got"
got=$(idof slurm TORCHELASTIC_RUN_ID=none SLURM_JOB_ID=77 SLURM_STEP_ID=3)
[ "${got%|*}" = "slurm-77.3|SLURM_JOB_ID" ] || die "SLURM_JOB_ID (torchrun's none skipped): $got"
got=$(idof pmix PMIX_NAMESPACE=prterun-h-123@1)
[ "${got%|*}" = "prterun-h-123@1|PMIX_NAMESPACE" ] || die "PMIX_NAMESPACE: $got"
got=$(idof parent TORCHELASTIC_RUN_ID=)
case "$got" in "parent-$(hostname)-$(cat parent.ppid)-"[0-9]*"|parent process|"*) ;;
*) die "the parent's id (pid $(cat parent.ppid)): $got" ;; esac
got=$(idof mine TRACEPROF_RUN_ID=mine TORCHELASTIC_RUN_ID=abc-1)
[ "${got%|*}" = "mine|TRACEPROF_RUN_ID" ] || die "TRACEPROF_RUN_ID first: $got"
echo "run ids ok"
