/* The kernel-name registry (preload/cuda_kernels.c).  Registration and
 * aliases come from the generated wrappers (cuda_pack.h); the lookups below
 * run on the flush thread only. */
#ifndef TP_PRELOAD_CUDA_KERNELS_H
#define TP_PRELOAD_CUDA_KERNELS_H

#include <stdint.h>

/* The (demangled where possible) name registered for a host stub or a
 * kernel handle aliased to one, or NULL. */
const char *tp_cuda_kernels_name(const void *key);
/* The same, falling back to the driver's cuFuncGetName/cuKernelGetName for
 * a CUfunction/CUkernel; NULL when nobody knows. */
const char *tp_cuda_kernels_driver_name(const void *f);
/* Registrations that did not fit the table. */
uint64_t tp_cuda_kernels_dropped(void);

#endif
