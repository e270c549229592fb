#include "collector/nvtx_decode.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "collector/annos.h"
#include "collector/nvtx_payload_decode.h"
#include "common/clock.h"
#include "common/layout.h"

/* ---- registries (written by program threads) --------------------------- */

#define DOMAIN_NAME 128
#define MAX_THREAD_NAMES 1024
#define THREAD_NAME 64

/* A domain: its name, made once by nvtxDomainCreate and never freed (the
 * program's handle points to it, and records carry its address until the
 * last window that holds them is written).  No table: the number of domains
 * is the program's. */
struct nv_domain {
	char name[DOMAIN_NAME];
};

/* A slot is claimed with fetch_add, filled, then published: the release
 * store of `tid` pairs with the acquire load of the reader, so a reader
 * never sees a half-written name.  A name that finds the table full is not
 * kept and is counted in `tnames_lost` (the footer's thread_names_lost). */
static struct {
	_Atomic int64_t tid; /* 0 until published */
	char name[THREAD_NAME];
} tnames[MAX_THREAD_NAMES];
/* 64 bits: claims go on past the table's end (each one a counted loss) and
 * must not wrap back into it. */
static _Atomic uint64_t ntnames;
/* Relaxed: a count, read for the footer; nothing is ordered by it. */
static _Atomic uint64_t tnames_lost;

uint64_t tp_nvtx_domain_add(const char *name, size_t len)
{
	struct nv_domain *d = malloc(sizeof(*d));
	if (!d)
		return 0;
	if (len >= DOMAIN_NAME)
		len = DOMAIN_NAME - 1;
	memcpy(d->name, name, len);
	d->name[len] = '\0';
	/* The flush thread reads the name after the record that carries the
	 * address: the ring's release store of head (after this thread, or one
	 * the program handed the handle to, wrote the record) pairs with its
	 * acquire load there, so the name is complete when it is read. */
	return (uint64_t)(uintptr_t)d;
}

const char *tp_nvtx_domain_name(uint64_t id)
{
	return id ? ((const struct nv_domain *)(uintptr_t)id)->name : NULL;
}

/* The newest name given to tid (the table is searched from its end), or
 * NULL: a published slot's name is complete and never changes. */
static const char *tn_find(int64_t tid)
{
	uint64_t n = atomic_load_explicit(&ntnames, memory_order_relaxed);
	if (n > MAX_THREAD_NAMES)
		n = MAX_THREAD_NAMES;
	for (uint64_t i = n; i-- > 0;)
		/* Pairs with the release store in tp_nvtx_thread_name_set(). */
		if (atomic_load_explicit(&tnames[i].tid, memory_order_acquire) == tid)
			return tnames[i].name;
	return NULL;
}

void tp_nvtx_thread_name_set(int64_t tid, const char *name, size_t len)
{
	if (len >= THREAD_NAME)
		len = THREAD_NAME - 1;
	/* The same name again needs no slot, so that a program that names its
	 * threads over and over does not fill the table. */
	const char *had = tn_find(tid);
	if (had && strnlen(had, THREAD_NAME) == len && !memcmp(had, name, len))
		return;
	uint64_t i = atomic_fetch_add_explicit(&ntnames, 1, memory_order_relaxed);
	if (i >= MAX_THREAD_NAMES) {
		atomic_fetch_add_explicit(&tnames_lost, 1, memory_order_relaxed);
		return;
	}
	memcpy(tnames[i].name, name, len);
	tnames[i].name[len] = '\0';
	/* Pairs with the acquire load in tn_find(). */
	atomic_store_explicit(&tnames[i].tid, tid, memory_order_release);
}

uint64_t tp_nvtx_thread_names_lost(void)
{
	return atomic_load_explicit(&tnames_lost, memory_order_relaxed);
}

int tp_nvtx_thread_name_get(int64_t tid, char *out, size_t size)
{
	const char *name = tn_find(tid);
	if (!name)
		return -1;
	size_t len = strnlen(name, THREAD_NAME);
	if (len >= size)
		len = size - 1;
	memcpy(out, name, len);
	out[len] = '\0';
	return 0;
}

/* ---- pairing (flush thread) --------------------------------------------- */

struct open_range {
	uint64_t start; /* ticks */
	uint64_t id;	/* range id (start/end) or level (push/pop) */
	int64_t tid;
	uint64_t domain;
	uint32_t category;
	uint32_t len;
	/* An NVTX payload copied from the record (has_payload), decoded when
	 * the range is written. */
	uint32_t has_payload;
	struct tp_nvtx_payload_hdr pl_hdr;
	unsigned char pl[TP_NVTX_PAYLOAD_MAX];
	char name[TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES];
};

struct range_list {
	struct open_range *items;
	size_t n, cap;
};

/* Push/pop ranges of every thread, and start/end ranges: both few at a
 * time (the depth of the program's annotation nesting), so linear scans. */
static struct range_list pushed, started;
/* Ends converted before their start: the flush thread drains one thread's
 * ring after another, so an end on another thread may come first.  `start`
 * holds the end's ticks here. */
static struct range_list ended;

void tp_nvtx_reset(void)
{
	free(pushed.items);
	free(started.items);
	free(ended.items);
	memset(&pushed, 0, sizeof(pushed));
	memset(&started, 0, sizeof(started));
	memset(&ended, 0, sizeof(ended));
}

static struct open_range *list_add(struct range_list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct open_range *items = realloc(l->items, cap * sizeof(*items));
		if (!items)
			return NULL;
		l->items = items;
		l->cap = cap;
	}
	return &l->items[l->n++];
}

static void list_del(struct range_list *l, size_t i)
{
	memmove(&l->items[i], &l->items[i + 1], (l->n - i - 1) * sizeof(l->items[0]));
	l->n--;
}

#define NV_ARGS (3 + TP_NVTX_PAYLOAD_ARGS)

/* The args of an NVTX event: "domain", "category", "unfinished", each when
 * it applies, then the fields of its payload (pl, or NULL); returns their
 * number (args has room for NV_ARGS). */
static unsigned nv_args(struct tp_arg *args, uint64_t domain, uint32_t category, int unfinished,
			const struct tp_nvtx_payload_hdr *hdr, const unsigned char *pl)
{
	const char *dn = tp_nvtx_domain_name(domain);
	unsigned n = 0;
	if (dn)
		args[n++] = TP_ARG(str, "domain", dn, strlen(dn), 0);
	if (category)
		args[n++] = TP_ARG(u64, "category", category);
	if (unfinished)
		args[n++] = TP_ARG(bool, "unfinished", 1);
	if (hdr)
		n += tp_nvtx_payload_args(domain, hdr, pl, args + n);
	return n;
}

/* ---- PyTorch's NVTX emission -------------------------------------------- */

/* PyTorch's NVTX emission (--pytorch shapes, and ops where the library's
 * observer cannot run: python/traceprof/pyboot/traceprof_torch.py) names
 * each range "NAME[, seq = N][, op_id = N][, sizes = [[..], ..]]
 * [, input_op_ids = [..]]" (torch/csrc/profiler/util.cpp, getNvtxStr).  As
 * one name per call, that text defeats every reader's grouping by name, so
 * it is taken apart here into what torch.profiler writes: the op's name,
 * "Sequence number" and "Input Dims". */
struct nv_torch {
	size_t name_len;
	int64_t seq;	   /* -1: none */
	const char *dims;  /* "[[32, 8], [8]]", checked to be a JSON array of
			    * arrays of integers; NULL: none */
	size_t dims_len;
};

/* Whether s[0..n) is "[" then "[ints]" items, ", "-separated, then "]":
 * the text of PyTorch's shapesToStr, which is then JSON as it stands.  A
 * name cut at the record's size fails here and loses its dims only. */
static int nv_dims_ok(const char *s, size_t n)
{
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '[') {
			if (++depth > 2)
				return 0;
		} else if (c == ']') {
			if (--depth < 0)
				return 0;
			if (!depth)
				return i == n - 1 && s[0] == '[';
		} else if (!((c >= '0' && c <= '9') || c == '-' || c == ',' || c == ' ') || !depth) {
			return 0;
		}
	}
	return 0;
}

/* The value of a "KEY = " field at s[0..n) (up to the next ", " outside
 * brackets); its length. */
static size_t nv_field_len(const char *s, size_t n)
{
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '[')
			depth++;
		else if (s[i] == ']')
			depth--;
		else if (!depth && s[i] == ',' && i + 1 < n && s[i + 1] == ' ')
			return i;
	}
	return n;
}

/* 1 when name is PyTorch's NVTX text, with its parts in *o. */
static int nv_torch_parse(const char *name, size_t len, struct nv_torch *o)
{
	static const char *const keys[] = { ", seq = ", ", op_id = ", ", sizes = ",
					    ", input_op_ids = " };
	const char *first = NULL;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *f = memmem(name, len, keys[k], strlen(keys[k]));
		if (f && (!first || f < first))
			first = f;
	}
	if (!first || first == name)
		return 0;
	o->name_len = (size_t)(first - name);
	o->seq = -1;
	o->dims = NULL;
	o->dims_len = 0;
	/* The fields, each ", KEY = VALUE", in any order; anything else: not
	 * PyTorch's text, and the name stays as it was. */
	const char *p = first, *end = name + len;
	while (p < end) {
		size_t k;
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if ((size_t)(end - p) >= strlen(keys[k]) &&
			    !memcmp(p, keys[k], strlen(keys[k])))
				break;
		if (k == sizeof(keys) / sizeof(keys[0]))
			return 0;
		p += strlen(keys[k]);
		size_t vl = nv_field_len(p, (size_t)(end - p));
		if (k == 0) {
			int64_t v = 0;
			size_t i = 0;
			for (; i < vl && i < 18 && p[i] >= '0' && p[i] <= '9'; i++)
				v = v * 10 + (p[i] - '0');
			if (!i || i != vl)
				return 0;
			o->seq = v;
		} else if (k == 2 && nv_dims_ok(p, vl)) {
			o->dims = p;
			o->dims_len = vl;
		}
		p += vl;
	}
	return 1;
}

/* Whether an op of PyTorch's NVTX text is an operator or autograd node
 * (torch.profiler's TP_CAT_CPU_OP: "aten::mm", "autograd::engine::...",
 * "AddmmBackward0") rather than a record_function() range (its
 * TP_CAT_USER_ANNOTATION: "my_range", "Optimizer.step#SGD.step"): the text
 * does not say which RecordScope it came from, the names do. */
static int nv_torch_is_op(const char *name, size_t len)
{
	if (memmem(name, len, "::", 2))
		return 1;
	size_t i = len;
	while (i && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	return i < len && i >= 8 && !memcmp(name + i - 8, "Backward", 8);
}

/* A user_annotation slice, kept for the GPU side's gpu_user_annotation
 * (collector/annos.h); or, for PyTorch's NVTX text, the slice
 * torch.profiler writes for that op. */
static void nv_slice(struct tp_writer *out, const char *name, size_t len, int64_t pid,
		     int64_t tid, uint64_t start_ns, uint64_t end_ns, uint64_t domain,
		     uint32_t category, int unfinished, const struct tp_nvtx_payload_hdr *hdr,
		     const unsigned char *pl)
{
	struct tp_arg args[NV_ARGS + 2];
	unsigned n = 0;
	struct nv_torch tor;
	if (!domain && !hdr && nv_torch_parse(name, len, &tor)) {
		len = tor.name_len;
		/* The ProfilerStep#N ranges of a torch.profiler of the program's
		 * own: readers take that name for traceprof's steps (the
		 * observer leaves them out too, preload/torch_ops.c). */
		if (len >= sizeof(TP_STEP_PREFIX) - 1 &&
		    !memcmp(name, TP_STEP_PREFIX, sizeof(TP_STEP_PREFIX) - 1))
			return;
		if (tor.seq >= 0)
			args[n++] = TP_ARG(i64, "Sequence number", tor.seq);
		if (tor.dims)
			args[n++] = TP_ARG(json, "Input Dims", tor.dims, tor.dims_len);
		if (unfinished)
			args[n++] = TP_ARG(bool, "unfinished", 1);
		if (nv_torch_is_op(name, len)) {
			tp_writer_slice(out, TP_CAT_CPU_OP, name, len, pid, tid, start_ns, end_ns,
					args, n);
			return;
		}
	} else {
		n = nv_args(args, domain, category, unfinished, hdr, pl);
	}
	tp_writer_slice(out, TP_CAT_USER_ANNOTATION, name, len, pid, tid, start_ns, end_ns, args,
			n);
	tp_annos_add(pid, tid, name, len, start_ns, end_ns);
}

static void write_range(struct tp_writer *out, const struct open_range *o, int64_t pid,
			uint64_t end_ns, int unfinished)
{
	nv_slice(out, o->name, o->len, pid, o->tid, tp_clock_to_ns(o->start), end_ns, o->domain,
		 o->category, unfinished, o->has_payload ? &o->pl_hdr : NULL, o->pl);
}

static void open_from(struct open_range *o, struct tp_thread *t, const struct tp_record *r)
{
	size_t len;
	const char *s = tp_record_string(r, &len);
	o->start = r->start;
	o->id = r->arg[2];
	o->tid = t->tid;
	o->domain = r->arg[0];
	o->category = (uint32_t)r->arg[3];
	o->len = (uint32_t)len;
	memcpy(o->name, s, len);
	const struct tp_nvtx_payload_hdr *hdr;
	const unsigned char *pl;
	o->has_payload = (uint32_t)tp_nvtx_payload_get(r, &hdr, &pl);
	if (o->has_payload) {
		o->pl_hdr = *hdr;
		memcpy(o->pl, pl, hdr->copied);
	}
}

void tp_nvtx_convert(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		     int64_t pid)
{
	struct open_range *o;
	struct tp_arg args[NV_ARGS];
	unsigned n;
	size_t len;
	const char *s;
	const struct tp_nvtx_payload_hdr *hdr = NULL;
	const unsigned char *pl = NULL;
	switch ((enum tp_nvtx_op)r->arg[1]) {
	case TP_NVTX_PUSH:
		if ((o = list_add(&pushed)))
			open_from(o, t, r);
		break;
	case TP_NVTX_POP:
		/* The newest open push of this thread at the popped level.  Deeper
		 * ones still open lost their pop (it fell outside any recording
		 * step): forget them.  None at this level: the push was not
		 * recorded, and the pop alone has no name to show. */
		for (size_t i = pushed.n; i-- > 0;) {
			o = &pushed.items[i];
			if (o->tid != t->tid)
				continue;
			if (o->id > r->arg[2]) {
				list_del(&pushed, i);
				continue;
			}
			if (o->id == r->arg[2]) {
				write_range(out, o, pid, tp_clock_to_ns(r->start), 0);
				list_del(&pushed, i);
			}
			break;
		}
		break;
	case TP_NVTX_START:
		for (size_t i = ended.n; i-- > 0;) {
			if (ended.items[i].id != r->arg[2])
				continue;
			struct open_range st;
			open_from(&st, t, r);
			write_range(out, &st, pid, tp_clock_to_ns(ended.items[i].start), 0);
			list_del(&ended, i);
			return;
		}
		if ((o = list_add(&started)))
			open_from(o, t, r);
		break;
	case TP_NVTX_END:
		for (size_t i = started.n; i-- > 0;) {
			o = &started.items[i];
			if (o->id != r->arg[2])
				continue;
			/* Shown on the thread that started it, ended by whichever. */
			write_range(out, o, pid, tp_clock_to_ns(r->start), 0);
			list_del(&started, i);
			return;
		}
		if ((o = list_add(&ended))) {
			memset(o, 0, offsetof(struct open_range, pl));
			o->start = r->start;
			o->id = r->arg[2];
			o->tid = t->tid;
		}
		break;
	case TP_NVTX_MARK:
		s = tp_record_string(r, &len);
		if (!tp_nvtx_payload_get(r, &hdr, &pl))
			hdr = NULL;
		n = nv_args(args, r->arg[0], (uint32_t)r->arg[3], 0, hdr, pl);
		tp_writer_instant(out, TP_CAT_USER_ANNOTATION, s, len, pid, t->tid,
				  tp_clock_to_ns(r->start), args, n);
		break;
	case TP_NVTX_COMPLETE:
	default:
		s = tp_record_string(r, &len);
		nv_slice(out, s, len, pid, t->tid, tp_clock_to_ns(r->start), tp_clock_to_ns(r->end),
			 r->arg[0], (uint32_t)r->arg[3], 0, NULL, NULL);
		break;
	}
}

static void close_list(struct range_list *l, struct tp_writer *out, int64_t tid, int64_t pid,
		       uint64_t end_ns)
{
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		struct open_range *o = &l->items[i];
		/* Ranges opened after the window's end belong to a later window
		 * whose records were already converted: keep them. */
		if (o->tid == tid && tp_clock_to_ns(o->start) <= end_ns)
			write_range(out, o, pid, end_ns, 1);
		else
			l->items[k++] = *o;
	}
	l->n = k;
}

void tp_nvtx_close(struct tp_writer *out, struct tp_thread *t, int64_t pid, uint64_t end_ns)
{
	close_list(&pushed, out, t->tid, pid, end_ns);
	close_list(&started, out, t->tid, pid, end_ns);
	/* Ends whose start was never recorded (before the window): nothing to
	 * show without a name. */
	size_t k = 0;
	for (size_t i = 0; i < ended.n; i++)
		if (ended.items[i].tid != t->tid || tp_clock_to_ns(ended.items[i].start) > end_ns)
			ended.items[k++] = ended.items[i];
	ended.n = k;
	char name[sizeof(t->name)];
	if (tp_nvtx_thread_name_get(t->tid, name, sizeof(name)) == 0) {
		memcpy(t->name, name, sizeof(name));
		t->named_by_user = 1;
	}
}
