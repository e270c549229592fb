/* User annotations kept for the GPU side.
 *
 * Kineto writes, on each GPU stream, a gpu_user_annotation event spanning the
 * GPU work launched inside each CPU user annotation (ProfilerStep#N and
 * markers); Holistic Trace Analysis attributes kernels to annotations with
 * them.  The host side writes its annotations as they finish, the GPU side
 * its events when the window ends: so, once switched on, every
 * user_annotation slice the collector produces (markers, steps, NVTX ranges,
 * unfinished markers) is kept here with tp_annos_add() (pid, tid, times,
 * name) until collector/gpu_annos.c has used it.  One store for all files, used by
 * the flush thread only (it writes every trace).  At most TP_ANNOS_MAX are
 * kept; beyond, annotations are not kept (counted). */
#ifndef TP_COLLECTOR_ANNOS_H
#define TP_COLLECTOR_ANNOS_H

#include <stddef.h>
#include <stdint.h>

#define TP_ANNOS_MAX (1u << 20)

struct tp_anno {
	int64_t pid, tid;
	uint64_t start, end; /* monotonic ns */
	uint32_t name_off, name_len;
};

/* Starts keeping annotations (idempotent). */
void tp_annos_keep(void);
/* Keeps one annotation when keeping is on; a no-op otherwise. */
void tp_annos_add(int64_t pid, int64_t tid, const char *name, size_t nlen, uint64_t start_ns,
		  uint64_t end_ns);
/* The kept annotations, in the order added; *n their number. */
const struct tp_anno *tp_annos(size_t *n);
const char *tp_anno_name(const struct tp_anno *a);
/* Forgets the annotations that end before `ns`. */
void tp_annos_drop_before(uint64_t ns);
/* Annotations not kept because the store was full. */
uint64_t tp_annos_missed(void);

#endif
