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
		case DT_VERDEF:
			e->verdef = (const ElfW(Verdef) *)addr(base, d->d_un.d_ptr);
			break;
		case DT_VERDEFNUM:
			e->verdefnum = d->d_un.d_val;
			break;
		case DT_VERNEED:
			e->verneed = (const ElfW(Verneed) *)addr(base, d->d_un.d_ptr);
			break;
		case DT_VERNEEDNUM:
			e->verneednum = d->d_un.d_val;
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

/* The name of the object's own version index ndx (its DT_VERDEF), or NULL
 * when it defines none of that index. */
static const char *defined_version(const struct tp_elf *e, unsigned ndx)
{
	const ElfW(Verdef) *vd = e->verdef;
	for (size_t k = 0; vd && k < e->verdefnum; k++) {
		if ((vd->vd_ndx & 0x7fff) == ndx && vd->vd_cnt) {
			const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)((const char *)vd + vd->vd_aux);
			return e->strtab + a->vda_name;
		}
		if (!vd->vd_next)
			break;
		vd = (const ElfW(Verdef) *)((const char *)vd + vd->vd_next);
	}
	return NULL;
}

/* Whether a reference at `version` binds symbol i (glibc's check_match for
 * a relocation): the same version; or an object without versions; or a
 * symbol whose index names none of the object's versions and is not
 * hidden.  version NULL: a lookup by name (dlsym), which takes the default
 * (non-hidden) definition. */
static int version_ok(const struct tp_elf *e, uint32_t i, const char *version)
{
	if (!e->versym)
		return 1;
	unsigned hidden = e->versym[i] & 0x8000, ndx = e->versym[i] & 0x7fff;
	if (!version)
		return !hidden;
	const char *have = defined_version(e, ndx);
	if (have)
		return !strcmp(have, version);
	return !hidden;
}

/* A definition the dynamic linker would bind a lookup of name (at
 * version, or by name when NULL) to. */
static void *defined(const struct tp_elf *e, uint32_t i, const char *name, const char *version,
		     int *ifunc)
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
	if (strcmp(e->strtab + s->st_name, name) || !version_ok(e, i, version))
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

static void *lookup(const struct tp_elf *e, const char *name, const char *version, int *ifunc)
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
				void *p = defined(e, i, name, version, ifunc);
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
		void *p = defined(e, i, name, version, ifunc);
		if (p)
			return p;
	}
	return NULL;
}

/* The name of version index ndx among the versions the object needs. */
static const char *needed_version(const struct tp_elf *e, unsigned ndx)
{
	const ElfW(Verneed) *vn = e->verneed;
	for (size_t k = 0; vn && k < e->verneednum; k++) {
		const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
		for (unsigned j = 0; j < vn->vn_cnt; j++) {
			if ((a->vna_other & 0x7fff) == ndx)
				return e->strtab + a->vna_name;
			a = (const ElfW(Vernaux) *)((const char *)a + a->vna_next);
		}
		if (!vn->vn_next)
			break;
		vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
	}
	return NULL;
}

int tp_elf_reference(const struct tp_elf *e, const char *name, const char **version)
{
	*version = NULL;
	if (!e->symtab || !name)
		return 0;
	/* Undefined symbols are not hashed: with DT_GNU_HASH the linkers put
	 * them first, below symoffset; DT_HASH's nchain counts every symbol. */
	uint32_t n = e->gnu_hash ? e->gnu_hash[1] : e->sysv_hash ? e->sysv_hash[1] : 0;
	for (uint32_t i = 1; i < n; i++) {
		const ElfW(Sym) *s = &e->symtab[i];
		int bind = ST_BIND(s->st_info);
		if (s->st_shndx != SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
		    strcmp(e->strtab + s->st_name, name))
			continue;
		/* Indexes 0 and 1 are the local and the unversioned global one. */
		unsigned ndx = e->versym ? e->versym[i] & 0x7fff : 0;
		if (ndx >= 2)
			*version = needed_version(e, ndx);
		return 1;
	}
	return 0;
}

void *tp_elf_lookup(const struct tp_elf *e, const char *name, int *ifunc)
{
	return lookup(e, name, NULL, ifunc);
}

void *tp_elf_lookup_version(const struct tp_elf *e, const char *name, const char *version,
			    int *ifunc)
{
	return lookup(e, name, version, ifunc);
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
