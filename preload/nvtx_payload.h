/* NVTX's payload extension (preload/nvtx_payload.c). */
#ifndef TP_PRELOAD_NVTX_PAYLOAD_H
#define TP_PRELOAD_NVTX_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <nvtx3/nvToolsExt.h>

/* The domain id (collector/nvtx_decode.h) of an NVTX domain handle
 * (preload/nvtx.c). */
uint64_t tp_nvtx_handle_domain(nvtxDomainHandle_t d);

/* NVTX_PAYLOAD_TYPE_EXT (nvToolsExtPayload.h), which this header does
 * not include: an event's payloadType when an extended payload is given. */
#define TP_NVTX_PAYLOAD_TYPE_EXT ((int32_t)0xDFBD0009)

/* Hot path: whether a carries an extended payload (one compare). */
static inline int tp_nvtx_has_payload(const nvtxEventAttributes_t *a)
{
	return a && a->payloadType == TP_NVTX_PAYLOAD_TYPE_EXT;
}

/* Hot path: when a carries an extended payload (NVTX_PAYLOAD_TYPE_EXT),
 * writes into buf (size bytes) the extras of a range record: the name
 * (len bytes, cut to fit) and its NUL, padding, the payload header and at
 * most TP_NVTX_PAYLOAD_MAX bytes of the first payload; returns their
 * length, and sets *cut when the name was cut.  Returns 0 when a carries
 * none.  No allocation, lock or call: memcpy only. */
size_t tp_nvtx_payload_extras(const nvtxEventAttributes_t *a, const char *name, size_t len,
			      char *buf, size_t size, int *cut);

/* NVTX push path (the live file's slot, collector/live_pub.h): the first
 * extended payload of a, as its schema id, address and size in bytes (the
 * caller copies a bounded part of it at once); returns the size, 0 when a
 * carries none.  Loads only. */
uint32_t tp_nvtx_payload_peek(const nvtxEventAttributes_t *a, uint64_t *schema,
			      const void **bytes);

#endif
