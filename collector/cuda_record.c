/* The CUDA function table (collector/cuda_record.h), from the generated
 * build/gen/cuda_table.h: read by the wrappers' name lookups
 * (preload/resolve/cuda_match.c) and by the decoder (collector/cuda_decode.c).
 * Data only: the dlsym path reads it before a sanitizer's runtime is up,
 * so this file is built without instrumentation, as cuda_match.c is
 * (Makefile). */
#include "collector/cuda_record.h"

#define TP_CUDA_ROW(id, name, lib, dec, flags) { #name, sizeof(#name) - 1, lib, dec, flags },
const struct tp_cuda_fn tp_cuda_fns[TP_CUDA_NFUNCS + 1] = { TP_CUDA_FUNCS(TP_CUDA_ROW){ 0, 0, 0, 0, 0 } };
/* name_len is 8 bits: every name must be shorter than 256. */
#define TP_CUDA_LEN_CHECK(id, name, lib, dec, flags) \
	_Static_assert(sizeof(#name) <= 256, "CUDA function name too long: " #name);
TP_CUDA_FUNCS(TP_CUDA_LEN_CHECK)
#undef TP_CUDA_LEN_CHECK
#undef TP_CUDA_ROW
