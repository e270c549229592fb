#!/usr/bin/env bash
# `traceprof merge` of Perfetto files (.pftrace): the output is decoded by
# the real protoc with Perfetto's published schema.
#  1. Two synthetic ranks encoded by protoc from text, from two "hosts" whose
#     MONOTONIC clocks are unrelated and with the same pid: each input gets
#     its own sequence, the second rank a new pid (its main thread follows),
#     names prefixed "rank N: ", tracks and arrows kept apart, and times
#     aligned through REALTIME (the slices land at known BOOTTIME times).
#  2. Two real ranks (demo_train with RANK=0/1, --format perfetto): the
#     merged file holds every slice of both inputs, each track balanced, one
#     process group per rank; summary reads it, and --by rank gives the same
#     rows for the merge as for its inputs, and the same steps per rank as
#     the JSON of the same runs; a second merge of the folder skips the
#     first's output; a .json output name is refused.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
"$PYTHON" -c "import sys; sys.path.insert(0, '$TP_TOP/test/lib'); import pftrace; r = pftrace.skip_reason(); print(r or ''); sys.exit(77 if r else 0)" >why.txt || skip "$(cat why.txt)"
PROTO=${TP_PERFETTO_PROTO:-$(dirname "$TP_TOP")/shared/clients/perfetto_trace.proto}

# rank R: MONOTONIC M, BOOTTIME BOOT, REALTIME REAL at the snapshot; pid 500
# on both; one "step" slice 1000-4000 ns after the snapshot on the main
# thread, with flow 7 leaving it; a "kernel" slice 2000-6000 ns on a GPU
# stream track, its end given on MONOTONIC.
synth() { # FILE RANK M BOOT REAL
	cat >"$1.txtpb" <<EOF
packet { trusted_packet_sequence_id: 1 sequence_flags: 1
  clock_snapshot { clocks { clock_id: 3 timestamp: $3 } clocks { clock_id: 6 timestamp: $4 }
                   clocks { clock_id: 1 timestamp: $5 }
                   clocks { clock_id: 64 timestamp: $3 is_incremental: true } }
  trace_packet_defaults { timestamp_clock_id: 64 } }
packet { trusted_packet_sequence_id: 1 track_descriptor { uuid: 1 process { pid: 500 } } }
packet { trusted_packet_sequence_id: 1 timestamp: 0
  track_event { type: TYPE_INSTANT track_uuid: 1 name: "traceprof header"
    debug_annotations { name: "baseTimeNanoseconds" int_value: $5 }
    debug_annotations { name: "rank" int_value: $2 }
    debug_annotations { name: "world_size" int_value: 2 } } }
packet { trusted_packet_sequence_id: 1 track_descriptor { uuid: 2 thread { pid: 500 tid: 500 } } }
packet { trusted_packet_sequence_id: 1 track_descriptor { uuid: 3 thread { pid: 1000000000 tid: 7 } } }
packet { trusted_packet_sequence_id: 1 timestamp: 1000
  interned_data { event_names { iid: 1 name: "step" } }
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 2 name_iid: 1 flow_ids: 7 } }
packet { trusted_packet_sequence_id: 1 timestamp: 1000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 3 name: "kernel" terminating_flow_ids: 7 } }
packet { trusted_packet_sequence_id: 1 timestamp: 2000
  track_event { type: TYPE_SLICE_END track_uuid: 2 } }
packet { trusted_packet_sequence_id: 1 timestamp: $(($3 + 6000)) timestamp_clock_id: 3
  track_event { type: TYPE_SLICE_END track_uuid: 3 } }
packet { trusted_packet_sequence_id: 1
  track_descriptor { uuid: 1 process { pid: 500 process_name: "python" legacy_sort_index: 0 } } }
EOF
	protoc --encode=perfetto.protos.Trace -I "$(dirname "$PROTO")" "$PROTO" <"$1.txtpb" >"$1" ||
		die "protoc cannot encode $1"
}
mkdir syn
# Rank 1's host: MONOTONIC and BOOTTIME nowhere near rank 0's; its REALTIME
# is 2 us later, so its slices are 2 us later on the merged clock.
synth syn/rank0.trace.pftrace 0 1000000 5000000 10000000000
synth syn/rank1.trace.pftrace 1 50000000 90000000 10000002000
"$PYTHON" "$T" merge syn 2>merge.log || { cat merge.log; die "merge of syn failed"; }
cat merge.log
[ -s syn/merged.pftrace ] || die "no syn/merged.pftrace"
"$PYTHON" - <<'PY' || die "the synthetic merge is wrong"
import os, sys
sys.path.insert(0, os.environ["TP_TOP"] + "/test/lib")
sys.path.insert(0, os.environ["TP_TOP"] + "/python")
import pftrace
from traceprof.traces.pftrace import PftraceReader
t = pftrace.decode("syn/merged.pftrace")
pk = t["packet"]
seqs = sorted({pftrace.one(p, "trusted_packet_sequence_id") for p in pk})
assert seqs == [1, 2, 3], seqs
# No input's MONOTONIC is left as the global clock.
for p in pk:
    assert pftrace.one(p, "timestamp_clock_id") != 3, p
    for s in p.get("clock_snapshot", []):
        ids = [pftrace.one(c, "clock_id") for c in s["clocks"]]
        assert 3 not in ids and 65 in ids, ids
procs, threads = {}, {}
for uuid, d in pftrace.tracks(t).items():
    for pr in d.get("process", []):
        if pftrace.one(pr, "process_name"):
            procs[pftrace.one(pr, "pid")] = (uuid, pftrace.one(pr, "process_name"),
                                            pftrace.one(pr, "legacy_sort_index"))
    for th in d.get("thread", []):
        threads[(pftrace.one(th, "pid"), pftrace.one(th, "tid"))] = uuid
names = sorted(v[1] for v in procs.values())
assert names == ["rank 0: python", "rank 1: python"], procs
p1 = [p for p, v in procs.items() if v[1] == "rank 1: python"][0]
assert p1 != 500 and procs[500][1] == "rank 0: python", procs
assert procs[500][2] < procs[p1][2], procs  # rank 0's group sorts first
assert (p1, p1) in threads and (500, 500) in threads, threads  # main threads follow
gpus = sorted(k for k in threads if k[1] == 7)
assert len(gpus) == 2 and gpus[0][0] != gpus[1][0], gpus  # one GPU process per rank
assert len(set(threads.values())) == len(threads), threads
ev = pftrace.events(t)
flows = sorted(x for e in ev for x in e[5].get("flow_ids", []))
term = sorted(x for e in ev for x in e[5].get("terminating_flow_ids", []))
assert flows == term == [7, 7 + (1 << 32)], (flows, term)
assert any(e[1] == "traceprof_merge" for e in ev), "no report"
# Times, as Perfetto lays them out (BOOTTIME through each sequence's
# snapshot): rank 0 stays where it was, rank 1 is 2 us after it.
got = {}
for kind, batch, _ in PftraceReader("syn/merged.pftrace").items():
    for e in batch:
        if e["ph"] == "X":
            got.setdefault(e["name"], []).append((round(e["ts"], 3), round(e["dur"], 3)))
# (deltas: step begins at +1000 ns, kernel at +2000, step ends at +4000,
# kernel at +6000 given on MONOTONIC itself)
want = {"step": [(5001.0, 3.0), (5003.0, 3.0)], "kernel": [(5002.0, 4.0), (5004.0, 4.0)]}
assert {k: sorted(v) for k, v in got.items()} == want, got
print("synthetic: 3 sequences, pids apart, arrows apart, times aligned")
PY

# A .json output for Perfetto inputs, and mixed formats: one line each.
if "$PYTHON" "$T" merge -o m.json syn/rank0.trace.pftrace 2>err.txt; then die "-o m.json accepted"; fi
[ "$(wc -l <err.txt)" = 1 ] && grep -q "name the output merged.pftrace" err.txt || die "-o m.json: $(cat err.txt)"
echo '{"traceEvents": []}' >x.json
if "$PYTHON" "$T" merge -o m.pftrace x.json syn/rank0.trace.pftrace 2>err.txt; then die "mixed formats accepted"; fi
[ "$(wc -l <err.txt)" = 1 ] && grep -q "cannot be merged into one file" err.txt || die "mixed: $(cat err.txt)"

# Two real ranks.
SI="$BUILD/standin"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for r in 0 1; do
	RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r TRACEPROF_FORMAT=perfetto TRACEPROF_FOLDER=real \
		TRACEPROF_SCHEDULE=wait=0,warmup=0,active=2,repeat=1 \
		traced "$BUILD/test/prog_demo_train" 3 >/dev/null 2>run$r.err || die "rank $r failed: $(cat run$r.err)"
done
ls real
[ "$(ls real/*.pftrace | wc -l)" = 2 ] || die "want one .pftrace per rank: $(ls real)"
"$PYTHON" "$T" merge real 2>merge.log || { cat merge.log; die "merge of real failed"; }
cat merge.log
"$PYTHON" - <<'PY' || die "the real merge is wrong"
import collections, glob, os, sys
sys.path.insert(0, os.environ["TP_TOP"] + "/test/lib")
import pftrace
ins = sorted(f for f in glob.glob("real/*.pftrace") if not f.endswith("merged.pftrace"))
want = collections.Counter()
for f in ins:
    want += pftrace.summary(pftrace.decode(f))[0]
m = pftrace.decode("real/merged.pftrace")
pftrace.check_balance(m)
got = pftrace.summary(m)[0]
assert got == want and sum(got.values()) > 20, (got, want)
groups = sorted(pftrace.one(pr, "process_name") for d in pftrace.tracks(m).values()
                for pr in d.get("process", []) if pftrace.one(pr, "process_name"))
assert any(g.startswith("rank 0: ") for g in groups) and any(g.startswith("rank 1: ") for g in groups), groups
print("real: %d slices of %d names from 2 ranks; groups %s" % (sum(got.values()), len(got), groups))
PY
"$PYTHON" "$T" summary real/merged.pftrace --csv >merged.csv || die "summary of the merge failed"
for f in real/rank*.pftrace; do "$PYTHON" "$T" summary "$f" --csv; done >ranks.csv
"$PYTHON" - <<'PY' || die "summary of the merge differs from the ranks' summaries"
import collections, csv
def calls(path):
    c = collections.Counter()
    for r in csv.DictReader(l for l in open(path) if not l.startswith("name,") or True):
        if r.get("name") and r["name"] != "name" and r.get("calls", "").isdigit():
            c[r["name"]] += int(r["calls"])
    return c
a, b = calls("merged.csv"), calls("ranks.csv")
assert a == b and a, (a, b)
print("summary: the merge's calls equal the ranks' (%d names)" % len(a))
PY
# summary --by rank: the per-rank .pftrace files and their merge give the
# same rows (the same steps), and the same step counts per rank as the JSON
# of the same runs.
for r in 0 1; do
	RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r TRACEPROF_FOLDER=realjson \
		TRACEPROF_SCHEDULE=wait=0,warmup=0,active=2,repeat=1 \
		traced "$BUILD/test/prog_demo_train" 3 >/dev/null 2>runj$r.err || die "rank $r (json) failed: $(cat runj$r.err)"
done
"$PYTHON" "$T" summary --by rank --csv real/rank0.step1.trace.pftrace real/rank1.step1.trace.pftrace >byrank-files.csv 2>byrank.err ||
	die "--by rank of the .pftrace files: $(cat byrank.err)"
"$PYTHON" "$T" summary --by rank --csv real/merged.pftrace >byrank-merged.csv 2>>byrank.err ||
	die "--by rank of the merged .pftrace: $(cat byrank.err)"
"$PYTHON" "$T" summary --by rank --csv realjson >byrank-json.csv 2>>byrank.err ||
	die "--by rank of the JSON: $(cat byrank.err)"
cat byrank-files.csv
"$PYTHON" - <<'PY' || die "--by rank: the merge differs from its inputs: $(diff byrank-files.csv byrank-merged.csv)"
import csv
a = list(csv.reader(open("byrank-files.csv")))
b = list(csv.reader(open("byrank-merged.csv")))
assert len(a) == len(b) == 3 and a[0] == b[0], (a, b)
for x, y in zip(a[1:], b[1:]):
    # Times in us from ns on another clock base: equal to the last digit.
    assert x[0:2] == y[0:2] and x[5] == y[5], (x, y)
    # comm_us_per_step is empty where a rank has no collectives.
    assert all(p == q if "" in (p, q) else abs(float(p) - float(q)) <= 0.002
               for p, q in zip(x[2:5] + x[6:], y[2:5] + y[6:])), (x, y)
PY
cut -d, -f1,2 byrank-files.csv >a.txt
cut -d, -f1,2 byrank-json.csv >b.txt
diff -u b.txt a.txt || die "--by rank: .pftrace and JSON runs differ in steps per rank"
[ "$(wc -l <a.txt)" = 3 ] && grep -q '^1,1$' a.txt || die "--by rank: want 2 ranks of 1 step (the demo's 3 less start-up and teardown): $(cat a.txt)"

# Compressed inputs and outputs: the same merge.
gzip -k real/rank0.step1.trace.pftrace
if command -v zstd >/dev/null; then
	zstd -q real/rank1.step1.trace.pftrace -o r1.pftrace.zst
	z=r1.pftrace.zst zout=zst
else
	echo "zstd not installed: .zst not checked"
	z=real/rank1.step1.trace.pftrace zout=gz
fi
"$PYTHON" "$T" merge -o comp.pftrace.$zout real/rank0.step1.trace.pftrace.gz "$z" 2>comp.log ||
	die "merge of compressed inputs: $(cat comp.log)"
"$PYTHON" "$T" summary --csv comp.pftrace.$zout >comp.csv || die "summary of comp.pftrace.$zout"
diff -u merged.csv comp.csv || die "the compressed merge differs"
rm real/rank0.step1.trace.pftrace.gz

# A second merge of the folder leaves the first one's output out.
"$PYTHON" "$T" merge -o again.pftrace real 2>again.log || die "second merge failed: $(cat again.log)"
grep -q "merged.pftrace: skipped: an earlier merge output" again.log || die "earlier output merged again: $(cat again.log)"
echo "pftrace merge: ok"
