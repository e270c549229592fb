# A CUDA build of PyTorch 2.x from PyPI (issue 31, the torch venv of
# scripts/install-deps --with-optional) imports and probes the device
# exactly as without traceprof: with no driver, and with the toolkit's stub
# driver as libcuda.so.1.  torch.cuda.is_available(),
# torch._C._cuda_getDeviceCount() and a CUDA tensor give the same answers,
# the same exit code and the same stderr apart from traceprof: lines (none
# are expected); the runtime calls PyTorch made (it loads libcudart from the
# nvidia-cuda-runtime wheel) are in the trace with their results: error 35
# (cudaErrorInsufficientDriver) with no driver, 34 (cudaErrorStubLibrary)
# with the stub.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import sys, torch; sys.exit(0 if torch.backends.cuda.is_built() else 1)' "torch does not import or is not a CUDA build"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
STUB="$CUDA_HOME/lib64/stubs/libcuda.so"
[ -e "$STUB" ] || skip "no stub driver at $STUB"
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	skip "a real driver is installed (libcuda.so.1): this test needs a machine without one"
fi
mkdir drv
ln -s "$STUB" drv/libcuda.so.1

cat >probe.py <<'PY'
import torch
print("built", torch.backends.cuda.is_built(), torch.version.cuda)
print("is_available", torch.cuda.is_available())
print("device_count", torch._C._cuda_getDeviceCount())
try:
    torch.zeros(1, device="cuda")
    print("cuda tensor made")
except Exception as e:
    print("cuda tensor:", type(e).__name__, str(e).splitlines()[0])
print("cpu", float(torch.ones(3).sum()))
PY

for d in none stub; do
	lp=""
	[ $d = none ] || lp="$TP_TMP/drv"
	set +e
	LD_LIBRARY_PATH="$lp" "$py" probe.py >plain_$d.out 2>plain_$d.err
	rc_plain=$?
	LD_LIBRARY_PATH="$lp" TRACEPROF_FOLDER="$TP_TMP/t_$d" traced "$py" probe.py >traced_$d.out 2>traced_$d.err
	rc_traced=$?
	set -e
	[ $rc_plain = 0 ] || die "$d: the probe failed without traceprof: $(cat plain_$d.err)"
	[ $rc_plain = $rc_traced ] || die "$d: exit code $rc_plain without traceprof, $rc_traced with"
	diff plain_$d.out traced_$d.out || die "$d: output changed under traceprof"
	grep -v '^traceprof:' traced_$d.err >traced_$d.err2 || true
	diff plain_$d.err traced_$d.err2 || die "$d: stderr changed under traceprof"
	! grep -q '^traceprof:' traced_$d.err || die "$d: traceprof said something: $(grep '^traceprof:' traced_$d.err)"
	grep -q "is_available False" plain_$d.out || die "$d: a device? $(cat plain_$d.out)"
	echo "$d: $(tr '\n' ' ' <plain_$d.out)"
done
grep -q "Error 34" plain_stub.err || die "stub: expected PyTorch's warning with error 34: $(cat plain_stub.err)"

"$PYTHON" - "$TP_TMP" "$TP_TOP/test/lib" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[2])
from cudacheck import load, api, one, fail
for d, err in (("none", 35), ("stub", 34)):
    ev = load(os.path.join(sys.argv[1], "t_" + d))
    calls = api(ev, cat="cuda_runtime")
    if not calls:
        fail("%s: no runtime call recorded" % d)
    one(ev, "cudaGetDeviceCount", result=err)
    bad = [(e["name"], e["args"].get("result")) for e in calls if e["args"].get("result") not in (0, err)]
    if bad:
        fail("%s: runtime calls with other results: %r" % (d, bad))
    print("%s: %d runtime calls recorded: %s" % (d, len(calls), sorted(set(e["name"] for e in calls))))
PY
echo "torch probe ok"
