/* NVTX's payload extension (nvtx3/nvToolsExtPayload.h), as NCCL uses it.
 *
 * An image that calls an extension function (nvtxPayloadSchemaRegister ...)
 * loads the injection library as for the core (NVTX_INJECTION64_PATH) and
 * calls its InitializeInjectionNvtxExtension(moduleInfo) once per module:
 * moduleInfo names the module and its compatibility id and hands us one
 * segment of function slots to fill.  We fill the payload module's
 * schema and enum registration; the data itself arrives with the core
 * calls (nvtxDomainRangePushEx ...) whose attributes have payloadType
 * NVTX_PAYLOAD_TYPE_EXT, reserved0 = the number of nvtxPayloadData_t and
 * payload.ullValue = their address.
 *
 * Registration is the slow path: the schema is copied into the collector's
 * registry (collector/nvtx_payload_decode.h) with its offsets resolved.  The hot
 * path copies at most TP_NVTX_PAYLOAD_MAX bytes of the payload into the
 * record; the flush thread decodes them.
 *
 * A loop of two files with nvtx.c, on purpose: the core calls there hand
 * extended payloads to this file (tp_nvtx_payload_extras), and a schema
 * registered here names its domain by nvtx.c's handles
 * (tp_nvtx_handle_domain).  They are one injection, split by NVTX
 * module. */
#include "preload/nvtx_payload.h"

#include <nvtx3/nvToolsExtPayload.h>

#include <stdatomic.h>
#include <string.h>

#include "collector/nvtx_payload_decode.h"
#include "preload/export.h"
#include "preload/state.h"

_Static_assert(TP_NVTX_PAYLOAD_TYPE_EXT == NVTX_PAYLOAD_TYPE_EXT, "the payload type's value");

/* The compatibility ids whose ABI (the structs above, the slot numbers) we
 * take: 0x0104 is the CUDA 13 toolkit's headers; NCCL bundles its own,
 * older copy of the payload extension: 0x0103 in NCCL 2.28.9 (what
 * libnccl.so.2 of the toolkit passes; test/integration/cuda_staticlibs.sh).
 * Its schema, enum and payload-data structs and the two registration
 * slots are laid out as 0x0104's.  0x0101 and 0x0102 (older NCCL) are
 * taken on the same footing, untested. */
static int compat_ok(uint16_t id)
{
	return id >= 0x0101 && id <= NVTX_EXT_PAYLOAD_COMPATID;
}

/* Schema ids we hand out for schemas registered without one. */
static _Atomic uint64_t next_dynamic_id = NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START;

static unsigned entry_size(uint64_t domain, uint64_t type)
{
	unsigned s = tp_nvtx_entry_type_size(type);
	if (!s && type >= NVTX_PAYLOAD_SCHEMA_ID_STATIC_START)
		s = tp_nvtx_enum_size(domain, type);
	return s;
}

static uint64_t NVTX_API cb_SchemaRegister(nvtxDomainHandle_t d, const nvtxPayloadSchemaAttr_t *a)
{
	if (!a)
		return 0;
	uint64_t domain = tp_nvtx_handle_domain(d);
	uint64_t id = (a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID)
			      ? a->schemaId
			      : atomic_fetch_add_explicit(&next_dynamic_id, 1, memory_order_relaxed);
	if ((a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE) &&
	    a->type != NVTX_PAYLOAD_SCHEMA_TYPE_STATIC)
		return id; /* only static schemas are decoded; their payloads are counted */
	if (!(a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES) || !a->entries)
		return id;
	size_t n = (a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES) ? a->numEntries
									    : (size_t)-1;
	struct tp_nvtx_payload_entry e[TP_NVTX_PAYLOAD_ENTRIES];
	memset(e, 0, sizeof(e));
	unsigned k = 0;
	uint64_t end = 0;
	for (size_t i = 0; i < n && k < TP_NVTX_PAYLOAD_ENTRIES; i++) {
		const nvtxPayloadSchemaEntry_t *s = &a->entries[i];
		if (n == (size_t)-1 && s->type == NVTX_PAYLOAD_ENTRY_TYPE_INVALID)
			break; /* the helper macros end the array with a zero entry */
		unsigned size = entry_size(domain, s->type);
		if (!size && s->type >= NVTX_PAYLOAD_SCHEMA_ID_STATIC_START)
			size = 4; /* an enum not (yet) registered: an int */
		uint64_t off = s->offset;
		/* Offset 0 past the first entry: the tool lays the entry out
		 * with natural alignment, as the compiler does the struct. */
		if (i > 0 && off == 0)
			off = size ? (end + size - 1) / size * size : end;
		end = off + size;
		e[k].type = s->type;
		e[k].offset = off;
		e[k].flags = s->flags;
		if (s->name)
			memcpy(e[k].name, s->name, strnlen(s->name, TP_NVTX_PAYLOAD_NAME - 1));
		k++;
	}
	tp_nvtx_schema_add(domain, id, e, k);
	return id;
}

static uint64_t NVTX_API cb_EnumRegister(nvtxDomainHandle_t d, const nvtxPayloadEnumAttr_t *a)
{
	if (!a)
		return 0;
	uint64_t id = (a->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID)
			      ? a->schemaId
			      : atomic_fetch_add_explicit(&next_dynamic_id, 1, memory_order_relaxed);
	if (!(a->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES) || !a->entries ||
	    !(a->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES))
		return id;
	uint32_t size = (a->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE) ? (uint32_t)a->sizeOfEnum
									  : 4;
	uint64_t values[64];
	const char *names[64];
	unsigned n = a->numEntries < 64 ? (unsigned)a->numEntries : 64;
	for (unsigned i = 0; i < n; i++) {
		values[i] = a->entries[i].value;
		names[i] = a->entries[i].name;
	}
	tp_nvtx_enum_add(tp_nvtx_handle_domain(d), id, size, values, names, n);
	return id;
}

TP_EXPORT int NVTX_API InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *m);
TP_EXPORT int NVTX_API InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *m)
{
	/* 0 makes every function of the module a no-op: right when profiling
	 * is off.  Modules we do not know get 1 and no functions: NVTX sets
	 * them to no-ops itself. */
	if (!m || !tp_preload_config()->enable)
		return 0;
	if (m->moduleId != NVTX_EXT_PAYLOAD_MODULEID || !compat_ok(m->compatId) ||
	    m->segmentsCount < 1 || !m->segments || !m->segments[0].functionSlots)
		return 1;
	nvtxExtModuleSegment_t *seg = &m->segments[0];
	if (seg->slotCount > NVTX3EXT_CBID_nvtxPayloadEnumRegister) {
		seg->functionSlots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister] =
			(intptr_t)cb_SchemaRegister;
		seg->functionSlots[NVTX3EXT_CBID_nvtxPayloadEnumRegister] = (intptr_t)cb_EnumRegister;
	}
	return 1;
}

size_t tp_nvtx_payload_extras(const nvtxEventAttributes_t *a, const char *name, size_t len,
			      char *buf, size_t size, int *cut)
{
	if (__builtin_expect(!a || a->payloadType != NVTX_PAYLOAD_TYPE_EXT, 1))
		return 0;
	const nvtxPayloadData_t *pd = (const nvtxPayloadData_t *)(uintptr_t)a->payload.ullValue;
	if (!pd || a->reserved0 < 1)
		return 0;
	size_t copied = pd->size < TP_NVTX_PAYLOAD_MAX ? pd->size : TP_NVTX_PAYLOAD_MAX;
	if (!pd->payload)
		copied = 0;
	size_t room = size - sizeof(struct tp_nvtx_payload_hdr) - TP_NVTX_PAYLOAD_MAX - 8;
	if (len > room) {
		len = room;
		*cut = 1;
	}
	memcpy(buf, name, len);
	buf[len] = '\0';
	size_t at = (len + 1 + 7) & ~(size_t)7;
	memset(buf + len + 1, 0, at - len - 1);
	struct tp_nvtx_payload_hdr h = { .schema = pd->schemaId,
					 .copied = (uint32_t)copied,
					 .size = (uint32_t)pd->size };
	memcpy(buf + at, &h, sizeof(h));
	if (copied)
		memcpy(buf + at + sizeof(h), pd->payload, copied);
	return at + sizeof(h) + copied;
}

uint32_t tp_nvtx_payload_peek(const nvtxEventAttributes_t *a, uint64_t *schema, const void **bytes)
{
	if (!tp_nvtx_has_payload(a))
		return 0;
	const nvtxPayloadData_t *pd = (const nvtxPayloadData_t *)(uintptr_t)a->payload.ullValue;
	if (!pd || a->reserved0 < 1 || !pd->payload || !pd->size)
		return 0;
	*schema = pd->schemaId;
	*bytes = pd->payload;
	return pd->size > UINT32_MAX ? UINT32_MAX : (uint32_t)pd->size;
}
