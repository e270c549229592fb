/* See common/elf.h. */
#include "common/elf.h"

#include <string.h>

#if __SIZEOF_POINTER__ == 8
#define ST_TYPE(i) ELF64_ST_TYPE(i)
#define ST_BIND(i) ELF64_ST_BIND(i)
#else
#define ST_TYPE(i) ELF32_ST_TYPE(i)
#define ST_BIND(i) ELF32_ST_BIND(i)
#endif

/* glibc rewrites the address entries of a loaded object's .dynamic to
 * absolute addresses; the vDSO's (and a few architectures') stay relative
 * to the load bias.  A value below the bias is relative. */
static uintptr_t addr(uintptr_t base, ElfW(Addr) p)
{
	return p < base ? base + p : p;
}

int tp_elf_open(struct tp_elf *e, uintptr_t base, const ElfW(Dyn) *dyn)
{
	memset(e, 0, sizeof(*e));
	e->base = base;
	e->dyn = dyn;
	if (!dyn)
		return -1;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_STRTAB:
			e->strtab = (const char *)addr(base, d->d_un.d_ptr);
			break;
		case DT_SYMTAB:
			e->symtab = (const ElfW(Sym) *)addr(base, d->d_un.d_ptr);
			break;
		case DT_GNU_HASH:
			e->gnu_hash = (const uint32_t *)addr(base, d->d_un.d_ptr);
			break;
		case DT_HASH:
			e->sysv_hash = (const uint32_t *)addr(base, d->d_un.d_ptr);
			break;
		case DT_VERSYM:
			e->versym = (const ElfW(Versym) *)addr(base, d->d_un.d_ptr);
			break;
		case DT_SONAME:
			e->soname = d->d_un.d_val;
			break;
		}
	}
	return e->strtab && e->symtab && (e->gnu_hash || e->sysv_hash) ? 0 : -1;
}

int tp_elf_open_phdr(struct tp_elf *e, const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			return tp_elf_open(e, info->dlpi_addr,
					   (const ElfW(Dyn) *)(info->dlpi_addr +
								info->dlpi_phdr[i].p_vaddr));
	memset(e, 0, sizeof(*e));
	return -1;
}

/* A definition the dynamic linker would bind a lookup by name to. */
static void *defined(const struct tp_elf *e, uint32_t i, const char *name, int *ifunc)
{
	const ElfW(Sym) *s = &e->symtab[i];
	int type = ST_TYPE(s->st_info), bind = ST_BIND(s->st_info);
	if (s->st_shndx == SHN_UNDEF || (!s->st_value && type != STT_TLS))
		return NULL;
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT &&
	    type != STT_NOTYPE)
		return NULL;
	if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE)
		return NULL;
	if (e->versym && (e->versym[i] & 0x8000)) /* a hidden (non-default) version */
		return NULL;
	if (strcmp(e->strtab + s->st_name, name))
		return NULL;
	if (type == STT_GNU_IFUNC) {
		if (ifunc)
			*ifunc = 1;
		return NULL;
	}
	return (void *)(e->base + s->st_value);
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = h * 33 + *p;
	return h;
}

static uint32_t sysv_hash(const char *s)
{
	uint32_t h = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h = (h << 4) + *p;
		uint32_t g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

void *tp_elf_lookup(const struct tp_elf *e, const char *name, int *ifunc)
{
	if (!e->symtab || !name)
		return NULL;
	if (e->gnu_hash) {
		const uint32_t *g = e->gnu_hash;
		uint32_t nbuckets = g[0], symoffset = g[1], bloom_size = g[2], shift = g[3];
		if (!nbuckets || !bloom_size)
			return NULL;
		const ElfW(Addr) *bloom = (const ElfW(Addr) *)(g + 4);
		const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
		const uint32_t *chain = buckets + nbuckets;
		const unsigned bits = sizeof(ElfW(Addr)) * 8;
		uint32_t h = gnu_hash(name);
		ElfW(Addr) word = bloom[(h / bits) % bloom_size];
		ElfW(Addr) mask = (ElfW(Addr))1 << (h % bits) | (ElfW(Addr))1 << ((h >> shift) % bits);
		if ((word & mask) != mask)
			return NULL;
		uint32_t i = buckets[h % nbuckets];
		if (i < symoffset)
			return NULL;
		for (;; i++) {
			uint32_t h2 = chain[i - symoffset];
			if ((h | 1) == (h2 | 1)) {
				void *p = defined(e, i, name, ifunc);
				if (p)
					return p;
			}
			if (h2 & 1)
				return NULL;
		}
	}
	const uint32_t *s = e->sysv_hash;
	uint32_t nbucket = s[0];
	if (!nbucket)
		return NULL;
	const uint32_t *bucket = s + 2, *chain = bucket + nbucket;
	for (uint32_t i = bucket[sysv_hash(name) % nbucket]; i; i = chain[i]) {
		void *p = defined(e, i, name, ifunc);
		if (p)
			return p;
	}
	return NULL;
}

const char *tp_elf_soname(const struct tp_elf *e)
{
	return e->strtab && e->soname ? e->strtab + e->soname : NULL;
}

const char *tp_elf_needed(const struct tp_elf *e, int k)
{
	if (!e->dyn || !e->strtab)
		return NULL;
	for (const ElfW(Dyn) *d = e->dyn; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_NEEDED && k-- == 0)
			return e->strtab + d->d_un.d_val;
	return NULL;
}
