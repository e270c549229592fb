/* NVTX extended payloads: registries and the flush thread's decoder
 * (collector/nvtx_payload_decode.h). */
#include "collector/nvtx_payload_decode.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The payload extension's type ids (nvToolsExtPayload.h); repeated here so
 * that the collector builds without the toolkit's headers. */
enum {
	PT_CHAR = 1, PT_UCHAR, PT_SHORT, PT_USHORT, PT_INT, PT_UINT, PT_LONG, PT_ULONG,
	PT_LONGLONG, PT_ULONGLONG, PT_INT8, PT_UINT8, PT_INT16, PT_UINT16, PT_INT32,
	PT_UINT32, PT_INT64, PT_UINT64, PT_FLOAT, PT_DOUBLE, PT_LONGDOUBLE, PT_SIZE,
	PT_ADDRESS,
	PT_CATEGORY = 68, PT_COLOR_ARGB = 69, PT_SCOPE_ID = 70, PT_PID_UINT32 = 71,
	PT_PID_UINT64 = 72, PT_TID_UINT32 = 73, PT_TID_UINT64 = 74,
};
#define SCHEMA_ID_STATIC_START (1ull << 24)

#define ENUM_VALUES 64

struct schema {
	struct schema *next;
	uint64_t domain, id;
	unsigned n;
	struct tp_nvtx_payload_entry e[TP_NVTX_PAYLOAD_ENTRIES];
};

struct enum_def {
	struct enum_def *next;
	uint64_t domain, id;
	uint32_t size;
	unsigned n;
	uint64_t values[ENUM_VALUES];
	char names[ENUM_VALUES][TP_NVTX_PAYLOAD_NAME];
};

/* Lists that only grow: a node is filled, then published by a release CAS
 * on the head, which pairs with the acquire load of the readers (flush
 * thread, or a program thread registering a schema that uses an enum), so
 * a reader never sees a half-filled node.  Registration is rare (NCCL
 * registers a dozen schemas once), so a list scan is cheap enough. */
static _Atomic(struct schema *) schemas;
static _Atomic(struct enum_def *) enums;
static _Atomic uint64_t undecoded;

int tp_nvtx_schema_add(uint64_t domain, uint64_t id, const struct tp_nvtx_payload_entry *e,
		       unsigned n)
{
	if (n > TP_NVTX_PAYLOAD_ENTRIES)
		return -1;
	struct schema *s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->domain = domain;
	s->id = id;
	s->n = n;
	memcpy(s->e, e, n * sizeof(*e));
	s->next = atomic_load_explicit(&schemas, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&schemas, &s->next, s, memory_order_release,
						      memory_order_relaxed))
		;
	return 0;
}

int tp_nvtx_enum_add(uint64_t domain, uint64_t id, uint32_t size, const uint64_t *values,
		     const char *const *names, unsigned n)
{
	struct enum_def *d = calloc(1, sizeof(*d));
	if (!d)
		return -1;
	if (n > ENUM_VALUES)
		n = ENUM_VALUES;
	d->domain = domain;
	d->id = id;
	d->size = size;
	d->n = n;
	for (unsigned i = 0; i < n; i++) {
		d->values[i] = values[i];
		if (names[i]) {
			size_t len = strnlen(names[i], TP_NVTX_PAYLOAD_NAME - 1);
			memcpy(d->names[i], names[i], len);
		}
	}
	d->next = atomic_load_explicit(&enums, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&enums, &d->next, d, memory_order_release,
						      memory_order_relaxed))
		;
	return 0;
}

static const struct enum_def *enum_find(uint64_t domain, uint64_t id)
{
	/* Pairs with the release CAS in tp_nvtx_enum_add(). */
	for (const struct enum_def *d = atomic_load_explicit(&enums, memory_order_acquire); d;
	     d = d->next)
		if (d->domain == domain && d->id == id)
			return d;
	return NULL;
}

static const struct schema *schema_find(uint64_t domain, uint64_t id)
{
	/* Pairs with the release CAS in tp_nvtx_schema_add(). */
	for (const struct schema *s = atomic_load_explicit(&schemas, memory_order_acquire); s;
	     s = s->next)
		if (s->domain == domain && s->id == id)
			return s;
	return NULL;
}

uint32_t tp_nvtx_enum_size(uint64_t domain, uint64_t id)
{
	const struct enum_def *d = enum_find(domain, id);
	return d ? d->size : 0;
}

unsigned tp_nvtx_entry_type_size(uint64_t type)
{
	switch (type) {
	case PT_CHAR: case PT_UCHAR: case PT_INT8: case PT_UINT8:
		return 1;
	case PT_SHORT: case PT_USHORT: case PT_INT16: case PT_UINT16:
		return 2;
	case PT_INT: case PT_UINT: case PT_INT32: case PT_UINT32: case PT_FLOAT:
	case PT_CATEGORY: case PT_COLOR_ARGB: case PT_PID_UINT32: case PT_TID_UINT32:
		return 4;
	case PT_LONG: case PT_ULONG: case PT_LONGLONG: case PT_ULONGLONG: case PT_INT64:
	case PT_UINT64: case PT_DOUBLE: case PT_SIZE: case PT_ADDRESS: case PT_SCOPE_ID:
	case PT_PID_UINT64: case PT_TID_UINT64:
		return 8;
	default:
		return 0;
	}
}

static int type_signed(uint64_t type)
{
	switch (type) {
	case PT_CHAR: case PT_SHORT: case PT_INT: case PT_LONG: case PT_LONGLONG:
	case PT_INT8: case PT_INT16: case PT_INT32: case PT_INT64:
		return 1;
	default:
		return 0;
	}
}

int tp_nvtx_payload_get(const struct tp_record *r, const struct tp_nvtx_payload_hdr **hdr,
			const unsigned char **bytes)
{
	if (!(r->flags & TP_RF_PAYLOAD) || !(r->flags & TP_RF_STRING) || r->nextra == 0)
		return 0;
	const unsigned char *x = (const unsigned char *)(r + 1);
	size_t max = (size_t)r->nextra * TP_REC_EXTRA_BYTES;
	const unsigned char *nul = memchr(x, '\0', max);
	if (!nul)
		return 0;
	size_t at = ((size_t)(nul - x) + 1 + 7) & ~(size_t)7;
	if (at + sizeof(**hdr) > max)
		return 0;
	const struct tp_nvtx_payload_hdr *h = (const void *)(x + at);
	if (at + sizeof(*h) + h->copied > max || h->copied > TP_NVTX_PAYLOAD_MAX)
		return 0;
	*hdr = h;
	*bytes = x + at + sizeof(*h);
	return 1;
}

/* NCCL names its entries for people ("Message size [bytes]"); the args
 * get the short keys Nsight Systems users know.  Other names stay. */
static const char *arg_key(const char *name, size_t *klen)
{
	static const struct {
		const char *from, *to;
	} keys[] = {
		{ "Message size [bytes]", "bytes" }, { "NCCL communicator ID", "comm" },
		{ "Reduction operation", "op" },     { "No. of ranks", "nranks" },
		{ "Rank", "myrank" },		     { "CUDA device", "cudaDev" },
		{ "Peer rank", "peer" },	     { "No. of devices", "ndev" },
		{ "Root rank", "root" },
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(name, keys[i].from)) {
			*klen = strlen(keys[i].to);
			return keys[i].to;
		}
	*klen = strlen(name);
	return name;
}

static uint64_t load(const unsigned char *p, unsigned size, int sign)
{
	uint64_t v = 0;
	memcpy(&v, p, size); /* little-endian: the low bytes */
	if (sign && size < 8 && (p[size - 1] & 0x80))
		v |= ~0ull << (size * 8);
	return v;
}

/* count: whether what cannot be decoded is counted (the records' payloads,
 * once each), or not (the live file's look at an open range, once a
 * second). */
static unsigned pd_args(uint64_t domain, const struct tp_nvtx_payload_hdr *hdr,
			const unsigned char *bytes, struct tp_arg *args, int count)
{
	const struct schema *s = schema_find(domain, hdr->schema);
	if (!s) {
		if (count)
			atomic_fetch_add_explicit(&undecoded, 1, memory_order_relaxed);
		return 0;
	}
	unsigned n = 0, lost = 0;
	for (unsigned i = 0; i < s->n && n < TP_NVTX_PAYLOAD_ARGS; i++) {
		const struct tp_nvtx_payload_entry *e = &s->e[i];
		const struct enum_def *en = NULL;
		unsigned size = tp_nvtx_entry_type_size(e->type);
		if (!size && e->type >= SCHEMA_ID_STATIC_START &&
		    (en = enum_find(domain, e->type)))
			size = en->size;
		if (!e->name[0])
			continue;
		if (!size || size > 8 || e->flags || e->offset + size > hdr->copied) {
			lost = 1;
			continue;
		}
		size_t klen;
		const char *key = arg_key(e->name, &klen);
		uint64_t v = load(bytes + e->offset, size, type_signed(e->type));
		struct tp_arg a;
		if (en) {
			const char *name = NULL;
			for (unsigned k = 0; k < en->n; k++)
				if (en->values[k] == v)
					name = en->names[k];
			a = name ? tp_arg_str(key, klen, name, strlen(name), 1)
				 : tp_arg_u64(key, klen, v);
		} else if (e->type == PT_ADDRESS || !strcmp(key, "comm")) {
			a = tp_arg_hex(key, klen, v);
		} else if (e->type == PT_FLOAT || e->type == PT_DOUBLE) {
			double d;
			if (size == 4) {
				float f;
				memcpy(&f, &v, 4);
				d = f;
			} else {
				memcpy(&d, &v, 8);
			}
			a = tp_arg_f64(key, klen, d);
		} else if (type_signed(e->type)) {
			a = tp_arg_i64(key, klen, (int64_t)v);
		} else {
			a = tp_arg_u64(key, klen, v);
		}
		args[n++] = a;
	}
	if (lost && count)
		atomic_fetch_add_explicit(&undecoded, 1, memory_order_relaxed);
	return n;
}

unsigned tp_nvtx_payload_args(uint64_t domain, const struct tp_nvtx_payload_hdr *hdr,
			      const unsigned char *bytes, struct tp_arg *args)
{
	return pd_args(domain, hdr, bytes, args, 1);
}

unsigned tp_nvtx_payload_args_live(uint64_t domain, const struct tp_nvtx_payload_hdr *hdr,
				   const unsigned char *bytes, struct tp_arg *args)
{
	return pd_args(domain, hdr, bytes, args, 0);
}

uint64_t tp_nvtx_payload_undecoded(void)
{
	return atomic_load_explicit(&undecoded, memory_order_relaxed);
}

void tp_nvtx_payload_footer(struct tp_doc *d)
{
	uint64_t ns = 0, ne = 0;
	/* Pair with the release CASes of the registrations. */
	for (const struct schema *s = atomic_load_explicit(&schemas, memory_order_acquire); s;
	     s = s->next)
		ns++;
	for (const struct enum_def *e = atomic_load_explicit(&enums, memory_order_acquire); e;
	     e = e->next)
		ne++;
	tp_doc_object(d, "nvtx_payloads");
	tp_doc_u64(d, "schemas", ns);
	tp_doc_u64(d, "enums", ne);
	tp_doc_u64(d, "undecoded", tp_nvtx_payload_undecoded());
	tp_doc_end(d);
}
