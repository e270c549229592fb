# Issue 16, item 4: a process that recorded nothing writes no file.  A
# wrapper tree (a shell that runs helpers, then the real worker, as pyenv
# shims, conda activation, mpirun and torchrun's agent do) under `traceprof
# run` leaves exactly one trace: the worker's, the one process that made CUDA
# calls.  Before the fix each helper wrote its own rank0.step0.trace.N.json
# holding only ProfilerStep#0.
. "$TP_TOP/test/lib/common.sh"
T="$BUILD/traceprof"
SI="$BUILD/standin"
[ -x "$T" ] && [ -x "$SI/standin_app" ] || die "traceprof or the stand-ins not built; run make check"
export LD_LIBRARY_PATH="$SI${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

cat >wrapper.sh <<SH
#!/usr/bin/env bash
# what a shim does before it execs the real program
ls / >/dev/null
readlink -f "\$0" >/dev/null
sh -c 'true'
env true
exec "$SI/standin_app"
SH
chmod +x wrapper.sh
TRACEPROF_LIB="$TP_LIB" "$T" run -q --folder "$TP_TMP/out" -- bash -c './wrapper.sh; echo done' >run.out 2>run.err ||
	die "traceprof run failed: $(cat run.err)"
grep -qx done run.out || die "the wrapper tree did not run to its end: $(cat run.out)"
files=$(find "$TP_TMP/out" -type f | sort)
[ "$(echo "$files" | grep -c .)" = 1 ] || die "want exactly one trace file, got: $files"
# (JSON quotes the name; a .pftrace holds it interned, as raw bytes)
grep -aq "$([ "$TP_EXT" = json ] && echo '"cudaMalloc"' || echo cudaMalloc)" $files || die "the one file is not the worker's: $files"
echo "one file: $files"

# A process that only calls traceprof_step() (no CUDA) still writes its file.
TRACEPROF_FOLDER="$TP_TMP/steps" traced "$PYTHON" -c \
	'import ctypes; lib = ctypes.CDLL(None); [lib.traceprof_step() for _ in range(3)]' 2>steps.err ||
	die "a program calling traceprof_step() failed: $(cat steps.err)"
[ -n "$(find "$TP_TMP/steps" -type f)" ] || die "a program with steps wrote no file"
echo "PASS"
