/* Reading a loaded ELF object in memory: its dynamic section, the symbols it
 * defines itself, its soname.
 *
 * No dynamic-linker call is made, so these are safe inside a
 * dl_iterate_phdr() callback and while objects are still being loaded:
 * a dlopen(RTLD_NOLOAD) of an object whose constructors have not run yet
 * runs them, out of order (a crash seen with PyTorch's libGLX). */
#ifndef TP_COMMON_ELF_H
#define TP_COMMON_ELF_H

#include <link.h>
#include <stdint.h>

struct tp_elf {
	uintptr_t base; /* load bias (dlpi_addr, l_addr) */
	const char *strtab;
	const ElfW(Sym) *symtab;
	const uint32_t *gnu_hash; /* DT_GNU_HASH, or NULL */
	const uint32_t *sysv_hash; /* DT_HASH, or NULL */
	const ElfW(Versym) *versym; /* DT_VERSYM, or NULL */
	uintptr_t soname;	    /* DT_SONAME string offset, 0: none */
	const ElfW(Dyn) *dyn;	    /* the dynamic section */
};

/* Fills e from an object's dynamic section.  Returns 0, or -1 when the
 * object has no symbol table to read. */
int tp_elf_open(struct tp_elf *e, uintptr_t base, const ElfW(Dyn) *dyn);

/* The same from a dl_iterate_phdr() record (its PT_DYNAMIC). */
int tp_elf_open_phdr(struct tp_elf *e, const struct dl_phdr_info *info);

/* The address of `name` if the object itself defines it (a global or weak,
 * defined, non-hidden-version function or object), else NULL.  An IFUNC
 * symbol counts as defined but is not returned (its address is what its
 * resolver returns, which only the dynamic linker calls): NULL, with
 * *ifunc set when ifunc is not NULL. */
void *tp_elf_lookup(const struct tp_elf *e, const char *name, int *ifunc);

/* The k-th DT_NEEDED name (from 0), or NULL past the last. */
const char *tp_elf_needed(const struct tp_elf *e, int k);

/* The object's DT_SONAME, or NULL. */
const char *tp_elf_soname(const struct tp_elf *e);

#endif
