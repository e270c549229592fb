/* The annotation store (collector/annos.h). */
#include "collector/annos.h"

#include <stdlib.h>
#include <string.h>

static struct {
	int on;
	struct tp_anno *a;
	size_t n, cap;
	char *names;
	size_t nlen, ncap;
	uint64_t missed;
} TA;

/* The names' bytes are capped too: 64 bytes an annotation on average. */
#define TA_NAMES_MAX ((size_t)TP_ANNOS_MAX * 64)

void tp_annos_keep(void)
{
	TA.on = 1;
}

const struct tp_anno *tp_annos(size_t *n)
{
	*n = TA.n;
	return TA.a;
}

const char *tp_anno_name(const struct tp_anno *a)
{
	return TA.names + a->name_off;
}

uint64_t tp_annos_missed(void)
{
	return TA.missed;
}

void tp_annos_add(int64_t pid, int64_t tid, const char *name, size_t nlen, uint64_t start,
		  uint64_t end)
{
	if (!TA.on || nlen >= UINT32_MAX)
		return;
	if (TA.n == TA.cap) {
		size_t cap = TA.cap ? TA.cap * 2 : 1024;
		struct tp_anno *a = TA.n < TP_ANNOS_MAX ? realloc(TA.a, cap * sizeof(*a)) : NULL;
		if (!a) {
			TA.missed++;
			return;
		}
		TA.a = a;
		TA.cap = cap;
	}
	if (TA.nlen + nlen + 1 > TA.ncap) {
		size_t cap = TA.ncap ? TA.ncap : 65536;
		while (cap < TA.nlen + nlen + 1)
			cap *= 2;
		char *b = cap <= TA_NAMES_MAX ? realloc(TA.names, cap) : NULL;
		if (!b) {
			TA.missed++;
			return;
		}
		TA.names = b;
		TA.ncap = cap;
	}
	memcpy(TA.names + TA.nlen, name, nlen);
	TA.names[TA.nlen + nlen] = '\0';
	TA.a[TA.n++] = (struct tp_anno){ pid, tid, start, end, (uint32_t)TA.nlen, (uint32_t)nlen };
	TA.nlen += nlen + 1;
}

void tp_annos_drop_before(uint64_t ns)
{
	size_t k = 0, len = 0;
	for (size_t i = 0; i < TA.n; i++) {
		struct tp_anno a = TA.a[i];
		if (a.end < ns)
			continue;
		/* Names move down in the same order: never over one not yet moved. */
		memmove(TA.names + len, TA.names + a.name_off, a.name_len + 1);
		a.name_off = (uint32_t)len;
		len += a.name_len + 1;
		TA.a[k++] = a;
	}
	TA.n = k;
	TA.nlen = len;
}
