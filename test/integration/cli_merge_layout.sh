#!/usr/bin/env bash
# `traceprof merge` and `traceprof summary` read events with a JSON parser,
# not by the writer's exact text: the same two rank files written with other
# spacing and key orders merge to the same events (pids apart per rank,
# times aligned, flow ids moved per rank) and summarise to the same table.
#   relaid-line:  one event per line, starting '{"ph":"X", ' as the writer's
#                 do, then a space after each ':' and ','
#   relaid-sorted: json.dump(indent=2, sort_keys=True) of the whole file
#   relaid-order: one event per line, compact, but keys in another order
#                 (the flow's "id" first, "ts" after "dur")
. "$TP_TOP/test/lib/common.sh"
T="$TP_TOP/python/traceprof"
G="$TP_TOP/test/lib/gentrace.py"
B=1700000000000000000
mkdir orig
for r in 0 1; do
	# Both ranks use pid 500, rank 1's base is 1 ms later: the merge must
	# give rank 1 another pid and shift its times.
	"$PYTHON" "$G" orig/rank$r.trace.json --rank $r --world 2 --pid 500 \
		--base $((B + r * 1000000)) --events 120 --t0 100 --gpu 2>/dev/null
done
"$PYTHON" - <<'PY' || die "cannot write the re-laid-out inputs"
import json, os
for style in ("line", "sorted", "order"):
    os.mkdir("relaid-" + style)
    for r in (0, 1):
        d = json.load(open("orig/rank%d.trace.json" % r))
        out = open("relaid-%s/rank%d.trace.json" % (style, r), "w")
        if style == "sorted":
            json.dump(d, out, indent=2, sort_keys=True)
            continue
        evs = d.pop("traceEvents")
        out.write("{\n")
        for k, v in d.items():
            out.write("  %s: %s,\n" % (json.dumps(k), json.dumps(v)))
        out.write('  "traceEvents": [\n')
        lines = []
        for e in evs:
            if style == "line":
                rest = {k: v for k, v in e.items() if k != "ph"}
                lines.append('{"ph":%s, %s' % (json.dumps(e["ph"]),
                                               json.dumps(rest, separators=(", ", ": "))[1:]))
            else:
                first = [k for k in ("id", "ph", "pid") if k in e]
                rest = sorted((k for k in e if k not in first), key=lambda k: k == "ts")
                e = {k: e[k] for k in first + rest}
                lines.append(json.dumps(e, separators=(",", ":")))
        out.write(",\n".join(lines) + "\n  ]\n}\n")
PY
"$PYTHON" "$T" merge -o merged-orig.json orig 2>/dev/null || die "merge of the originals failed"
for style in line sorted order; do
	"$PYTHON" "$T" merge -o merged-$style.json relaid-$style 2>merge-$style.log ||
		{ cat merge-$style.log; die "merge of relaid-$style failed"; }
	check_trace merged-$style.json >/dev/null
	"$PYTHON" - merged-orig.json merged-$style.json <<'PY' || die "relaid-$style merges to other events than the original"
import json, sys
def events(path):
    d = json.load(open(path))
    return sorted(json.dumps(e, sort_keys=True) for e in d["traceEvents"]), d
a, da = events(sys.argv[1])
b, db = events(sys.argv[2])
assert len(a) == len(b), (len(a), len(b))
diff = [x for x in b if x not in set(a)]
assert not diff, "%d events differ, e.g. %s" % (len(diff), diff[:2])
assert da["baseTimeNanoseconds"] == db["baseTimeNanoseconds"]
pids = {e["pid"] for e in json.loads("[" + ",".join(b) + "]") if e["ph"] == "X"}
assert len(pids) >= 2, pids
print(sys.argv[2], ": same", len(b), "events as the original's merge")
PY
	"$PYTHON" "$T" summary orig/rank1.trace.json >sum-orig.txt
	"$PYTHON" "$T" summary relaid-$style/rank1.trace.json >sum-$style.txt
	diff -u sum-orig.txt sum-$style.txt || die "summary of relaid-$style differs"
done

# The members after the event array are read with the parser: a merged
# file's tail holds only "traceprof_merge" (the inputs' footers and
# distributedInfo nested inside it are not the file's own).
"$PYTHON" - <<'PY' || die "the tail of a merged file is misread"
import os, sys
sys.path.insert(0, os.environ["TP_TOP"] + "/python")
from traceprof.traces import tail as tp
tail = tp.tail_meta("merged-sorted.json")
assert list(tail) == ["traceprof_merge"], sorted(tail)
tail = tp.tail_meta("relaid-sorted/rank0.trace.json")
assert tail["traceprof"]["events_dropped"] == 0 and "traceEvents" not in tail, sorted(tail)
print("tails:", sorted(tail))
PY

# An event whose keys come sorted, with a top-level array before "ts": the
# merged event has ts and dur before the array (Perfetto's legacy JSON
# importer fails the file otherwise; docs/DESIGN.md, "Writing events").
cat >arr.json <<'EOF2'
{"baseTimeNanoseconds": 1700000000000000000, "traceEvents": [
 {"args": {"a": 1}, "cat": "cpu_op", "dur": 2.5, "frames": [1, 2], "name": "f", "ph": "X", "pid": 9, "tid": 9, "ts": 10.0}
]}
EOF2
"$PYTHON" "$T" merge -o merged-arr.json arr.json 2>/dev/null || die "merge of arr.json failed"
"$PYTHON" - <<'PY' || die "ts/dur not before the top-level array"
import json
d = json.load(open("merged-arr.json"), object_pairs_hook=list)
evs = dict(d)["traceEvents"]
ev = [e for e in evs if dict(e)["name"] == "f"][0]
keys = [k for k, _ in ev]
assert keys.index("ts") < keys.index("frames") and keys.index("dur") < keys.index("frames"), keys
assert keys[:7] == ["ph", "cat", "name", "pid", "tid", "ts", "dur"], keys
print("keys in Kineto's order:", keys)
PY
echo "merge and summary read other layouts as the writer's own"
