/* Finding and opening libcupti, and its symbol table (tp_cupti_fn): the
 * one place that says which libcupti traceprof uses. */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "common/log.h"
#include "preload/cuda_pack.h"
#include "preload/cupti_internal.h"

struct tp_cupti_api tp_cupti_fn;

struct loaded_cupti {
	char path[300];
};

/* dl_iterate_phdr callback: the path of a loaded libcupti.so*, if any. */
static int find_cupti(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct loaded_cupti *found = data;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strncmp(base, "libcupti.so", 11))
		return 0;
	tp_format(found->path, sizeof(found->path), "%s", name);
	return 1;
}

static void *open_cupti(char *err, size_t errlen)
{
	const char *env_home = getenv("CUDA_HOME");
	char p1[600], p2[600];
	tp_format(p1, sizeof(p1), "%s/lib64/libcupti.so", env_home ? env_home : TRACEPROF_CUDA_HOME);
	tp_format(p2, sizeof(p2), "%s/extras/CUPTI/lib64/libcupti.so",
		  env_home ? env_home : TRACEPROF_CUDA_HOME);
	/* A libcupti the process already has (PyTorch's, from its wheel or a
	 * toolkit) first: a second copy would compete with it for the driver's
	 * callbacks.  The version check in load() still applies to it. */
	void *loaded = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (loaded)
		return loaded;
	/* Another CUPTI (another CUDA major's, e.g. a PyTorch built for CUDA
	 * 12): loading ours next to it could break the program's own
	 * profiling, so stay host-only. */
	struct loaded_cupti other = { "" };
	if (dl_iterate_phdr(find_cupti, &other) && other.path[0]) {
		tp_format(err, (int)errlen,
			  "another CUPTI is already loaded (%s); a second one would compete with "
			  "it",
			  other.path);
		return NULL;
	}
	/* Then the toolkit this library was built against: its record layouts
	 * are the ones collector/cupti_decode.c reads. */
	const char *const tries[] = { TRACEPROF_CUDA_HOME "/lib64/libcupti.so.13", "libcupti.so.13",
				      p1, p2, "libcupti.so" };
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		void *h = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
	}
	const char *e = dlerror();
	tp_format(err, (int)errlen, "cannot load libcupti (%s)", e ? e : "not found");
	return NULL;
}

/* Not our hook, which would hand out our wrappers of the driver and our
 * interposed cuptiActivityRegisterCallbacks. */
void *tp_cupti_real_sym(void *h, const char *name)
{
	tp_dlsym_fn dl = tp_dl_real_dlsym();
	return dl ? dl(h, name) : NULL;
}

const char *tp_cupti_result_str(CUptiResult r)
{
	const char *s = NULL;
	if (tp_cupti_fn.GetResultString && tp_cupti_fn.GetResultString(r, &s) == CUPTI_SUCCESS &&
	    s)
		return s;
	return "unknown CUPTI error";
}

#define RESOLVE(field, sym, required)                                                   \
	do {                                                                            \
		tp_cupti_fn.field = (__typeof__(tp_cupti_fn.field))tp_cupti_real_sym(   \
			tp_cupti_fn.h, #sym);                                           \
		if (!tp_cupti_fn.field && (required)) {                                 \
			tp_format(err, (int)errlen, "libcupti lacks %s", #sym);         \
			return -1;                                                      \
		}                                                                       \
	} while (0)

int tp_cupti_open(char *err, size_t errlen)
{
	tp_cupti_fn.h = open_cupti(err, errlen);
	if (!tp_cupti_fn.h)
		return -1;
	RESOLVE(GetVersion, cuptiGetVersion, 1);
	RESOLVE(GetResultString, cuptiGetResultString, 0);
	RESOLVE(RegisterTimestampCallback, cuptiActivityRegisterTimestampCallback, 0);
	RESOLVE(RegisterCallbacks, cuptiActivityRegisterCallbacks, 1);
	RESOLVE(Enable, cuptiActivityEnable, 1);
	RESOLVE(Disable, cuptiActivityDisable, 1);
	RESOLVE(FlushAll, cuptiActivityFlushAll, 1);
	RESOLVE(GetNextRecord, cuptiActivityGetNextRecord, 1);
	RESOLVE(GetNumDroppedRecords, cuptiActivityGetNumDroppedRecords, 1);
	RESOLVE(PushExternalCorrelationId, cuptiActivityPushExternalCorrelationId, 1);
	RESOLVE(PopExternalCorrelationId, cuptiActivityPopExternalCorrelationId, 1);
	return 0;
}
