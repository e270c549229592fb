# The processes a real PyTorch 2.x job makes (issue 31; the torch venv of
# scripts/install-deps --with-optional), under `traceprof run --step torch`
# of an unmodified script (test/programs/torch_loader.py):
#   - a DataLoader with num_workers=2 started by fork, and by spawn: the
#     same losses and the same batches from both workers as without
#     traceprof, no traceprof: line, and one file only, the training
#     process's (the workers record nothing: a spawned worker's `import
#     torch`, whose ~44,000 CUDA registration calls are nvcc's plumbing, not
#     recorded by default, no longer gives each worker a 21 MB file);
#   - --pytorch ops with fork: the workers record their ops but end with
#     os._exit(), and leave no file, not even a hidden temporary one;
#   - torch.compile (inductor on the CPU, its caches in $TP_TMP) in the
#     loop: its compiler children (the compile workers, gcc) run as without
#     traceprof and write no file, the steps are right (ProfilerStep#0-#3),
#     the losses unchanged, nothing hangs.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch' "torch does not import"
prog="$TP_TOP/test/programs/torch_loader.py"
T="$BUILD/traceprof"

plain=$("$py" "$prog" fork 4 2>plain.err) || die "the script failed without traceprof: $(cat plain.err)"
for m in fork spawn; do
	out=$("$T" run -q --folder "$PWD/$m" --step torch -- "$py" "$prog" $m 4 2>$m.err) ||
		die "$m: the script failed under traceprof: $(cat $m.err)"
	[ "$out" = "$plain" ] || die "$m: output changed under traceprof: '$plain' vs '$out'"
	! grep -q '^traceprof:' $m.err || die "$m: traceprof said: $(grep '^traceprof:' $m.err)"
	files=$(cd $m && find . -type f | tr '\n' ' ')
	[ "$files" = "./rank0.step4.trace.json " ] || die "$m: want the training process's file only, got: $files"
	echo "$m: $(echo "$out" | tr '\n' ' '); files: $files"
done

# --pytorch ops without a schedule: a forked worker records its own ops
# (the Dataset's), and its flush thread creates its window's temporary file;
# multiprocessing ends it with os._exit(), which saves nothing.  It used to
# leave a 0-byte ".pid<N>.rank0.step0.trace.json.tmp.<N>.1" per worker
# (issue 41 item 8); find lists hidden files too.
out=$("$T" run -q --folder "$PWD/ops" --pytorch ops -- "$py" "$prog" fork 4 2>ops.err) ||
	die "ops: the script failed under traceprof: $(cat ops.err)"
[ "$out" = "$plain" ] || die "ops: output changed under traceprof: '$plain' vs '$out'"
files=$(cd ops && find . -type f | tr '\n' ' ')
[ "$files" = "./rank0.step0.trace.json " ] || die "ops: want the training process's file only, got: $files"
echo "ops (fork): files: $files"

# torch.compile: separate caches, so that both runs compile.
out=$(TORCHINDUCTOR_CACHE_DIR="$TP_TMP/ind1" TRITON_CACHE_DIR="$TP_TMP/tri1" "$T" run -q \
	--folder "$PWD/comp" --step torch -- "$py" "$prog" fork 4 --compile 2>comp.err) ||
	die "torch.compile under traceprof failed: $(tail -5 comp.err)"
plainc=$(TORCHINDUCTOR_CACHE_DIR="$TP_TMP/ind2" TRITON_CACHE_DIR="$TP_TMP/tri2" \
	"$py" "$prog" fork 4 --compile 2>plainc.err) || die "torch.compile failed without traceprof: $(tail -5 plainc.err)"
[ "$out" = "$plainc" ] || die "torch.compile: output changed under traceprof: '$plainc' vs '$out'"
! grep -q '^traceprof:' comp.err || die "torch.compile: traceprof said: $(grep '^traceprof:' comp.err)"
find "$TP_TMP/ind1" -name '*.so' | grep -q . || die "inductor compiled nothing (no .so in its cache)"
files=$(cd comp && find . -type f | tr '\n' ' ')
[ "$files" = "./rank0.step4.trace.json " ] || die "torch.compile: want one file, got: $files"
"$PYTHON" - comp/rank0.step4.trace.json <<'PY' || die "torch.compile: steps wrong"
import json, sys
t = json.load(open(sys.argv[1]))
steps = sorted(e["name"] for e in t["traceEvents"] if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
assert steps == ["ProfilerStep#%d" % i for i in range(5)], steps
print("torch.compile: steps", steps)
PY
echo "torch procs ok"
