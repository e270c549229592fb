# The GPU timeline end to end, without a GPU: the stand-in driver (cuInit
# succeeds) and the stand-in CUPTI (test/standin/fake_cupti.c: one kernel per
# call made between a push and a pop of an external correlation id),
# preloaded so that traceprof finds a libcupti already loaded, as in a
# PyTorch process.  Checks what Holistic Trace Analysis relies on: host calls
# have no args.stream, GPU events do, and each kernel shares its
# "correlation" with exactly the launch that caused it; the ac2g flows use
# the same number; the kernels sit after their launches on the same clock.
. "$TP_TOP/test/lib/common.sh"
SI="$BUILD/standin"
[ -e "$SI/libcupti.so.13" ] && [ -e "$SI/libcuda.so.1" ] || die "stand-ins not built ($SI); run make check"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
prog="$BUILD/test/prog_cuda_calls"
N=50
plain=$("$prog" launch $N) || die "the program failed without traceprof: $plain"
[ "$plain" = "cuInit=0 get=0 launches=$N failed=0" ] || die "the stand-in driver said: $plain"
for mode in auto off; do
	out=$(TRACEPROF_CUPTI=$mode TRACEPROF_FOLDER=out-$mode LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13" \
		"$prog" launch $N 2>err-$mode.txt) || die "$mode: the program failed: $(cat err-$mode.txt)"
	[ "$out" = "$plain" ] || die "$mode: output changed: $out"
	grep -q '^traceprof:' err-$mode.txt && die "$mode: unexpected messages: $(cat err-$mode.txt)"
	check_trace out-$mode/*.json >/dev/null || die "$mode: trace check failed"
done
"$PYTHON" - "$N" <<'PY'
import glob, json, sys
n = int(sys.argv[1])
def load(mode):
    f = glob.glob(f"out-{mode}/*.json")
    assert len(f) == 1, (mode, f)
    return json.load(open(f[0]))
def args(e):
    return e.get("args", {})

# CUPTI off: host events only, no numbers.
d = load("off")
assert d["traceprof"]["gpu"]["cupti"] == "off", d["traceprof"]["gpu"]
ev = d["traceEvents"]
assert not [e for e in ev if e.get("cat") == "kernel"], "kernels without CUPTI"
assert not [e for e in ev if "correlation" in args(e)], "correlation without CUPTI"

d = load("auto")
gpu = d["traceprof"]["gpu"]
assert gpu["cupti"] == "active", gpu
assert gpu["cupti_records_dropped"] == 0 and gpu["gpu_events_lost"] == 0, gpu
ev = d["traceEvents"]
host = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")]
launches = [e for e in host if e["name"] == "cuLaunchKernel"]
kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
assert len(launches) == n, len(launches)
assert len(kernels) == n, len(kernels)
assert all(k["name"] == "standin_kernel" for k in kernels)

# HTA: an event is a GPU event when args.stream is there and not -1.
assert not [e for e in host if "stream" in args(e)], "a host event has args.stream"
# GPU d is pid 10^9 + d (collector/gpu.h: pid 0 is the idle process in Perfetto).
assert all(args(k)["stream"] == 7 and k["tid"] == 7 and k["pid"] == 1000000000 for k in kernels)
# While CUPTI records, the calls that can cause GPU activity (here the
# launches) are numbered, the others (cuInit, cuModuleGetFunction) not;
# numbers are unique.
assert all("correlation" in args(e) for e in launches), [e for e in launches if "correlation" not in args(e)][:2]
others = [e for e in host if e["name"] != "cuLaunchKernel"]
assert others and not [e for e in others if "correlation" in args(e)], others[:2]
nums = [args(e)["correlation"] for e in launches]
assert len(set(nums)) == len(nums), "duplicate correlation numbers"
# HTA's pairing: merge CPU and GPU events on correlation.
by_corr = {args(e)["correlation"]: e for e in launches}
for k in kernels:
    c = args(k).get("correlation")
    l = by_corr.get(c)
    assert l is not None and l["name"] == "cuLaunchKernel", (k, l)
    # The stand-in starts each kernel 1 us after the push, on traceprof's clock.
    assert l["ts"] <= k["ts"] <= l["ts"] + l["dur"] + 1000, (l, k)
assert sorted(args(k)["correlation"] for k in kernels) == sorted(args(l)["correlation"] for l in launches)
# Flows: one arrow per kernel, an id of its own, from the s at its launch to
# the f at the kernel.
flows = {}
for e in ev:
    if e.get("cat") == "ac2g":
        assert e["ph"] not in flows.setdefault(e["id"], {}), ("id used twice", e)
        flows[e["id"]][e["ph"]] = e
assert len(flows) == n, len(flows)
at_kernel = {(k["pid"], k["tid"], k["ts"]): k for k in kernels}
for fl in flows.values():
    s, f = fl["s"], fl["f"]
    k = at_kernel[(f["pid"], f["tid"], f["ts"])]
    assert f["bp"] == "e", f
    l = by_corr[args(k)["correlation"]]
    assert (s["pid"], s["tid"], s["ts"]) == (l["pid"], l["tid"], l["ts"]), (s, l)
print("ok: %d launches paired with %d kernels" % (len(launches), len(kernels)))
PY

# A schedule: each launch is a step (call: source); two windows of two steps.
# Each file pairs its own launches with their kernels; numbers keep growing.
out=$(TRACEPROF_FOLDER=out-sched TRACEPROF_STEP=call:cuLaunchKernel \
	TRACEPROF_SCHEDULE=wait=1,warmup=1,active=2,repeat=2 \
	LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13" "$prog" launch 20 2>err-sched.txt) ||
	die "scheduled: the program failed: $(cat err-sched.txt)"
[ "$out" = "cuInit=0 get=0 launches=20 failed=0" ] || die "scheduled: output changed: $out"
"$PYTHON" - <<'PY'
import glob, json
files = sorted(glob.glob("out-sched/*.json"))
assert [f.split("/")[-1] for f in files] == ["rank0.step3.trace.json", "rank0.step7.trace.json"], files
last = 0
for f in files:
    d = json.load(open(f))
    ev = d["traceEvents"]
    launches = [e for e in ev if e.get("ph") == "X" and e.get("name") == "cuLaunchKernel"]
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    lc = sorted(e["args"]["correlation"] for e in launches)
    kc = sorted(e["args"]["correlation"] for e in kernels if "correlation" in e["args"])
    assert lc and lc == kc, (f, lc, kc)
    assert lc[0] > last, (f, lc, last)
    last = lc[-1]
    assert d["traceprof"]["gpu"]["cupti"] == "active", d["traceprof"]["gpu"]
print("ok: scheduled windows pair their own launches")
PY

# CUPTI records only around the schedule's warm-up and recording steps, as
# torch.profiler enables it: off, the program's calls pay nothing for it (on
# a real GPU it costs microseconds a launch).  Each launch is a step (call:
# source), paced so that the flush thread (every 5 ms) sees each one; of 40
# steps, 20 is the warm-up and 21-22 record.  The stand-in counts the kernel
# kind switched on twice and off twice: at load (every kind is tried once,
# then off, since step 0 records nothing), and around the window (from one
# step before the warm-up to one after the last recording step).  Only the 2
# recorded launches push ids; the window pairs them with their kernels.
out=$(FAKE_CUPTI_REPORT=1 TRACEPROF_FOLDER=out-gate TRACEPROF_FLUSH_MS=5 \
	TRACEPROF_STEP=call:cuLaunchKernel TRACEPROF_SCHEDULE=wait=20,warmup=1,active=2,repeat=1 \
	LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13" "$prog" launch 40 20000 2>err-gate.txt) ||
	die "gated: the program failed: $(cat err-gate.txt)"
[ "$out" = "cuInit=0 get=0 launches=40 failed=0" ] || die "gated: output changed: $out"
grep -qx 'fake_cupti: pushes=2 kernels=2 on=2 off=2' err-gate.txt ||
	die "gated: want CUPTI on at load and around steps 19-23 only, and 2 ids pushed: $(cat err-gate.txt)"
"$PYTHON" - <<'PY'
import glob, json
files = sorted(glob.glob("out-gate/*.json"))
assert [f.split("/")[-1] for f in files] == ["rank0.step22.trace.json"], files
ev = json.load(open(files[0]))["traceEvents"]
launches = [e for e in ev if e.get("ph") == "X" and e.get("name") == "cuLaunchKernel"]
kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
lc = sorted(e["args"].get("correlation") for e in launches)
kc = sorted(e["args"].get("correlation") for e in kernels)
assert len(launches) == 2 and lc == kc and None not in lc, (lc, kc)
print("ok: CUPTI on around the window only; its 2 launches paired")
PY

# deviceProperties when the file began before the first successful cuInit
# (the runtime's first driver calls come before it, and a real GPU's cuInit
# takes hundreds of ms): written after the events, and kept by traceprof
# merge, from plain and zstd input.
out=$(FAKE_CUDA_INIT_US=100000 TRACEPROF_FLUSH_MS=5 TRACEPROF_FOLDER=out-late \
	LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13" "$prog" launch 2 2>err-late.txt) ||
	die "late devices: the program failed: $(cat err-late.txt)"
late=$(ls out-late/*.json)
head -c 1000 "$late" | grep -q deviceProperties && die "late devices: expected after the events: $(head -c 600 "$late")"
zstd -q -o late.json.zst "$late" || die "zstd failed"
for f in "$late" late.json.zst; do
	"$PYTHON" "$TP_TOP/python/traceprof" merge -o "merged-$(basename "$f").json" "$f" 2>merge.log ||
		die "merge of $f failed: $(cat merge.log)"
done
"$PYTHON" - "$late" merged-*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    names = [p["name"] for p in d["deviceProperties"]]
    assert names == ["Stand-in GPU"] and d["deviceProperties"][0]["numSms"] == 4, (f, d["deviceProperties"])
print("ok: devices known after the file began: in the file and in merges")
PY

# Another CUDA major's CUPTI already in the process (the stand-in built as
# libcupti.so.12): traceprof does not load a second one; one warning, host
# events only, the program unchanged.
out=$(TRACEPROF_FOLDER=out-other LD_PRELOAD="$TP_PRELOAD:$SI/cupti12/libcupti.so.12" \
	"$prog" launch 5 2>err-other.txt) || die "other CUPTI: the program failed: $(cat err-other.txt)"
[ "$out" = "cuInit=0 get=0 launches=5 failed=0" ] || die "other CUPTI: output changed: $out"
[ "$(grep -c '^traceprof:' err-other.txt)" = 1 ] && grep -q 'another CUPTI is already loaded (.*libcupti.so.12)' err-other.txt ||
	die "other CUPTI: want one warning naming it, got: $(cat err-other.txt)"
"$PYTHON" - <<'PY'
import glob, json
d = json.load(open(glob.glob("out-other/*.json")[0]))
assert d["traceprof"]["gpu"]["cupti"].startswith("unavailable: another CUPTI"), d["traceprof"]["gpu"]
assert not [e for e in d["traceEvents"] if e.get("cat") == "kernel"]
assert [e for e in d["traceEvents"] if e.get("name") == "cuLaunchKernel"]
print("ok: another CUPTI loaded: host-only")
PY

# A second CUPTI client, as torch.profiler (prog_cuda_calls "profiler": it
# registers its own buffer callbacks, enables kernels and external
# correlation, and pushes its own ids 500.. around 3 launches after 5 plain
# ones).  Whoever registers first keeps CUPTI: registered before cuInit
# (early), traceprof never takes it; registered later, traceprof hands its
# records over first and stops pushing ids.  Either way the client receives
# exactly what it receives without traceprof (its kernels on CUPTI's own
# clock, not the one traceprof gave CUPTI), and traceprof says so once.
# The client finds cuptiActivityRegisterCallbacks by name (default: as a
# program linked with libcupti binds it) or on a handle of a libcupti it
# loaded itself, RTLD_LOCAL (handle: as XLA does; not preloaded then).
for when in early late; do
	for lookup in default handle; do
		tag=client-$when-$lookup
		pre="$TP_PRELOAD"
		[ "$lookup" = default ] && pre="$TP_PRELOAD:$SI/libcupti.so.13"
		plain=$("$prog" profiler $when $lookup 5 3) || die "$tag: the program failed without traceprof: $plain"
		[ "$plain" = "cuInit=0 get=0 launches=8 failed=0 client: kernels=3 ext=500,501,502 off_clock=0 foreign=0 failed=0" ] ||
			die "$tag: the stand-ins said: $plain"
		out=$(TRACEPROF_FOLDER=out-$tag LD_PRELOAD="$pre" "$prog" profiler $when $lookup 5 3 2>err-$tag.txt) ||
			die "$tag: the program failed: $(cat err-$tag.txt)"
		[ "$out" = "$plain" ] || die "$tag: the client's records changed under traceprof: $out"
		[ "$(grep -c '^traceprof:' err-$tag.txt)" = 1 ] && grep -q 'another CUPTI client' err-$tag.txt ||
			die "$tag: want one message about the other client, got: $(cat err-$tag.txt)"
		check_trace out-$tag/*.json >/dev/null || die "$tag: trace check failed"
	done
done
"$PYTHON" - <<'PY'
import glob, json
for lookup in ("default", "handle"):
    # Registered first: traceprof never loads CUPTI; host events only.
    d = json.load(open(glob.glob(f"out-client-early-{lookup}/*.json")[0]))
    gpu, ev = d["traceprof"]["gpu"], d["traceEvents"]
    assert gpu["cupti"].startswith("unavailable: another CUPTI client"), gpu
    launches = [e for e in ev if e.get("ph") == "X" and e.get("name") == "cuLaunchKernel"]
    assert len(launches) == 8 and not [e for e in ev if e.get("cat") == "kernel"], lookup
    assert not [e for e in ev if "correlation" in e.get("args", {})], lookup
    # Registered later: the 5 kernels of the launches before it are ours,
    # paired with them; the 3 launches after it have no number.
    d = json.load(open(glob.glob(f"out-client-late-{lookup}/*.json")[0]))
    gpu, ev = d["traceprof"]["gpu"], d["traceEvents"]
    assert gpu["cupti"].startswith("yielded at step 0: another CUPTI client"), gpu
    launches = sorted((e for e in ev if e.get("ph") == "X" and e.get("name") == "cuLaunchKernel"),
                      key=lambda e: e["ts"])
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    assert len(launches) == 8 and len(kernels) == 5, (lookup, len(launches), len(kernels))
    numbered = [e["args"].get("correlation") for e in launches]
    assert None not in numbered[:5] and numbered[5:] == [None] * 3, numbered
    assert sorted(k["args"]["correlation"] for k in kernels) == sorted(numbered[:5])
print("ok: a second CUPTI client keeps its records; traceprof yields or stays out")
PY

# A client that registers before traceprof's constructor has run (a
# library's constructor: ld.so runs those of objects later in the search
# list first): preload/resolve/cupti_hook.c has no handler from cupti.c yet,
# forwards the call and remembers it (tp_cupti_hook_early()), and traceprof
# then never loads CUPTI, as for any client that registered first.
cat >early.c <<'EOC'
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef void (*req_fn)(uint8_t **, size_t *, size_t *);
typedef void (*done_fn)(void *, uint32_t, uint8_t *, size_t, size_t);
static void req(uint8_t **b, size_t *size, size_t *max)
{
	*size = 1 << 16;
	*b = aligned_alloc(8, *size);
	*max = 0;
}
static void done(void *ctx, uint32_t stream, uint8_t *b, size_t size, size_t valid)
{
	free(b);
}
__attribute__((constructor)) static void early(void)
{
	int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "traceprof_active");
	int (*reg)(req_fn, done_fn) =
		(int (*)(req_fn, done_fn))dlsym(RTLD_DEFAULT, "cuptiActivityRegisterCallbacks");
	int was = active ? active() : -1;
	fprintf(stderr, "early: active=%d registered=%d\n", was, reg ? reg(req, done) : -1);
}
EOC
cc -shared -fPIC -o libearly.so early.c -ldl || die "cannot build the early client"
out=$(TRACEPROF_FOLDER=out-ctor LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13:$PWD/libearly.so" \
	"$prog" launch 4 2>err-ctor.txt) || die "ctor: the program failed: $(cat err-ctor.txt)"
grep -q '^early: active=0 registered=0$' err-ctor.txt ||
	die "ctor: the client did not register before traceprof started: $(cat err-ctor.txt)"
[ "$(grep -c '^traceprof:' err-ctor.txt)" = 1 ] && grep -q 'another CUPTI client' err-ctor.txt ||
	die "ctor: want one message about the other client, got: $(cat err-ctor.txt)"
"$PYTHON" - out-ctor/*.json <<'PY' || die "ctor: traceprof loaded CUPTI after an earlier client"
import json, sys
d = json.load(open(sys.argv[1]))
gpu, ev = d["traceprof"]["gpu"], d["traceEvents"]
assert gpu["cupti"].startswith("unavailable: another CUPTI client"), gpu
assert [e for e in ev if e.get("name") == "cuLaunchKernel"] and not [e for e in ev if e.get("cat") == "kernel"]
print("ok: a client registered in a constructor before traceprof's keeps CUPTI")
PY
