/* The fixed-size binary record that the hot path writes into a per-thread
 * ring and the flush thread turns into trace events.
 *
 * ABI note: the flush thread and the hot path are always built together, so
 * this layout may change freely between versions; it must stay exactly one
 * 64-byte cache line so that a record never straddles two lines. */
#ifndef TP_COLLECTOR_RECORD_H
#define TP_COLLECTOR_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum tp_rec_kind {
	TP_REC_NONE = 0,
	TP_REC_API = 1,		 /* an intercepted CUDA call: id = API id */
	TP_REC_STEP = 2,	 /* ProfilerStep#N: arg[0] = N, start..end */
	/* 3 was a paired marker record, never written: markers pair on the
	 * flush thread from BEGIN/END. */
	TP_REC_MARKER_BEGIN = 4, /* traceprof_marker_start; name in extras */
	TP_REC_MARKER_END = 5,	 /* traceprof_marker_finish; name in extras */
	TP_REC_INSTANT = 6,	 /* traceprof_marker_instant; name in extras */
	TP_REC_COUNTER = 7,	 /* name and key in extras (NUL-separated), value in arg[0] (double bits) */
	TP_REC_RANGE = 8,	 /* a complete NVTX range (push/pop, start/end): name in extras, arg[0] = domain id */
	/* 9 was a thread's name, never written: nvtxNameOsThread names
	 * threads directly (collector/nvtx_decode.h, tp_nvtx_thread_name_set). */
	TP_REC_OP = 10,		 /* a complete PyTorch operator (RecordFunction): start..end; name
				  * inline (TP_REC_INLINE_NAME_MAX) or in extras */
	TP_REC_EXTRA = 15,	 /* a continuation record, see below */
	TP_REC_KIND_COUNT = 16,
};

enum tp_rec_flags {
	TP_RF_STRING = 1u << 0, /* extras start with a NUL-terminated string */
	TP_RF_STACK = 1u << 1,	/* extras end with a stack: u64 depth, then IPs */
	TP_RF_TRUNC = 1u << 2,	/* the string was cut to fit TP_REC_MAX_EXTRA */
	TP_RF_CUDA_DRIVER = 1u << 3, /* API record of a driver (cu*) function */
	TP_RF_PYSTACK = 1u << 4, /* after the stack: u64 n, then n Python frames (collector/pystack_decode.h) */
	TP_RF_PAYLOAD = 1u << 5, /* TP_REC_RANGE: after the string, an NVTX payload (collector/nvtx_payload_decode.h) */
	/* MARKER_BEGIN, INSTANT: the string is the name then, without a
	 * separator, the categories ("forward,train"); arg[0] = the name's
	 * length.  One string, so that a stack still follows its NUL. */
	TP_RF_CATS = 1u << 6,
	/* TP_REC_OP: an autograd node run by the backward pass; `result` is
	 * its forward op's RecordFunction thread id, not its own (below). */
	TP_RF_OP_BWD = 1u << 7,
};

struct tp_record {
	uint64_t start; /* clock ticks (common/clock.h) */
	uint64_t end;	/* clock ticks; == start for instants */
	uint32_t step;	/* schedule step current when the record was started */
	uint16_t kind;	/* enum tp_rec_kind */
	uint8_t nextra; /* continuation records that follow this one */
	uint8_t flags;	/* enum tp_rec_flags */
	uint32_t id;	/* API id (TP_REC_API) */
	int32_t result; /* API return code (TP_REC_API) */
	uint64_t arg[4]; /* kind-specific */
};

_Static_assert(sizeof(struct tp_record) == 64, "a record is one cache line");

/* A string or a stack that does not fit in a record follows it in up to
 * TP_REC_MAX_EXTRA continuation records of 64 raw bytes each. */
#define TP_REC_MAX_EXTRA 8
#define TP_REC_EXTRA_BYTES 64

/* TP_REC_OP: what torch.profiler writes beside the name, when the library
 * could read it (preload/torch_ops.c): `id` the low 32 bits of the
 * RecordFunction's handle ("External id", 0: none); `result` the
 * RecordFunction thread id of the op's thread, or with TP_RF_OP_BWD of its
 * forward op's ("Fwd thread id"); arg[0] the "Sequence number" (-1: none).
 * A short name is kept in the record itself, in arg[1..3] (24 bytes),
 * NUL-terminated when shorter; no TP_RF_STRING then.  One record instead of
 * two, written in place (tp_emit_reserve1), for most operators. */
#define TP_REC_INLINE_NAME_MAX (sizeof(struct tp_record) - offsetof(struct tp_record, arg[1]))
_Static_assert(TP_REC_INLINE_NAME_MAX == 24, "arg[1..3] are the record's last 24 bytes");

static inline char *tp_record_inline_name(struct tp_record *r)
{
	return (char *)r + offsetof(struct tp_record, arg[1]);
}

/* The string a record carries in its extras (or "" with len 0): the flush
 * thread's, for every decoder of records (collector/<source>_decode.c,
 * which collector/convert.c dispatches to). */
static inline const char *tp_record_string(const struct tp_record *r, size_t *len)
{
	if (!(r->flags & TP_RF_STRING) && r->kind == TP_REC_OP) {
		const char *in = (const char *)r + offsetof(struct tp_record, arg[1]);
		*len = strnlen(in, TP_REC_INLINE_NAME_MAX);
		return in;
	}
	if (!(r->flags & TP_RF_STRING) || r->nextra == 0) {
		*len = 0;
		return "";
	}
	const char *s = (const char *)(r + 1);
	size_t max = (size_t)r->nextra * TP_REC_EXTRA_BYTES;
	const char *nul = memchr(s, '\0', max);
	*len = nul ? (size_t)(nul - s) : max;
	return s;
}

#endif
