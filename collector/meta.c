#include "collector/meta.h"

#include <stdatomic.h>

#include "collector/flush.h"

/* Set by the CUDA module on the program's threads, read by the flush thread:
 * two independent values, so relaxed accesses are enough (a file written
 * just before the call may miss them, which is what "when known" means). */
static _Atomic int meta_cuda_runtime, meta_cuda_driver;

void tp_meta_set_cuda_versions(int runtime, int driver)
{
	if (runtime > 0)
		atomic_store_explicit(&meta_cuda_runtime, runtime, memory_order_relaxed);
	if (driver > 0)
		atomic_store_explicit(&meta_cuda_driver, driver, memory_order_relaxed);
}

/* The footer's "cuda_runtime_version" / "cuda_driver_version", when known.
 * (Before the event layer they were repeated at the top level of the JSON
 * file; a writer's top level now holds only what struct tp_writer_trailer
 * gives it.) */
static void meta_footer(struct tp_doc *d)
{
	int rt = atomic_load_explicit(&meta_cuda_runtime, memory_order_relaxed);
	int drv = atomic_load_explicit(&meta_cuda_driver, memory_order_relaxed);
	if (rt)
		tp_doc_i64(d, "cuda_runtime_version", rt);
	if (drv)
		tp_doc_i64(d, "cuda_driver_version", drv);
}

const struct tp_flush_plugin tp_meta_plugin = {
	.name = "meta",
	.footer = meta_footer,
};
