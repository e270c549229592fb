# Third-party readers read traceprof's traces right (issue 20): Chrome
# DevTools' trace engine (npm @paulirish/trace_engine) and speedscope's
# Trace Event Format importer (npm speedscope) over a representative set of
# traces: many steps on three threads (host only), the demo program with the
# stand-in CUDA runtime and CUPTI, launches with GPU kernels (CUPTI
# stand-in), steps and markers with kernels and gpu_user_annotation spans, a merge of two ranks' windows, and a merge of synthetic ranks
# whose clock bases differ (times shifted by the merge).  Neither reader may
# drop a slice or nest it elsewhere than the file's whole-ns times say
# (test/lib/readers/readers.mjs); every file passes the trace checker, which
# checks the rule that makes this hold (ts + dur in doubles is the end's ns).
#
# The readers are installed with npm into $TRACEPROF_NPM_DIR (default
# ~/.cache/traceprof-npm), outside the repository, once; without node, npm
# or the registry the test is skipped.
. "$TP_TOP/test/lib/common.sh"
command -v node >/dev/null || skip "node is not installed (scripts/install-deps --with-optional)"
NPM_DIR="${TRACEPROF_NPM_DIR:-$HOME/.cache/traceprof-npm}"
MODS="$NPM_DIR/node_modules"
# Pinned: readers.mjs finds speedscope's importer inside its bundle.
WANT="@paulirish/trace_engine@0.0.65 speedscope@1.25.0"
have() {
	[ -f "$MODS/@paulirish/trace_engine/package.json" ] && [ -d "$MODS/speedscope/dist/release" ]
}
if ! have; then
	command -v npm >/dev/null || skip "npm is not installed (scripts/install-deps --with-optional)"
	# npm retries a registry it cannot reach for minutes: ask once first
	# (our machines reach Debian's and PyPI's registries, not npm's).
	timeout 30 npm ping --fetch-retries=0 --fetch-timeout=10000 >npm.log 2>&1 ||
		skip "the npm registry does not answer: $(grep -m1 -i error npm.log)"
	mkdir -p "$NPM_DIR"
	if ! (cd "$NPM_DIR" && timeout 300 npm install --no-audit --no-fund --loglevel=error $WANT) \
		>npm.log 2>&1; then
		skip "npm install $WANT failed: $(tail -3 npm.log | tr '\n' ' ')"
	fi
	have || skip "npm install $WANT left no readers in $MODS"
fi

SI="$BUILD/standin"
[ -e "$SI/libcupti.so.13" ] && [ -e "$SI/libcudart.so.13" ] || die "stand-ins not built ($SI); run make check"
files=()

# Many steps, markers on the main thread and two workers, host only.
traced env TRACEPROF_FOLDER=steps "$BUILD/test/prog_steps" 400 2 5 >/dev/null
files+=(steps/*.json)

# The demo with the stand-in runtime and CUPTI: runtime and driver calls
# nested in markers, in steps.
LD_LIBRARY_PATH="$SI" LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13" TRACEPROF_FOLDER=demo \
	"$BUILD/test/prog_demo_train" 30 1 >/dev/null
files+=(demo/*.json)

# GPU kernels and their arrows (stand-in CUPTI; 5 us between launches, so
# that the made-up 2 us kernels do not overlap on their stream, as real ones
# never do).
LD_LIBRARY_PATH="$SI" LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13" TRACEPROF_FOLDER=cupti \
	"$BUILD/test/prog_cuda_calls" launch 300 5 >/dev/null
files+=(cupti/*.json)

# Steps and markers around launches: kernels and their gpu_user_annotation
# spans on the stream.
LD_LIBRARY_PATH="$SI" LD_PRELOAD="$TP_PRELOAD:$SI/libcupti.so.13" TRACEPROF_FOLDER=gpusteps \
	"$BUILD/test/prog_gpu_steps" 20 4 10 >/dev/null
files+=(gpusteps/*.json)

# Two ranks' windows, merged.
for r in 0 1; do
	traced env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 TRACEPROF_FOLDER=ranks \
		"$BUILD/test/prog_steps" 100 1 3 >/dev/null
done
"$BUILD/traceprof" merge -o merged.json ranks 2>/dev/null
files+=(merged.json)

# Ranks whose bases differ by an odd number of ns: the merge shifts every ts.
B=1788480000000000000
mkdir -p synth
for r in 0 1 2; do
	"$PYTHON" "$TP_TOP/test/lib/gentrace.py" synth/rank$r.json --rank $r --world 3 \
		--base $((B + r * 1000123457)) --t0 6935819911453.327 --step-us 1234.567 \
		--events 400 --gpu 2>/dev/null
done
"$BUILD/traceprof" merge -o shifted.json synth 2>/dev/null
files+=(synth/rank0.json shifted.json)

check_trace "${files[@]}" || die "a trace fails the trace checker"
node "$TP_TOP/test/lib/readers/readers.mjs" "$MODS" "${files[@]}" ||
	die "a reader dropped or mis-nested slices"
echo "readers ok: ${#files[@]} traces"
