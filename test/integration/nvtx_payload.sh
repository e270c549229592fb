# NCCL's NVTX payloads decoded: a program built against the toolkit's NVTX
# headers registers NCCL-like schemas and the reduction-op enum in domain
# "NCCL" (through InitializeInjectionNvtxExtension) and pushes payload
# ranges; their fields show up as args (comm, bytes, op by its enum name,
# peer, nranks, myrank, cudaDev), an unregistered schema leaves the range
# without fields, and the program's output is unchanged.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_nvtx_payload"
[ -x "$prog" ] || skip "prog_nvtx_payload not built (no CUDA toolkit headers?)"
plain=$("$prog" 3)
[ "$plain" = "done" ] || die "untraced output: $plain"
out=$(TRACEPROF_FOLDER=out traced "$prog" 3) || die "traced run failed"
[ "$out" = "done" ] || die "traced output changed: $out"
"$PYTHON" - <<'PY'
import glob, json
files = glob.glob("out/*.json")
assert len(files) == 1, files
d = json.load(open(files[0]))
ev = d["traceEvents"]
# 3 schemas and the enum registered; the unregistered schema's payload counted.
assert d["traceprof"]["nvtx_payloads"] == {"schemas": 3, "enums": 1, "undecoded": 1}, d["traceprof"]
X = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"
     and not e["name"].startswith("ProfilerStep#")]
by = {}
for e in X:
    by.setdefault(e["name"], []).append(e.get("args", {}))
assert sorted(by) == ["ncclAllReduce", "ncclCommInitRank", "ncclSend", "unknown_schema"], by
ar = by["ncclAllReduce"]
assert [a.get("bytes") for a in ar] == [4096, 8192, 16384], ar
assert [a.get("op") for a in ar] == ["Sum", "Max", "Sum"], ar
for a in ar + by["ncclSend"] + by["ncclCommInitRank"]:
    assert a.get("domain") == "NCCL", a
    assert a.get("comm") == "0xabc123", a
assert all(a.get("peer") == 5 and a.get("bytes") == 1024 for a in by["ncclSend"]), by["ncclSend"]
i = by["ncclCommInitRank"][0]
assert (i.get("nranks"), i.get("myrank"), i.get("cudaDev")) == (8, 3, 1), i
assert by["unknown_schema"] == [{"domain": "NCCL"}], by["unknown_schema"]
PY

echo "ok: payload args decoded"
# `traceprof summary --by comm`: calls, time and bytes per collective.
"$PYTHON" "$TP_TOP/python/traceprof" summary out/*.json --by comm --csv >comm.csv ||
	die "summary --by comm failed"
"$PYTHON" - <<'PY'
import csv
rows = {r["name"]: r for r in csv.DictReader(open("comm.csv"))}
assert set(rows) == {"ncclAllReduce", "ncclSend", "ncclCommInitRank", "unknown_schema"}, rows
ar, sd = rows["ncclAllReduce"], rows["ncclSend"]
assert (ar["calls"], ar["total_bytes"]) == ("3", str(4096 + 8192 + 16384)), ar
assert (sd["calls"], sd["total_bytes"], sd["avg_bytes"]) == ("3", "3072", "1024"), sd
assert rows["ncclCommInitRank"]["total_bytes"] == "", rows
assert float(ar["total_us"]) > 0, ar
PY
table=$("$PYTHON" "$TP_TOP/python/traceprof" summary out/*.json --by comm) || die "summary --by comm failed"
echo "$table" | grep -q "^ncclAllReduce .* 28.0 KiB" || die "summary --by comm table: $table"
echo "ok: summary --by comm"
# A Perfetto file: refused with one line, no traceback.
: >t.pftrace
if "$PYTHON" "$TP_TOP/python/traceprof" summary t.pftrace --by comm 2>err.txt; then die "--by comm took a .pftrace"; fi
grep -q "JSON traces only" err.txt && ! grep -q Traceback err.txt || die "--by comm on .pftrace: $(cat err.txt)"
