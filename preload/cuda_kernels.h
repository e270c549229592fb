/* The kernel-name registry (preload/cuda_kernels.c).  Registration and
 * aliases come from the generated wrappers (cuda_pack.h); the lookups below
 * run on the flush thread only. */
#ifndef TP_PRELOAD_CUDA_KERNELS_H
#define TP_PRELOAD_CUDA_KERNELS_H

#include <stdint.h>

/* The (demangled where possible) name registered for a host stub or a
 * kernel handle aliased to one, or NULL. */
const char *tp_cuda_kernels_name(const void *key);
/* The same with the name's length in *len (when not NULL and a name is
 * returned): a registered name's length is kept with it, so that the
 * flush thread need not strlen() a kernel name on every launch. */
const char *tp_cuda_kernels_name_len(const void *key, uint32_t *len);
/* tp_cuda_kernels_name_len(), falling back to the driver's
 * cuFuncGetName/cuKernelGetName for a CUfunction/CUkernel; NULL when nobody
 * knows. */
const char *tp_cuda_kernels_driver_name_len(const void *f, uint32_t *len);
/* Registrations that did not fit the table. */
uint64_t tp_cuda_kernels_dropped(void);

#endif
