#include "common/config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/schedule_spec.h" /* tp_schedule_parse */

/* Every variable, in the table's order. */
const char *const tp_config_names[] = {
#define TP_OPT_BOOL(var, ...) var,
#define TP_OPT_ENUM(var, ...) var,
#define TP_OPT_INT(var, ...) var,
#define TP_OPT_STR(var, ...) var,
#define TP_OPT_CUSTOM(var, ...) var,
#include "common/options.def"
#undef TP_OPT_BOOL
#undef TP_OPT_ENUM
#undef TP_OPT_INT
#undef TP_OPT_STR
#undef TP_OPT_CUSTOM
	NULL,
};

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

static int parse_step(struct parse_ctx *c, const char *name, struct tp_config *cfg)
{
	const char *v = c->get(name, c->env);
	cfg->step_source = TP_STEP_API;
	cfg->step_arg[0] = '\0';
	cfg->step_every = 1;
	if (!v || !strcmp(v, "api"))
		return 0;
	/* torch: traceprof_step() calls made by the Python side
	 * (scripts/traceprof/pyboot/traceprof_torch.py) when an optimizer's step()
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
 * Python side (scripts/traceprof/pyboot/traceprof_torch.py) acts on it; the library
 * only checks it, so that a typo is one clear line here. */
static const char *const pytorch_words[] = { "modules", "ops", "shapes" };

static int parse_pytorch(struct parse_ctx *c, const char *name, struct tp_config *cfg)
{
	const char *const *words = pytorch_words;
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

static int parse_trigger(struct parse_ctx *c, const char *name, struct tp_config *cfg)
{
	const char *v = c->get(name, c->env);
	cfg->trigger_signal = 0;
	if (!v)
		return 0;
	int sig = signal_by_name(v);
	if (!sig)
		return fail(c, name, v,
			    "expected a signal name such as SIGUSR2, SIGUSR1, SIGHUP or SIGRTMIN+N");
	cfg->trigger_signal = sig;
	return 0;
}

static int parse_schedule(struct parse_ctx *c, const char *name, struct tp_config *cfg)
{
	const char *sched = c->get(name, c->env);
	char why[300];
	if (!sched)
		return 0;
	if (strlen(sched) >= TP_CONFIG_STR)
		return fail(c, name, "...", "longer than 511 bytes");
	if (tp_schedule_parse(sched, &cfg->schedule, why, sizeof(why))) {
		tp_format(c->err, c->errlen,
			  "%s: %s; expected 'skip_first=N,wait=N,warmup=N,active=N,repeat=N'", name,
			  why);
		return -1;
	}
	strcpy(cfg->schedule_text, sched);
	return 0;
}

static int parse_filename(struct parse_ctx *c, const char *name, struct tp_config *cfg)
{
	if (parse_str(c, name, DEFAULT_FILENAME, 0, cfg->filename))
		return -1;
	if (strchr(cfg->filename, '/'))
		return fail(c, name, cfg->filename,
			    "must not contain '/'; put directories in TRACEPROF_FOLDER");
	return 0;
}

static int parse_buffer_events(struct parse_ctx *c, const char *name, struct tp_config *cfg)
{
	int64_t x;
	if (parse_int(c, name, 16, 1 << 24, 1 << 18, &x))
		return -1;
	if (x & (x - 1))
		return fail(c, name, c->get(name, c->env), "must be a power of two (e.g. 262144)");
	cfg->buffer_events = (uint64_t)x;
	return 0;
}

static int parse_zstd_level(struct parse_ctx *c, const char *name, struct tp_config *cfg)
{
	/* Negative levels are zstd's fast ones (zstd --fast=N); 0 would be
	 * zstd's "default" (3), which the user should name instead. */
	static const char levels[] = "1 to 19, or -1 to -10 for zstd's fast levels";
	int64_t x;
	if (parse_int_in(c, name, -10, 19, DEFAULT_ZSTD_LEVEL, levels, &x))
		return -1;
	if (x == 0) {
		char why[200];
		tp_format(why, sizeof(why), "not a level (zstd's 0 means 3: name it); use %s",
			  levels);
		return fail(c, name, c->get(name, c->env), why);
	}
	cfg->zstd_level = (int)x;
	return 0;
}

/* One function per row shape of common/options.def. */
#define TP_OPT_BOOL(var, field, dflt, ...)                                                     \
	if (parse_bool(&c, var, dflt, &cfg->field))                                            \
		return -1;
#define TP_OPT_ENUM(var, field, dflt, words, ...)                                              \
	{                                                                                      \
		static const char *const w[] = { TP_OPT_UNPAREN words, NULL };                 \
		if (parse_enum(&c, var, w, dflt, &cfg->field))                                 \
			return -1;                                                             \
	}
#define TP_OPT_INT(var, field, type, lo, hi, dflt, ...)                                              \
	if (parse_int(&c, var, lo, hi, dflt, &x))                                              \
		return -1;                                                                     \
	cfg->field = x;
#define TP_OPT_STR(var, field, dflt, allow_empty, ...)                                         \
	if (parse_str(&c, var, dflt, allow_empty, cfg->field))                                 \
		return -1;
#define TP_OPT_CUSTOM(var, tag, ...)                                                           \
	if (parse_##tag(&c, var, cfg))                                                         \
		return -1;
#define TP_OPT_UNPAREN(...) __VA_ARGS__

int tp_config_parse(struct tp_config *cfg, tp_config_getenv_fn get, void *env, char *err,
		    int errlen)
{
	struct parse_ctx c = { get, env, err, errlen };
	int64_t x;

	memset(cfg, 0, sizeof(*cfg));
	err[0] = '\0';
#include "common/options.def"
	(void)x;
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

#undef TP_OPT_BOOL
#undef TP_OPT_ENUM
#undef TP_OPT_INT
#undef TP_OPT_STR
#undef TP_OPT_CUSTOM

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

static const char *show_schedule(const struct tp_config *cfg, char *b, int n)
{
	(void)b;
	(void)n;
	return cfg->schedule.enabled ? cfg->schedule_text : "";
}

static const char *show_filename(const struct tp_config *cfg, char *b, int n)
{
	(void)b;
	(void)n;
	return cfg->filename;
}

static const char *show_buffer_events(const struct tp_config *cfg, char *b, int n)
{
	tp_format(b, n, "%llu", (unsigned long long)cfg->buffer_events);
	return b;
}

static const char *show_step(const struct tp_config *cfg, char *b, int n)
{
	static const char *const step_words[] = { "api", "nvtx", "call", "time" };
	if (cfg->step_source == TP_STEP_API)
		tp_format(b, n, "%s", cfg->step_arg[0] ? cfg->step_arg : "api");
	else if (cfg->step_source == TP_STEP_NVTX)
		tp_format(b, n, "nvtx:%s", cfg->step_arg);
	else if (cfg->step_source == TP_STEP_CALL)
		tp_format(b, n, "call:%s:%llu", cfg->step_arg, (unsigned long long)cfg->step_every);
	else
		tp_format(b, n, "%s:%llu", step_words[cfg->step_source & 3],
			  (unsigned long long)cfg->step_every);
	return b;
}

static const char *show_trigger(const struct tp_config *cfg, char *b, int n)
{
	tp_format(b, n, "%d", cfg->trigger_signal);
	return cfg->trigger_signal ? b : "";
}

static const char *show_zstd_level(const struct tp_config *cfg, char *b, int n)
{
	tp_format(b, n, "%d", cfg->zstd_level);
	return b;
}

static const char *show_pytorch(const struct tp_config *cfg, char *b, int n)
{
	int len = 0;
	b[0] = '\0';
	for (unsigned i = 0; i < 3; i++)
		if (cfg->pytorch & (1u << i))
			len += tp_format(b + len, n - len, "%s%s", len ? "," : "", pytorch_words[i]);
	return b;
}

/* The effective value of each row as text, as the variable would spell it. */
#define TP_OPT_BOOL(var, field, ...) fn(var, cfg->field ? "1" : "0", ctx);
#define TP_OPT_ENUM(var, field, dflt, words, ...)                                              \
	{                                                                                      \
		static const char *const w[] = { TP_OPT_UNPAREN words };                       \
		int i = cfg->field;                                                            \
		fn(var, w[i >= 0 && i < (int)(sizeof(w) / sizeof(w[0])) ? i : 0], ctx);       \
	}
#define TP_OPT_INT(var, field, ...)                                                            \
	tp_format(b, sizeof(b), "%lld", (long long)cfg->field);                                \
	fn(var, b, ctx);
#define TP_OPT_STR(var, field, ...) fn(var, cfg->field, ctx);
#define TP_OPT_CUSTOM(var, tag, ...) fn(var, show_##tag(cfg, b, sizeof(b)), ctx);

void tp_config_visit(const struct tp_config *cfg, tp_config_visit_fn fn, void *ctx)
{
	char b[TP_CONFIG_STR + 64];
#include "common/options.def"
}
