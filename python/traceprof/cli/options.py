"""The options of `traceprof run`: one per TRACEPROF_* variable of the
library, and the template variables of --folder and --filename."""

# Options of `run`: one per row of common/options.def with a flag (the
# table the library's parser is made from), with the library's defaults.
# (option, variable, default shown in --help, kind, help)
#   kind: "str", "bool" (--opt alone means 1), or a list of words
# BEGIN RUN_OPTIONS: written by scripts/gen-options from common/options.def; do not edit
RUN_OPTIONS = [
    ("--enable", "TRACEPROF_ENABLE", "1", "bool",
     "0 turns profiling off (the program runs as without traceprof)"),
    ("--log", "TRACEPROF_LOG", "warn", ["error", "warn", "info", "debug"],
     "library log level on stderr"),
    ("--schedule", "TRACEPROF_SCHEDULE", "none: record everything into one file", "str",
     "torch.profiler.schedule: 'skip_first=N,wait=N,warmup=N,active=N,repeat=N'"),
    ("--folder", "TRACEPROF_FOLDER", "traceprof_traces/{run_name}", "str",
     "output folder; variables {run_name} {rank} {local_rank} {world_size} "
     "{local_world_size} {node_rank} {step} {batch} {pid} {hostname}"),
    ("--filename", "TRACEPROF_FILENAME", "rank{rank}.step{step}.trace.json", "str",
     "file name template ({step}: last step of the window)"),
    ("--run-name", "TRACEPROF_RUN_NAME",
     "$TORCHELASTIC_RUN_ID (not \"none\" or a UUID), else $SLURM_JOB_ID, else the program's name", "str",
     "value of {run_name}"),
    ("--run-id", "TRACEPROF_RUN_ID",
     "set by traceprof run; else $TORCHELASTIC_RUN_ID, $SLURM_JOB_ID.$SLURM_STEP_ID, $PMIX_NAMESPACE, the parent process", "str",
     "the run's id in each file's footer (run_id); default: a new UUID, the same for "
     "every process the program starts"),
    ("--keep", "TRACEPROF_NUM_TRACES_TO_KEEP", "-1 (keep all)", "str",
     "windows whose files this process keeps (all parts of a window count as one); older "
     "ones are deleted; 0: delete each file once --on-save succeeded (right away without "
     "--on-save)"),
    ("--overwrite", "TRACEPROF_OVERWRITE", "0", "bool",
     "replace an existing file of the same name (else a unique suffix is added)"),
    ("--buffer-events", "TRACEPROF_BUFFER_EVENTS", "262144", "str",
     "per-thread ring size in events (a power of two)"),
    ("--flush-ms", "TRACEPROF_FLUSH_MS", "10", "str",
     "flush thread period in ms"),
    ("--live", "TRACEPROF_LIVE", "1", "bool",
     "1 writes this process's live state (step times, where its threads are) about once "
     "a second into the live folder, for `traceprof top`; 0: none"),
    ("--live-dir", "TRACEPROF_LIVE_DIR",
     "<folder>/.live (the trace folder of step 0)", "str",
     "folder of the live files (same variables as --folder)"),
    ("--max-buffer-mb", "TRACEPROF_MAX_BUFFER_MB", "512", "str",
     "most memory, in MiB, for records moved out of the rings and not yet written "
     "(bursts wait there for the writer; past it, events are dropped and counted; 0: "
     "none)"),
    ("--exit-timeout-s", "TRACEPROF_EXIT_TIMEOUT_S", "60", "str",
     "longest wait at exit for the final save, in s (conversion stops at half)"),
    ("--clock", "TRACEPROF_CLOCK", "tsc", ["tsc", "monotonic"],
     "timestamp source"),
    ("--step", "TRACEPROF_STEP", "api", "str",
     "what starts a step: api (traceprof_step), torch (each optimizer step() of a "
     "PyTorch script), nvtx:NAME, call:FUNCTION[:N], time:MS"),
    ("--trigger", "TRACEPROF_TRIGGER", "none", "str",
     "signal that starts an on-demand capture, e.g. SIGUSR2"),
    ("--save-on-signal", "TRACEPROF_SAVE_ON_SIGNAL", "0", "bool",
     "1 installs SIGINT and SIGTERM handlers that save the open window before the "
     "program's own action (changes the program's dispositions: Python then gets no "
     "KeyboardInterrupt)"),
    ("--trigger-steps", "TRACEPROF_TRIGGER_STEPS",
     "0 (the schedule's active, else 1)", "str",
     "steps recorded per triggered capture"),
    ("--cupti", "TRACEPROF_CUPTI", "auto", ["auto", "on", "off"],
     "GPU activity (kernels, copies) through CUPTI"),
    ("--cuda-calls", "TRACEPROF_CUDA_CALLS", "outer", ["outer", "all"],
     "outer: the CUDA calls the program made (not nvcc's launch plumbing, not the driver "
     "calls inside a runtime call); all: every intercepted call"),
    ("--with-stack", "TRACEPROF_WITH_STACK", "0", "bool",
     "record the call stack of each API call and marker"),
    ("--stack-depth", "TRACEPROF_STACK_DEPTH", "16", "str",
     "frames per stack (1-56)"),
    ("--python-stack", "TRACEPROF_PYTHON_STACK", "0", "bool",
     "record the Python stack (file:line function) of each CUDA call (and PyTorch op "
     "with --pytorch ops) made from Python"),
    ("--format", "TRACEPROF_FORMAT", "json", ["json", "perfetto"],
     "json: Chrome/Kineto JSON (.json); perfetto: Perfetto's protobuf (.pftrace)"),
    ("--compress", "TRACEPROF_COMPRESS", "none", ["none", "zstd", "gzip"],
     "compress the files (.zst or .gz is appended)"),
    ("--zstd-level", "TRACEPROF_ZSTD_LEVEL", "1", "str",
     "zstd level (1-19, or -1 to -10 for the fast levels)"),
    ("--zstd-threads", "TRACEPROF_ZSTD_THREADS", "0", "str",
     "zstd compression threads (0: on the flush thread; 1-16 take load off it)"),
    ("--max-file-mb", "TRACEPROF_MAX_FILE_MB", "256", "str",
     "size limit of one file in MB"),
    ("--sample-ms", "TRACEPROF_SAMPLE_MS", "100", "str",
     "host sampler period in ms (0: off)"),
    ("--on-save", "TRACEPROF_ON_SAVE", "none", "str",
     "shell command run after each file is saved; {path} is the file (quoted)"),
    ("--follow-fork", "TRACEPROF_FOLLOW_FORK", "1", "bool",
     "trace forked children"),
    ("--follow-exec", "TRACEPROF_FOLLOW_EXEC", "1", "bool",
     "trace programs started with exec"),
    ("--pytorch", "TRACEPROF_PYTORCH", "none", "str",
     "PyTorch events with no code change: a comma-separated subset of modules (one event "
     "per nn.Module forward), ops (one cpu_op event per ATen operator and autograd "
     "node), shapes (ops with their input shapes as Input Dims; a CUDA build of PyTorch)"),
    ("--capture", "TRACEPROF_CAPTURE", "none", ["none", "cudaProfilerApi"],
     "cudaProfilerApi: record only between cudaProfilerStart/Stop (or "
     "cuProfilerStart/Stop), one file per range; not with --schedule"),
]
# END RUN_OPTIONS

# The template variables of --folder and --filename (format/template.c
# expands them; they are not configuration variables): scripts/layout.spec's.
from ..layout import TEMPLATE_VARS  # noqa: E402,F401
