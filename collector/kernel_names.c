/* One interned, demangled copy of each kernel name (collector/
 * kernel_names.h): a map from the mangled text (common/hashmap.h's byte
 * strings) to the name shown.  Entries are never removed: the registry and
 * the GPU timeline keep pointers to them, and a process has at most some
 * thousands of kernels. */
#include "collector/kernel_names.h"

#include <stdlib.h>
#include <string.h>

#include "common/demangle.h"
#include "common/hash.h"
#include "common/hashmap.h"

struct kn_name {
	char *shown;
	uint32_t len;
};

/* Flush thread only. */
static struct tp_smap kn_names;

const char *tp_kernel_name_shown(const char *mangled, uint32_t *len)
{
	size_t mlen = strlen(mangled);
	uint64_t h = tp_hash_bytes(mangled, mlen);
	struct tp_smap_ent *e = tp_smap_find(&kn_names, h, mangled, mlen);
	if (!e) {
		struct kn_name *k = malloc(sizeof(*k));
		if (!k)
			return NULL;
		k->shown = tp_demangle(mangled);
		if (!k->shown)
			k->shown = strdup(mangled);
		if (!k->shown) {
			free(k);
			return NULL;
		}
		k->len = (uint32_t)strlen(k->shown);
		e = tp_smap_add(&kn_names, h, mangled, mlen, (uint64_t)(uintptr_t)k);
		if (!e) {
			free(k->shown);
			free(k);
			return NULL;
		}
	}
	const struct kn_name *k = (const struct kn_name *)(uintptr_t)e->val;
	if (len)
		*len = k->len;
	return k->shown;
}
