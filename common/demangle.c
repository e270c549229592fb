/* C++ name demangling; see common/demangle.h. */
#include "common/demangle.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"

typedef char *(*dm_fn)(const char *, char *, size_t *, int *);

/* __cxa_demangle once found; NULL until then.  Relaxed is enough: the
 * function it points to is in a loaded object, whose code the dynamic
 * linker made visible before dlsym returned its address. */
static _Atomic(void *) dm_found;

static dm_fn dm_lookup(void)
{
	void *p = atomic_load_explicit(&dm_found, memory_order_relaxed);
	if (!p) {
		p = tp_dl_sym(RTLD_DEFAULT, "__cxa_demangle");
		if (p)
			atomic_store_explicit(&dm_found, p, memory_order_relaxed);
	}
	dm_fn fn;
	memcpy(&fn, &p, sizeof(fn));
	return fn;
}

/* ---- bounding the work ---------------------------------------------------
 *
 * __cxa_demangle has no output limit and libstdc++ exports no interface that
 * stops early: a valid name of 200 bytes whose templates refer back to
 * earlier ones (P<X, X, X, X>, X itself such a P, each X a two-byte
 * back-reference) demangles to 20 MB in 130 ms, and 224 bytes to 320 MB in
 * 3.5 s.  So before calling it, dm_estimate() computes an upper bound of
 * the demangled length from the mangled name alone, with the Itanium ABI's
 * substitution table holding lengths instead of strings (linear time, no
 * allocation).  A name whose bound passes DM_WORK_MAX is not demangled.
 * Constructs the estimate does not follow (expressions in template
 * arguments, decltype, vector and vendor types) give no bound: those names
 * are demangled as before (and cut), so a blow-up built with one of them
 * still costs its full demangling once.  A fallback bound for them (every
 * back-reference doubling the length) would have refused 288 of the 1,063
 * such names in libcublasLt, real kernels that demangle to a few KB.
 * Measured on kernel names from libcublasLt (10,532), cuDNN (7,614) and
 * cuFFT (1,310): the bound is never below the real length, at most 7.3
 * times it, and refuses none. */
#define DM_WORK_MAX (1u << 20)
#define DM_SUBS 4096
#define DM_DEPTH 128
#define DM_BIG ((uint64_t)1 << 40) /* saturation: past any bound */

struct dm_est {
	const char *p;
	uint64_t subs[DM_SUBS]; /* substitution candidates' lengths */
	unsigned nsubs;
	uint64_t targs[64]; /* the latest outermost template arguments */
	unsigned ntargs;
	unsigned depth;
	int fail;
};

static uint64_t dm_add(uint64_t a, uint64_t b)
{
	return a + b > DM_BIG ? DM_BIG : a + b;
}

static void dm_sub(struct dm_est *e, uint64_t len)
{
	if (e->nsubs < DM_SUBS)
		e->subs[e->nsubs++] = len;
	else
		e->fail = 1;
}

static uint64_t dm_number(struct dm_est *e)
{
	uint64_t n = 0;
	if (*e->p == 'n')
		e->p++;
	if (*e->p < '0' || *e->p > '9') {
		e->fail = 1;
		return 0;
	}
	while (*e->p >= '0' && *e->p <= '9' && n < DM_BIG)
		n = n * 10 + (uint64_t)(*e->p++ - '0');
	return n;
}

/* <seq-id>_ or _ after S (base 36), <number>_ or _ after T (base 10): the
 * index, 0 for "_". */
static uint64_t dm_index(struct dm_est *e, unsigned base)
{
	uint64_t n = 0;
	if (*e->p == '_') {
		e->p++;
		return 0;
	}
	while ((*e->p >= '0' && *e->p <= '9') || (base > 10 && *e->p >= 'A' && *e->p <= 'Z')) {
		int d = *e->p <= '9' ? *e->p - '0' : *e->p - 'A' + 10;
		n = n * base + (uint64_t)d;
		if (n > DM_BIG)
			break;
		e->p++;
	}
	if (*e->p != '_') {
		e->fail = 1;
		return 0;
	}
	e->p++;
	return n + 1;
}

static uint64_t dm_type(struct dm_est *e);
static uint64_t dm_name(struct dm_est *e, int as_type);
static uint64_t dm_encoding(struct dm_est *e);

static uint64_t dm_source_name(struct dm_est *e)
{
	uint64_t n = dm_number(e);
	if (e->fail || strnlen(e->p, n) < n) {
		e->fail = 1;
		return 0;
	}
	e->p += n;
	return n + 21; /* "(anonymous namespace)" for _GLOBAL__N */
}

static uint64_t dm_template_args(struct dm_est *e, int outer)
{
	uint64_t len = 2, args[64];
	unsigned n = 0;
	if (++e->depth > DM_DEPTH) {
		e->fail = 1;
		return 0;
	}
	e->p++; /* I */
	while (*e->p && *e->p != 'E' && !e->fail) {
		uint64_t a;
		if (*e->p == 'L') {
			e->p++;
			if (e->p[0] == '_' && e->p[1] == 'Z') {
				e->p += 2;
				a = dm_encoding(e);
			} else {
				a = dm_type(e);
				while (*e->p && *e->p != 'E') {
					e->p++;
					a++;
				}
			}
			if (*e->p != 'E')
				e->fail = 1;
			e->p++;
			a += 8;
		} else if (*e->p == 'J') {
			a = dm_template_args(e, 0);
		} else if (*e->p == 'X') {
			e->fail = 1;
			a = 0;
		} else {
			a = dm_type(e);
		}
		if (n < 64)
			args[n++] = a;
		len = dm_add(len, dm_add(a, 2));
	}
	if (*e->p != 'E')
		e->fail = 1;
	else
		e->p++;
	if (outer) {
		memcpy(e->targs, args, n * sizeof(args[0]));
		e->ntargs = n;
	}
	e->depth--;
	return len;
}

/* A reference back: S_, S<seq>_, the std:: abbreviations. */
static uint64_t dm_subst(struct dm_est *e)
{
	e->p++; /* S */
	switch (*e->p) {
	case 't':
		e->fail = 1; /* callers handle St */
		return 0;
	case 'a': case 'b': case 's': case 'i': case 'o': case 'd':
		e->p++;
		return 72; /* std::basic_string<char, ...> at most */
	default: {
		uint64_t i = dm_index(e, 36);
		if (e->fail || i >= e->nsubs) {
			e->fail = 1;
			return 0;
		}
		return e->subs[i];
	}
	}
}

static uint64_t dm_unqualified(struct dm_est *e)
{
	if (*e->p == 'L') /* internal linkage */
		e->p++;
	char c = *e->p;
	if (c >= '0' && c <= '9')
		return dm_source_name(e);
	if (c == 'U' && e->p[1] == 't') {
		e->p += 2;
		while (*e->p >= '0' && *e->p <= '9')
			e->p++;
		if (*e->p++ != '_')
			e->fail = 1;
		return 40;
	}
	if (c == 'U' && e->p[1] == 'l') {
		e->p += 2;
		uint64_t len = 40;
		while (*e->p && *e->p != 'E' && !e->fail)
			len = dm_add(len, dm_add(dm_type(e), 2));
		if (*e->p++ != 'E')
			e->fail = 1;
		while (*e->p >= '0' && *e->p <= '9')
			e->p++;
		if (*e->p++ != '_')
			e->fail = 1;
		return len;
	}
	if (c >= 'a' && c <= 'z' && e->p[1] >= 'a' && e->p[1] <= 'z') {
		/* An operator; "cv" is followed by a type, "li" by a name. */
		e->p += 2;
		if (c == 'c' && e->p[-1] == 'v')
			return dm_add(dm_type(e), 10);
		if (c == 'l' && e->p[-1] == 'i')
			return dm_add(dm_source_name(e), 12);
		return 20;
	}
	e->fail = 1;
	return 0;
}

/* <nested-name> after N: each prefix is a candidate, the whole name too
 * when it names a type. */
static uint64_t dm_nested(struct dm_est *e, int as_type)
{
	uint64_t len = 0, last = 0;
	int pending = 0; /* a prefix not yet added as a candidate */
	e->p++; /* N */
	while (*e->p == 'r' || *e->p == 'V' || *e->p == 'K' || *e->p == 'R' || *e->p == 'O') {
		e->p++;
		len += 9;
	}
	while (*e->p && *e->p != 'E' && !e->fail) {
		if (pending)
			dm_sub(e, len);
		pending = 1;
		if (*e->p == 'I') {
			len = dm_add(len, dm_template_args(e, e->depth == 1));
		} else if (*e->p == 'S' && e->p[1] == 't') {
			e->p += 2;
			len = dm_add(len, 5);
			pending = 0;
		} else if (*e->p == 'S') {
			len = dm_add(len, dm_subst(e));
			pending = 0;
		} else if (*e->p == 'T') {
			e->p++;
			uint64_t i = dm_index(e, 10);
			if (i >= e->ntargs)
				e->fail = 1;
			len = dm_add(len, i < e->ntargs ? e->targs[i] : 0);
		} else if ((*e->p == 'C' || *e->p == 'D') && e->p[1] >= '0' && e->p[1] <= '9') {
			e->p += 2;
			len = dm_add(len, last + 2);
			continue;
		} else if (*e->p == 'C' && e->p[1] == 'I') {
			e->fail = 1;
		} else {
			last = dm_unqualified(e);
			len = dm_add(len, dm_add(last, 2));
			while (*e->p == 'B') { /* abi tags */
				e->p++;
				len = dm_add(len, dm_add(dm_source_name(e), 7));
			}
		}
	}
	if (*e->p != 'E')
		e->fail = 1;
	else
		e->p++;
	if (as_type && pending)
		dm_sub(e, len);
	return len;
}

static uint64_t dm_name(struct dm_est *e, int as_type)
{
	uint64_t len;
	if (++e->depth > DM_DEPTH) {
		e->fail = 1;
		return 0;
	}
	switch (*e->p) {
	case 'N':
		len = dm_nested(e, as_type);
		break;
	case 'Z': /* local name: Z <encoding> E <entity> [discriminator] */
		e->p++;
		len = dm_encoding(e);
		if (*e->p++ != 'E') {
			e->fail = 1;
			break;
		}
		if (*e->p == 's')
			e->p++;
		else
			len = dm_add(len, dm_name(e, 0));
		if (*e->p == '_') {
			e->p++;
			if (*e->p == '_')
				e->p++;
			while (*e->p >= '0' && *e->p <= '9')
				e->p++;
			if (*e->p == '_')
				e->p++;
		}
		len = dm_add(len, 20);
		break;
	case 'S':
		if (e->p[1] == 't') {
			e->p += 2;
			len = dm_add(dm_unqualified(e), 5);
			if (*e->p == 'I') {
				dm_sub(e, len);
				len = dm_add(len, dm_template_args(e, e->depth == 1));
			}
		} else {
			len = dm_subst(e);
			if (*e->p == 'I')
				len = dm_add(len, dm_template_args(e, e->depth == 1));
		}
		if (as_type)
			dm_sub(e, len);
		break;
	default:
		len = dm_unqualified(e);
		if (*e->p == 'I') {
			dm_sub(e, len);
			len = dm_add(len, dm_template_args(e, e->depth == 1));
		}
		if (as_type)
			dm_sub(e, len);
		break;
	}
	e->depth--;
	return len;
}

static uint64_t dm_type(struct dm_est *e)
{
	uint64_t len;
	char c = *e->p;
	if (!c || e->fail) {
		e->fail = 1;
		return 0;
	}
	if (++e->depth > DM_DEPTH) {
		e->fail = 1;
		return 0;
	}
	if (strchr("vwbcahstijlmxynofdegz", c)) {
		e->p++;
		len = 20;
	} else if (c == 'D' && e->p[1] && strchr("nacsiufdeh", e->p[1])) {
		e->p += 2;
		len = 20;
	} else if (c == 'D' && e->p[1] == 'p') {
		e->p += 2;
		len = dm_add(dm_type(e), 3);
		dm_sub(e, len);
	} else if (c == 'r' || c == 'V' || c == 'K' || c == 'P' || c == 'R' || c == 'O') {
		e->p++;
		len = dm_add(dm_type(e), 9);
		dm_sub(e, len);
	} else if (c == 'F') {
		e->p++;
		if (*e->p == 'Y')
			e->p++;
		len = 4;
		while (*e->p && *e->p != 'E' && !e->fail) {
			if ((*e->p == 'R' || *e->p == 'O') && e->p[1] == 'E') {
				e->p++;
				continue;
			}
			len = dm_add(len, dm_add(dm_type(e), 2));
		}
		if (*e->p++ != 'E')
			e->fail = 1;
		dm_sub(e, len);
	} else if (c == 'A') {
		e->p++;
		len = 4;
		while (*e->p >= '0' && *e->p <= '9') {
			e->p++;
			len++;
		}
		if (*e->p++ != '_')
			e->fail = 1;
		len = dm_add(len, dm_type(e));
		dm_sub(e, len);
	} else if (c == 'M') {
		e->p++;
		len = dm_add(dm_type(e), dm_add(dm_type(e), 6));
		dm_sub(e, len);
	} else if (c == 'T') {
		e->p++;
		uint64_t i = dm_index(e, 10);
		if (i >= e->ntargs)
			e->fail = 1;
		len = i < e->ntargs ? e->targs[i] : 0;
		dm_sub(e, len);
		if (*e->p == 'I') {
			len = dm_add(len, dm_template_args(e, 0));
			dm_sub(e, len);
		}
	} else if (c == 'S' && e->p[1] != 't') {
		/* A reference: a candidate already, unless template arguments
		 * follow (then the template-id is a new one). */
		len = dm_subst(e);
		if (*e->p == 'I') {
			len = dm_add(len, dm_template_args(e, 0));
			dm_sub(e, len);
		}
	} else if (c == 'N' || c == 'Z' || c == 'S' || (c >= '0' && c <= '9')) {
		len = dm_name(e, 1);
	} else {
		e->fail = 1;
		len = 0;
	}
	e->depth--;
	return len;
}

static uint64_t dm_encoding(struct dm_est *e)
{
	uint64_t len = dm_name(e, 0);
	/* The parameter types (after a return type for a template). */
	while (*e->p && *e->p != 'E' && *e->p != '.' && !e->fail)
		len = dm_add(len, dm_add(dm_type(e), 2));
	if (*e->p == '.') /* a clone suffix: ".cold", ".isra.0" */
		len = dm_add(len, strlen(e->p) + 4);
	return dm_add(len, 2);
}

/* An upper bound of the demangled length of name ("_Z..."), or 0 when the
 * estimate cannot follow the name. */
static uint64_t dm_estimate(const char *name)
{
	struct dm_est *e = calloc(1, sizeof(*e));
	if (!e)
		return 0;
	e->p = name + 2;
	uint64_t len = dm_encoding(e);
	int ok = !e->fail && !*e->p;
	free(e);
	return ok ? len : 0;
}

/* Names cut at TP_DEMANGLE_MAX, and names left mangled because their
 * demangled form passes DM_WORK_MAX: counted for the trace's footer.
 * Relaxed: counts only, read once a window. */
static _Atomic uint64_t dm_cut, dm_refused;

uint64_t tp_demangle_cut_count(void)
{
	return atomic_load_explicit(&dm_cut, memory_order_relaxed);
}

uint64_t tp_demangle_refused_count(void)
{
	return atomic_load_explicit(&dm_refused, memory_order_relaxed);
}

/* Cuts out (malloc'd) to TP_DEMANGLE_MAX bytes with "..." at its end, on a
 * UTF-8 character boundary. */
static char *dm_cut_name(char *out)
{
	size_t n = strlen(out);
	if (n <= TP_DEMANGLE_MAX)
		return out;
	size_t keep = TP_DEMANGLE_MAX - 3;
	while (keep && ((unsigned char)out[keep] & 0xC0) == 0x80)
		keep--;
	memcpy(out + keep, "...", 4);
	atomic_fetch_add_explicit(&dm_cut, 1, memory_order_relaxed);
	char *small = realloc(out, keep + 4);
	return small ? small : out;
}

char *tp_demangle(const char *name)
{
	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	dm_fn fn = dm_lookup();
	if (!fn)
		return NULL;
	if (dm_estimate(name) > DM_WORK_MAX) {
		atomic_fetch_add_explicit(&dm_refused, 1, memory_order_relaxed);
		return NULL;
	}
	int status = -1;
	char *out = fn(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return dm_cut_name(out);
}

const char *tp_demangle_into(const char *name, char *buf, size_t size)
{
	char *d = tp_demangle(name);
	if (!d || !size) {
		free(d);
		return name;
	}
	size_t n = strlen(d);
	if (n >= size)
		n = size - 1;
	memcpy(buf, d, n);
	buf[n] = '\0';
	free(d);
	return buf;
}
