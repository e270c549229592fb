/* Several copies of libtraceprof in one process (issue 30, item 7). */
#ifndef TP_PRELOAD_RESOLVE_COPIES_H
#define TP_PRELOAD_RESOLVE_COPIES_H

/* 1 when this copy is the first traceprof in load order (the one that
 * records); else 0, and the active copy's path is written to who. */
int tp_copies_first(char *who, unsigned long size);

/* When p lies in another traceprof copy: the next definition of name after
 * that copy (what it would forward to), or NULL.  Else p unchanged. */
void *tp_copies_skip(void *p, const char *name);

struct dl_phdr_info;

/* 1 when the object is another traceprof copy (for a dl_iterate_phdr
 * callback, which must not walk again). */
int tp_copies_is_copy(struct dl_phdr_info *info);

/* 1 when p lies in another traceprof copy. */
int tp_copies_other(const void *p);

#endif
