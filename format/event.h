/* Format-neutral trace events: what the event sources (CUDA API records,
 * CUPTI activity, NVTX, markers and steps, the sampler, stacks) hand to a
 * writer (format/writer.h), and what a writer turns into bytes.  Nothing in
 * here knows JSON or protobuf.
 *
 * An event lives on a track: a process (pid) and a thread within it (tid).
 * GPU work uses a device's made-up pid (collector/gpu.h) and the stream as
 * its tid, as Kineto does.  Times are CLOCK_MONOTONIC nanoseconds.
 *
 * Events are built on the stack by their source and read by the writer
 * during tp_writer_event() only: every pointer in them may be reused after
 * the call, except where a field says "stable". */
#ifndef TP_FORMAT_EVENT_H
#define TP_FORMAT_EVENT_H

#include <stddef.h>
#include <stdint.h>

enum tp_ev_kind {
	TP_EV_SLICE = 0, /* a complete slice: ts .. end */
	TP_EV_INSTANT,	 /* a point in time on its thread: ts */
	TP_EV_COUNTER,	 /* name's series set to args[0]'s value at ts */
	/* The two ends of an arrow (Chrome's v1 flow events): FLOW_OUT at the
	 * cause (a host call: pid, tid, its start), FLOW_IN at the effect (a
	 * GPU event: its track and start), the same id.  A writer whose
	 * format binds arrows to slices instead uses the slices' flow_out /
	 * flow_in fields and may ignore these. */
	TP_EV_FLOW_OUT,
	TP_EV_FLOW_IN,
};

enum tp_val_type {
	TP_VAL_U64 = 0,
	TP_VAL_I64,
	TP_VAL_HEX,  /* a u64 shown as "0x..." (an address or handle) */
	TP_VAL_F64,
	TP_VAL_BOOL, /* u != 0 */
	TP_VAL_STR,  /* s, n bytes */
	TP_VAL_STRS, /* strs[0 .. n-1], NUL-terminated strings (a call stack) */
	TP_VAL_I64S, /* is[0 .. n-1] */
	TP_VAL_DIM3, /* v3[0..2] (grid, block) */
	TP_VAL_JSON, /* s, n bytes of JSON text, checked by its source (PyTorch's
		      * "Input Dims"); a string where the format has no JSON */
};

/* One typed argument of an event.  key is a literal of plain characters
 * (letters, digits, spaces, '_', '.', '%', '(', ')', '/'): writers copy it
 * without escaping and may remember it by address. */
struct tp_arg {
	const char *key;
	uint8_t klen;
	uint8_t type;	/* enum tp_val_type */
	uint8_t stable; /* STR: s is long lived and its text fixed while it
			 * lives: a writer may intern it by address (checking
			 * the text: a freed and reused address must not yield a
			 * stale string) */
	uint32_t n;	/* STR: bytes; STRS, I64S: elements */
	union {
		uint64_t u;
		int64_t i;
		double f;
		const char *s;
		const char *const *strs;
		const int64_t *is;
		uint32_t v3[3];
	};
};

/* Argument constructors, for a source's arrays of args. */
#define TP_ARG_KEY(k) .key = (k), .klen = sizeof(k) - 1
static inline struct tp_arg tp_arg_u64(const char *key, size_t klen, uint64_t v)
{
	return (struct tp_arg){ .key = key, .klen = (uint8_t)klen, .type = TP_VAL_U64, .u = v };
}
static inline struct tp_arg tp_arg_i64(const char *key, size_t klen, int64_t v)
{
	return (struct tp_arg){ .key = key, .klen = (uint8_t)klen, .type = TP_VAL_I64, .i = v };
}
static inline struct tp_arg tp_arg_hex(const char *key, size_t klen, uint64_t v)
{
	return (struct tp_arg){ .key = key, .klen = (uint8_t)klen, .type = TP_VAL_HEX, .u = v };
}
static inline struct tp_arg tp_arg_f64(const char *key, size_t klen, double v)
{
	return (struct tp_arg){ .key = key, .klen = (uint8_t)klen, .type = TP_VAL_F64, .f = v };
}
static inline struct tp_arg tp_arg_bool(const char *key, size_t klen, int v)
{
	return (struct tp_arg){ .key = key, .klen = (uint8_t)klen, .type = TP_VAL_BOOL, .u = v != 0 };
}
static inline struct tp_arg tp_arg_str(const char *key, size_t klen, const char *s, size_t n,
				       int stable)
{
	return (struct tp_arg){ .key = key, .klen = (uint8_t)klen, .type = TP_VAL_STR,
				.stable = (uint8_t)(stable != 0), .n = (uint32_t)n, .s = s };
}
static inline struct tp_arg tp_arg_json(const char *key, size_t klen, const char *s, size_t n)
{
	return (struct tp_arg){ .key = key, .klen = (uint8_t)klen, .type = TP_VAL_JSON,
				.n = (uint32_t)n, .s = s };
}
/* With a literal key: TP_ARG(u64, "bytes", v) -> tp_arg_u64("bytes", 5, v). */
#define TP_ARG(type, key, ...) tp_arg_##type(key, sizeof(key) - 1, __VA_ARGS__)

#define TP_EV_MAX_ARGS 24

struct tp_event {
	uint8_t kind;	     /* enum tp_ev_kind */
	uint8_t name_stable; /* name is long lived, as tp_arg.stable */
	uint16_t nargs;
	uint32_t name_len;
	const char *cat; /* a literal (plain characters, as keys); writers
			  * may remember it by address */
	const char *name;
	int64_t pid, tid;
	uint64_t ts, end; /* end: slices only */
	/* FLOW_OUT / FLOW_IN: the arrow's id.  Slices: 0, or the id of an
	 * arrow this slice starts (flow_out: a host call that caused GPU
	 * work) or ends (flow_in: that GPU work), for writers that bind
	 * arrows to slices; the source also emits the FLOW_* events, whose
	 * ids may differ (the CUDA source binds by correlation number, one
	 * per call, and numbers FLOW_* events per arrow, for the GPU events
	 * of a graph launch). */
	uint64_t id;
	uint64_t flow_out, flow_in;
	/* The leaf of the event's native call stack in the stack-frame table
	 * (collector/stacks.c, tp_writer_frame()); 0: none. */
	uint32_t sf;
	const struct tp_arg *args;
};

/* The fields most events leave 0, for an initializer that names none of
 * them.  An initializer that leaves any field out makes gcc clear the whole
 * struct first with `rep stos`, whose start-up (tens of cycles) costs as much
 * as formatting a small event; naming every field avoids it.  Optional:
 * fields left out are 0 either way. */
#define TP_EV_NO_EXTRAS .id = 0, .flow_out = 0, .flow_in = 0, .sf = 0

/* ---- a document of typed values ------------------------------------------
 *
 * The trace's own facts that are not events: the footer (counts, threads,
 * configuration, each plugin's fields) and the GPUs' properties.  Built by
 * the collector and its plugins, serialized by the writer (JSON: objects
 * and arrays; Perfetto: nested debug annotations).  Flush thread only. */
enum tp_doc_kind {
	TP_DOC_VALUE = 0, /* a scalar: val */
	TP_DOC_OBJECT,	  /* opens an object; members follow until TP_DOC_END */
	TP_DOC_ARRAY,	  /* opens an array; elements follow until TP_DOC_END */
	TP_DOC_END,
};

struct tp_doc_node {
	uint8_t kind; /* enum tp_doc_kind */
	uint8_t type; /* VALUE: enum tp_val_type (U64, I64, F64, BOOL, STR) */
	uint32_t key; /* offset of the key in text + 1; 0: none (an array element) */
	uint32_t str, len; /* STR: offset and length in text */
	union {
		uint64_t u;
		int64_t i;
		double f;
	};
};

struct tp_doc {
	struct tp_doc_node *nodes;
	size_t n, cap;
	char *text; /* NUL-terminated copies of strings and keys */
	size_t text_len, text_cap;
	int error; /* out of memory: the doc is incomplete */
};

static inline const char *tp_doc_key(const struct tp_doc *d, const struct tp_doc_node *x)
{
	return x->key ? d->text + x->key - 1 : NULL;
}
static inline const char *tp_doc_text(const struct tp_doc *d, const struct tp_doc_node *x)
{
	return d->text + x->str;
}

void tp_doc_init(struct tp_doc *d);
void tp_doc_free(struct tp_doc *d);
/* Empties d, keeping its memory. */
void tp_doc_reset(struct tp_doc *d);
/* Adds a member (key != NULL: inside an object) or an element (key NULL:
 * inside an array).  Strings and keys are copied. */
void tp_doc_u64(struct tp_doc *d, const char *key, uint64_t v);
void tp_doc_i64(struct tp_doc *d, const char *key, int64_t v);
void tp_doc_f64(struct tp_doc *d, const char *key, double v);
void tp_doc_bool(struct tp_doc *d, const char *key, int v);
void tp_doc_str(struct tp_doc *d, const char *key, const char *s);
/* n bytes at s (any bytes: writers escape them as event names). */
void tp_doc_strn(struct tp_doc *d, const char *key, const char *s, size_t n);
/* Appends a copy of src's nodes to d. */
void tp_doc_append(struct tp_doc *d, const struct tp_doc *src);
void tp_doc_object(struct tp_doc *d, const char *key);
void tp_doc_array(struct tp_doc *d, const char *key);
void tp_doc_end(struct tp_doc *d);

#endif
