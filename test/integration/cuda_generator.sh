# The generated wrappers cover exactly what the toolkit headers declare and
# the libraries export: `gen-cuda-wrappers --list` names every exported
# function of libcudart.so and the stub libcuda.so once; every one marked
# wrapped is exported by libtraceprof.so; every one skipped has a reason and
# is not declared (as a function) in the headers the generator reads.
. "$TP_TOP/test/lib/common.sh"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
[ -e "$CUDA_HOME/include/cuda.h" ] || skip "no CUDA toolkit at $CUDA_HOME"
"$PYTHON" "$TP_TOP/scripts/gen-cuda-wrappers" --cuda-home "$CUDA_HOME" --list >list.txt
nm -D --defined-only "$CUDA_HOME/lib64/libcudart.so" | awk '$2 ~ /^[TWi]$/ {sub(/@.*/, "", $3); print $3}' >rt.txt
nm -D --defined-only "$CUDA_HOME/lib64/stubs/libcuda.so" | awk '$2 ~ /^[TWi]$/ {sub(/@.*/, "", $3); print $3}' >drv.txt
nm -D --defined-only "$TP_LIB" | awk '{print $3}' | sort >ours.txt
"$PYTHON" - "$CUDA_HOME" <<'PY'
import re, sys
home = sys.argv[1]
rows = [l.split(None, 3) for l in open("list.txt") if not l.startswith("#")]
listed = {}
for r in rows:
    if r[0] in listed:
        sys.exit("FAIL: %s listed twice" % r[0])
    listed[r[0]] = r
exported = {l.strip(): "runtime" for l in open("rt.txt") if l.strip()}
exported.update({l.strip(): "driver" for l in open("drv.txt") if l.strip()})
if set(listed) != set(exported):
    sys.exit("FAIL: listed != exported: %r" % sorted(set(listed) ^ set(exported))[:20])
ours = set(l.strip() for l in open("ours.txt"))
headers = ""
for h in ("cuda.h", "cudaProfiler.h", "cuda_runtime_api.h", "cuda_profiler_api.h",
          "crt/host_runtime.h", "crt/device_functions.h"):
    headers += open("%s/include/%s" % (home, h), errors="replace").read()
headers = re.sub(r"/\*.*?\*/", " ", headers, flags=re.S)
headers = re.sub(r"//[^\n]*", " ", headers)
wrapped = skipped = 0
for name, (n, lib, status, extra) in listed.items():
    if lib != exported[name]:
        sys.exit("FAIL: %s in %s, listed as %s" % (name, exported[name], lib))
    if status == "wrapped":
        wrapped += 1
        if name not in ours:
            sys.exit("FAIL: %s wrapped but not exported by libtraceprof.so" % name)
    else:
        skipped += 1
        if not extra.strip():
            sys.exit("FAIL: %s skipped without a reason" % name)
        # A skipped function must not be declared in what the generator reads.
        if re.search(r"\b%s\s*\(" % re.escape(name), headers):
            sys.exit("FAIL: %s is declared in the headers but skipped: %s" % (name, extra))
print("coverage: %d wrapped, %d skipped, %d exported" % (wrapped, skipped, len(exported)))
PY
# make printed the same numbers.
grep -q "^#define TP_CUDA_NFUNCS $(grep -c ' wrapped ' list.txt)\$" "$BUILD/gen/cuda_table.h" ||
	die "build/gen/cuda_table.h and --list disagree"
# The calls whose GPU activity or waits HTA links by correlation are numbered
# (flag 8, TP_CUDA_F_CORR), event records included: a wait's cuda_sync event
# names the record's correlation (wait_on_cuda_event_record_corr_id).
for f in cudaLaunchKernel cuLaunchKernel cudaMemcpyAsync cudaStreamWaitEvent cudaEventRecord cuEventRecord; do
	line=$(grep -E "X\([0-9]+, $f, " "$BUILD/gen/cuda_table.h") || die "$f not in the table"
	flags=$(echo "$line" | sed -E 's/.*, ([0-9]+)\) \\$/\1/')
	[ $(( flags & 8 )) -ne 0 ] || die "$f is not numbered for correlation: $line"
done
