#!/usr/bin/env bash
# `traceprof merge`: 8 synthetic rank files with known clock offsets (some
# .gz, some .zst, some sharing a pid) land at the right aligned times, one
# process group per rank sorted by rank; a PyTorch/Kineto-style file (base at
# the end, multi-line events) and a bare array are accepted; outputs round
# trip through .gz and .zst.
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
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

# The interpreter itself, not a wrapper (pyenv's shim is a bash script
# that needs a PATH, and costs seconds a start on a busy machine).
PY=$("$PYTHON" -c 'import sys; print(sys.executable)')

# ---- Output paths (issue 17 items 8-9, issue 21 item 5): one `traceprof:`
# line and a non-zero exit, no temporary file left, nothing followed.
one_line_fail() {  # NAME ARGS...: the merge fails with one traceprof: line
	local name=$1; shift
	if "$PY" "$T" merge "$@" 2>e.txt >/dev/null; then die "$name: merge succeeded"; fi
	[ "$(grep -c . e.txt)" = 1 ] && grep -q "^traceprof: " e.txt ||
		die "$name: not one traceprof: line: $(cat e.txt)"
}
mkdir outs && cd outs
one_line_fail "missing folder" -o missing/dir/x.json ../in/rank0.trace.json
mkdir afolder
one_line_fail "a folder as output" -o afolder ../in/rank0.trace.json
mkdir ro && chmod 555 ro
if [ "$(id -u)" != 0 ]; then one_line_fail "unwritable folder" -o ro/x.json ../in/rank0.trace.json; fi
mkdir nozstd && ln -s "$(command -v "$PY")" nozstd/python3
py=$(command -v "$PY")
if PATH="$PWD/nozstd" "$py" "$T" merge -o x.json.zst ../in/rank0.trace.json 2>e.txt; then die "no zstd: merge succeeded"; fi
[ "$(grep -c . e.txt)" = 1 ] && grep -q "^traceprof: .*zstd" e.txt || die "no zstd: $(cat e.txt)"
# A symlink planted where the old fixed temporary name was is not followed.
echo precious >victim.txt
ln -s victim.txt out.json.tmp
"$PY" "$T" merge -o out.json ../in/rank0.trace.json 2>/dev/null || die "merge next to a planted link failed"
[ "$(cat victim.txt)" = precious ] || die "merge followed the planted symlink"
check_trace out.json >/dev/null
# Non-regular outputs are written directly, never renamed over.
mkfifo fifo
cat fifo >fromfifo.json &
"$PY" "$T" merge -o fifo ../in/rank0.trace.json 2>/dev/null || die "merge into a FIFO failed"
wait
[ -p fifo ] || die "the FIFO was replaced"
check_trace fromfifo.json >/dev/null
link=0; [ -L /dev/stdout ] && link=1
"$PY" "$T" merge -o /dev/stdout ../in/rank0.trace.json 2>/dev/null >fromstdout.json ||
	die "merge -o /dev/stdout failed"
[ $link = 0 ] || [ -L /dev/stdout ] || die "merge -o /dev/stdout replaced the /dev/stdout link"
check_trace fromstdout.json >/dev/null
[ -c /dev/full ] && one_line_fail "a full device" -o /dev/full ../in/rank0.trace.json
[ -c /dev/full ] || die "/dev/full was replaced"
left=$(ls -A | grep -v '^\(afolder\|ro\|nozstd\|victim.txt\|e.txt\|out.json.tmp\|out.json\|fifo\|fromfifo.json\|fromstdout.json\)$' || true)
[ -z "$left" ] || die "files left behind: $left"
[ -z "$(ls -A afolder)$(ls -A ro)" ] || die "files left in the folders: $(ls -A afolder ro)"
cd ..

# ---- Hostile JSON (issue 17 item 10, issue 21 item 8): one line, the
# right byte, no traceback; NaN/Infinity/huge numbers written as null.
"$PY" - <<'PY'
import gzip
ev = '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1%s}'
open("deep.json", "w").write('{"traceEvents":[' + ev % (',"args":' + "[" * 100000 + "]" * 100000) + "]}")
open("bigint.json", "w").write('{"traceEvents":[' + ev % (',"args":{"v":' + "9" * 5000 + "}") + "]}")
open("fake.json.gz", "w").write('{"traceEvents":[]}')
d = gzip.compress(('{"traceEvents":[' + ",".join([ev % ""] * 200) + "]}").encode())
open("cut.json.gz", "wb").write(d[:len(d) // 2])
open("surrogate.json", "w").write('{"traceEvents":[{"ph":"X","name":"\\ud800","pid":1,"tid":1,"ts":1,"dur":1}]}')
open("nan.json", "w").write('{"traceEvents":[' + ev % ',"args":{"x":1e400,"y":-Infinity}' + ',\n' + ev.replace('"dur":1', '"dur":NaN') % "" + "]}")
open("nanlines.json", "w").write('{"traceEvents":[\n' + ev.replace('"dur":1', '"dur":NaN') % "" + ',\n' + ev.replace('"ts":1', '"ts":1e400') % "" + '\n],"baseTimeNanoseconds":1000}\n')
open("bom.json", "wb").write(b"\xef\xbb\xbf" + ('{"traceEvents":[' + ev % "" + "]}").encode())
open("nobrace.json", "w").write('{"traceEvents":[' + ev % "" + "]")
open("badbyte.json", "w").write('{"traceEvents":[' + ev % "" + ',\n{"ph":"X" "name":"b"}]}')
PY
for f in deep.json bigint.json fake.json.gz cut.json.gz surrogate.json nan.json nanlines.json bom.json nobrace.json badbyte.json; do
	"$PY" "$T" summary $f >s.out 2>s.err || true
	! grep -q Traceback s.err || die "summary $f: traceback: $(cat s.err)"
	rm -f m.json
	"$PY" "$T" merge -o m.json $f >/dev/null 2>m.err || true
	! grep -q Traceback m.err || die "merge $f: traceback: $(cat m.err)"
	if [ -e m.json ]; then
		"$PY" -c 'import json, sys
json.load(open("m.json"), parse_constant=lambda w: sys.exit("not JSON: " + w))' ||
			die "merge $f wrote invalid JSON"
	else
		# One error line (after the warning an input without a base gets).
		[ "$(grep -vc "no baseTimeNanoseconds" m.err)" = 1 ] || die "merge $f: not one line: $(cat m.err)"
	fi
	ls -A | grep -q '\.tmp$' && die "merge $f left a temporary file"
done
for f in deep.json fake.json.gz cut.json.gz nobrace.json badbyte.json; do
	if "$PY" "$T" merge -o m.json $f 2>/dev/null; then die "merge accepted $f"; fi
done
"$PY" "$T" summary badbyte.json 2>e.txt && die "summary accepted badbyte.json"
grep -q "at byte 80:" e.txt || die "wrong byte offset: $(cat e.txt)"
"$PY" "$T" summary nobrace.json 2>e.txt && die "summary accepted a missing final }"
grep -q "no final '}'" e.txt || die "missing }: $(cat e.txt)"
"$PY" "$T" summary bom.json >/dev/null 2>e.txt || die "a BOM: $(cat e.txt)"
for f in nan.json nanlines.json bigint.json; do
	"$PY" "$T" merge -o m.json $f 2>e.txt || die "merge $f: $(cat e.txt)"
	grep -q "written as null" e.txt || die "merge $f: no note of the nulls: $(cat e.txt)"
done
"$PY" "$T" merge -o m.json surrogate.json 2>/dev/null
"$PY" -c 'import json; d = json.load(open("m.json")); assert any(e["name"] == "\ud800" for e in d["traceEvents"])' ||
	die "the lone surrogate did not round-trip"
echo "merge ok"
