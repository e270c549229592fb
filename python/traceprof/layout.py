"""The trace layout: written by scripts/gen-layout from scripts/layout.spec;
do not edit.  The same names with TP_ are in common/layout.h."""

# ---- Event categories ("cat"), as Kineto names them where it has the category
# ----

# CUDA runtime and driver API calls, on the calling thread.
CAT_CUDA_RUNTIME = "cuda_runtime"
CAT_CUDA_DRIVER = "cuda_driver"

# GPU activity, on the device's stream tracks (pid TP_GPU_PID(device)).
CAT_KERNEL = "kernel"
CAT_GPU_MEMCPY = "gpu_memcpy"
CAT_GPU_MEMSET = "gpu_memset"
CAT_CUDA_SYNC = "cuda_sync"

# Markers: ranges on the CPU thread (NVTX, traceprof_range, steps), and the
# span of the GPU work launched inside one, on the stream.
CAT_USER_ANNOTATION = "user_annotation"
CAT_GPU_USER_ANNOTATION = "gpu_user_annotation"

# PyTorch's operators and autograd nodes (TRACEPROF_PYTORCH=ops, through a
# RecordFunction observer), as torch.profiler names them.
CAT_CPU_OP = "cpu_op"

# nn.Module forward calls (TRACEPROF_PYTORCH=modules: markers named
# MODULE_PREFIX + "CLASS QUALIFIED.NAME"), as torch.profiler's with_stack
# writes them: python_function slices whose args (a number for the event,
# the enclosing module's event's number, one for the module) give
# TensorBoard's Module view its tree (collector/convert.c writes them;
# python/traceprof/pyboot/traceprof_torch.py names the modules).
CAT_PYTHON_FUNCTION = "python_function"
MODULE_PREFIX = "nn.Module: "
MODULE_ARG_ID = "Python id"
MODULE_ARG_PARENT = "Python parent id"
MODULE_ARG_MODULE = "Python module id"

# The launch -> GPU work arrows ("ph":"s"/"f"; their name is the category).
CAT_FLOW = "ac2g"

# PyTorch's forward op -> its backward node arrows, as torch.profiler draws
# them (the op's "Sequence number", the node's "Fwd thread id").
CAT_FWDBWD = "fwdbwd"

# Counters ("ph":"C": CPU %, resident memory, threads).
CAT_COUNTER = "counter"

# ---- Names ----

# One step of the program: ProfilerStep#N (as torch.profiler names it), a
# user_annotation slice; readers match STEP_PREFIX followed by digits.
STEP_PREFIX = "ProfilerStep#"

# A step that is not one iteration carries args.STEP_PHASE_ARG: the first,
# from the library's start to the first step call (import, set-up: the
# start-up), the last, from the last step call to the exit (teardown), or,
# with no step call at all, the whole run.  summary's step statistics leave
# them out (collector/convert.c writes it, format/aggregate.c keeps them out
# of its "steps" rows and lists them in "edge_steps"; cli/summary.py).
STEP_PHASE_ARG = "phase"
STEP_PHASE_STARTUP = "start-up"
STEP_PHASE_TEARDOWN = "teardown"
STEP_PHASE_WHOLE = "whole run"

# ---- The documents: top-level members of the JSON file; in a Perfetto file
# the instants on the header process's track that carry them ----

DOC_TRACE_EVENTS = "traceEvents"
DOC_SCHEMA_VERSION = "schemaVersion"
DOC_DISPLAY_TIME_UNIT = "displayTimeUnit"
DOC_BASE_TIME = "baseTimeNanoseconds"
DOC_DISTRIBUTED_INFO = "distributedInfo"
DOC_DEVICE_PROPERTIES = "deviceProperties"
DOC_STACK_FRAMES = "stackFrames"
DOC_TRACE_NAME = "traceName"

# traceprof's footer object (after traceEvents in JSON; the last instant in
# Perfetto).
DOC_FOOTER = "traceprof"

# Perfetto only: the instant with what the JSON writes at its top
# (baseTimeNanoseconds, wall_offset_ns, rank, ..., launcher).
DOC_HEADER = "traceprof header"

# distributedInfo's members (Kineto's names; Holistic Trace Analysis finds
# the rank with the pattern "rank":\s+(\d+)).  The Perfetto header instant
# carries the same members at its top (the launcher as HEADER_LAUNCHER),
# and the readers make a distributedInfo of them.
DI_BACKEND = "backend"
DI_RANK = "rank"
DI_WORLD_SIZE = "world_size"
DI_LOCAL_RANK = "local_rank"
DI_LOCAL_WORLD_SIZE = "local_world_size"
DI_NODE_RANK = "node_rank"
HEADER_LAUNCHER = "launcher"
HEADER_WALL_OFFSET = "wall_offset_ns"

# JSON only, before traceEvents: what a window's file needs to be finished
# by `traceprof recover` when its process dies before the window ends (a cut
# file, collector/parts.c, python/traceprof/cli/recover.py): the final
# name with the step left as WINDOW_STEP_FIELD (replaced by the last step
# the file holds), the part number, the first step, the host, the pid and
# the process's TRACEPROF_NUM_TRACES_TO_KEEP (recover rotates as the process
# would have: the cut window counts as one).
DOC_WINDOW = "traceprofWindow"
WINDOW_NAME = "name"
WINDOW_PART = "part"
WINDOW_FIRST_STEP = "first_step"
WINDOW_HOST = "hostname"
WINDOW_PID = "pid"
WINDOW_KEEP = "keep"
WINDOW_STEP_FIELD = "{step}"

# The footer member of a cut file: why, when, and what may be missing.
FOOTER_CUT = "cut"

# The footer's run: its id (the same in every process of one run: common/
# launcher.h, tp_launcher_run_id()), where the id came from (the variable,
# or RUN_ID_FROM_PARENT), and when the process started recording (the wall
# clock at the library's start, or at fork in a child: ns since the Unix
# epoch).  summary --by rank refuses files of several run ids, and counts a
# pid that started twice as two processes.
FOOTER_RUN_ID = "run_id"
FOOTER_RUN_ID_FROM = "run_id_from"
FOOTER_START = "start_unix_ns"

# run_id_from when no launcher named the run: the id is derived from the
# parent process, which the processes of one run need not share (common/
# launcher.h): readers compare only ids from the other sources.
RUN_ID_FROM_PARENT = "parent process"

# The run id's sources after TRACEPROF_RUN_ID, in this order (common/
# launcher.c, tp_launcher_run_id(), which writes the variable's name as
# run_id_from): torchrun's id (not empty or RUN_NAME_PLACEHOLDER), Slurm's
# job with its step ("slurm-JOB.STEP"), Open MPI's PMIx namespace.
RUN_ID_TORCHELASTIC = "TORCHELASTIC_RUN_ID"
RUN_ID_SLURM_JOB = "SLURM_JOB_ID"
RUN_ID_SLURM_STEP = "SLURM_STEP_ID"
RUN_ID_PMIX = "PMIX_NAMESPACE"

# The same file's header member, before traceEvents, with the footer's
# last_write: readers see that a file is cut from its head (a compressed
# file's footer costs a whole decompression).
DOC_CUT = "traceprofCut"

# A merged Perfetto file's first track (traceprof merge).
DOC_MERGE_TRACK = "traceprof merge"

# Metadata events ("ph":"M"): a process's or thread's name, sort index and
# labels (Chrome's trace format names them; Perfetto files carry the same in
# their track descriptors, which the readers turn back into these).
META_PROCESS_NAME = "process_name"
META_THREAD_NAME = "thread_name"
META_PROCESS_SORT_INDEX = "process_sort_index"
META_THREAD_SORT_INDEX = "thread_sort_index"
META_PROCESS_LABELS = "process_labels"

# ---- Times and the exact-dur rule ----

# ts (and a plain dur) are microseconds written with TIME_PLACES decimals:
# whole ns.  A slice's dur is written as double(end) - double(ts), with end
# its true end in whole ns printed as ts is, so that a reader's
# double(ts) + double(dur) is exactly double(end) (back-to-back slices touch,
# children end inside their parents).  Where that difference cannot be
# written exactly (near the base), decimals of up to DUR_PLACES_MAX places
# are tried, then the TIME_PLACES duration is cut by up to DUR_TRIM_MAX ns
# until the sum is not past the end.  Written by format/trace.c
# (tp_trace_put_dur); undone and redone when times move by
# python/traceprof/traces/shift.py (_end_ns, which searches the whole-ns
# end within DUR_END_SEARCH ns of the rounded one); imitated by
# test/lib/gentrace.py (span).  The algorithm itself is code on each side:
# only its parameters are shared.
TIME_PLACES = 3
DUR_PLACES_MAX = 9
DUR_TRIM_MAX = 4
DUR_END_SEARCH = 2

# ---- Flow ids and sort indexes ----

# Flow ids (launch -> GPU work arrows) of one file are 1..FLOW_ID_MAX,
# handed out in turn and wrapping (collector/gpu.c).  A merge of several
# files moves input number i's ids by i << FLOW_ID_BITS so that they stay
# apart (python/traceprof/traces/mergewrite.py, pfmerge.py).
FLOW_ID_BITS = 32
FLOW_ID_MAX = 4294967295

# GPU devices are processes TP_GPU_PID(d) = GPU_PID_BASE + d, sorted after
# every host process: sort index GPU_SORT_BASE + d (collector/gpu.c).  A host
# process's sort index is its rank (collector/footer.c); a thread's the
# order in which it first recorded.
GPU_PID_BASE = 1000000000
GPU_SORT_BASE = 5000000

# A merge groups processes by rank: the k-th process of rank r (in the
# order of their own sort indexes) sorts as r * MERGE_SORT_RANK_STRIDE +
# min(k, MERGE_SORT_RANK_STRIDE - 1) (mergewrite.py, pfmerge.py).
MERGE_SORT_RANK_STRIDE = 1000

# A merge gives a pid seen in more than one rank a new one, counted from
# MERGE_PID_BASE: above every Linux pid (below 2^22), below GPU_PID_BASE.
MERGE_PID_BASE = 1073741824

# ---- File-name templates and launchers ----

# The variables of TRACEPROF_FOLDER and TRACEPROF_FILENAME, {name}; the
# library's error message lists them in this order (format/template.c).
TEMPLATE_VARS = ("run_name", "rank", "local_rank", "world_size", "local_world_size", "node_rank",
                 "step", "batch", "pid", "hostname")

# Each launcher's environment variables: name, then rank, local rank, world
# size, local world size, node rank (None: the launcher has none; ranks are
# then assumed packed node by node).  The first launcher whose rank variable
# is set wins: torchrun first, because it is often started by srun or
# mpirun, whose variables then describe the launcher processes
# (common/launcher.c, python/traceprof/cli/runfiles.py).  MPICH/Hydra
# publish local ranks as MPI_LOCALRANKID/MPI_LOCALNRANKS.
LAUNCHERS = (
    ("torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK"),
    ("openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK"),
    ("pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS", None),
    ("slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE",
     "SLURM_NODEID"),
)

# The launcher named when none is detected.
LAUNCHER_NONE = "none"

# {run_name}: TRACEPROF_RUN_NAME, else the first of RUN_NAME_VARS that is
# set and is not a placeholder, else the program's name (torchrun's and
# Accelerate's agent and their workers share the script's).  Placeholders:
# RUN_NAME_PLACEHOLDER (torchrun's TORCHELASTIC_RUN_ID when no --rdzv-id was
# given: shared by unrelated runs), and a UUID, 8-4-4-4-12 hex digits
# (torchrun --standalone's, and torch 2.15's without --master_port: made for
# one launch and given to its workers only, so the agent and the next run
# would land elsewhere).  Code on each side: common/launcher.c
# (tp_launcher_placeholder), python/traceprof/cli/runfiles.py (run_name).
RUN_NAME_VARS = ("TORCHELASTIC_RUN_ID", "SLURM_JOB_ID")
RUN_NAME_PLACEHOLDER = "none"

# ---- Perfetto (perfetto.protos.Trace,
# ../shared/clients/perfetto_trace.proto): the field numbers and enum values
# the writer (format/perfetto_*.c) and the readers
# (python/traceprof/traces/pftrace.py, pfmerge.py) use ----

# Trace
PF_TRACE_PACKET = 1

# TracePacket
PF_PKT_CLOCK_SNAPSHOT = 6
PF_PKT_TIMESTAMP = 8
PF_PKT_SEQ_ID = 10
PF_PKT_TRACK_EVENT = 11
PF_PKT_INTERNED = 12
PF_PKT_SEQ_FLAGS = 13
PF_PKT_CLOCK_ID = 58
PF_PKT_DEFAULTS = 59
PF_PKT_TRACK_DESC = 60

# TracePacketDefaults
PF_DEFAULTS_CLOCK_ID = 58

# TracePacket.sequence_flags
PF_SEQ_INCREMENTAL_STATE_CLEARED = 1

# ClockSnapshot and its Clock
PF_SNAP_CLOCKS = 1
PF_CLOCK_ID = 1
PF_CLOCK_TS = 2
PF_CLOCK_INCREMENTAL = 3

# BuiltinClock ids; sequence-scoped clocks are 64..127: the writer's
# incremental clock is PF_CLOCK_SEQ_INCREMENTAL, a merge's copy of an
# input's own MONOTONIC PF_CLOCK_SEQ_HOST_MONOTONIC.
PF_CLOCK_REALTIME = 1
PF_CLOCK_MONOTONIC = 3
PF_CLOCK_BOOTTIME = 6
PF_CLOCK_SEQ_INCREMENTAL = 64
PF_CLOCK_SEQ_HOST_MONOTONIC = 65

# The writer's one packet sequence.
PF_SEQ_ID = 1

# TrackEvent
PF_TE_CATEGORY_IIDS = 3
PF_TE_ANNOTATIONS = 4
PF_TE_TYPE = 9
PF_TE_NAME_IID = 10
PF_TE_TRACK_UUID = 11
PF_TE_CATEGORIES = 22
PF_TE_NAME = 23
PF_TE_DOUBLE_COUNTER = 44
PF_TE_FLOW_IDS = 47
PF_TE_TERMINATING_FLOW_IDS = 48

# TrackEvent.Type
PF_TYPE_SLICE_BEGIN = 1
PF_TYPE_SLICE_END = 2
PF_TYPE_INSTANT = 3
PF_TYPE_COUNTER = 4

# DebugAnnotation
PF_DA_NAME_IID = 1
PF_DA_BOOL = 2
PF_DA_UINT = 3
PF_DA_INT = 4
PF_DA_DOUBLE = 5
PF_DA_STRING = 6
PF_DA_NAME = 10
PF_DA_DICT = 11
PF_DA_ARRAY = 12
PF_DA_STRING_IID = 17

# InternedData, and the iid and text of its entries
PF_ID_CATEGORIES = 1
PF_ID_NAMES = 2
PF_ID_ANNOTATION_NAMES = 3
PF_ID_STRING_VALUES = 29
PF_INTERNED_IID = 1
PF_INTERNED_NAME = 2

# TrackDescriptor
PF_TD_UUID = 1
PF_TD_NAME = 2
PF_TD_PROCESS = 3
PF_TD_THREAD = 4
PF_TD_PARENT = 5
PF_TD_COUNTER = 8

# ProcessDescriptor
PF_PD_PID = 1
PF_PD_SORT = 3
PF_PD_NAME = 6
PF_PD_LABELS = 8

# ThreadDescriptor
PF_THD_PID = 1
PF_THD_TID = 2
PF_THD_SORT = 3
PF_THD_NAME = 5

# ---- The footer's table: what it covers (format/digest.h, traces/aggtable.py)
# ----

# Sample k of the bytes before the footer is DIGEST_SAMPLE bytes at
# k * stride; the stride starts at DIGEST_STRIDE0 and doubles (every other
# sample dropped) when DIGEST_MAX samples are complete.
DIGEST_SAMPLE = 64
DIGEST_STRIDE0 = 4096
DIGEST_MAX = 64
