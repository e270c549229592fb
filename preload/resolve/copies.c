/* Several copies of libtraceprof in one process (issue 30, item 7): an
 * installed library in LD_PRELOAD and one from a build tree, LD_PRELOAD=A:B,
 * or a copy the program dlopens.  Each copy exports the same wrappers, so
 * a copy looking up the real function after itself may find another copy's
 * wrapper, and each would record the same call.
 *
 * A copy is recognised by the symbol it exports, traceprof_copy_next (read
 * from the object's own symbol table, no dynamic-linker call).  The first
 * copy in load order (dl_iterate_phdr's order, which every copy sees alike,
 * whatever the order their constructors run in) records; the others leave
 * recording off.  Every copy's resolution skips the other copies' wrappers:
 * where a look-up lands in another copy, that copy's traceprof_copy_next
 * answers with the next definition after it, so the chain ends at the real
 * function however many copies there are.  Nothing here is in memory a
 * child inherits through its environment: each process decides again. */
#include "common/dl.h"
#include "preload/resolve/copies.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "common/elf.h"
#include "common/log.h"
#include "preload/cuda_pack.h"
#include "preload/export.h"

typedef void *(*next_fn)(const char *name);

TP_EXPORT void *traceprof_copy_next(const char *name);

/* Our own address is that of a static function: an exported one's address
 * taken here may be the first copy's (the reference binds through the
 * global scope). */
static int contains(const struct dl_phdr_info *info, uintptr_t a)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz)
			return 1;
	}
	return 0;
}

/* The object's traceprof_copy_next, or NULL when it is no traceprof. */
static next_fn marker(struct dl_phdr_info *info)
{
	struct tp_elf e;
	int ifunc = 0;
	if (tp_elf_open_phdr(&e, info) < 0)
		return NULL;
	return (next_fn)tp_elf_lookup(&e, "traceprof_copy_next", &ifunc);
}

int tp_copies_is_copy(struct dl_phdr_info *info)
{
	return marker(info) && !contains(info, (uintptr_t)&contains);
}

struct first_ctx {
	char *who;
	unsigned long size;
	int mine;
	int found;
};

static int find_first(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct first_ctx *c = data;
	if (!marker(info))
		return 0;
	c->found = 1;
	c->mine = contains(info, (uintptr_t)&contains);
	if (!c->mine && c->size)
		tp_format(c->who, (int)c->size, "%s", info->dlpi_name && info->dlpi_name[0] ?
			  info->dlpi_name : "the program");
	return 1;
}

int tp_copies_first(char *who, unsigned long size)
{
	struct first_ctx c = { who, size, 1, 0 };
	dl_iterate_phdr(find_first, &c);
	return !c.found || c.mine;
}

struct other_ctx {
	uintptr_t a;
	next_fn next; /* set when a lies in another copy */
	int done;
};

static int find_other(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct other_ctx *c = data;
	if (!contains(info, c->a))
		return 0;
	c->done = 1;
	if (!contains(info, (uintptr_t)&contains))
		c->next = marker(info);
	return 1;
}

int tp_copies_other(const void *p)
{
	struct other_ctx c = { (uintptr_t)p, NULL, 0 };
	if (!p)
		return 0;
	dl_iterate_phdr(find_other, &c);
	return c.next != NULL;
}

void *tp_copies_skip(void *p, const char *name)
{
	struct other_ctx c = { (uintptr_t)p, NULL, 0 };
	if (!p)
		return p;
	dl_iterate_phdr(find_other, &c);
	if (!c.next)
		return p;
	/* Called outside the walk: the other copy's look-up walks again. */
	return c.next(name);
}

/* The next definition of name after this copy, other copies skipped: what
 * a copy before this one in the search order gets instead of our wrapper.
 * dlsym(RTLD_NEXT) is called from here, so "next" means after this copy. */
TP_EXPORT void *traceprof_copy_next(const char *name)
{
	tp_dlsym_fn dl = tp_dl_real_dlsym();
	if (!dl || !name)
		return NULL;
	return tp_copies_skip(dl(RTLD_NEXT, name), name);
}
