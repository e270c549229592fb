/* Configuration: every TRACEPROF_* variable, parsed strictly once at start-up.
 *
 * A bad value is reported as one line naming the variable, the value and the
 * fix, and tp_config_load() fails: the caller then disables profiling for the
 * process, which runs exactly as without the library. */
#ifndef TP_COMMON_CONFIG_H
#define TP_COMMON_CONFIG_H

#include <stdint.h>

#include "common/schedule_spec.h"

/* TRACEPROF_FORMAT: the writer (format/writer.h) of every trace file. */
enum tp_format_kind { TP_FORMAT_JSON = 0, TP_FORMAT_PERFETTO = 1 };
enum tp_compress { TP_COMPRESS_NONE = 0, TP_COMPRESS_ZSTD = 1, TP_COMPRESS_GZIP = 2 };
enum tp_cupti_mode { TP_CUPTI_AUTO = 0, TP_CUPTI_ON = 1, TP_CUPTI_OFF = 2 };
/* TRACEPROF_CUDA_CALLS: what the program called (not nvcc's launch plumbing,
 * not the driver calls a runtime call makes), or every intercepted call. */
enum tp_cuda_calls { TP_CUDA_CALLS_OUTER = 0, TP_CUDA_CALLS_ALL = 1 };
enum tp_step_source {
	TP_STEP_API = 0,  /* traceprof_step() only (step_arg "torch": TRACEPROF_STEP=torch,
			   * whose traceprof_step() calls the Python side makes) */
	TP_STEP_NVTX = 1, /* NVTX range starts named step_arg (prefix when it ends in '*') */
	TP_STEP_CALL = 2, /* every step_every-th call of CUDA function step_arg */
	TP_STEP_TIME = 3, /* every step_every milliseconds */
};

#define TP_CONFIG_STR 512

struct tp_config {
	int enable;
	int log_level;
	struct tp_schedule schedule;
	char schedule_text[TP_CONFIG_STR];
	char folder[TP_CONFIG_STR];   /* template, not yet expanded */
	char filename[TP_CONFIG_STR]; /* template */
	char run_name[TP_CONFIG_STR]; /* TRACEPROF_RUN_NAME or "" */
	int64_t num_traces_to_keep;   /* -1: keep all */
	int overwrite;
	uint64_t buffer_events; /* ring slots per thread, a power of two */
	uint64_t flush_ms;
	uint64_t max_buffer_mb; /* the flush thread's store of raw records; 0: none */
	uint64_t exit_timeout_s; /* the longest the exiting thread waits for the final save */
	int clock; /* enum tp_clock_source */
	int step_source;
	char step_arg[TP_CONFIG_STR];
	uint64_t step_every;
	int trigger_signal; /* 0: none */
	uint64_t trigger_steps; /* 0: warmup + active of the schedule */
	int cupti;
	int cuda_calls; /* enum tp_cuda_calls */
	int with_stack;
	uint64_t stack_depth;
	int python_stack; /* TRACEPROF_PYTHON_STACK */
	int format; /* enum tp_format_kind */
	int compress;
	int zstd_level;
	int zstd_threads; /* zstd's own compression threads; 0: the flush thread */
	uint64_t max_file_mb;
	uint64_t sample_ms;
	char on_save[TP_CONFIG_STR];
	int follow_fork;
	int follow_exec;
	unsigned pytorch; /* TRACEPROF_PYTORCH: bit 0 modules, 1 ops, 2 shapes */
	int capture;	  /* TRACEPROF_CAPTURE: 0 none, 1 cudaProfilerApi */
};

/* Fills cfg from the environment (getenv).  Returns 0, or -1 after logging one
 * "traceprof: VARIABLE: 'value': problem; fix" line per bad variable. */
int tp_config_load(struct tp_config *cfg);

/* Parses from a lookup function instead of getenv (tests, fuzzing). */
typedef const char *(*tp_config_getenv_fn)(const char *name, void *ctx);
int tp_config_parse(struct tp_config *cfg, tp_config_getenv_fn get, void *ctx, char *err,
		    int errlen);

/* Calls fn(name, value) for every variable with its effective value as text
 * (the trace's configuration record, the CLI). */
typedef void (*tp_config_visit_fn)(const char *name, const char *value, void *ctx);
void tp_config_visit(const struct tp_config *cfg, tp_config_visit_fn fn, void *ctx);

/* Names of all variables, NULL-terminated (documentation, the CLI, tests). */
extern const char *const tp_config_names[];

#endif
