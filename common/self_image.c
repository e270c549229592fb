/* The loaded object that holds an address (common/self_image.h). */
#include "common/self_image.h"

#include <link.h>
#include <string.h>

struct si_find {
	uintptr_t addr;
	struct tp_image *im;
};

static int si_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	struct si_find *f = ctx;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (f->addr < lo || f->addr >= hi)
		return 0;
	struct tp_image *im = f->im;
	im->lo = lo;
	im->hi = hi;
	im->name = info->dlpi_name ? info->dlpi_name : "";
	for (int i = 0; i < info->dlpi_phnum && im->nro < TP_IMAGE_RO_MAX; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		im->ro_lo[im->nro] = info->dlpi_addr + ph->p_vaddr;
		im->ro_hi[im->nro] = im->ro_lo[im->nro] + ph->p_filesz;
		im->nro++;
	}
	return 1;
}

int tp_image_of(const void *addr, struct tp_image *im)
{
	memset(im, 0, sizeof(*im));
	struct si_find f = { (uintptr_t)addr, im };
	if (dl_iterate_phdr(si_cb, &f))
		return 0;
	memset(im, 0, sizeof(*im));
	return -1;
}

int tp_image_ro_holds(const struct tp_image *im, const void *p, size_t n)
{
	uintptr_t x = (uintptr_t)p;
	for (int i = 0; i < im->nro; i++)
		if (x >= im->ro_lo[i] && x <= im->ro_hi[i] && n <= im->ro_hi[i] - x)
			return 1;
	return 0;
}
