#include "common/config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/clock.h"
#include "common/log.h"

const char *const tp_config_names[] = {
	"TRACEPROF_ENABLE",	  "TRACEPROF_LOG",	     "TRACEPROF_SCHEDULE",
	"TRACEPROF_FOLDER",	  "TRACEPROF_FILENAME",	     "TRACEPROF_RUN_NAME",
	"TRACEPROF_NUM_TRACES_TO_KEEP", "TRACEPROF_OVERWRITE", "TRACEPROF_BUFFER_EVENTS",
	"TRACEPROF_FLUSH_MS",	  "TRACEPROF_MAX_BUFFER_MB", "TRACEPROF_CLOCK",	     "TRACEPROF_STEP",
	"TRACEPROF_TRIGGER",	  "TRACEPROF_TRIGGER_STEPS", "TRACEPROF_CUPTI",
	"TRACEPROF_CUDA_CALLS",
	"TRACEPROF_WITH_STACK",	  "TRACEPROF_STACK_DEPTH",   "TRACEPROF_PYTHON_STACK",
	"TRACEPROF_FORMAT",	  "TRACEPROF_COMPRESS",
	"TRACEPROF_ZSTD_LEVEL",	  "TRACEPROF_ZSTD_THREADS",  "TRACEPROF_MAX_FILE_MB",
	"TRACEPROF_SAMPLE_MS",
	"TRACEPROF_ON_SAVE",	  "TRACEPROF_FOLLOW_FORK",   "TRACEPROF_FOLLOW_EXEC",
	"TRACEPROF_PYTORCH",	  "TRACEPROF_CAPTURE",
	"TRACEPROF_EXIT_TIMEOUT_S",
	NULL,
};

#define DEFAULT_FOLDER "traceprof_traces/{run_name}"
#define DEFAULT_FILENAME "rank{rank}.step{step}.trace.json"
/* Level 1 by measurement (bench/bench_compress, CUDA API traces).  Level 2
 * is 19% smaller only when a whole step's JSON is 0.5-1 MiB (level 1's
 * window is 512 KiB, level 2's 1 MiB); elsewhere it is up to 10% slower for
 * at most 4% less, and the flush thread's CPU is the scarcer resource.
 * Levels 3 and up are slower still for a few percent. */
#define DEFAULT_ZSTD_LEVEL 1

struct parse_ctx {
	tp_config_getenv_fn get;
	void *env;
	char *err;
	int errlen;
};

static int fail(struct parse_ctx *c, const char *name, const char *value, const char *why)
{
	tp_format(c->err, c->errlen, "%s: '%s': %s", name, value, why);
	return -1;
}

/* Parses a decimal integer in [lo, hi], all of the text; range names the
 * values allowed in the messages ("a value from LO to HI" when NULL). */
static int parse_int_in(struct parse_ctx *c, const char *name, int64_t lo, int64_t hi,
			int64_t dflt, const char *range, int64_t *out)
{
	const char *v = c->get(name, c->env);
	if (!v) {
		*out = dflt;
		return 0;
	}
	char deflt[64], why[200];
	if (!range) {
		tp_format(deflt, sizeof(deflt), "a value from %lld to %lld", (long long)lo,
			  (long long)hi);
		range = deflt;
	}
	const char *p = v;
	int neg = 0;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	int digits = *p && strlen(p) <= 18;
	for (const char *q = p; digits && *q; q++)
		digits = *q >= '0' && *q <= '9';
	if (!digits) {
		tp_format(why, sizeof(why), "expected an integer; use %s", range);
		return fail(c, name, v, why);
	}
	int64_t x = 0;
	for (; *p; p++)
		x = x * 10 + (*p - '0');
	if (neg)
		x = -x;
	if (x < lo || x > hi) {
		tp_format(why, sizeof(why), "out of range; use %s", range);
		return fail(c, name, v, why);
	}
	*out = x;
	return 0;
}

static int parse_int(struct parse_ctx *c, const char *name, int64_t lo, int64_t hi, int64_t dflt,
		     int64_t *out)
{
	return parse_int_in(c, name, lo, hi, dflt, NULL, out);
}

static int parse_bool(struct parse_ctx *c, const char *name, int dflt, int *out)
{
	const char *v = c->get(name, c->env);
	if (!v) {
		*out = dflt;
		return 0;
	}
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	for (int i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return fail(c, name, v, "expected 1 or 0 (also true/false, yes/no, on/off)");
}

/* Matches the value against a NULL-terminated list of words. */
static int parse_enum(struct parse_ctx *c, const char *name, const char *const *words, int dflt,
		      int *out)
{
	const char *v = c->get(name, c->env);
	if (!v) {
		*out = dflt;
		return 0;
	}
	for (int i = 0; words[i]; i++) {
		if (!strcasecmp(v, words[i])) {
			*out = i;
			return 0;
		}
	}
	char why[200];
	int n = tp_format(why, sizeof(why), "expected one of");
	for (int i = 0; words[i]; i++)
		n += tp_format(why + n, (int)sizeof(why) - n, "%s %s", i ? "," : "", words[i]);
	return fail(c, name, v, why);
}

static int parse_str(struct parse_ctx *c, const char *name, const char *dflt, int allow_empty,
		     char *out)
{
	const char *v = c->get(name, c->env);
	if (!v)
		v = dflt;
	else if (!*v && !allow_empty)
		return fail(c, name, v, "empty; unset the variable to get the default");
	if (strlen(v) >= TP_CONFIG_STR)
		return fail(c, name, "...", "longer than 511 bytes");
	strcpy(out, v);
	return 0;
}

static int parse_step(struct parse_ctx *c, struct tp_config *cfg)
{
	const char *name = "TRACEPROF_STEP";
	const char *v = c->get(name, c->env);
	cfg->step_source = TP_STEP_API;
	cfg->step_arg[0] = '\0';
	cfg->step_every = 1;
	if (!v || !strcmp(v, "api"))
		return 0;
	/* torch: traceprof_step() calls made by the Python side
	 * (scripts/pyboot/traceprof_torch.py) when an optimizer's step()
	 * returns; the library counts them as it counts any traceprof_step(). */
	if (!strcmp(v, "torch")) {
		strcpy(cfg->step_arg, "torch");
		return 0;
	}
	const char *usage = "expected api, nvtx:NAME, call:FUNCTION[:N], time:MS or torch";
	if (strlen(v) >= TP_CONFIG_STR)
		return fail(c, name, "...", "longer than 511 bytes");
	if (!strncmp(v, "nvtx:", 5)) {
		if (!v[5])
			return fail(c, name, v, "nvtx: needs a range name, e.g. nvtx:ProfilerStep*");
		cfg->step_source = TP_STEP_NVTX;
		strcpy(cfg->step_arg, v + 5);
		return 0;
	}
	if (!strncmp(v, "call:", 5)) {
		const char *fn = v + 5;
		const char *colon = strchr(fn, ':');
		size_t len = colon ? (size_t)(colon - fn) : strlen(fn);
		if (!len)
			return fail(c, name, v, "call: needs a CUDA function, e.g. call:cudaGraphLaunch");
		for (size_t i = 0; i < len; i++) {
			char ch = fn[i];
			if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			      (ch >= '0' && ch <= '9') || ch == '_'))
				return fail(c, name, v, "the function name must be a C identifier");
		}
		memcpy(cfg->step_arg, fn, len);
		cfg->step_arg[len] = '\0';
		cfg->step_source = TP_STEP_CALL;
		if (colon) {
			char *end;
			unsigned long long n = strtoull(colon + 1, &end, 10);
			if (!colon[1] || *end || n == 0 || n > 1000000000ULL || colon[1] == '-')
				return fail(c, name, v, "N in call:FUNCTION:N must be from 1 to 1000000000");
			cfg->step_every = n;
		}
		return 0;
	}
	if (!strncmp(v, "time:", 5)) {
		char *end;
		unsigned long long ms = strtoull(v + 5, &end, 10);
		if (!v[5] || *end || ms == 0 || ms > 86400000ULL || v[5] == '-')
			return fail(c, name, v, "MS in time:MS must be from 1 to 86400000");
		cfg->step_source = TP_STEP_TIME;
		cfg->step_every = ms;
		return 0;
	}
	return fail(c, name, v, usage);
}

/* TRACEPROF_PYTORCH: a comma-separated subset of modules, ops, shapes.  The
 * Python side (scripts/pyboot/traceprof_torch.py) acts on it; the library
 * only checks it, so that a typo is one clear line here. */
static int parse_pytorch(struct parse_ctx *c, struct tp_config *cfg)
{
	static const char *const words[] = { "modules", "ops", "shapes" };
	const char *name = "TRACEPROF_PYTORCH";
	const char *v = c->get(name, c->env);
	cfg->pytorch = 0;
	if (!v || !*v)
		return 0;
	if (strlen(v) >= TP_CONFIG_STR)
		return fail(c, name, "...", "longer than 511 bytes");
	for (const char *p = v; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		unsigned bit = 0;
		for (unsigned i = 0; i < 3; i++)
			if (strlen(words[i]) == len && !strncmp(words[i], p, len))
				bit = 1u << i;
		if (!bit)
			return fail(c, name, v,
				    "expected a comma-separated list of modules, ops, shapes "
				    "(e.g. modules,ops)");
		cfg->pytorch |= bit;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int signal_by_name(const char *v)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = { { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
		     { "QUIT", SIGQUIT }, { "WINCH", SIGWINCH }, { "PROF", SIGPROF },
		     { "URG", SIGURG },	  { "PWR", SIGPWR } };
	const char *n = v;
	if (!strncasecmp(n, "SIG", 3))
		n += 3;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcasecmp(n, sigs[i].name))
			return sigs[i].sig;
	if (!strncasecmp(n, "RTMIN+", 6)) {
		char *end;
		long k = strtol(n + 6, &end, 10);
		if (n[6] && !*end && k >= 0 && k <= SIGRTMAX - SIGRTMIN)
			return SIGRTMIN + (int)k;
	}
	return 0;
}

static int parse_trigger(struct parse_ctx *c, struct tp_config *cfg)
{
	const char *v = c->get("TRACEPROF_TRIGGER", c->env);
	cfg->trigger_signal = 0;
	if (!v)
		return 0;
	int sig = signal_by_name(v);
	if (!sig)
		return fail(c, "TRACEPROF_TRIGGER", v,
			    "expected a signal name such as SIGUSR2, SIGUSR1, SIGHUP or SIGRTMIN+N");
	cfg->trigger_signal = sig;
	return 0;
}

int tp_config_parse(struct tp_config *cfg, tp_config_getenv_fn get, void *env, char *err,
		    int errlen)
{
	struct parse_ctx c = { get, env, err, errlen };
	static const char *const log_words[] = { "error", "warn", "info", "debug", NULL };
	static const char *const clock_words[] = { "tsc", "monotonic", NULL };
	static const char *const cupti_words[] = { "auto", "on", "off", NULL };
	static const char *const calls_words[] = { "outer", "all", NULL };
	static const char *const compress_words[] = { "none", "zstd", "gzip", NULL };
	static const char *const format_words[] = { "json", "perfetto", NULL };
	int64_t x;

	memset(cfg, 0, sizeof(*cfg));
	err[0] = '\0';
	if (parse_bool(&c, "TRACEPROF_ENABLE", 1, &cfg->enable))
		return -1;
	if (parse_enum(&c, "TRACEPROF_LOG", log_words, TP_LOG_WARN, &cfg->log_level))
		return -1;
	const char *sched = get("TRACEPROF_SCHEDULE", env);
	if (sched) {
		char why[300];
		if (strlen(sched) >= TP_CONFIG_STR)
			return fail(&c, "TRACEPROF_SCHEDULE", "...", "longer than 511 bytes");
		if (tp_schedule_parse(sched, &cfg->schedule, why, sizeof(why))) {
			tp_format(err, errlen,
				  "TRACEPROF_SCHEDULE: %s; expected "
				  "'skip_first=N,wait=N,warmup=N,active=N,repeat=N'",
				  why);
			return -1;
		}
		strcpy(cfg->schedule_text, sched);
	}
	if (parse_str(&c, "TRACEPROF_FOLDER", DEFAULT_FOLDER, 0, cfg->folder) ||
	    parse_str(&c, "TRACEPROF_FILENAME", DEFAULT_FILENAME, 0, cfg->filename) ||
	    parse_str(&c, "TRACEPROF_RUN_NAME", "", 0, cfg->run_name))
		return -1;
	if (strchr(cfg->filename, '/'))
		return fail(&c, "TRACEPROF_FILENAME", cfg->filename,
			    "must not contain '/'; put directories in TRACEPROF_FOLDER");
	if (parse_int(&c, "TRACEPROF_NUM_TRACES_TO_KEEP", -1, 1000000, -1, &cfg->num_traces_to_keep))
		return -1;
	if (parse_bool(&c, "TRACEPROF_OVERWRITE", 0, &cfg->overwrite))
		return -1;
	if (parse_int(&c, "TRACEPROF_BUFFER_EVENTS", 16, 1 << 24, 1 << 16, &x))
		return -1;
	if (x & (x - 1))
		return fail(&c, "TRACEPROF_BUFFER_EVENTS", get("TRACEPROF_BUFFER_EVENTS", env),
			    "must be a power of two (e.g. 65536)");
	cfg->buffer_events = (uint64_t)x;
	if (parse_int(&c, "TRACEPROF_FLUSH_MS", 1, 10000, 10, &x))
		return -1;
	cfg->flush_ms = (uint64_t)x;
	if (parse_int(&c, "TRACEPROF_MAX_BUFFER_MB", 0, 1 << 20, 512, &x))
		return -1;
	cfg->max_buffer_mb = (uint64_t)x;
	if (parse_int(&c, "TRACEPROF_EXIT_TIMEOUT_S", 1, 86400, 60, &x))
		return -1;
	cfg->exit_timeout_s = (uint64_t)x;
	if (parse_enum(&c, "TRACEPROF_CLOCK", clock_words, TP_CLOCK_TSC, &cfg->clock))
		return -1;
	if (parse_step(&c, cfg) || parse_trigger(&c, cfg))
		return -1;
	if (parse_int(&c, "TRACEPROF_TRIGGER_STEPS", 0, 1000000000, 0, &x))
		return -1;
	cfg->trigger_steps = (uint64_t)x;
	if (parse_enum(&c, "TRACEPROF_CUPTI", cupti_words, TP_CUPTI_AUTO, &cfg->cupti))
		return -1;
	if (parse_enum(&c, "TRACEPROF_CUDA_CALLS", calls_words, TP_CUDA_CALLS_OUTER, &cfg->cuda_calls))
		return -1;
	if (parse_bool(&c, "TRACEPROF_WITH_STACK", 0, &cfg->with_stack))
		return -1;
	if (parse_int(&c, "TRACEPROF_STACK_DEPTH", 1, 56, 16, &x))
		return -1;
	cfg->stack_depth = (uint64_t)x;
	if (parse_bool(&c, "TRACEPROF_PYTHON_STACK", 0, &cfg->python_stack))
		return -1;
	if (parse_enum(&c, "TRACEPROF_FORMAT", format_words, TP_FORMAT_JSON, &cfg->format))
		return -1;
	if (parse_enum(&c, "TRACEPROF_COMPRESS", compress_words, TP_COMPRESS_NONE, &cfg->compress))
		return -1;
	/* Negative levels are zstd's fast ones (zstd --fast=N); 0 would be
	 * zstd's "default" (3), which the user should name instead. */
	static const char levels[] = "1 to 19, or -1 to -10 for zstd's fast levels";
	if (parse_int_in(&c, "TRACEPROF_ZSTD_LEVEL", -10, 19, DEFAULT_ZSTD_LEVEL, levels, &x))
		return -1;
	if (x == 0) {
		char why[200];
		tp_format(why, sizeof(why), "not a level (zstd's 0 means 3: name it); use %s",
			  levels);
		return fail(&c, "TRACEPROF_ZSTD_LEVEL", c.get("TRACEPROF_ZSTD_LEVEL", c.env), why);
	}
	cfg->zstd_level = (int)x;
	if (parse_int(&c, "TRACEPROF_ZSTD_THREADS", 0, 16, 0, &x))
		return -1;
	cfg->zstd_threads = (int)x;
	if (parse_int(&c, "TRACEPROF_MAX_FILE_MB", 1, 1 << 20, 256, &x))
		return -1;
	cfg->max_file_mb = (uint64_t)x;
	if (parse_int(&c, "TRACEPROF_SAMPLE_MS", 0, 3600000, 100, &x))
		return -1;
	cfg->sample_ms = (uint64_t)x;
	if (parse_str(&c, "TRACEPROF_ON_SAVE", "", 1, cfg->on_save))
		return -1;
	if (parse_bool(&c, "TRACEPROF_FOLLOW_FORK", 1, &cfg->follow_fork) ||
	    parse_bool(&c, "TRACEPROF_FOLLOW_EXEC", 1, &cfg->follow_exec))
		return -1;
	if (parse_pytorch(&c, cfg))
		return -1;
	static const char *const capture_words[] = { "none", "cudaProfilerApi", NULL };
	if (parse_enum(&c, "TRACEPROF_CAPTURE", capture_words, 0, &cfg->capture))
		return -1;
	/* The range decides what records; a schedule or a trigger would decide
	 * it too, and neither answer would be what the user meant. */
	if (cfg->capture && cfg->schedule.enabled)
		return fail(&c, "TRACEPROF_CAPTURE", get("TRACEPROF_CAPTURE", env),
			    "cannot be combined with TRACEPROF_SCHEDULE (the cudaProfilerStart/Stop "
			    "ranges decide what records); unset one of them");
	if (cfg->capture && cfg->trigger_signal)
		return fail(&c, "TRACEPROF_CAPTURE", get("TRACEPROF_CAPTURE", env),
			    "cannot be combined with TRACEPROF_TRIGGER; unset one of them");
	return 0;
}

static const char *env_get(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

/* Edit distance (insertions, deletions, substitutions) between a[0..n) and
 * b, or more than max when it exceeds max.  Names are short (< 64). */
static size_t edit_distance(const char *a, size_t n, const char *b, size_t max)
{
	size_t m = strlen(b), row[64];
	if (n >= 64 || m >= 64)
		return max + 1;
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0], best = row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j];
			size_t v = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
			if (v < best)
				best = v;
		}
		if (best > max)
			return max + 1;
	}
	return row[m];
}

/* The known name closest to a misspelt one, or NULL: at most 2 edits away
 * (1 for a short suffix such as TRACEPROF_FOO), so that a foreign
 * TRACEPROF_ variable gets no far-fetched fix. */
static const char *closest_name(const char *name, size_t len)
{
	const char *best = NULL;
	size_t best_d = len >= 16 ? 2 : 1;
	for (int i = 0; tp_config_names[i]; i++) {
		size_t d = edit_distance(name, len, tp_config_names[i], best_d);
		if (d < best_d || (d == best_d && !best)) {
			best = tp_config_names[i];
			best_d = d;
		}
	}
	return best;
}

int tp_config_load(struct tp_config *cfg)
{
	char err[600];
	if (tp_config_parse(cfg, env_get, NULL, err, sizeof(err))) {
		tp_error("%s; profiling is disabled for this process", err);
		return -1;
	}
	tp_log_set_level((enum tp_log_level)cfg->log_level);
	/* An unknown TRACEPROF_* variable is most often a typo: say so once. */
	extern char **environ;
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "TRACEPROF_", 10))
			continue;
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
		int known = 0;
		for (int i = 0; tp_config_names[i]; i++)
			if (strlen(tp_config_names[i]) == len && !strncmp(tp_config_names[i], *e, len))
				known = 1;
		if (known)
			continue;
		const char *near = closest_name(*e, len);
		if (near)
			tp_warn("%.*s: unknown variable, ignored; did you mean %s?", (int)len, *e, near);
		else
			tp_warn("%.*s: unknown variable, ignored; see the README for the list", (int)len,
				*e);
	}
	return 0;
}

void tp_config_visit(const struct tp_config *cfg, tp_config_visit_fn fn, void *ctx)
{
	static const char *const log_words[] = { "error", "warn", "info", "debug" };
	static const char *const compress_words[] = { "none", "zstd", "gzip" };
	static const char *const cupti_words[] = { "auto", "on", "off" };
	static const char *const step_words[] = { "api", "nvtx", "call", "time" };
	char b[TP_CONFIG_STR + 64];

	fn("TRACEPROF_ENABLE", cfg->enable ? "1" : "0", ctx);
	fn("TRACEPROF_LOG", log_words[cfg->log_level & 3], ctx);
	fn("TRACEPROF_SCHEDULE", cfg->schedule.enabled ? cfg->schedule_text : "", ctx);
	fn("TRACEPROF_FOLDER", cfg->folder, ctx);
	fn("TRACEPROF_FILENAME", cfg->filename, ctx);
	fn("TRACEPROF_RUN_NAME", cfg->run_name, ctx);
	tp_format(b, sizeof(b), "%lld", (long long)cfg->num_traces_to_keep);
	fn("TRACEPROF_NUM_TRACES_TO_KEEP", b, ctx);
	fn("TRACEPROF_OVERWRITE", cfg->overwrite ? "1" : "0", ctx);
	tp_format(b, sizeof(b), "%llu", (unsigned long long)cfg->buffer_events);
	fn("TRACEPROF_BUFFER_EVENTS", b, ctx);
	tp_format(b, sizeof(b), "%llu", (unsigned long long)cfg->flush_ms);
	fn("TRACEPROF_FLUSH_MS", b, ctx);
	tp_format(b, sizeof(b), "%llu", (unsigned long long)cfg->max_buffer_mb);
	fn("TRACEPROF_MAX_BUFFER_MB", b, ctx);
	fn("TRACEPROF_CLOCK", cfg->clock == TP_CLOCK_TSC ? "tsc" : "monotonic", ctx);
	if (cfg->step_source == TP_STEP_API)
		tp_format(b, sizeof(b), "%s", cfg->step_arg[0] ? cfg->step_arg : "api");
	else if (cfg->step_source == TP_STEP_NVTX)
		tp_format(b, sizeof(b), "nvtx:%s", cfg->step_arg);
	else if (cfg->step_source == TP_STEP_CALL)
		tp_format(b, sizeof(b), "call:%s:%llu", cfg->step_arg,
			  (unsigned long long)cfg->step_every);
	else
		tp_format(b, sizeof(b), "%s:%llu", step_words[cfg->step_source],
			  (unsigned long long)cfg->step_every);
	fn("TRACEPROF_STEP", b, ctx);
	tp_format(b, sizeof(b), "%d", cfg->trigger_signal);
	fn("TRACEPROF_TRIGGER", cfg->trigger_signal ? b : "", ctx);
	tp_format(b, sizeof(b), "%llu", (unsigned long long)cfg->trigger_steps);
	fn("TRACEPROF_TRIGGER_STEPS", b, ctx);
	fn("TRACEPROF_CUPTI", cupti_words[cfg->cupti % 3], ctx);
	fn("TRACEPROF_CUDA_CALLS", cfg->cuda_calls == TP_CUDA_CALLS_ALL ? "all" : "outer", ctx);
	fn("TRACEPROF_WITH_STACK", cfg->with_stack ? "1" : "0", ctx);
	tp_format(b, sizeof(b), "%llu", (unsigned long long)cfg->stack_depth);
	fn("TRACEPROF_STACK_DEPTH", b, ctx);
	fn("TRACEPROF_PYTHON_STACK", cfg->python_stack ? "1" : "0", ctx);
	fn("TRACEPROF_FORMAT", cfg->format == TP_FORMAT_PERFETTO ? "perfetto" : "json", ctx);
	fn("TRACEPROF_COMPRESS", compress_words[cfg->compress % 3], ctx);
	tp_format(b, sizeof(b), "%d", cfg->zstd_level);
	fn("TRACEPROF_ZSTD_LEVEL", b, ctx);
	tp_format(b, sizeof(b), "%d", cfg->zstd_threads);
	fn("TRACEPROF_ZSTD_THREADS", b, ctx);
	tp_format(b, sizeof(b), "%llu", (unsigned long long)cfg->max_file_mb);
	fn("TRACEPROF_MAX_FILE_MB", b, ctx);
	tp_format(b, sizeof(b), "%llu", (unsigned long long)cfg->sample_ms);
	fn("TRACEPROF_SAMPLE_MS", b, ctx);
	fn("TRACEPROF_ON_SAVE", cfg->on_save, ctx);
	fn("TRACEPROF_FOLLOW_FORK", cfg->follow_fork ? "1" : "0", ctx);
	fn("TRACEPROF_FOLLOW_EXEC", cfg->follow_exec ? "1" : "0", ctx);
	static const char *const pytorch_words[] = { "modules", "ops", "shapes" };
	int n = 0;
	b[0] = '\0';
	for (unsigned i = 0; i < 3; i++)
		if (cfg->pytorch & (1u << i))
			n += tp_format(b + n, (int)sizeof(b) - n, "%s%s", n ? "," : "",
				       pytorch_words[i]);
	fn("TRACEPROF_PYTORCH", b, ctx);
	fn("TRACEPROF_CAPTURE", cfg->capture ? "cudaProfilerApi" : "none", ctx);
	tp_format(b, sizeof(b), "%llu", (unsigned long long)cfg->exit_timeout_s);
	fn("TRACEPROF_EXIT_TIMEOUT_S", b, ctx);
}
