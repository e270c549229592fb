/* The trace layout: written by scripts/gen-layout from scripts/layout.spec;
 * do not edit.  The same names without TP_ are in
 * python/traceprof/layout.py. */
#ifndef TP_COMMON_LAYOUT_H
#define TP_COMMON_LAYOUT_H

/* ---- Event categories ("cat"), as Kineto names them where it has the
 * category ---- */

/* CUDA runtime and driver API calls, on the calling thread. */
#define TP_CAT_CUDA_RUNTIME "cuda_runtime"
#define TP_CAT_CUDA_DRIVER "cuda_driver"

/* GPU activity, on the device's stream tracks (pid TP_GPU_PID(device)). */
#define TP_CAT_KERNEL "kernel"
#define TP_CAT_GPU_MEMCPY "gpu_memcpy"
#define TP_CAT_GPU_MEMSET "gpu_memset"
#define TP_CAT_CUDA_SYNC "cuda_sync"

/* Markers: ranges on the CPU thread (NVTX, traceprof_range, steps), and the
 * span of the GPU work launched inside one, on the stream. */
#define TP_CAT_USER_ANNOTATION "user_annotation"
#define TP_CAT_GPU_USER_ANNOTATION "gpu_user_annotation"

/* PyTorch's operators and autograd nodes (TRACEPROF_PYTORCH=ops, through a
 * RecordFunction observer), as torch.profiler names them. */
#define TP_CAT_CPU_OP "cpu_op"

/* nn.Module forward calls (TRACEPROF_PYTORCH=modules: markers named
 * MODULE_PREFIX + "CLASS QUALIFIED.NAME"), as torch.profiler's with_stack
 * writes them: python_function slices whose args (a number for the event,
 * the enclosing module's event's number, one for the module) give
 * TensorBoard's Module view its tree (collector/convert.c writes them;
 * python/traceprof/pyboot/traceprof_torch.py names the modules). */
#define TP_CAT_PYTHON_FUNCTION "python_function"
#define TP_MODULE_PREFIX "nn.Module: "
#define TP_MODULE_ARG_ID "Python id"
#define TP_MODULE_ARG_PARENT "Python parent id"
#define TP_MODULE_ARG_MODULE "Python module id"

/* The launch -> GPU work arrows ("ph":"s"/"f"; their name is the category). */
#define TP_CAT_FLOW "ac2g"

/* PyTorch's forward op -> its backward node arrows, as torch.profiler draws
 * them (the op's "Sequence number", the node's "Fwd thread id"). */
#define TP_CAT_FWDBWD "fwdbwd"

/* Counters ("ph":"C": CPU %, resident memory, threads). */
#define TP_CAT_COUNTER "counter"

/* ---- Names ---- */

/* One step of the program: ProfilerStep#N (as torch.profiler names it), a
 * user_annotation slice; readers match STEP_PREFIX followed by digits. */
#define TP_STEP_PREFIX "ProfilerStep#"

/* A step that is not one iteration carries args.STEP_PHASE_ARG: the first,
 * from the library's start to the first step call (import, set-up: the
 * start-up), the last, from the last step call to the exit (teardown), or,
 * with no step call at all, the whole run.  summary's step statistics leave
 * them out (collector/convert.c writes it, format/aggregate.c keeps them out
 * of its "steps" rows and lists them in "edge_steps"; cli/summary.py). */
#define TP_STEP_PHASE_ARG "phase"
#define TP_STEP_PHASE_STARTUP "start-up"
#define TP_STEP_PHASE_TEARDOWN "teardown"
#define TP_STEP_PHASE_WHOLE "whole run"

/* ---- The documents: top-level members of the JSON file; in a Perfetto file
 * the instants on the header process's track that carry them ---- */

#define TP_DOC_TRACE_EVENTS "traceEvents"
#define TP_DOC_SCHEMA_VERSION "schemaVersion"
#define TP_DOC_DISPLAY_TIME_UNIT "displayTimeUnit"
#define TP_DOC_BASE_TIME "baseTimeNanoseconds"
#define TP_DOC_DISTRIBUTED_INFO "distributedInfo"
#define TP_DOC_DEVICE_PROPERTIES "deviceProperties"
#define TP_DOC_STACK_FRAMES "stackFrames"
#define TP_DOC_TRACE_NAME "traceName"

/* traceprof's footer object (after traceEvents in JSON; the last instant in
 * Perfetto). */
#define TP_DOC_FOOTER "traceprof"

/* Perfetto only: the instant with what the JSON writes at its top
 * (baseTimeNanoseconds, wall_offset_ns, rank, ..., launcher). */
#define TP_DOC_HEADER "traceprof header"

/* distributedInfo's members (Kineto's names; Holistic Trace Analysis finds
 * the rank with the pattern "rank":\s+(\d+)).  The Perfetto header instant
 * carries the same members at its top (the launcher as HEADER_LAUNCHER),
 * and the readers make a distributedInfo of them. */
#define TP_DI_BACKEND "backend"
#define TP_DI_RANK "rank"
#define TP_DI_WORLD_SIZE "world_size"
#define TP_DI_LOCAL_RANK "local_rank"
#define TP_DI_LOCAL_WORLD_SIZE "local_world_size"
#define TP_DI_NODE_RANK "node_rank"
#define TP_HEADER_LAUNCHER "launcher"
#define TP_HEADER_WALL_OFFSET "wall_offset_ns"

/* JSON only, before traceEvents: what a window's file needs to be finished
 * by `traceprof recover` when its process dies before the window ends (a cut
 * file, collector/parts.c, python/traceprof/cli/recover.py): the final
 * name with the step left as WINDOW_STEP_FIELD (replaced by the last step
 * the file holds), the part number, the first step, the host, the pid and
 * the process's TRACEPROF_NUM_TRACES_TO_KEEP (recover rotates as the process
 * would have: the cut window counts as one). */
#define TP_DOC_WINDOW "traceprofWindow"
#define TP_WINDOW_NAME "name"
#define TP_WINDOW_PART "part"
#define TP_WINDOW_FIRST_STEP "first_step"
#define TP_WINDOW_HOST "hostname"
#define TP_WINDOW_PID "pid"
#define TP_WINDOW_KEEP "keep"
#define TP_WINDOW_STEP_FIELD "{step}"

/* The footer member of a cut file: why, when, and what may be missing. */
#define TP_FOOTER_CUT "cut"

/* The footer's run: its id (the same in every process of one run: common/
 * launcher.h, tp_launcher_run_id()), where the id came from (the variable,
 * or RUN_ID_FROM_PARENT), and when the process started recording (the wall
 * clock at the library's start, or at fork in a child: ns since the Unix
 * epoch).  summary --by rank refuses files of several run ids, and counts a
 * pid that started twice as two processes. */
#define TP_FOOTER_RUN_ID "run_id"
#define TP_FOOTER_RUN_ID_FROM "run_id_from"
#define TP_FOOTER_START "start_unix_ns"

/* run_id_from when no launcher named the run: the id is derived from the
 * parent process, which the processes of one run need not share (common/
 * launcher.h): readers compare only ids from the other sources. */
#define TP_RUN_ID_FROM_PARENT "parent process"

/* The run id's sources after TRACEPROF_RUN_ID, in this order (common/
 * launcher.c, tp_launcher_run_id(), which writes the variable's name as
 * run_id_from): torchrun's id (not empty or RUN_NAME_PLACEHOLDER), Slurm's
 * job with its step ("slurm-JOB.STEP"), Open MPI's PMIx namespace. */
#define TP_RUN_ID_TORCHELASTIC "TORCHELASTIC_RUN_ID"
#define TP_RUN_ID_SLURM_JOB "SLURM_JOB_ID"
#define TP_RUN_ID_SLURM_STEP "SLURM_STEP_ID"
#define TP_RUN_ID_PMIX "PMIX_NAMESPACE"

/* The same file's header member, before traceEvents, with the footer's
 * last_write: readers see that a file is cut from its head (a compressed
 * file's footer costs a whole decompression). */
#define TP_DOC_CUT "traceprofCut"

/* A merged Perfetto file's first track (traceprof merge). */
#define TP_DOC_MERGE_TRACK "traceprof merge"

/* Metadata events ("ph":"M"): a process's or thread's name, sort index and
 * labels (Chrome's trace format names them; Perfetto files carry the same in
 * their track descriptors, which the readers turn back into these). */
#define TP_META_PROCESS_NAME "process_name"
#define TP_META_THREAD_NAME "thread_name"
#define TP_META_PROCESS_SORT_INDEX "process_sort_index"
#define TP_META_THREAD_SORT_INDEX "thread_sort_index"
#define TP_META_PROCESS_LABELS "process_labels"

/* ---- Times and the exact-dur rule ---- */

/* ts (and a plain dur) are microseconds written with TIME_PLACES decimals:
 * whole ns.  A slice's dur is written as double(end) - double(ts), with end
 * its true end in whole ns printed as ts is, so that a reader's
 * double(ts) + double(dur) is exactly double(end) (back-to-back slices touch,
 * children end inside their parents).  Where that difference cannot be
 * written exactly (near the base), decimals of up to DUR_PLACES_MAX places
 * are tried, then the TIME_PLACES duration is cut by up to DUR_TRIM_MAX ns
 * until the sum is not past the end.  Written by format/trace.c
 * (tp_trace_put_dur); undone and redone when times move by
 * python/traceprof/traces/shift.py (_end_ns, which searches the whole-ns
 * end within DUR_END_SEARCH ns of the rounded one); imitated by
 * test/lib/gentrace.py (span).  The algorithm itself is code on each side:
 * only its parameters are shared. */
#define TP_TIME_PLACES 3
#define TP_DUR_PLACES_MAX 9
#define TP_DUR_TRIM_MAX 4
#define TP_DUR_END_SEARCH 2

/* ---- Flow ids and sort indexes ---- */

/* Flow ids (launch -> GPU work arrows) of one file are 1..FLOW_ID_MAX,
 * handed out in turn and wrapping (collector/gpu.c).  A merge of several
 * files moves input number i's ids by i << FLOW_ID_BITS so that they stay
 * apart (python/traceprof/traces/mergewrite.py, pfmerge.py). */
#define TP_FLOW_ID_BITS 32
#define TP_FLOW_ID_MAX 4294967295u

/* GPU devices are processes TP_GPU_PID(d) = GPU_PID_BASE + d, sorted after
 * every host process: sort index GPU_SORT_BASE + d (collector/gpu.c).  A host
 * process's sort index is its rank (collector/footer.c); a thread's the
 * order in which it first recorded. */
#define TP_GPU_PID_BASE 1000000000
#define TP_GPU_SORT_BASE 5000000

/* A merge groups processes by rank: the k-th process of rank r (in the
 * order of their own sort indexes) sorts as r * MERGE_SORT_RANK_STRIDE +
 * min(k, MERGE_SORT_RANK_STRIDE - 1) (mergewrite.py, pfmerge.py). */
#define TP_MERGE_SORT_RANK_STRIDE 1000

/* A merge gives a pid seen in more than one rank a new one, counted from
 * MERGE_PID_BASE: above every Linux pid (below 2^22), below GPU_PID_BASE. */
#define TP_MERGE_PID_BASE 1073741824

/* ---- File-name templates and launchers ---- */

/* The variables of TRACEPROF_FOLDER and TRACEPROF_FILENAME, {name}; the
 * library's error message lists them in this order (format/template.c). */
#define TP_TEMPLATE_VARS_N 10
#define TP_TEMPLATE_VARS(X) \
	X(RUN_NAME, "run_name") \
	X(RANK, "rank") \
	X(LOCAL_RANK, "local_rank") \
	X(WORLD_SIZE, "world_size") \
	X(LOCAL_WORLD_SIZE, "local_world_size") \
	X(NODE_RANK, "node_rank") \
	X(STEP, "step") \
	X(BATCH, "batch") \
	X(PID, "pid") \
	X(HOSTNAME, "hostname")

/* Each launcher's environment variables: name, then rank, local rank, world
 * size, local world size, node rank (None: the launcher has none; ranks are
 * then assumed packed node by node).  The first launcher whose rank variable
 * is set wins: torchrun first, because it is often started by srun or
 * mpirun, whose variables then describe the launcher processes
 * (common/launcher.c, python/traceprof/cli/runfiles.py).  MPICH/Hydra
 * publish local ranks as MPI_LOCALRANKID/MPI_LOCALNRANKS. */
#define TP_LAUNCHERS_N 4
#define TP_LAUNCHERS(X) \
	X("torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK") \
	X("openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", \
	  "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK") \
	X("pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS", NULL) \
	X("slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE", \
	  "SLURM_NODEID")

/* The launcher named when none is detected. */
#define TP_LAUNCHER_NONE "none"

/* {run_name}: TRACEPROF_RUN_NAME, else the first of RUN_NAME_VARS that is
 * set and is not a placeholder, else the program's name (torchrun's and
 * Accelerate's agent and their workers share the script's).  Placeholders:
 * RUN_NAME_PLACEHOLDER (torchrun's TORCHELASTIC_RUN_ID when no --rdzv-id was
 * given: shared by unrelated runs), and a UUID, 8-4-4-4-12 hex digits
 * (torchrun --standalone's, and torch 2.15's without --master_port: made for
 * one launch and given to its workers only, so the agent and the next run
 * would land elsewhere).  Code on each side: common/launcher.c
 * (tp_launcher_placeholder), python/traceprof/cli/runfiles.py (run_name). */
#define TP_RUN_NAME_VARS_N 2
#define TP_RUN_NAME_VARS(X) \
	X(TORCHELASTIC_RUN_ID, "TORCHELASTIC_RUN_ID") \
	X(SLURM_JOB_ID, "SLURM_JOB_ID")
#define TP_RUN_NAME_PLACEHOLDER "none"

/* ---- Perfetto (perfetto.protos.Trace,
 * ../shared/clients/perfetto_trace.proto): the field numbers and enum values
 * the writer (format/perfetto_*.c) and the readers
 * (python/traceprof/traces/pftrace.py, pfmerge.py) use ---- */

/* Trace */
#define TP_PF_TRACE_PACKET 1

/* TracePacket */
#define TP_PF_PKT_CLOCK_SNAPSHOT 6
#define TP_PF_PKT_TIMESTAMP 8
#define TP_PF_PKT_SEQ_ID 10
#define TP_PF_PKT_TRACK_EVENT 11
#define TP_PF_PKT_INTERNED 12
#define TP_PF_PKT_SEQ_FLAGS 13
#define TP_PF_PKT_CLOCK_ID 58
#define TP_PF_PKT_DEFAULTS 59
#define TP_PF_PKT_TRACK_DESC 60

/* TracePacketDefaults */
#define TP_PF_DEFAULTS_CLOCK_ID 58

/* TracePacket.sequence_flags */
#define TP_PF_SEQ_INCREMENTAL_STATE_CLEARED 1

/* ClockSnapshot and its Clock */
#define TP_PF_SNAP_CLOCKS 1
#define TP_PF_CLOCK_ID 1
#define TP_PF_CLOCK_TS 2
#define TP_PF_CLOCK_INCREMENTAL 3

/* BuiltinClock ids; sequence-scoped clocks are 64..127: the writer's
 * incremental clock is PF_CLOCK_SEQ_INCREMENTAL, a merge's copy of an
 * input's own MONOTONIC PF_CLOCK_SEQ_HOST_MONOTONIC. */
#define TP_PF_CLOCK_REALTIME 1
#define TP_PF_CLOCK_MONOTONIC 3
#define TP_PF_CLOCK_BOOTTIME 6
#define TP_PF_CLOCK_SEQ_INCREMENTAL 64
#define TP_PF_CLOCK_SEQ_HOST_MONOTONIC 65

/* The writer's one packet sequence. */
#define TP_PF_SEQ_ID 1

/* TrackEvent */
#define TP_PF_TE_CATEGORY_IIDS 3
#define TP_PF_TE_ANNOTATIONS 4
#define TP_PF_TE_TYPE 9
#define TP_PF_TE_NAME_IID 10
#define TP_PF_TE_TRACK_UUID 11
#define TP_PF_TE_CATEGORIES 22
#define TP_PF_TE_NAME 23
#define TP_PF_TE_DOUBLE_COUNTER 44
#define TP_PF_TE_FLOW_IDS 47
#define TP_PF_TE_TERMINATING_FLOW_IDS 48

/* TrackEvent.Type */
#define TP_PF_TYPE_SLICE_BEGIN 1
#define TP_PF_TYPE_SLICE_END 2
#define TP_PF_TYPE_INSTANT 3
#define TP_PF_TYPE_COUNTER 4

/* DebugAnnotation */
#define TP_PF_DA_NAME_IID 1
#define TP_PF_DA_BOOL 2
#define TP_PF_DA_UINT 3
#define TP_PF_DA_INT 4
#define TP_PF_DA_DOUBLE 5
#define TP_PF_DA_STRING 6
#define TP_PF_DA_NAME 10
#define TP_PF_DA_DICT 11
#define TP_PF_DA_ARRAY 12
#define TP_PF_DA_STRING_IID 17

/* InternedData, and the iid and text of its entries */
#define TP_PF_ID_CATEGORIES 1
#define TP_PF_ID_NAMES 2
#define TP_PF_ID_ANNOTATION_NAMES 3
#define TP_PF_ID_STRING_VALUES 29
#define TP_PF_INTERNED_IID 1
#define TP_PF_INTERNED_NAME 2

/* TrackDescriptor */
#define TP_PF_TD_UUID 1
#define TP_PF_TD_NAME 2
#define TP_PF_TD_PROCESS 3
#define TP_PF_TD_THREAD 4
#define TP_PF_TD_PARENT 5
#define TP_PF_TD_COUNTER 8

/* ProcessDescriptor */
#define TP_PF_PD_PID 1
#define TP_PF_PD_SORT 3
#define TP_PF_PD_NAME 6
#define TP_PF_PD_LABELS 8

/* ThreadDescriptor */
#define TP_PF_THD_PID 1
#define TP_PF_THD_TID 2
#define TP_PF_THD_SORT 3
#define TP_PF_THD_NAME 5

/* ---- The footer's table: what it covers (format/digest.h,
 * traces/aggtable.py) ---- */

/* Sample k of the bytes before the footer is DIGEST_SAMPLE bytes at
 * k * stride; the stride starts at DIGEST_STRIDE0 and doubles (every other
 * sample dropped) when DIGEST_MAX samples are complete. */
#define TP_DIGEST_SAMPLE 64
#define TP_DIGEST_STRIDE0 4096
#define TP_DIGEST_MAX 64

#endif
