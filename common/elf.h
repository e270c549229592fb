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
#include <stddef.h>
#include <stdint.h>

struct tp_elf {
	uintptr_t base; /* load bias (dlpi_addr, l_addr) */
	const char *strtab;
	const ElfW(Sym) *symtab;
	const uint32_t *gnu_hash; /* DT_GNU_HASH, or NULL */
	const uint32_t *sysv_hash; /* DT_HASH, or NULL */
	const ElfW(Versym) *versym; /* DT_VERSYM, or NULL */
	const ElfW(Verdef) *verdef;   /* DT_VERDEF, or NULL */
	size_t verdefnum;	      /* DT_VERDEFNUM */
	const ElfW(Verneed) *verneed; /* DT_VERNEED, or NULL */
	size_t verneednum;	      /* DT_VERNEEDNUM */
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

/* The definition that a reference to `name` at `version`
 * (cudaMalloc@libcudart.so.13) binds in this object, by glibc's rule: a
 * definition of that version (default or not), else an unversioned one
 * (the object has no symbol versions, or the definition has none of the
 * object's own, and it is not hidden).  NULL when the object has none
 * (a definition of another version only).  IFUNCs as tp_elf_lookup(). */
void *tp_elf_lookup_version(const struct tp_elf *e, const char *name, const char *version,
			    int *ifunc);

/* Whether the object refers to `name` without defining it (an undefined
 * global or weak symbol in its dynamic symbol table: what its relocations
 * bind): 1, else 0.  When it does and the reference carries a version
 * (cudaMalloc@libcudart.so.13), *version is set to the version's name (in
 * the object's string table), else to NULL. */
int tp_elf_reference(const struct tp_elf *e, const char *name, const char **version);

/* The k-th DT_NEEDED name (from 0), or NULL past the last. */
const char *tp_elf_needed(const struct tp_elf *e, int k);

/* The object's DT_SONAME, or NULL. */
const char *tp_elf_soname(const struct tp_elf *e);

#endif
