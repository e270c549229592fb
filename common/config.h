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

/* One field per row of common/options.def, in its order, then those the
 * TP_OPT_CUSTOM rows' parsers (common/config.c) fill. */
struct tp_config {
#define TP_OPT_BOOL(var, field, ...) int field;
#define TP_OPT_ENUM(var, field, ...) int field;
#define TP_OPT_INT(var, field, type, ...) type field;
#define TP_OPT_STR(var, field, ...) char field[TP_CONFIG_STR];
#define TP_OPT_CUSTOM(var, tag, ...)
#include "common/options.def"
#undef TP_OPT_BOOL
#undef TP_OPT_ENUM
#undef TP_OPT_INT
#undef TP_OPT_STR
#undef TP_OPT_CUSTOM
	struct tp_schedule schedule;	   /* TRACEPROF_SCHEDULE */
	char schedule_text[TP_CONFIG_STR]; /* its text, as given */
	char filename[TP_CONFIG_STR];	   /* TRACEPROF_FILENAME: a template */
	uint64_t buffer_events;		   /* ring slots per thread, a power of two */
	int step_source;		   /* TRACEPROF_STEP: enum tp_step_source */
	char step_arg[TP_CONFIG_STR];
	uint64_t step_every;
	int trigger_signal; /* TRACEPROF_TRIGGER: 0, none */
	int zstd_level;
	unsigned pytorch; /* TRACEPROF_PYTORCH: bit 0 modules, 1 ops, 2 shapes */
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
