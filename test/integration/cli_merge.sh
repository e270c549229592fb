#!/usr/bin/env bash
# `traceprof merge`: 8 synthetic rank files with known clock offsets (some
# .gz, some .zst, some sharing a pid) land at the right aligned times, one
# process group per rank sorted by rank; a PyTorch/Kineto-style file (base at
# the end, multi-line events) and a bare array are accepted; outputs round
# trip through .gz and .zst.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/scripts/traceprof"
G="$TP_TOP/test/lib/gentrace.py"
command -v zstd >/dev/null || skip "zstd command not installed"
B=1700000000000000000
mkdir in
for r in 0 1 2 3 4 5 6 7; do
	# Rank r's clock base is r ms later; ranks 0-3 share pid 500.
	pid=$((r < 4 ? 500 : 600 + r))
	ext=json; [ $r = 2 ] && ext=json.gz; [ $r = 5 ] && ext=json.zst
	"$PYTHON" "$G" in/rank$r.trace.$ext --rank $r --world 8 --pid $pid \
		--base $((B + r * 1000000)) --events 180 --t0 $((100 + r)) --gpu 2>/dev/null
done
"$PYTHON" "$T" merge -o merged.json in 2>merge.log || { cat merge.log; die "merge failed"; }
cat merge.log
check_trace merged.json
"$PYTHON" - <<'PY' || die "merged timeline is wrong"
import json
d = json.load(open("merged.json"))
B = 1700000000000000000
assert d["baseTimeNanoseconds"] == B, d["baseTimeNanoseconds"]
ev = d["traceEvents"]
names, sort, first = {}, {}, {}
for e in ev:
    if e["ph"] == "M" and e["name"] == "process_name":
        names[e["pid"]] = e["args"]["name"]
    elif e["ph"] == "M" and e["name"] == "process_sort_index":
        sort[e["pid"]] = e["args"]["sort_index"]
    elif e["name"] == "ProfilerStep#0":
        first.setdefault(e["pid"], []).append(e["ts"])
ranks = {}
for pid, n in names.items():
    assert n.startswith("rank "), n
    ranks[int(n.split()[1].rstrip(":"))] = pid
assert sorted(ranks) == list(range(8)), names
pids = [ranks[r] for r in range(8)]
assert len(set(pids)) == 8, "ranks share a pid: %s" % pids
assert [sort[p] for p in pids] == sorted(sort[p] for p in pids), sort
for r in range(8):
    # local t0 = 100 + r us, base later by r ms: aligned at 100 + r + 1000 r.
    want = 100 + r + 1000.0 * r
    got = first[ranks[r]]
    assert got == [want], (r, got, want)
m = d["traceprof_merge"]
assert [i["rank"] for i in m["inputs"]] == list(range(8))
assert all(isinstance(x, dict) and "rank" in x for x in m["distributedInfo"])
assert [i["shift_us"] for i in m["inputs"]] == [1000.0 * r for r in range(8)]
assert sum(i["events"] for i in m["inputs"]) == len(ev)
assert all("traceprof" in i for i in m["inputs"])
# Flow ids are per process: every rank used 1, 2, ...  In the merged file
# each id binds exactly one s and one f, both of the same rank (its host
# pid and its GPU's), and the ids of a rank keep their pairing.
rank_of = {pid: int(n.split()[1].rstrip(":")) for pid, n in names.items()}
flows = {}
for e in ev:
    if e["ph"] in ("s", "f"):
        flows.setdefault(e["id"], []).append(e)
assert len(flows) == 8 * 5 * 8, len(flows)
for fid, fl in flows.items():
    assert sorted(f["ph"] for f in fl) == ["f", "s"], (fid, fl)
    assert rank_of[fl[0]["pid"]] == rank_of[fl[1]["pid"]], (fid, fl)
    assert fid & 0xffffffff <= 40 and fid >> 32 == rank_of[fl[0]["pid"]], fid
print("8 ranks aligned; pids", pids, "; flows per rank kept apart")
PY

# Round trips: merged output compressed both ways reads back the same.
"$PYTHON" "$T" merge -o merged.json.gz in 2>/dev/null
"$PYTHON" "$T" merge -o merged.json.zst in 2>/dev/null
check_trace merged.json.gz merged.json.zst
"$PYTHON" - <<'PY' || die "compressed outputs differ"
import sys
sys.path.insert(0, __import__("os").environ["TP_TOP"] + "/test/lib")
from tracecheck import load_trace
a = load_trace("merged.json")
for f in ("merged.json.gz", "merged.json.zst"):
    b = load_trace(f)
    assert a["traceEvents"] == b["traceEvents"], f
print("gz/zst round trips ok")
PY
"$PYTHON" "$T" summary merged.json.zst --by step >steps.txt
grep -q "ProfilerStep#0" steps.txt || die "summary of the merged .zst: $(cat steps.txt)"

# A merge of a merge input with a Kineto-style trace (multi-line events,
# baseTimeNanoseconds at the end, GPU pid 0) and a bare-array Chrome trace.
cat >torch.pt.trace.json <<EOF2
{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "FakeGPU"}],
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},
  "traceEvents": [
  {
    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 777, "tid": 777,
    "ts": 50.000, "dur": 10.000,
    "args": {
      "External id": 1, "name": "a},{b"
    }
  },
  {
    "ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7,
    "ts": 55.000, "dur": 4.000,
    "args": {"device": 0, "stream": 7, "grid": [1, 1, 1]}
  },
  {
    "ph": "s", "id": 3, "pid": 777, "tid": 777, "ts": 52.000,
    "cat": "ac2g", "name": "ac2g"
  },
  {
    "ph": "f", "id": 3, "pid": 0, "tid": 7, "ts": 55.000,
    "cat": "ac2g", "name": "ac2g", "bp": "e"
  },
  {
    "name": "process_name", "ph": "M", "ts": 0, "pid": 777, "tid": 0,
    "args": {"name": "python3"}
  }
  ],
  "traceName": "torch.pt.trace.json",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": $((B + 2000000))
}
EOF2
echo '[{"ph":"X","name":"bare","pid":9,"tid":9,"ts":1.5,"dur":1}]' >bare.json
"$PYTHON" "$T" merge -o mixed.json in/rank0.trace.json torch.pt.trace.json bare.json 2>mixed.log || { cat mixed.log; die "mixed merge failed"; }
"$PYTHON" - <<'PY' || die "mixed merge is wrong"
import json
d = json.load(open("mixed.json"))
ev = d["traceEvents"]
mm = [e for e in ev if e["name"] == "aten::mm"][0]
assert mm["ts"] == 2050.0, mm            # base + 2 ms
assert mm["args"]["name"] == "a},{b"
k = [e for e in ev if e["name"] == "sm90_gemm"][0]
assert k["ts"] == 2055.0, k
names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert names[777] == "rank 1: python3", names
assert any(n.startswith("rank 1: pid 0") for n in names.values()), names
assert [e for e in ev if e["name"] == "bare"][0]["ts"] == 1.5
assert d["deviceProperties"] == [{"id": 0, "name": "FakeGPU"}]
# The Kineto file's flow (id 3) moves to its input's range (second input),
# apart from rank 0's ids 1..8 (first input, unchanged).
fl = [e for e in ev if e["ph"] in ("s", "f") and e["pid"] in (777,) + tuple(
    p for p, n in names.items() if n.startswith("rank 1: pid 0"))]
assert sorted((e["ph"], e["id"]) for e in fl) == [("f", (1 << 32) + 3), ("s", (1 << 32) + 3)], fl
assert sorted({e["id"] for e in ev if e["ph"] == "s" and e["pid"] not in (777,)})[:1] == [1]
print("mixed merge ok")
PY
echo "merge ok"
