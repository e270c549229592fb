/* The kernel-name registry (collector/cuda_kernels.c).  Registration and
 * aliases come from the generated wrappers (any thread, rare: once per
 * kernel at module load); the lookups below run on the flush thread only. */
#ifndef TP_COLLECTOR_CUDA_KERNELS_H
#define TP_COLLECTOR_CUDA_KERNELS_H

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
/* The wrappers' hooks: __cudaRegisterFunction maps a host stub to its
 * mangled device name (copied); __cudaGetKernel aliases a kernel handle to
 * its stub. */
void tp_cuda_kernels_register(const void *host_fun, const char *device_name);
void tp_cuda_kernels_alias(const void *kernel, const void *host_fun);

/* What a driver namer returns when it cannot ask now (a stream capture is
 * open): the name is asked again at the kernel's next launch. */
#define TP_CUDA_KERNELS_ASK_LATER ((const char *)1)
/* Sets the flush thread's way to ask the driver for a CUfunction's or
 * CUkernel's (mangled) name, or NULL when it has none: the capture side's
 * (preload/cuda_namer.c), which calls the real driver.  Set once at
 * start. */
void tp_cuda_kernels_set_driver_namer(const char *(*fn)(const void *f));

/* Registrations that did not fit the table. */
uint64_t tp_cuda_kernels_dropped(void);

#endif
