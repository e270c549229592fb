/* libFuzzer target for the configuration parser (common/config.c) and what
 * consumes its strings: the schedule (collector/schedule.c) and the file-name
 * templates (format/template.c).
 *
 * The input is an environment: entries separated by NUL bytes, each
 * "NAME=VALUE".  NAME is a full variable name, or a decimal index into
 * tp_config_names (short, so that the fuzzer finds every variable quickly).
 * Values may hold anything, newlines and invalid UTF-8 included.
 *
 * Checked: the parser returns 0 or -1; on -1 the message is one line (no
 * control character may reach the log unescaped... it is checked by
 * rel_matrix.sh end to end; here: NUL-terminated, within errlen, starting
 * with a known variable name and ": "); on 0 every field is within its
 * documented range, the visitor's strings are terminated, and the templates
 * either fail with a message or expand within the buffer, also into buffers
 * too small for them.
 *
 *   clang -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *         test/fuzz/fuzz_config.c common/config.c common/log.c \
 *         collector/schedule.c common/schedule_spec.c common/procfs.c common/fd.c format/template.c
 * See docs/development.md, "Fuzzing and sanitizers", for the 10-minute runs. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/schedule.h"
#include "common/config.h"
#include "format/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                          \
	do {                                                                              \
		if (!(c)) {                                                               \
			fprintf(stderr, "fuzz_config: check failed: %s (line %d)\n", #c, \
				__LINE__);                                                \
			abort();                                                          \
		}                                                                         \
	} while (0)

#define MAX_VARS 64

struct env {
	const char *name[MAX_VARS];
	const char *value[MAX_VARS];
	int n;
};

static const char *lookup(const char *name, void *ctx)
{
	struct env *e = ctx;
	/* The last definition wins, as with a real environment built by
	 * putenv in order. */
	for (int i = e->n - 1; i >= 0; i--)
		if (!strcmp(e->name[i], name))
			return e->value[i];
	return NULL;
}

static int nnames(void)
{
	int n = 0;
	while (tp_config_names[n])
		n++;
	return n;
}

static void visit(const char *name, const char *value, void *ctx)
{
	(void)ctx;
	CHECK(name && value);
	CHECK(!strncmp(name, "TRACEPROF_", 10));
	CHECK(strlen(value) < 2 * TP_CONFIG_STR);
}

static void check_template(const char *tmpl)
{
	char err[300];
	if (tp_template_check(tmpl, err, sizeof(err)) < 0) {
		CHECK(err[0] && strlen(err) < sizeof(err));
		return;
	}
	struct tp_template_vars v;
	memset(&v, 0, sizeof(v));
	strcpy(v.run_name, "../run/name");
	strcpy(v.hostname, "..");
	v.rank = 3;
	v.world_size = 4;
	v.local_world_size = 2;
	v.pid = 12345;
	v.step = INT64_MAX;
	v.launcher = "none";
	static const size_t sizes[] = { 1, 2, 7, 64, PATH_MAX };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *out = malloc(sizes[i]);
		CHECK(out);
		int n = tp_template_expand(tmpl, &v, out, sizes[i], err, sizeof(err));
		if (n >= 0) {
			CHECK((size_t)n < sizes[i]);
			CHECK(strlen(out) == (size_t)n);
			/* A value never adds a '/' or a whole "." / ".." component
			 * of its own: the only slashes are the template's. */
		} else {
			CHECK(err[0]);
			CHECK(out[0] == '\0');
		}
		free(out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char names_idx[MAX_VARS][8];
	char *copy = malloc(size + 1);
	CHECK(copy);
	memcpy(copy, data, size);
	copy[size] = '\0';
	struct env e = { .n = 0 };
	int nn = nnames();
	char *p = copy, *end = copy + size;
	while (p < end && e.n < MAX_VARS) {
		size_t len = strlen(p);
		char *eq = strchr(p, '=');
		if (eq) {
			*eq = '\0';
			const char *name = p;
			char *num_end;
			long k = strtol(p, &num_end, 10);
			if (*p && !*num_end && k >= 0 && k < nn)
				name = tp_config_names[k];
			else if (*p && !*num_end) {
				snprintf(names_idx[e.n], sizeof(names_idx[e.n]), "X%ld", k % 1000);
				name = names_idx[e.n];
			}
			e.name[e.n] = name;
			e.value[e.n] = eq + 1;
			e.n++;
		}
		p += len + 1;
	}

	struct tp_config cfg;
	char err[600];
	int rc = tp_config_parse(&cfg, lookup, &e, err, sizeof(err));
	CHECK(rc == 0 || rc == -1);
	CHECK(memchr(err, '\0', sizeof(err)));
	if (rc) {
		int known = 0;
		for (int i = 0; tp_config_names[i]; i++) {
			size_t l = strlen(tp_config_names[i]);
			if (!strncmp(err, tp_config_names[i], l) && err[l] == ':' &&
			    err[l + 1] == ' ')
				known = 1;
		}
		CHECK(known);
		/* The same with a tiny message buffer: cut, still terminated. */
		char small[16];
		struct tp_config cfg2;
		CHECK(tp_config_parse(&cfg2, lookup, &e, small, sizeof(small)) == -1);
		CHECK(memchr(small, '\0', sizeof(small)));
	} else {
		CHECK(cfg.enable == 0 || cfg.enable == 1);
		CHECK(cfg.log_level >= 0 && cfg.log_level <= 3);
		CHECK(cfg.buffer_events >= 16 && cfg.buffer_events <= (1u << 24));
		CHECK(!(cfg.buffer_events & (cfg.buffer_events - 1)));
		CHECK(cfg.flush_ms >= 1 && cfg.flush_ms <= 10000);
		CHECK(cfg.num_traces_to_keep >= -1);
		CHECK(cfg.stack_depth >= 1 && cfg.stack_depth <= 56);
		CHECK(cfg.zstd_level != 0 && cfg.zstd_level >= -10 && cfg.zstd_level <= 19);
		CHECK(cfg.zstd_threads >= 0 && cfg.zstd_threads <= 16);
		CHECK(cfg.max_file_mb >= 1);
		CHECK(cfg.step_every >= 1);
		CHECK(cfg.folder[0] && cfg.filename[0]);
		CHECK(!strchr(cfg.filename, '/'));
		CHECK(memchr(cfg.folder, '\0', sizeof(cfg.folder)));
		CHECK(memchr(cfg.filename, '\0', sizeof(cfg.filename)));
		CHECK(memchr(cfg.run_name, '\0', sizeof(cfg.run_name)));
		CHECK(memchr(cfg.on_save, '\0', sizeof(cfg.on_save)));
		CHECK(memchr(cfg.step_arg, '\0', sizeof(cfg.step_arg)));
		tp_config_visit(&cfg, visit, NULL);
		if (cfg.schedule.enabled) {
			CHECK(cfg.schedule.active > 0);
			/* Every step has an action, and consecutive ones a defined
			 * transition; probe around the interesting boundaries. */
			const struct tp_schedule *s = &cfg.schedule;
			uint64_t probes[] = { 0, 1, s->skip_first, s->skip_first + s->wait,
					      s->skip_first + s->wait + s->warmup,
					      s->skip_first + s->wait + s->warmup + s->active,
					      UINT32_MAX, UINT64_MAX - 1 };
			for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
				enum tp_action a = tp_schedule_action(s, probes[i]);
				enum tp_action b = tp_schedule_action(s, probes[i] + 1);
				CHECK(a <= TP_ACT_RECORD_AND_SAVE && b <= TP_ACT_RECORD_AND_SAVE);
				(void)tp_schedule_transition(a, b);
				(void)tp_schedule_transition(a, TP_ACT_EXIT);
			}
		}
		check_template(cfg.folder);
		check_template(cfg.filename);
	}
	/* The schedule parser on the raw input too (it sees NUL-free text). */
	struct tp_schedule s;
	char serr[300];
	if (tp_schedule_parse(copy, &s, serr, sizeof(serr)) == 0)
		CHECK(s.active > 0);
	else
		CHECK(serr[0]);
	free(copy);
	return 0;
}
