"""Runs Holistic Trace Analysis (HTA) over a folder of per-rank traces and
checks that its analyses run, and what they find:

    hta_check.py FOLDER RANKS KERNELS_PER_RANK

steps, temporal breakdown, kernel breakdown, idle time, queue length, CUDA
kernel launch stats, memory bandwidth, GPU user annotations (Kineto's
gpu_user_annotation events: kernels attributed to the step and marker they
were launched in) and the critical path of one step.  No analysis may
raise; each rank's kernels must all be found.  Needs pandas; run with
PYTHONPATH pointing at the folder that holds the hta package."""
import logging
import os
import sys
import warnings

warnings.simplefilter("ignore")
logging.disable(logging.WARNING)

folder, nranks, nkernels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
from hta.trace_analysis import TraceAnalysis  # noqa: E402

fails = []


def run(what, f):
    try:
        r = f()
    except Exception as e:  # any exception is the finding
        fails.append("%s raised %s: %s" % (what, type(e).__name__, str(e)[:300]))
        return None
    print("ok   %s" % what)
    return r


a = TraceAnalysis(trace_dir=folder)
ranks = sorted(a.t.get_ranks())
if ranks != list(range(nranks)):
    fails.append("HTA found ranks %s, want 0..%d" % (ranks, nranks - 1))
steps = run("get_profiler_steps", a.get_profiler_steps)
if steps is not None and len(steps) < 2:
    fails.append("profiler steps %s" % steps)
t = run("get_temporal_breakdown", lambda: a.get_temporal_breakdown(visualize=False))
if t is not None and len(t) != nranks:
    fails.append("temporal breakdown has %d ranks" % len(t))
run("get_gpu_kernel_breakdown", lambda: a.get_gpu_kernel_breakdown(visualize=False))
run("get_idle_time_breakdown", lambda: a.get_idle_time_breakdown(visualize=False))
run("get_queue_length_summary", lambda: a.get_queue_length_summary(ranks=ranks))
run("get_queue_length_time_series", lambda: a.get_queue_length_time_series(ranks=ranks))
run("get_cuda_kernel_launch_stats",
    lambda: a.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False))
run("get_memory_bw_summary", lambda: a.get_memory_bw_summary(ranks=ranks))
for r in ranks:
    k = run("get_gpu_kernels_with_user_annotations(rank=%d)" % r,
            lambda: a.get_gpu_kernels_with_user_annotations(rank=r, expand_names=True))
    if k is None:
        fails.append("rank %d: no GPU kernels with user annotations (no gpu_user_annotation "
                     "events?)" % r)
    elif len(k) != nkernels or k["user_annotation"].isna().any() or \
            (k["user_annotation"] < 0).any():
        fails.append("rank %d: %d kernels, %d without a user annotation" % (
            r, len(k), int(k["user_annotation"].isna().sum() +
                           (k["user_annotation"] < 0).sum())))
    else:
        names = sorted(set(k["s_user_annotation"]))
        print("     rank %d: %d kernels in %s" % (r, len(k), names))
        if not {"forward", "backward"} <= set(names):
            fails.append("rank %d: kernels attributed to %s" % (r, names))
ub = run("get_gpu_user_annotation_breakdown",
         lambda: a.get_gpu_user_annotation_breakdown(visualize=False))
if ub is None and not [f for f in fails if "breakdown" in f]:
    fails.append("get_gpu_user_annotation_breakdown returned None")
cp = run("critical_path_analysis(rank=0, ProfilerStep, 1)",
         lambda: a.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=1))
if cp is not None:
    graph, ok = cp
    if not ok:
        fails.append("critical path analysis did not succeed")
    else:
        print("     critical path: %d edges" % len(graph.critical_path_edges_set))
for f in fails:
    print("FAIL", f)
sys.exit(1 if fails else 0)
