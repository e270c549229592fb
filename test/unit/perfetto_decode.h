/* A Perfetto trace decoded by Debian's protoc with Perfetto's published
 * schema (../shared/clients/perfetto_trace.proto from the repository's
 * root; TP_PERFETTO_PROTO overrides it, PROTOC the command) into packets of
 * (field path, value) entries, and the look-ups the checks of
 * test/unit/test_perfetto_writer.c use.  Included by that suite alone (its
 * helpers stay static, as they were in it). */
#ifndef TP_TEST_PERFETTO_DECODE_H
#define TP_TEST_PERFETTO_DECODE_H

#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char proto_dir[4096], proto_file[4096];

/* Finds the schema; NULL when present, else why not. */
static const char *find_schema(void)
{
	const char *p = getenv("TP_PERFETTO_PROTO");
	const char *top = getenv("TP_TOP");
	if (p && *p) {
		snprintf(proto_file, sizeof(proto_file), "%s", p);
	} else {
		snprintf(proto_file, sizeof(proto_file), "%s/../shared/clients/perfetto_trace.proto",
			 top && *top ? top : ".");
	}
	if (access(proto_file, R_OK))
		return "Perfetto's schema is not at ../shared/clients/perfetto_trace.proto "
		       "(TP_PERFETTO_PROTO)";
	snprintf(proto_dir, sizeof(proto_dir), "%s", proto_file);
	char *slash = strrchr(proto_dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(proto_dir, ".");
	const char *protoc = getenv("PROTOC") ? getenv("PROTOC") : "protoc";
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "%s --version >/dev/null 2>&1", protoc);
	if (system(cmd) != 0)
		return "no protoc (Debian's protobuf-compiler; scripts/install-deps)";
	return NULL;
}

/* One line of protoc's text output: its path of message fields, its field
 * and value, the number of the innermost block that holds it. */
struct ent {
	char path[160];
	char *val;
	int block;
};

struct pkt {
	struct ent *e;
	size_t n;
	char *text;
};

static struct pkt *pkts;
static size_t npkts;
static int protoc_rc;
static char *decoded;

static void parse(char *out)
{
	char stack[16][48];
	int blocks[16];
	int depth = 0, next_block = 0;
	struct pkt *p = NULL;
	char *start = NULL;
	/* strtok cuts out; a packet's text comes from this copy. */
	char *copy = strdup(out);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		while (*line == ' ')
			line++;
		size_t n = strlen(line);
		if (n >= 2 && !strcmp(line + n - 2, " {")) {
			ck_assert_int_lt(depth, 16);
			snprintf(stack[depth], sizeof(stack[0]), "%.*s", (int)(n - 2), line);
			blocks[depth] = ++next_block;
			if (depth == 0) {
				pkts = realloc(pkts, (npkts + 1) * sizeof(*pkts));
				p = &pkts[npkts++];
				memset(p, 0, sizeof(*p));
				start = line;
			}
			depth++;
			continue;
		}
		if (!strcmp(line, "}")) {
			ck_assert_int_gt(depth, 0);
			if (--depth == 0) {
				p->text = strndup(copy + (start - out), (size_t)(line - start));
				p = NULL;
			}
			continue;
		}
		char *colon = strstr(line, ": ");
		ck_assert_ptr_nonnull(colon);
		ck_assert_ptr_nonnull(p);
		p->e = realloc(p->e, (p->n + 1) * sizeof(*p->e));
		struct ent *x = &p->e[p->n++];
		x->path[0] = '\0';
		for (int i = 1; i < depth; i++) {
			strcat(x->path, stack[i]);
			strcat(x->path, ".");
		}
		strncat(x->path, line, (size_t)(colon - line));
		x->val = colon + 2;
		x->block = blocks[depth - 1];
	}
	free(copy);
	ck_assert_int_eq(depth, 0);
}

static void decode(const char *trace)
{
	char cmd[16384];
	const char *protoc = getenv("PROTOC") ? getenv("PROTOC") : "protoc";
	snprintf(cmd, sizeof(cmd), "%s --decode=perfetto.protos.Trace -I'%s' '%s' < '%s'", protoc,
		 proto_dir, proto_file, trace);
	/* Each test decodes afresh (CK_FORK=no runs them in one process). */
	for (size_t k = 0; k < npkts; k++) {
		free(pkts[k].e);
		free(pkts[k].text);
	}
	npkts = 0;
	free(decoded);
	FILE *f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	size_t cap = 1 << 20, len = 0;
	char *out = malloc(cap);
	size_t r;
	while ((r = fread(out + len, 1, cap - len - 1, f)) > 0) {
		len += r;
		if (cap - len < 4096)
			out = realloc(out, cap *= 2);
	}
	out[len] = '\0';
	protoc_rc = pclose(f);
	parse(out);
	decoded = out; /* the entries point into it: freed by the next decode */
}

/* The first value of path in p, or NULL. */
static const char *get(const struct pkt *p, const char *path)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->e[i].path, path))
			return p->e[i].val;
	return NULL;
}

static uint64_t getu(const struct pkt *p, const char *path)
{
	const char *v = get(p, path);
	return v ? strtoull(v, NULL, 10) : 0;
}

/* The name an interned iid stands for, from every packet's InternedData. */
static const char *interned(const char *kind, uint64_t iid)
{
	char ipath[96], npath[96];
	snprintf(ipath, sizeof(ipath), "interned_data.%s.iid", kind);
	snprintf(npath, sizeof(npath), "interned_data.%s.name", kind);
	for (size_t k = 0; k < npkts; k++) {
		const struct pkt *p = &pkts[k];
		for (size_t i = 0; i < p->n; i++)
			if (!strcmp(p->e[i].path, ipath) && strtoull(p->e[i].val, NULL, 10) == iid)
				for (size_t j = 0; j < p->n; j++)
					if (p->e[j].block == p->e[i].block &&
					    !strcmp(p->e[j].path, npath))
						return p->e[j].val;
	}
	return NULL;
}

/* An interned string value (InternedString: iid, str). */
static const char *interned_str(uint64_t iid)
{
	for (size_t k = 0; k < npkts; k++) {
		const struct pkt *p = &pkts[k];
		for (size_t i = 0; i < p->n; i++)
			if (!strcmp(p->e[i].path, "interned_data.debug_annotation_string_values.iid") &&
			    strtoull(p->e[i].val, NULL, 10) == iid)
				for (size_t j = 0; j < p->n; j++)
					if (p->e[j].block == p->e[i].block &&
					    !strcmp(p->e[j].path,
						    "interned_data.debug_annotation_string_values.str"))
						return p->e[j].val;
	}
	return NULL;
}

/* A track event's name: interned or literal, quoted as protoc prints it. */
static const char *ev_name(const struct pkt *p)
{
	const char *lit = get(p, "track_event.name");
	if (lit)
		return lit;
	uint64_t iid = getu(p, "track_event.name_iid");
	return iid ? interned("event_names", iid) : NULL;
}

static int is_type(const struct pkt *p, const char *type)
{
	const char *t = get(p, "track_event.type");
	return t && !strcmp(t, type);
}

/* The first packet that begins a slice or is an instant called name. */
static const struct pkt *find_event(const char *name)
{
	char q[256];
	snprintf(q, sizeof(q), "\"%s\"", name);
	for (size_t k = 0; k < npkts; k++) {
		const char *n = ev_name(&pkts[k]);
		if (n && !strcmp(n, q))
			return &pkts[k];
	}
	return NULL;
}

/* The value line of the top-level annotation called name in an event:
 * "field: value" of its first value (for arrays: the first element's). */
static const char *annotation(const struct pkt *p, const char *name, char *field, size_t fsize)
{
	char q[128];
	snprintf(q, sizeof(q), "\"%s\"", name);
	for (size_t i = 0; i < p->n; i++) {
		const struct ent *x = &p->e[i];
		if (strcmp(x->path, "track_event.debug_annotations.name_iid"))
			continue;
		const char *n = interned("debug_annotation_names", strtoull(x->val, NULL, 10));
		ck_assert_msg(n != NULL, "annotation name iid %s not interned", x->val);
		if (strcmp(n, q))
			continue;
		/* The entries after the name, up to the next annotation. */
		for (size_t j = i + 1; j < p->n; j++) {
			const char *path = p->e[j].path;
			if (!strcmp(path, "track_event.debug_annotations.name_iid"))
				break;
			const char *leaf = strrchr(path, '.') + 1;
			snprintf(field, fsize, "%s", leaf);
			return p->e[j].val;
		}
	}
	return NULL;
}

#define ASSERT_ARG(p, name, field, value)                                                   \
	do {                                                                                \
		char f_[64];                                                                \
		const char *v_ = annotation(p, name, f_, sizeof(f_));                       \
		ck_assert_msg(v_ != NULL, "no annotation %s", name);                        \
		ck_assert_str_eq(f_, field);                                                \
		ck_assert_str_eq(v_, value);                                                \
	} while (0)

#endif
