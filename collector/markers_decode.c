/* traceprof's own markers decoded into trace events (flush thread only):
 * the records of the public API (preload/api.c: traceprof_marker_start,
 * _finish, _instant, _counter; preload/torch_modules.c's nn.Module calls,
 * which are markers) and the step records (collector/control.c), which are
 * written as the same user_annotation slices.  collector/convert.c hands
 * each record here by its kind. */
#include "collector/markers_decode.h"

#include <stdlib.h>
#include <string.h>

#include "collector/annos.h"
#include "collector/fthread.h"
#include "collector/stacks.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/layout.h"

/* Open markers of one thread, matched by name from the top (the most
 * recent start of the same name), so that interleaved markers pair up.  A
 * marker keeps its start record with the extras (name, and the call stack
 * with TRACEPROF_WITH_STACK), which the complete event is written from. */
struct tp_marker {
	struct tp_record rec[1 + TP_REC_MAX_EXTRA];
	/* An nn.Module marker's "Python id" and its enclosing module's (0:
	 * none; mk_module_args); 0 and 0 for every other marker. */
	uint64_t py_id, py_parent;
};

struct tp_marker_stack {
	size_t n, cap;
	struct tp_marker *items;
};

void tp_markers_free(struct tp_marker_stack *s)
{
	if (!s)
		return;
	free(s->items);
	free(s);
}


/* A marker's or instant's name, and its categories when the record has
 * them (TP_RF_CATS: they follow the name in the string; a cut string may
 * have cut them, or the name). */
static const char *mk_name(const struct tp_record *r, size_t *len, const char **cats,
			   size_t *clen)
{
	const char *s = tp_record_string(r, len);
	*cats = "";
	*clen = 0;
	if ((r->flags & TP_RF_CATS) && r->arg[0] < *len) {
		*cats = s + r->arg[0];
		*clen = *len - (size_t)r->arg[0];
		*len = (size_t)r->arg[0];
	}
	return s;
}

/* "user_annotation,forward,train": the event's "cat" for categories
 * "forward,train" (a comma-separated list, as Chrome's trace format reads
 * "cat"; the usual category first, so tools that look for it still can).
 * Writers take a category as a literal of plain characters that they may
 * remember by address (format/event.h), so each distinct one is made once,
 * its other characters as '_', and kept for the life of the process; past
 * MK_CATS_MAX of them (or with no memory for one more, or too long), events
 * keep the bare category (their args.categories still has the text), and
 * each such event is counted in mk_cats_lost (the footer's categories_lost).
 * Flush thread only. */
#define MK_CATS_MAX 256
static char *mk_cats[MK_CATS_MAX];
static size_t mk_ncats;
static uint64_t mk_cats_lost;

uint64_t tp_markers_categories_lost(void)
{
	return mk_cats_lost;
}

static int mk_plain(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr(" _.%()/,:-", c));
}

static const char *mk_cat(const char *base, const char *cats, size_t clen)
{
	char tmp[64 + TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES];
	size_t blen = strlen(base);
	if (!clen)
		return base;
	if (blen + 2 + clen > sizeof(tmp)) {
		mk_cats_lost++;
		return base;
	}
	memcpy(tmp, base, blen);
	tmp[blen] = ',';
	for (size_t i = 0; i < clen; i++)
		tmp[blen + 1 + i] = mk_plain(cats[i]) ? cats[i] : '_';
	tmp[blen + 1 + clen] = '\0';
	for (size_t i = 0; i < mk_ncats; i++)
		if (!strcmp(mk_cats[i], tmp))
			return mk_cats[i];
	char *c = mk_ncats < MK_CATS_MAX ? strdup(tmp) : NULL;
	if (!c) {
		mk_cats_lost++;
		return base;
	}
	mk_cats[mk_ncats++] = c;
	return c;
}

/* nn.Module forward calls (TRACEPROF_PYTORCH=modules: markers named
 * TP_MODULE_PREFIX "CLASS QUALIFIED.NAME", from preload/torch_modules.c or
 * the Python hooks of python/traceprof/pyboot/traceprof_torch.py) are
 * written as torch.profiler's with_stack writes them: python_function
 * slices with "Python id" (a number for this call, unique in the process),
 * "Python parent id" (the enclosing module call's, on the same thread;
 * absent for an outermost one) and "Python module id".  TensorBoard's
 * Module view builds its tree from these three and finds nothing in
 * user_annotation slices.  torch.profiler numbers modules per class in the
 * order it meets them; here the names are already unique (qualified), so the
 * module id only has to be the same for every call of one module, in every
 * window, process and run: 31 bits of a hash of the name.  Flush thread
 * only. */
static uint64_t mk_py_ids;

static int mk_is_module(const char *name, size_t len)
{
	size_t n = sizeof(TP_MODULE_PREFIX) - 1;
	return len > n && !memcmp(name, TP_MODULE_PREFIX, n);
}

static unsigned mk_module_args(const struct tp_marker *m, const char *name, size_t len,
			       struct tp_arg *args)
{
	unsigned n = 0;
	args[n++] = TP_ARG(u64, TP_MODULE_ARG_ID, m->py_id);
	if (m->py_parent)
		args[n++] = TP_ARG(u64, TP_MODULE_ARG_PARENT, m->py_parent);
	args[n++] = TP_ARG(u64, TP_MODULE_ARG_MODULE, tp_hash_bytes(name, len) & 0x7fffffff);
	return n;
}

/* The open markers live in the flush side's state of the thread
 * (collector/fthread.h), which the drain made before handing over t's
 * records. */
void tp_markers_push(struct tp_thread *t, const struct tp_record *r)
{
	struct tp_fthread *f = t->fl;
	if (!f)
		return;
	struct tp_marker_stack *s = f->markers;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return;
		f->markers = s;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4;
		struct tp_marker *items = realloc(s->items, cap * sizeof(*items));
		if (!items)
			return;
		s->items = items;
		s->cap = cap;
	}
	struct tp_marker *m = &s->items[s->n++];
	memcpy(m->rec, r, (1 + (size_t)r->nextra) * sizeof(*r));
	m->py_id = m->py_parent = 0;
	size_t len, clen;
	const char *cats;
	const char *name = mk_name(r, &len, &cats, &clen);
	if (mk_is_module(name, len)) {
		/* Numbered at its start, so that its children (pushed after it,
		 * written before it) can name it as their parent. */
		m->py_id = ++mk_py_ids;
		for (size_t i = s->n - 1; i-- > 0;)
			if (s->items[i].py_id) {
				m->py_parent = s->items[i].py_id;
				break;
			}
	}
}

/* A user_annotation slice with the stack args of marker m's record
 * (markers; NULL for steps), kept for the GPU side's gpu_user_annotation
 * (collector/annos.h); an nn.Module marker's is a python_function slice
 * (mk_module_args).  `unfinished`: a marker still open when its window
 * ended. */
static void mk_anno_slice(struct tp_writer *out, const char *name, size_t len, int64_t pid,
			  int64_t tid, uint64_t start_ns, uint64_t end_ns,
			  const struct tp_marker *m, int unfinished, const char *phase)
{
	struct tp_stack_args buf;
	struct tp_arg args[8]; /* module 3, unfinished, phase, categories, stacks 2 */
	unsigned n = 0;
	const char *cats = "";
	size_t clen = 0;
	const struct tp_record *stack = m ? m->rec : NULL;
	const char *cat;
	if (stack)
		mk_name(stack, &(size_t){ 0 }, &cats, &clen);
	if (m && m->py_id) {
		n = mk_module_args(m, name, len, args);
		cat = TP_CAT_PYTHON_FUNCTION;
	} else {
		cat = mk_cat(TP_CAT_USER_ANNOTATION, cats, clen);
	}
	if (unfinished)
		args[n++] = TP_ARG(bool, "unfinished", 1);
	if (phase)
		args[n++] = TP_ARG(str, TP_STEP_PHASE_ARG, phase, strlen(phase), 1);
	if (clen)
		args[n++] = TP_ARG(str, "categories", cats, clen, 0);
	struct tp_event e = {
		.kind = TP_EV_SLICE,
		.name_stable = 0,
		.nargs = 0,
		.name_len = (uint32_t)len,
		.cat = cat,
		.name = name,
		.pid = pid,
		.tid = tid,
		.ts = start_ns,
		.end = end_ns,
		.args = args,
		TP_EV_NO_EXTRAS, /* every field named: no `rep stos` (format/event.h) */
	};
	if (stack)
		e.sf = tp_stacks_args(out, stack, &buf, args, &n);
	e.nargs = (uint16_t)n;
	tp_writer_event(out, &e);
	tp_annos_add(pid, tid, name, len, start_ns, end_ns);
}

void tp_markers_finish(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		       int64_t pid)
{
	size_t len;
	const char *name = tp_record_string(r, &len);
	struct tp_marker_stack *s = t->fl ? t->fl->markers : NULL;
	for (size_t i = s ? s->n : 0; i-- > 0;) {
		struct tp_marker *m = &s->items[i];
		size_t mlen, clen;
		const char *cats;
		const char *mname = mk_name(m->rec, &mlen, &cats, &clen);
		if (mlen != len || memcmp(mname, name, len))
			continue;
		mk_anno_slice(out, name, len, pid, t->tid, tp_clock_to_ns(m->rec[0].start),
			      tp_clock_to_ns(r->start), m, 0, NULL);
		memmove(m, m + 1, (s->n - i - 1) * sizeof(*m));
		s->n--;
		return;
	}
	/* A finish without a start (the start came before the window): an
	 * instant, so that the user still sees it. */
	tp_writer_instant(out, TP_CAT_USER_ANNOTATION, name, len, pid, t->tid,
			  tp_clock_to_ns(r->start), NULL, 0);
}

void tp_markers_close(struct tp_writer *out, struct tp_thread *t, int64_t pid, uint64_t end_ns)
{
	/* Only markers that started inside this window: the stack may already
	 * hold starts of a later window, drained before this one is written.
	 * Closed markers leave the stack; their finish, if it ever comes, shows
	 * as an instant in its own window. */
	struct tp_marker_stack *s = t->fl ? t->fl->markers : NULL;
	size_t k = 0;
	for (size_t i = 0; s && i < s->n; i++) {
		struct tp_marker *m = &s->items[i];
		uint64_t start = tp_clock_to_ns(m->rec[0].start);
		if (start > end_ns) {
			if (k != i)
				s->items[k] = *m;
			k++;
			continue;
		}
		size_t len, clen;
		const char *cats;
		const char *name = mk_name(m->rec, &len, &cats, &clen);
		mk_anno_slice(out, name, len, pid, t->tid, start, end_ns, m, 1, NULL);
	}
	if (s)
		s->n = k;
}

void tp_markers_step(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		     int64_t pid)
{
	char name[40] = TP_STEP_PREFIX;
	char digits[24];
	int n = 0;
	uint64_t v = r->arg[0];
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	size_t len = sizeof(TP_STEP_PREFIX) - 1;
	while (n)
		name[len++] = digits[--n];
	/* The start-up and teardown are no iteration (scripts/layout.spec). */
	static const char *const phases[] = { NULL, TP_STEP_PHASE_STARTUP, TP_STEP_PHASE_TEARDOWN,
					      TP_STEP_PHASE_WHOLE };
	mk_anno_slice(out, name, len, pid, t->tid, tp_clock_to_ns(r->start), tp_clock_to_ns(r->end),
		      NULL, 0, phases[r->arg[1] & 3]);
}

void tp_markers_counter(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
			int64_t pid)
{
	size_t len;
	const char *s = tp_record_string(r, &len);
	/* name NUL key NUL: the key follows the name's terminator. */
	size_t max = (size_t)r->nextra * TP_REC_EXTRA_BYTES;
	const char *key = s + len + 1;
	size_t klen = 0;
	if (len + 1 < max) {
		const char *nul = memchr(key, '\0', max - len - 1);
		klen = nul ? (size_t)(nul - key) : max - len - 1;
	}
	double value;
	memcpy(&value, &r->arg[0], sizeof(value));
	tp_writer_counter(out, s, len, klen ? key : "value", klen ? klen : 5, pid, t->tid,
			 tp_clock_to_ns(r->start), value);
}

/* An instant marker (TP_REC_INSTANT) with its stack args. */
void tp_markers_instant(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
			int64_t pid)
{
	struct tp_stack_args buf;
	struct tp_arg args[3];
	unsigned n = 0;
	size_t len, clen;
	const char *cats;
	const char *s = mk_name(r, &len, &cats, &clen);
	if (clen)
		args[n++] = TP_ARG(str, "categories", cats, clen, 0);
	struct tp_event e = {
		.kind = TP_EV_INSTANT,
		.name_stable = 0,
		.nargs = 0,
		.name_len = (uint32_t)len,
		.cat = mk_cat(TP_CAT_USER_ANNOTATION, cats, clen),
		.name = s,
		.pid = pid,
		.tid = t->tid,
		.ts = tp_clock_to_ns(r->start),
		.end = 0,
		.args = args,
		TP_EV_NO_EXTRAS, /* every field named: no `rep stos` (format/event.h) */
	};
	e.end = e.ts;
	e.sf = tp_stacks_args(out, r, &buf, args, &n);
	e.nargs = (uint16_t)n;
	tp_writer_event(out, &e);
}
