#!/usr/bin/env bash
# The program's own PyTorch profilers under every --pytorch mode and path
# (issue 41 item 2): test/programs/torch_profiler_coexist.py runs
# torch.profiler.profile() with and without a schedule, record_function,
# emit_nvtx and torch.cuda.memory._record_memory_history (the last two
# raise with no GPU: the same error as without traceprof) under
#   modules            the library's module hooks
#   modules,ops        the library's RecordFunction observer
#   modules,shapes     PyTorch's NVTX emission with shapes
#   ops (nvtx)         the NVTX emission where the observer cannot run
#                      (TP_TEST_TORCH_OPS=nvtx), with the Python module hooks
# Checks that:
#   - the program's output (losses, what its profilers did, how many
#     aten::addmm and my_range its own traces hold) is the same as without
#     traceprof: before, --pytorch shapes made torch.profiler.profile()
#     raise "Profiler is already enabled on this thread";
#   - where the NVTX emission holds the thread's profiler slot, it gives it
#     up while the program's profiler runs, says so in one "traceprof:"
#     line, and takes it back after: ops are recorded in the steps outside
#     the program's profiler, as they are in every step with the observer;
#   - with the observer, the step both traced holds what the program's own
#     torch.profiler trace holds (issue 42 item 6): the same ops with the
#     same "Sequence number", an "External id" on each op, and the same
#     forward -> backward arrows ("fwdbwd": aten::addmm -> AddmmBackward0,
#     7 a step), in every step;
#   - PyTorch's NVTX text becomes what torch.profiler writes: "cpu_op"
#     slices named aten::addmm (not "aten::addmm, seq = .., op_id = .."),
#     with "Sequence number", and under shapes "Input Dims" equal to the
#     program's own torch.profiler(record_shapes=True) trace's; and
#     record_function ranges stay user_annotation "my_range".
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch' "torch does not import"
prog="$TP_TOP/test/programs/torch_profiler_coexist.py"
mkdir -p plain
plain=$("$py" "$prog" plain 2>plain.err) || die "the script failed without traceprof: $(cat plain.err)"
echo "$plain" | grep -q '^own_plain: 2 aten::addmm (2 with Input Dims), 1 my_range$' ||
	die "the program's own profiler did not record as expected without traceprof: $plain"

# run NAME PYTORCH [VAR=VALUE...]: the traced run; then checks its output.
run() {
	local name=$1 words=$2
	shift 2
	mkdir -p "own_$name"
	out=$(env "$@" "$BUILD/traceprof" run -q --folder "$PWD/tr_$name" --step torch \
		--pytorch "$words" -- "$py" "$prog" "own_$name" 2>"err_$name.txt") ||
		die "$name: the script failed under traceprof: $(grep -v '^USDT\|^ERROR' "err_$name.txt")"
	[ "$out" = "$plain" ] || die "$name: the program's output changed: '$plain' vs '$out'"
	grep traceprof "err_$name.txt" >"msg_$name.txt" || true
}

check() { # NAME NVTX(0/1)
	local name=$1 nvtx=$2
	if [ "$nvtx" = 1 ]; then
		[ "$(wc -l <"msg_$name.txt")" = 1 ] && grep -q "profiler slot" "msg_$name.txt" ||
			die "$name: want one traceprof: line about the profiler slot, got: $(cat "msg_$name.txt")"
	else
		[ ! -s "msg_$name.txt" ] || die "$name: unexpected messages: $(cat "msg_$name.txt")"
	fi
	[ "$(ls "tr_$name"/*.json 2>/dev/null | wc -l)" = 1 ] || die "$name: want one file: $(ls "tr_$name")"
	check_trace "tr_$name"/*.json >/dev/null
	"$PYTHON" - "tr_$name"/*.json plain/own_plain.json "$name" "$nvtx" <<'PY' || die "$name: trace wrong"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
own = json.load(open(sys.argv[2]))["traceEvents"]
name, nvtx = sys.argv[3], sys.argv[4] == "1"
X = [e for e in ev if e.get("ph") == "X"]
assert not [e for e in X if ", seq = " in e["name"] or ", op_id = " in e["name"]], \
    "PyTorch's NVTX text as names: %s" % [e["name"] for e in X if ", " in e["name"]][:3]
steps = sorted((e for e in X if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
assert [s["name"] for s in steps] == ["ProfilerStep#%d" % i for i in range(9)], \
    "the program's ProfilerStep#N taken for steps: %s" % [s["name"] for s in steps]
def inside(a, b):
    return a["tid"] == b["tid"] and b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"]
addmm = [e for e in X if e["name"] == "aten::addmm"]
if name == "modules":
    assert not addmm, "ops without ops asked for"
    print(name, "no ops, as asked")
    sys.exit(0)
assert addmm and all(e["cat"] == "cpu_op" for e in addmm), {e["cat"] for e in addmm}
per = [sum(1 for e in addmm if inside(e, s)) for s in steps]
# The program's profilers hold the slot in step 2 (no schedule) and step 4
# (its schedule's active step; step 3 is its wait step, step 5 after it).
want = [2, 2, 0, 2, 0, 2, 2, 2] if nvtx else [2] * 8
assert per[:8] == want, (per, want)
rng = [e for e in X if e["name"] == "my_range"]
assert rng and all(e["cat"] == "user_annotation" for e in rng), [(e["name"], e["cat"]) for e in rng]
bwd = [e for e in X if e["name"] == "autograd::engine::evaluate_function: AddmmBackward0"]
assert bwd and all(e["cat"] == "cpu_op" for e in bwd), "no backward ops"
if nvtx:
    seq = [e for e in addmm if "Sequence number" in e.get("args", {})]
    assert len(seq) == len(addmm), "addmm without Sequence number"
if name == "observer":
    # Parity with torch.profiler (issue 42 item 6) in step 2, which both
    # recorded: the same ops with the same "Sequence number" (PyTorch's own
    # numbers: the same RecordFunctions), an "External id" on every op,
    # and the same forward -> backward arrows ("fwdbwd").
    mine = [e for e in X if e.get("cat") == "cpu_op" and inside(e, steps[2])]
    # loss.item() runs after opt.step(): in the program's profiled step, in
    # the next of traceprof's (--step torch ends a step at opt.step()).
    ITEM = ("aten::item", "aten::_local_scalar_dense")
    def seqs(evs):
        return sorted((e["name"], e["args"]["Sequence number"]) for e in evs
                      if "Sequence number" in e.get("args", {}) and e["name"] not in ITEM)
    theirs_ops = [e for e in own if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    assert seqs(mine) and seqs(mine) == seqs(theirs_ops), (seqs(mine)[:8], seqs(theirs_ops)[:8])
    ext = [e["args"].get("External id") for e in X if e.get("cat") == "cpu_op"]
    assert all(ext) and len(set(ext)) == len(ext), "External id missing or repeated"
    def arrows(evs, window):
        ops = [e for e in evs if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
        at = {}
        for e in evs:
            if e.get("cat") == "fwdbwd":
                hit = [o["name"] for o in ops if o["tid"] == e["tid"] and abs(o["ts"] - e["ts"]) < 0.01
                       and (window is None or inside(o, window))]
                if hit:
                    at.setdefault(e["id"], {})[e["ph"]] = hit[-1]
        return sorted((v["s"], v["f"]) for v in at.values() if "s" in v and "f" in v)
    a_mine, a_theirs = arrows(ev, steps[2]), arrows(own, None)
    assert len(a_theirs) == 7 and a_mine == a_theirs, (a_mine, a_theirs)
    per_step_arrows = [len(arrows(ev, s)) for s in steps[:8]]
    assert per_step_arrows == [7] * 8, per_step_arrows
    print(name, "parity with torch.profiler: %d ops with sequence numbers, arrows %s"
          % (len(seqs(mine)), a_mine))
if name == "shapes":
    theirs = {json.dumps(e["args"]["Input Dims"]) for e in own if e.get("name") == "aten::addmm"}
    ours = {json.dumps(e["args"].get("Input Dims")) for e in addmm}
    assert ours == theirs, (ours, theirs)
print(name, "ops per step", per, "my_range", len(rng))
PY
}

run modules modules
check modules 0
run observer modules,ops
check observer 0
run shapes modules,shapes
check shapes 1
run nvtx modules,ops TP_TEST_TORCH_OPS=nvtx TP_TEST_TORCH_MODULE_HOOKS=python
check nvtx 1
echo "torch profiler coexistence ok"
