/* The capture side of kernel names: asking the driver.  The registry that
 * maps stubs and handles to names, and the names' one demangling, are the
 * flush thread's (collector/cuda_kernels.c); this file is its way to the
 * real driver, which only preload/ resolves (preload/resolve/cuda_scope.c). */
#include <stddef.h>

#include "collector/cuda_kernels.h"
#include "preload/cuda_pack.h"
#include "preload/sources.h"

/* cuFuncGetName (and cuKernelGetName for a CUkernel passed where a CUfunction
 * is expected) through the real driver functions, never the wrappers: this
 * runs on the flush thread, which must not record.  The registry caches the
 * answer: the driver is asked once per handle. */
typedef int (*get_name_fn)(const char **, const void *);

static const char *driver_name(const void *f)
{
	const char *name = NULL;
	/* Not while a stream capture is open (preload/cuda_capture.c): the
	 * name is asked again at the kernel's next launch. */
	if (!tp_cuda_naming_enter())
		return TP_CUDA_KERNELS_ASK_LATER;
	static const char *const getters[] = { "cuFuncGetName", "cuKernelGetName" };
	for (size_t g = 0; g < 2 && !name; g++) {
		int id = tp_cuda_find(getters[g]);
		get_name_fn fn = id >= 0 ? (get_name_fn)tp_cuda_real((uint32_t)id) : NULL;
		const char *n = NULL;
		if (fn && fn(&n, f) == 0 && n)
			name = n;
	}
	tp_cuda_naming_leave();
	return name;
}

int tp_cuda_kernels_start(const struct tp_config *cfg)
{
	(void)cfg;
	tp_cuda_kernels_set_driver_namer(driver_name);
	return 0;
}
