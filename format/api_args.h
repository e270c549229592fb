/* The args of CUDA API events after "result" and "correlation", as typed
 * args (format/event.h): one builder per decoder class of
 * collector/cuda_record.h.  collector/cuda_decode.c unpacks records into these, and
 * bench/bench_compress.c builds its events with the same functions, so that
 * the benchmark measures the bytes a real trace holds.
 *
 * Each builder appends to args[*n] (room for TP_API_ARGS_MAX more).
 * Pointers and handles are TP_VAL_HEX (JSON numbers are doubles to most
 * readers and would round 64-bit addresses); sizes and counts are numbers.
 * Nothing here knows an output format. */
#ifndef TP_FORMAT_API_ARGS_H
#define TP_FORMAT_API_ARGS_H

#include <stdint.h>

#include "format/event.h"

#define TP_API_ARGS_MAX 6

/* A kernel launch (LAUNCH_RT, LAUNCH_DRV). */
struct tp_api_launch {
	/* The kernel's name, long lived (the kernel registry's: an arg
	 * marked stable, which a writer may intern); NULL: the handle is
	 * written as "kernel":"0x...". */
	const char *name;
	/* name's length when known (the registry keeps it); 0: strlen(). */
	uint32_t name_len;
	uint64_t handle;
	uint32_t grid[3], block[3];
	uint64_t shared; /* dynamic shared memory, bytes */
	uint64_t stream;
};
void tp_api_args_launch(struct tp_arg *args, unsigned *n, const struct tp_api_launch *a);

/* MEMCPY: kind in cudaMemcpyKind numbering (0 HtoH ... 4 Default). */
void tp_api_args_memcpy(struct tp_arg *args, unsigned *n, uint64_t bytes, unsigned kind,
			uint64_t dst, uint64_t src, int async, uint64_t stream);

/* MEMSET. */
void tp_api_args_memset(struct tp_arg *args, unsigned *n, uint64_t bytes, uint64_t value,
			uint64_t ptr, int async, uint64_t stream);

/* ALLOC, ALLOC_HOST: pool 0 is the device's default pool. */
void tp_api_args_alloc(struct tp_arg *args, unsigned *n, uint64_t bytes, uint64_t ptr,
		       int async, uint64_t stream, uint64_t pool);

/* FREE, FREE_HOST. */
void tp_api_args_free(struct tp_arg *args, unsigned *n, uint64_t ptr, int async,
		      uint64_t stream);

/* SYNC: the stream when has_stream, the event when not 0. */
void tp_api_args_sync(struct tp_arg *args, unsigned *n, int has_stream, uint64_t stream,
		      uint64_t event);

#endif
