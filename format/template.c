#include "format/template.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/layout.h"
#include "common/log.h"

/* The variables, in scripts/layout.spec's order (the error message lists
 * them in that order; the command's python/traceprof/cli/runfiles.py reads
 * the same list).  A variable added there and not here is a -Wswitch error
 * in tpl_put_var(). */
#define TPL_ENUM(id, name) TPL_##id,
#define TPL_NAME(id, name) name,
enum tpl_var { TP_TEMPLATE_VARS(TPL_ENUM) TPL_NVARS };
static const char *const tpl_names[TPL_NVARS] = { TP_TEMPLATE_VARS(TPL_NAME) };

/* "{run_name} {rank} ..." for error messages. */
static void tpl_known(char *buf, size_t size)
{
	size_t o = 0;
	for (int i = 0; i < TPL_NVARS; i++) {
		size_t n = strlen(tpl_names[i]);
		if (o + n + 4 > size)
			break;
		if (i)
			buf[o++] = ' ';
		buf[o++] = '{';
		memcpy(buf + o, tpl_names[i], n);
		o += n;
		buf[o++] = '}';
	}
	buf[o] = '\0';
}

static int tpl_lookup(const char *name, size_t n)
{
	for (int i = 0; i < TPL_NVARS; i++) {
		if (strlen(tpl_names[i]) == n && !memcmp(tpl_names[i], name, n))
			return i;
	}
	return -1;
}

struct tpl_out {
	char *buf; /* NULL: only checking */
	size_t size;
	size_t len;
};

static void tpl_put(struct tpl_out *o, const char *s, size_t n)
{
	if (o->buf && o->len + n < o->size)
		memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* A string value made safe as (part of) one path component: '/' would
 * create folders the user did not ask for, and "." or ".." as a whole
 * component would point elsewhere. */
static void tpl_put_sanitised(struct tpl_out *o, const char *s)
{
	if (!strcmp(s, ".") || !strcmp(s, "..")) {
		tpl_put(o, "_", 1);
		return;
	}
	for (; *s; s++)
		tpl_put(o, *s == '/' ? "_" : s, 1);
}

static void tpl_put_i64(struct tpl_out *o, int64_t v)
{
	char tmp[24];
	int n = tp_format(tmp, sizeof(tmp), "%lld", (long long)v);
	tpl_put(o, tmp, (size_t)n);
}

static void tpl_put_var(struct tpl_out *o, int var, const struct tp_template_vars *v)
{
	switch ((enum tpl_var)var) {
	case TPL_NVARS:
		break;
	case TPL_RUN_NAME:
		tpl_put_sanitised(o, v->run_name);
		break;
	case TPL_RANK:
		tpl_put_i64(o, v->rank);
		break;
	case TPL_LOCAL_RANK:
		tpl_put_i64(o, v->local_rank);
		break;
	case TPL_WORLD_SIZE:
		tpl_put_i64(o, v->world_size);
		break;
	case TPL_LOCAL_WORLD_SIZE:
		tpl_put_i64(o, v->local_world_size);
		break;
	case TPL_NODE_RANK:
		tpl_put_i64(o, v->node_rank);
		break;
	case TPL_STEP:
	case TPL_BATCH:
		tpl_put_i64(o, v->step);
		break;
	case TPL_PID:
		tpl_put_i64(o, v->pid);
		break;
	case TPL_HOSTNAME:
		tpl_put_sanitised(o, v->hostname);
		break;
	}
}

/* Parses tmpl, expanding into o when v is given.  Returns 0 or -1 with a
 * message. */
static int tpl_walk(const char *tmpl, const struct tp_template_vars *v, struct tpl_out *o,
		    char *err, int errlen)
{
	char known[256];
	for (const char *p = tmpl; *p; p++) {
		if (*p == '{' && p[1] == '{') {
			tpl_put(o, "{", 1);
			p++;
		} else if (*p == '}' && p[1] == '}') {
			tpl_put(o, "}", 1);
			p++;
		} else if (*p == '}') {
			tp_format(err, errlen,
				"unmatched '}' at offset %zu in \"%s\" (write \"}}\" for a literal brace)",
				(size_t)(p - tmpl), tmpl);
			return -1;
		} else if (*p == '{') {
			const char *end = strchr(p + 1, '}');
			if (!end) {
				tp_format(err, errlen,
					"unmatched '{' at offset %zu in \"%s\" (write \"{{\" for a literal brace)",
					(size_t)(p - tmpl), tmpl);
				return -1;
			}
			int var = tpl_lookup(p + 1, (size_t)(end - p - 1));
			if (var < 0) {
				tpl_known(known, sizeof(known));
				tp_format(err, errlen, "unknown variable {%.*s} in \"%s\"; known: %s",
					(int)(end - p - 1), p + 1, tmpl, known);
				return -1;
			}
			if (v)
				tpl_put_var(o, var, v);
			p = end;
		} else {
			tpl_put(o, p, 1);
		}
	}
	return 0;
}

int tp_template_check(const char *tmpl, char *err, int errlen)
{
	struct tpl_out o = { NULL, 0, 0 };
	return tpl_walk(tmpl, NULL, &o, err, errlen);
}

int tp_template_expand(const char *tmpl, const struct tp_template_vars *v, char *out,
		       size_t outlen, char *err, int errlen)
{
	struct tpl_out o = { out, outlen, 0 };
	if (!out || outlen == 0) {
		tp_format(err, errlen, "no room to expand \"%s\"", tmpl);
		return -1;
	}
	out[0] = '\0';
	if (tpl_walk(tmpl, v, &o, err, errlen))
		return -1;
	if (o.len >= outlen || o.len > INT32_MAX) {
		tp_format(err, errlen, "\"%s\" expands to %zu bytes, more than the %zu allowed", tmpl,
			o.len, outlen - 1);
		out[0] = '\0';
		return -1;
	}
	out[o.len] = '\0';
	return (int)o.len;
}
