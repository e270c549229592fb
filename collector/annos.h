/* TEMPORARY (port-cuda): the contract's annotation store names
 * (notes/port_spec.md item 4) over format/trace.c's store, so that
 * collector/gpu.c builds before port-core's collector/annos.c lands; take
 * port-core's version of this file and of annos.c.
 *
 * The CPU user annotations (steps, markers, NVTX ranges written as
 * user_annotation) kept for collector/gpu.c's gpu_user_annotation events.
 * Flush thread only. */
#ifndef TP_COLLECTOR_ANNOS_H
#define TP_COLLECTOR_ANNOS_H

#include <stddef.h>
#include <stdint.h>

struct tp_anno {
	int64_t pid, tid;
	uint64_t start, end; /* monotonic ns */
	uint32_t name_off, name_len;
};

/* Starts keeping annotations (idempotent). */
void tp_annos_keep(void);
/* The kept annotations, in the order added; *n their number. */
const struct tp_anno *tp_annos(size_t *n);
const char *tp_anno_name(const struct tp_anno *a);
/* Forgets the annotations that end before `ns`. */
void tp_annos_drop_before(uint64_t ns);
/* Annotations not kept because the store was full. */
uint64_t tp_annos_missed(void);

#endif
