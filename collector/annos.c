/* TEMPORARY (port-cuda): see collector/annos.h. */
#include "collector/annos.h"

#include <stddef.h>

#include "format/trace.h"

_Static_assert(sizeof(struct tp_anno) == sizeof(struct tp_trace_anno) &&
		       offsetof(struct tp_anno, name_len) ==
			       offsetof(struct tp_trace_anno, name_len),
	       "the same layout as format/trace.h's store");

void tp_annos_keep(void)
{
	tp_trace_annos_keep();
}

const struct tp_anno *tp_annos(size_t *n)
{
	return (const struct tp_anno *)tp_trace_annos(n);
}

const char *tp_anno_name(const struct tp_anno *a)
{
	return tp_trace_anno_name((const struct tp_trace_anno *)a);
}

void tp_annos_drop_before(uint64_t ns)
{
	tp_trace_annos_drop_before(ns);
}

uint64_t tp_annos_missed(void)
{
	return tp_trace_annos_missed();
}
