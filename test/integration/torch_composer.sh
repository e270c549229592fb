# Composer side by side (issue 31; the composer venv of scripts/install-deps
# --with-optional: mosaicml with the torch it pins).  A tiny Composer Trainer
# on the CPU (test/programs/composer_tiny.py, 6 batches):
#   1. with Composer's own profiler (cyclic_schedule(wait=1, warmup=1,
#      active=2, repeat=1), JSONTraceHandler and its TorchProfiler), run under
#      `traceprof run --step torch --schedule wait=1,warmup=1,active=2,repeat=1`:
#      a run whose own torch.profiler is active is not broken, and both
#      traces are complete: Composer's torch trace holds ProfilerStep#2 and
#      #3, and so does traceprof's one file;
#   2. unmodified (no Composer profiler) under the same command: traceprof's
#      window holds the same batches, ProfilerStep#2 and #3.
#   3. `composer -n 2` under traceprof run: one file per rank, the same
#      window, in the default folder named after the script
#      (traceprof_traces/composer_tiny), which traceprof run reports.
# The names differ: Composer names its files after the batch at which it
# saves them (ep0-ba4-rank0.json, rank0.4.pt.trace.json: the batch after
# the window), traceprof after the window's last step (rank0.step3.trace.json).
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
py=$(tp_venv_python composer) || skip "no composer venv (scripts/install-deps --with-optional makes it)"
"$py" -c 'import composer, torch' 2>/dev/null || skip "$py: composer does not import"
prog="$TP_TOP/test/programs/composer_tiny.py"
T="$BUILD/traceprof"
for m in composer plain; do
	mkdir $m
	(cd $m && "$T" run -q --folder "$PWD/tp" --step torch --schedule wait=1,warmup=1,active=2,repeat=1 \
		-- "$py" "$prog" $m >out.txt 2>err.txt) || die "$m: failed under traceprof: $(tail -5 $m/err.txt)"
	grep -q '^done$' $m/out.txt || die "$m: the run did not finish: $(cat $m/out.txt)"
	! grep -q '^traceprof:' $m/err.txt || die "$m: traceprof said: $(grep '^traceprof:' $m/err.txt)"
	echo "$m: $(cd $m && find . -name '*.json' | sort | tr '\n' ' ')"
done
[ -f composer/ctraces/ep0-ba4-rank0.json ] || die "Composer's JSON trace missing"
"$PYTHON" - composer/torch_traces/*.pt.trace.json composer/tp/rank0.step3.trace.json plain/tp/rank0.step3.trace.json <<'PY' ||
import json, sys
want = ["ProfilerStep#2", "ProfilerStep#3"]
for path in sys.argv[1:]:
    ev = json.load(open(path))["traceEvents"]
    steps = sorted(set(e["name"] for e in ev if e.get("name", "").startswith("ProfilerStep#")))
    assert steps == want, (path, steps)
    print(path, steps)
PY
	die "the windows differ"
# 3. `composer -n 2` (Composer's launcher, two CPU ranks over gloo) under
# traceprof run: one file per rank, each window ProfilerStep#2-#3.
port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir n2
(cd n2 && "$T" run --step torch --schedule wait=1,warmup=1,active=2,repeat=1 \
	-- "$(dirname "$py")/composer" -n 2 --master_port "$port" "$prog" plain >out.txt 2>err.txt) ||
	die "composer -n 2 failed under traceprof: $(tail -5 n2/err.txt)"
grep -q '^traceprof: 2 trace files written' n2/err.txt ||
	die "composer -n 2: traceprof run did not report the ranks' files: $(grep '^traceprof:' n2/err.txt)"
files=$(cd n2/traceprof_traces && find . -type f | sort | tr '\n' ' ')
[ "$files" = "./composer_tiny/rank0.step3.trace.json ./composer_tiny/rank1.step3.trace.json " ] ||
	die "composer -n 2: want one file per rank in traceprof_traces/composer_tiny, got: $files"
"$PYTHON" - n2/traceprof_traces/composer_tiny/*.json <<'PY' || die "composer -n 2: windows wrong"
import json, sys
for r, path in enumerate(sys.argv[1:]):
    t = json.load(open(path))
    assert t["distributedInfo"]["rank"] == r and t["distributedInfo"]["world_size"] == 2, t["distributedInfo"]
    steps = sorted(set(e["name"] for e in t["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")))
    assert steps == ["ProfilerStep#2", "ProfilerStep#3"], (path, steps)
print("composer -n 2: one file per rank, ProfilerStep#2-#3 each")
PY
echo "composer ok"
