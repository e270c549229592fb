/* "Our own image": the loaded object that holds an address of ours
 * (libtraceprof.so, or a program linked with libtpcore.a), found once from
 * the loader's program headers.  One finder for what used to be three
 * copies: the dlsym hook's caller test (preload/resolve/cuda_scope_state.c), the
 * stacks' own frames (collector/stack_syms.c) and the literal names the
 * events table need not compare (format/aggregate.c). */
#ifndef TP_COMMON_SELF_IMAGE_H
#define TP_COMMON_SELF_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define TP_IMAGE_RO_MAX 4

struct tp_image {
	/* [lo, hi): from the lowest PT_LOAD segment's start to the highest
	 * one's end, as mapped (p_memsz). */
	uintptr_t lo, hi;
	/* The loader's name of the object: a path, "" for the program. */
	const char *name;
	/* The first TP_IMAGE_RO_MAX read-only PT_LOAD segments, their file
	 * bytes (p_filesz): literals there cannot change while it is mapped. */
	int nro;
	uintptr_t ro_lo[TP_IMAGE_RO_MAX], ro_hi[TP_IMAGE_RO_MAX];
};

/* Fills *im for the loaded object whose range holds addr: 0, or -1 (and
 * *im zeroed) when none does.  Walks the loaded objects under the
 * loader's lock (dl_iterate_phdr): call it once and keep the answer. */
int tp_image_of(const void *addr, struct tp_image *im);

/* Whether the n bytes at p lie inside one of im's read-only segments. */
int tp_image_ro_holds(const struct tp_image *im, const void *p, size_t n);

#endif
