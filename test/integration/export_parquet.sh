#!/usr/bin/env bash
# Issue 35 item 3: `traceprof export --parquet OUT FOLDER` writes every event
# of a job as a Parquet dataset partitioned by rank and window, and
# docs/export-queries.sql (README's "Reading the result") runs over it in
# DuckDB as written: the top GPU work and CUDA calls by total time across
# ranks equal `summary --by kernel|api` of the merged job; the slowest rank
# of each step is the straggler.  Two jobs: the demo's training loop on the
# stand-in runtime (real CUDA calls, 2 ranks) and gentrace's synthetic job
# with kernels (3 ranks, rank 1 slower).  Without pyarrow the command says
# so in one line.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
need_venv torch 'import pyarrow, duckdb' "no pyarrow or duckdb (scripts/install-deps --with-optional installs them)"
[ -x "$BUILD/test/prog_demo_train" ] || die "prog_demo_train not built"
[ -e "$BUILD/standin/libcudart.so.13" ] || skip "no stand-in runtime built ($BUILD/standin)"

for r in 0 1; do
	RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r TRACEPROF_FOLDER=demo LD_LIBRARY_PATH="$BUILD/standin" \
		traced "$BUILD/test/prog_demo_train" 6 1 >run.out 2>&1 || die "demo rank $r failed: $(cat run.out)"
done
mkdir gen
for r in 0 1 2; do
	step=1000; [ $r = 1 ] && step=1300
	"$PYTHON" "$TP_TOP/test/lib/gentrace.py" gen/rank$r.trace.json --rank $r --world 3 \
		--pid $((500 + r)) --events 600 --gpu --step-us $step --aggregate 2>/dev/null
done

check_job() { # FOLDER
	rm -rf traceprof_export merged.json
	"$py" "$T" export --parquet traceprof_export "$1" >export.out 2>&1 || die "export of $1 failed: $(cat export.out)"
	grep -q "events of .* files written to traceprof_export" export.out || die "export said: $(cat export.out)"
	ls -d traceprof_export/rank=*/window_id=* >/dev/null || die "no rank=/window_id= partitions: $(find traceprof_export | head)"
	"$PYTHON" "$T" merge -o merged.json "$1" >/dev/null 2>&1 || die "merge of $1 failed"
	for by in kernel api; do
		"$PYTHON" "$T" summary merged.json --by $by --csv --top 0 >summary-$by.csv 2>/dev/null || : >summary-$by.csv
	done
	"$py" - "$TP_TOP/docs/export-queries.sql" "$1" <<'PY' || die "$1: the queries over the export differ from summary"
import csv, re, sys
import duckdb
text = open(sys.argv[1]).read()
queries = {}
for block in re.split(r"^-- name: ", text, flags=re.M)[1:]:
    name, body = block.split("\n", 1)
    queries[name.strip()] = body
assert set(queries) == {"slowest_rank_per_step", "top_kernels", "top_cuda_calls",
                        "comm_vs_compute"}, sorted(queries)
res = {n: duckdb.sql(q).fetchall() for n, q in queries.items()}

def summary(by):
    with open("summary-%s.csv" % by, newline="") as f:
        rows = list(csv.reader(f))[1:]
    return sorted(((r[0], int(r[1]), float(r[2])) for r in rows), key=lambda r: (-r[2], r[0]))[:20]

bad = []
for q, by in (("top_kernels", "kernel"), ("top_cuda_calls", "api")):
    got, want = res[q], summary(by)
    if [g[0] for g in got] != [w[0] for w in want] and \
            sorted(g[0] for g in got) != sorted(w[0] for w in want):
        bad.append("%s: names %s, summary %s" % (q, [g[0] for g in got][:5], [w[0] for w in want][:5]))
        continue
    w = {x[0]: x for x in want}
    for name, calls, total in got:
        if calls != w[name][1] or abs(total - w[name][2]) > 0.002 * calls + 0.002:
            bad.append("%s: %s: %d calls %.3f us, summary %d calls %.3f us"
                       % (q, name, calls, total, w[name][1], w[name][2]))
job = sys.argv[2]
steps = res["slowest_rank_per_step"]
if not steps:
    bad.append("slowest_rank_per_step: no steps")
if job == "gen" and any(r[1] != 1 for r in steps):
    bad.append("slowest_rank_per_step: not rank 1 in every step: %s" % steps[:4])
cvc = res["comm_vs_compute"]
if job == "gen" and not (len(cvc) == 3 and all(r[2] > 0 and r[1] == 0 for r in cvc)):
    bad.append("comm_vs_compute: %s" % cvc)
for b in bad:
    print(b)
print("%s: %s" % (job, ", ".join("%s %d rows" % (n, len(r)) for n, r in sorted(res.items()))))
sys.exit(1 if bad else 0)
PY
}
check_job demo
[ -s summary-api.csv ] || die "the demo's merged job has no CUDA calls"
check_job gen
[ -s summary-kernel.csv ] || die "the synthetic job has no kernels"

# Issue 43 item 3: every row it counts is in the dataset.  Two runs whose
# files have the same names: the count printed is the dataset's rows, read
# back here (pyarrow), twice one run's.
mkdir run1 run2
cp demo/* run1/
cp demo/* run2/
rows() { "$py" -c 'import sys, pyarrow.dataset as d; print(d.dataset(sys.argv[1], format="parquet", partitioning="hive").count_rows())' "$1"; }
said() { sed -n 's/^traceprof: \([0-9]*\) events of .*/\1/p' "$1"; }
"$py" "$T" export --parquet one run1 >one.out 2>&1 || die "export run1: $(cat one.out)"
"$py" "$T" export --parquet both run1 run2 >both.out 2>&1 || die "export run1 run2: $(cat both.out)"
n1=$(rows one) n2=$(rows both)
[ "$(said one.out)" = "$n1" ] || die "export run1 said $(said one.out) rows, the dataset has $n1"
[ "$(said both.out)" = "$n2" ] || die "export run1 run2 said $(said both.out) rows, the dataset has $n2"
[ "$n2" = $((2 * n1)) ] || die "two runs' files of the same names: $n2 rows, not 2 x $n1"
# An existing dataset is refused without --overwrite, replaced with it.
if "$py" "$T" export --parquet both run1 >err.txt 2>&1; then die "export into an existing dataset succeeded"; fi
[ "$(wc -l <err.txt)" = 1 ] && grep -q "^traceprof: both exists: give --overwrite" err.txt ||
	die "an existing dataset: $(cat err.txt)"
[ "$(rows both)" = "$n2" ] || die "the refused export changed the dataset"
"$py" "$T" export --parquet both --overwrite run1 >both.out 2>&1 || die "export --overwrite: $(cat both.out)"
[ "$(rows both)" = "$n1" ] && [ "$(said both.out)" = "$n1" ] || die "export --overwrite: $(rows both) rows, said $(said both.out), not $n1"
# An output under a file: one line, no traceback.
: >afile
if "$py" "$T" export --parquet afile/out demo >err.txt 2>&1; then die "export under a file succeeded"; fi
[ "$(wc -l <err.txt)" = 1 ] && grep -q "^traceprof: cannot create the dataset's folder afile/out" err.txt ||
	die "an output under a file: $(cat err.txt)"
echo "ok: export keeps every row it counts, refuses an existing dataset, names an output it cannot make"

# Without pyarrow: one line that names the fix.
if "$PYTHON" -c 'import pyarrow' 2>/dev/null; then
	echo "($PYTHON has pyarrow: the message is not checked)"
else
	if "$PYTHON" "$T" export --parquet x demo >out.txt 2>err.txt; then die "export without pyarrow succeeded"; fi
	[ "$(wc -l <err.txt)" = 1 ] || die "more than one line without pyarrow: $(cat err.txt)"
	grep -q "pip install pyarrow" err.txt || die "no fix named: $(cat err.txt)"
fi
echo "ok: export --parquet and docs/export-queries.sql"
