# TensorBoard's PyTorch profiler plugin (torch-tb-profiler from PyPI, in the
# torch venv of scripts/install-deps --with-optional; issue 31) reads the
# traces of a torch 2.x run (test/programs/torch_block.py under --step
# torch --pytorch modules,ops, two windows) of two ranks (torchrun's
# variables), written with --filename 'rank{rank}.{step}.pt.trace.json' as
# the README says: the plugin's loader lists the run's workers rank0 and
# rank1, each with the two windows as spans, and builds each profile (its
# overview, operator and trace views; the operator view's table has
# aten::addmm, from the "cpu_op" events of the library's RecordFunction
# observer).  With the default file names
# (rank0.step2.trace.json) it finds nothing: it only reads *.pt.trace.json.
. "$TP_TOP/test/lib/common.sh"
[ "${TP_SANITIZER:-}" = "" ] || skip "PyTorch under $TP_SANITIZER is not tested"
need_venv torch 'import torch, torch_tb_profiler' "lacks torch or torch-tb-profiler"
prog="$TP_TOP/test/programs/torch_block.py"
T="$BUILD/traceprof"
for r in 0 1; do
	RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 "$T" run -q --folder "$PWD/logs/run1" \
		--filename 'rank{rank}.{step}.pt.trace.json' --step torch --pytorch modules,ops \
		--schedule wait=1,active=2,repeat=2 -- "$py" "$prog" 6 >/dev/null 2>err$r.txt ||
		die "rank $r failed: $(cat err$r.txt)"
done
RANK=0 "$T" run -q --folder "$PWD/logs/default" --step torch --schedule wait=1,active=2,repeat=1 \
	-- "$py" "$prog" 3 >/dev/null 2>err.txt || die "default-name run failed: $(cat err.txt)"
ls logs/run1 logs/default
cat >tbl.py <<'PY'
import platform
import sys
from torch_tb_profiler.io.cache import Cache
from torch_tb_profiler.profiler.loader import RunLoader

if __name__ == "__main__":  # the loader starts a process per file
    run = RunLoader("run1", sys.argv[1], Cache()).load()
    assert sorted(run.workers) == ["rank0", "rank1"], run.workers
    for w in run.workers:
        spans = run.get_spans(w)
        assert len(spans) == 2, (w, spans)
        for sp in spans:
            p = run.get_profile(w, sp)
            views = [v.name for v in p.views]
            # "operator": the plugin's table of cpu_op events (the
            # library's RecordFunction observer on x86-64).
            want = {"overall", "trace"} | ({"operator"} if platform.machine() == "x86_64" else set())
            assert want <= set(views), (w, sp, views)
            if "operator" in views:
                rows = {r["name"]: r for r in p.operation_table_by_name["data"]}
                assert rows.get("aten::addmm", {}).get("calls", 0) > 0, sorted(rows)[:10]
            print(w, "span", sp, views)
    d = RunLoader("default", sys.argv[2], Cache()).load()
    assert not d.profiles, list(d.profiles)
    print("default names: no worker found, as documented")
PY
"$py" tbl.py logs/run1 logs/default || die "TensorBoard's profiler plugin could not read the run"
echo "tensorboard ok"
