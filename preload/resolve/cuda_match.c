/* The CUDA function table and the name logic that dlsym and cuGetProcAddress
 * need: exact lookup, and which exported variant (_vN, _ptsz, _ptds) of a
 * base name a real address belongs to.  Pure functions of the generated table,
 * so that test/unit/test_cuda_match.c can test them without a library. */
#include <string.h>

#include "preload/cuda_pack.h"

/* The table itself: collector/cuda_record.c. */

/* The first id whose name is not less than `name` (binary search: the
 * generator sorts the table in strcmp order). */
static int lower_bound(const char *name)
{
	int lo = 0, hi = TP_CUDA_NFUNCS;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (strcmp(tp_cuda_fns[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tp_cuda_find(const char *name)
{
	if (!name)
		return -1;
	int i = lower_bound(name);
	return i < TP_CUDA_NFUNCS && !strcmp(tp_cuda_fns[i].name, name) ? i : -1;
}

int tp_cuda_is_variant(const char *symbol, const char *name)
{
	size_t n = strlen(symbol);
	if (strncmp(symbol, name, n))
		return 0;
	const char *s = name + n;
	if (s[0] == '_' && s[1] == 'v' && s[2] >= '0' && s[2] <= '9') {
		s += 2;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return !*s || !strcmp(s, "_ptsz") || !strcmp(s, "_ptds");
}

int tp_cuda_match_variant(const char *symbol, const void *p,
			  void *(*lookup)(void *ctx, uint32_t id), void *ctx)
{
	if (!symbol || !p)
		return -1;
	size_t n = strlen(symbol);
	/* Every variant starts with the symbol, so they all lie in the range of
	 * names having it as a prefix, which is contiguous in sorted order. */
	for (int i = lower_bound(symbol); i < TP_CUDA_NFUNCS; i++) {
		const char *name = tp_cuda_fns[i].name;
		if (strncmp(name, symbol, n))
			break;
		if (!tp_cuda_is_variant(symbol, name))
			continue;
		if (lookup(ctx, (uint32_t)i) == p)
			return i;
	}
	return -1;
}
