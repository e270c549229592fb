/* NVTX extended payloads (the payload extension, nvToolsExtPayload.h):
 * the registries of schemas and enums that preload/nvtx_payload.c fills at
 * nvtxPayloadSchemaRegister / nvtxPayloadEnumRegister (slow path, any
 * thread), and the decoder the flush thread runs on the bytes a range
 * record carries.
 *
 * A record with TP_RF_PAYLOAD has, after its NUL-terminated name in the
 * extras, padded to 8 bytes, a struct tp_nvtx_payload_hdr and then the
 * first `copied` bytes of the payload (at most TP_NVTX_PAYLOAD_MAX: the
 * hot path copies a bounded number of bytes and nothing it points to). */
#ifndef TP_COLLECTOR_NVTX_PAYLOAD_DECODE_H
#define TP_COLLECTOR_NVTX_PAYLOAD_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "collector/record.h"
#include "format/event.h"

#define TP_NVTX_PAYLOAD_MAX 64
#define TP_NVTX_PAYLOAD_ENTRIES 16
#define TP_NVTX_PAYLOAD_NAME 40
/* At most this many args come from one payload. */
#define TP_NVTX_PAYLOAD_ARGS 8

struct tp_nvtx_payload_hdr {
	uint64_t schema; /* the schema id the program gave */
	uint32_t copied; /* bytes that follow */
	uint32_t size;	 /* the payload's size as the program gave it */
};

/* One entry of a static schema, as registered (name cut to fit). */
struct tp_nvtx_payload_entry {
	uint64_t type;	 /* NVTX_PAYLOAD_ENTRY_TYPE_*, or an enum's schema id */
	uint64_t offset; /* resolved: natural alignment when the program gave 0 */
	uint64_t flags;
	char name[TP_NVTX_PAYLOAD_NAME];
};

/* Registers a static schema of a domain (0: the default domain); returns
 * 0, or -1 when it cannot be kept (out of memory, too many entries). */
int tp_nvtx_schema_add(uint64_t domain, uint64_t id, const struct tp_nvtx_payload_entry *e,
		       unsigned n);

/* Registers an enum of a domain: n values and their names. */
int tp_nvtx_enum_add(uint64_t domain, uint64_t id, uint32_t size, const uint64_t *values,
		     const char *const *names, unsigned n);

/* The size of an enum registered in domain with id, or 0 when none. */
uint32_t tp_nvtx_enum_size(uint64_t domain, uint64_t id);

/* The size of a scalar payload entry type, or 0 when not a scalar. */
unsigned tp_nvtx_entry_type_size(uint64_t type);

/* Flush thread: the payload of record r of domain, if any: points *hdr and
 * *bytes at it and returns 1; 0 when r carries none. */
int tp_nvtx_payload_get(const struct tp_record *r, const struct tp_nvtx_payload_hdr **hdr,
			const unsigned char **bytes);

/* Flush thread: decodes a payload into args (room for
 * TP_NVTX_PAYLOAD_ARGS); returns their number.  A payload whose schema is
 * unknown, or an entry it cannot decode, is counted
 * (tp_nvtx_payload_undecoded()). */
unsigned tp_nvtx_payload_args(uint64_t domain, const struct tp_nvtx_payload_hdr *hdr,
			      const unsigned char *bytes, struct tp_arg *args);

/* Flush thread: as tp_nvtx_payload_args(), for the live file's open
 * ranges (collector/live.c), which it decodes again at every update:
 * counts nothing. */
unsigned tp_nvtx_payload_args_live(uint64_t domain, const struct tp_nvtx_payload_hdr *hdr,
				   const unsigned char *bytes, struct tp_arg *args);

/* Payloads (or entries of one) that could not be decoded so far. */
uint64_t tp_nvtx_payload_undecoded(void);

/* Writes the footer's "nvtx_payloads" object: schemas and enums registered
 * and payloads not decoded, since the process started. */
struct tp_doc;
void tp_nvtx_payload_footer(struct tp_doc *d);

#endif
