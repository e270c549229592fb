/* Kernel names as the trace shows them, one copy per kernel for the whole
 * process (collector/kernel_names.c): the mangled device name demangled
 * once (common/demangle.c), whichever side met it first.  Both sides that
 * name kernels use it: the CUDA API events' registry
 * (collector/cuda_kernels.c, names from __cudaRegisterFunction and the
 * driver) and the GPU events' (collector/gpu_names.c, names from CUPTI), so
 * a kernel is demangled and kept once and both events carry the same text at
 * the same address (which a writer may intern by address).  Flush thread
 * only. */
#ifndef TP_COLLECTOR_KERNEL_NAMES_H
#define TP_COLLECTOR_KERNEL_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* The name shown for kernel `mangled` (NUL-terminated), and its length in
 * *len (when not NULL): stable for the life of the process, never freed.
 * NULL when out of memory (the caller shows the mangled text). */
const char *tp_kernel_name_shown(const char *mangled, uint32_t *len);

#endif
