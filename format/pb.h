/* A small protobuf encoder: varints, fixed 64-bit values, length-delimited
 * fields and nested messages, into a growable buffer handed to a sink
 * (format/sink.h) between top-level messages.
 *
 * The caller reserves the worst case of what it is about to write
 * (tp_pb_reserve), writes through a cursor with the inline tp_pb_put_*
 * functions, and commits the cursor (tp_pb_commit).  Nothing moves the
 * buffer between a reserve and its commit, so the marks of open nested
 * messages are plain pointers.
 *
 * A nested message's length is written once its size is known.  Perfetto's
 * protozero leaves a 4-byte slot for it and pads the varint (redundant
 * continuation bytes, which every protobuf parser accepts).  Most trace
 * packets are a few dozen bytes, and 3 spare bytes each would be a tenth of
 * the file, so here the slot is 1 byte and a close moves a longer body
 * forward: by 1 byte below 16 KiB, by 3 above (the padded 4-byte form, as
 * protozero's).  The caller's reservation counts 4 bytes for each slot, so
 * the room is there; the messages around it are still open, so nothing
 * after it has to move. */
#ifndef TP_FORMAT_PB_H
#define TP_FORMAT_PB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/utf8.h"

struct tp_sink;

enum tp_pb_wire { TP_PB_VARINT = 0, TP_PB_I64 = 1, TP_PB_LEN = 2, TP_PB_I32 = 5 };

/* Worst-case bytes of a field's tag and varint value. */
#define TP_PB_TAG_MAX 5
#define TP_PB_VARINT_MAX 10
/* The largest nested message a 4-byte length slot holds (2^28 - 1). */
#define TP_PB_NESTED_MAX ((1u << 28) - 1)

/* Handed to the sink when this much is buffered. */
#define TP_PB_BUF (1u << 20)

struct tp_pb {
	uint8_t *buf;
	size_t len, cap;
	uint64_t total; /* bytes handed to the sink so far */
	struct tp_sink *sink; /* NULL: keep everything (tests, benches) */
	int error;	      /* the first error, -errno */
};

/* 0 or -ENOMEM. */
int tp_pb_init(struct tp_pb *pb, struct tp_sink *sink);
void tp_pb_free(struct tp_pb *pb);
/* Hands the buffered bytes to the sink.  Only between top-level messages.
 * 0 or -errno. */
int tp_pb_flush(struct tp_pb *pb);
/* A cursor with room for n bytes, or NULL (out of memory, or a sink error:
 * pb->error says which).  Only between top-level messages: it may flush. */
uint8_t *tp_pb_reserve_slow(struct tp_pb *pb, size_t n);

static inline uint8_t *tp_pb_reserve(struct tp_pb *pb, size_t n)
{
	if (__builtin_expect(pb->cap - pb->len >= n && pb->len < TP_PB_BUF, 1))
		return pb->buf + pb->len;
	return tp_pb_reserve_slow(pb, n);
}

static inline void tp_pb_commit(struct tp_pb *pb, uint8_t *end)
{
	pb->len = (size_t)(end - pb->buf);
}

static inline uint64_t tp_pb_bytes(const struct tp_pb *pb)
{
	return pb->total + pb->len;
}

static inline uint8_t *tp_pb_put_varint(uint8_t *d, uint64_t v)
{
	while (v >= 0x80) {
		*d++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*d++ = (uint8_t)v;
	return d;
}

static inline size_t tp_pb_varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *tp_pb_put_tag(uint8_t *d, uint32_t field, enum tp_pb_wire wt)
{
	return tp_pb_put_varint(d, ((uint64_t)field << 3) | (uint64_t)wt);
}

/* uint32/uint64/bool/enum fields, and int32/int64 ones that are not
 * negative. */
static inline uint8_t *tp_pb_put_uint(uint8_t *d, uint32_t field, uint64_t v)
{
	return tp_pb_put_varint(tp_pb_put_tag(d, field, TP_PB_VARINT), v);
}

/* int32/int64 fields: a negative value is its 64-bit two's complement (10
 * bytes), as the protobuf encoding says for int32 too. */
static inline uint8_t *tp_pb_put_int(uint8_t *d, uint32_t field, int64_t v)
{
	return tp_pb_put_varint(tp_pb_put_tag(d, field, TP_PB_VARINT), (uint64_t)v);
}

/* fixed64 fields (little-endian). */
static inline uint8_t *tp_pb_put_fixed64(uint8_t *d, uint32_t field, uint64_t v)
{
	d = tp_pb_put_tag(d, field, TP_PB_I64);
	for (int i = 0; i < 8; i++)
		*d++ = (uint8_t)(v >> (8 * i));
	return d;
}

static inline uint8_t *tp_pb_put_double(uint8_t *d, uint32_t field, double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof(u));
	return tp_pb_put_fixed64(d, field, u);
}

/* string/bytes fields: worst case TP_PB_TAG_MAX + TP_PB_VARINT_MAX + n. */
static inline uint8_t *tp_pb_put_bytes(uint8_t *d, uint32_t field, const void *p, size_t n)
{
	d = tp_pb_put_varint(tp_pb_put_tag(d, field, TP_PB_LEN), n);
	memcpy(d, p, n);
	return d + n;
}

/* Worst-case bytes of a text field's value of n bytes (tp_pb_put_text):
 * each invalid byte may become a 3-byte U+FFFD. */
#define TP_PB_TEXT_ROOM(n) (3 * (size_t)(n))

/* A string field: s[0..n) with invalid UTF-8 replaced by U+FFFD, since a
 * protobuf string must be UTF-8 (protobuf's own parsers log an error and
 * hand such a field over as bytes).  Reserve TP_PB_TAG_MAX +
 * TP_PB_VARINT_MAX + TP_PB_TEXT_ROOM(n). */
static inline uint8_t *tp_pb_put_text(uint8_t *d, uint32_t field, const char *s, size_t n)
{
	if (__builtin_expect(tp_utf8_ascii(s, n), 1))
		return tp_pb_put_bytes(d, field, s, n);
	size_t m = tp_utf8_fixed_len(s, n);
	if (m == n)
		return tp_pb_put_bytes(d, field, s, n);
	d = tp_pb_put_varint(tp_pb_put_tag(d, field, TP_PB_LEN), m);
	return (uint8_t *)tp_utf8_fix((char *)d, s, n);
}

/* Opens a nested message: its tag and its length slot.  Reserve
 * TP_PB_TAG_MAX + 4 bytes for it.  *mark is the slot, for tp_pb_close(). */
static inline uint8_t *tp_pb_open(uint8_t *d, uint32_t field, uint8_t **mark)
{
	d = tp_pb_put_tag(d, field, TP_PB_LEN);
	*mark = d;
	return d + 1;
}

/* Closes the message whose slot is mark, d being the cursor after its body;
 * returns the cursor after the (possibly moved) body.  A body over
 * TP_PB_NESTED_MAX cannot be said in 4 bytes: callers bound their strings so
 * that it never happens. */
static inline uint8_t *tp_pb_close(uint8_t *mark, uint8_t *d)
{
	size_t n = (size_t)(d - (mark + 1));
	if (__builtin_expect(n < 0x80, 1)) {
		mark[0] = (uint8_t)n;
		return d;
	}
	if (n < 0x4000) {
		memmove(mark + 2, mark + 1, n);
		mark[0] = (uint8_t)(n | 0x80);
		mark[1] = (uint8_t)(n >> 7);
		return d + 1;
	}
	/* The padded form: continuation bits on the first three bytes. */
	memmove(mark + 4, mark + 1, n);
	mark[0] = (uint8_t)(n | 0x80);
	mark[1] = (uint8_t)((n >> 7) | 0x80);
	mark[2] = (uint8_t)((n >> 14) | 0x80);
	mark[3] = (uint8_t)((n >> 21) & 0x7f);
	return d + 3;
}

#endif
