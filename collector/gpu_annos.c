/* gpu_user_annotation events, in Kineto's layout: on each stream that ran
 * GPU work launched inside a CPU user annotation (a step or a marker), one
 * complete event of category gpu_user_annotation with the annotation's name,
 * on the GPU's pid and the stream's tid, from the first such start to the
 * last such end.  Holistic Trace Analysis attributes each kernel to the
 * innermost one that holds it.  The annotations come from the collector's
 * store (collector/annos.h); a launch belongs to every annotation of its
 * thread open at the call's start. */
#include <stdlib.h>

#include "collector/annos.h"
#include "collector/gpu_internal.h"
#include "common/layout.h"

struct ga_span {
	size_t anno, next; /* next: the annotation's next span + 1, 0 at the end */
	uint32_t dev;
	int32_t stream;
	uint64_t start, end;
};

static int ga_launch_cmp(const void *a, const void *b)
{
	const struct tp_gpu_launch *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->api < y->api ? -1 : x->api > y->api;
}

static const struct tp_anno *ga_annos;

/* By thread, then start, longest first: a parent before its children. */
static int ga_anno_cmp(const void *a, const void *b)
{
	const struct tp_anno *x = &ga_annos[*(const size_t *)a];
	const struct tp_anno *y = &ga_annos[*(const size_t *)b];
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* Adds launch l to annotation k's span on l's stream.  head[k]: its first
 * span + 1.  Returns -1 when out of memory (the rest are then skipped). */
static int ga_add(struct ga_span **spans, size_t *n, size_t *cap, size_t *head, size_t k,
		  const struct tp_gpu_launch *l)
{
	for (size_t s = head[k]; s; s = (*spans)[s - 1].next) {
		struct ga_span *g = &(*spans)[s - 1];
		if (g->dev == l->dev && g->stream == l->stream) {
			if (l->start < g->start)
				g->start = l->start;
			if (l->end > g->end)
				g->end = l->end;
			return 0;
		}
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct ga_span *p = realloc(*spans, c * sizeof(*p));
		if (!p)
			return -1;
		*spans = p;
		*cap = c;
	}
	(*spans)[*n] = (struct ga_span){ k, head[k], l->dev, l->stream, l->start, l->end };
	head[k] = ++*n;
	return 0;
}

void tp_gpu_write_annotations(struct tp_writer *out, struct tp_gpu_launch *ls, size_t nl,
			      int64_t pid)
{
	size_t na;
	ga_annos = tp_annos(&na);
	size_t *idx = malloc((na ? na : 1) * sizeof(*idx));
	size_t *head = calloc(na ? na : 1, sizeof(*head));
	size_t *stack = malloc((na ? na : 1) * sizeof(*stack));
	struct ga_span *spans = NULL;
	size_t nspans = 0, cap = 0, ni = 0;
	if (!idx || !head || !stack)
		goto out;
	for (size_t i = 0; i < na; i++)
		if (ga_annos[i].pid == pid)
			idx[ni++] = i;
	if (ni > 1)
		qsort(idx, ni, sizeof(*idx), ga_anno_cmp);
	if (nl > 1)
		qsort(ls, nl, sizeof(*ls), ga_launch_cmp);
	/* One sweep per thread: annotations open at each launch's call. */
	size_t a = 0, depth = 0;
	int64_t cur = 0;
	for (size_t i = 0; i < nl; i++) {
		const struct tp_gpu_launch *l = &ls[i];
		if (i == 0 || l->tid != cur) {
			cur = l->tid;
			depth = 0;
			while (a < ni && ga_annos[idx[a]].tid < cur)
				a++;
		}
		while (a < ni && ga_annos[idx[a]].tid == cur && ga_annos[idx[a]].start <= l->api) {
			while (depth && ga_annos[stack[depth - 1]].end < ga_annos[idx[a]].start)
				depth--;
			stack[depth++] = idx[a++];
		}
		size_t keep = 0;
		for (size_t d = 0; d < depth; d++)
			if (ga_annos[stack[d]].end >= l->api)
				stack[keep++] = stack[d];
		depth = keep;
		for (size_t d = 0; d < depth; d++)
			if (ga_add(&spans, &nspans, &cap, head, stack[d], l) < 0)
				goto write;
	}
write:
	for (size_t s = 0; s < nspans; s++) {
		const struct ga_span *g = &spans[s];
		const struct tp_anno *an = &ga_annos[g->anno];
		tp_writer_slice(out, TP_CAT_GPU_USER_ANNOTATION, tp_anno_name(an), an->name_len,
				TP_GPU_PID(g->dev), g->stream, g->start, g->end, NULL, 0);
	}
out:
	free(idx);
	free(head);
	free(stack);
	free(spans);
}
