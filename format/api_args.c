#include "format/api_args.h"

#include <string.h>

/* Every writer below reserves its worst case once (keys are short literals,
 * numbers at most 20 bytes, hex strings at most 20) and writes with the
 * tp_json_put_*() functions: a launch's args cost one bounds check, not
 * twenty.  AA_ROOM bounds the literal keys of the longest writer plus its
 * values, the kernel name excepted. */
#define AA_ROOM 256

/* ,"key": for a literal key of klen bytes. */
static char *aa_key(char *d, const char *key, size_t klen)
{
	d = tp_json_put_raw(d, ",\"", 2);
	d = tp_json_put_raw(d, key, klen);
	return tp_json_put_raw(d, "\":", 2);
}

static char *aa_u64(char *d, const char *key, size_t klen, uint64_t v)
{
	return tp_json_put_u64(aa_key(d, key, klen), v);
}

static char *aa_hex(char *d, const char *key, size_t klen, uint64_t v)
{
	return tp_json_put_hex(aa_key(d, key, klen), v);
}

static char *aa_async(char *d, int async)
{
	return async ? tp_json_put_raw(d, ",\"async\":true", 13)
		     : tp_json_put_raw(d, ",\"async\":false", 14);
}

static char *aa_xyz(char *d, const char *key, size_t klen, const uint32_t v[3])
{
	d = aa_key(d, key, klen);
	*d++ = '[';
	d = tp_json_put_u64(d, v[0]);
	*d++ = ',';
	d = tp_json_put_u64(d, v[1]);
	*d++ = ',';
	d = tp_json_put_u64(d, v[2]);
	*d++ = ']';
	return d;
}

/* The tail of the copy, set and free writers: the stream when the call is
 * asynchronous, then "async". */
static char *aa_stream_async(char *d, int async, uint64_t stream)
{
	if (async)
		d = aa_hex(d, "stream handle", 13, stream);
	return aa_async(d, async);
}

void tp_api_args_launch(struct tp_json *j, const struct tp_api_launch *a)
{
	/* A name that was not cached (too long, or no memory) is escaped by
	 * the general writer, which handles any length. */
	if (!a->cached && a->name) {
		tp_json_raw(j, ",\"kernel\":", 10);
		tp_json_str(j, a->name);
	}
	char *d = tp_json_reserve(j, AA_ROOM + (a->cached ? a->cached->len : 0));
	if (!d)
		return;
	if (a->cached) {
		d = aa_key(d, "kernel", 6);
		d = tp_json_put_raw(d, a->cached->json, a->cached->len);
	} else if (!a->name) {
		d = aa_hex(d, "kernel", 6, a->handle);
	}
	d = aa_xyz(d, "grid", 4, a->grid);
	d = aa_xyz(d, "block", 5, a->block);
	d = aa_u64(d, "shared memory", 13, a->shared);
	d = aa_hex(d, "stream handle", 13, a->stream);
	tp_json_commit(j, d);
}

void tp_api_args_memcpy(struct tp_json *j, uint64_t bytes, unsigned kind, uint64_t dst,
			uint64_t src, int async, uint64_t stream)
{
	static const char *const kinds[] = { "\"HtoH\"", "\"HtoD\"", "\"DtoH\"", "\"DtoD\"",
					     "\"Default\"" };
	const char *k = kind < 5 ? kinds[kind] : "\"unknown\"";
	char *d = tp_json_reserve(j, AA_ROOM);
	if (!d)
		return;
	d = aa_u64(d, "bytes", 5, bytes);
	d = aa_key(d, "kind", 4);
	d = tp_json_put_raw(d, k, strlen(k));
	d = aa_hex(d, "dst", 3, dst);
	d = aa_hex(d, "src", 3, src);
	tp_json_commit(j, aa_stream_async(d, async, stream));
}

void tp_api_args_memset(struct tp_json *j, uint64_t bytes, uint64_t value, uint64_t ptr,
			int async, uint64_t stream)
{
	char *d = tp_json_reserve(j, AA_ROOM);
	if (!d)
		return;
	d = aa_u64(d, "bytes", 5, bytes);
	d = aa_u64(d, "value", 5, value);
	d = aa_hex(d, "ptr", 3, ptr);
	tp_json_commit(j, aa_stream_async(d, async, stream));
}

void tp_api_args_alloc(struct tp_json *j, uint64_t bytes, uint64_t ptr, int async,
		       uint64_t stream, uint64_t pool)
{
	char *d = tp_json_reserve(j, AA_ROOM);
	if (!d)
		return;
	d = aa_u64(d, "bytes", 5, bytes);
	d = aa_hex(d, "ptr", 3, ptr);
	if (async) {
		d = aa_hex(d, "stream handle", 13, stream);
		if (pool)
			d = aa_hex(d, "pool", 4, pool);
		else
			d = tp_json_put_raw(aa_key(d, "pool", 4), "\"default\"", 9);
	}
	tp_json_commit(j, aa_async(d, async));
}

void tp_api_args_free(struct tp_json *j, uint64_t ptr, int async, uint64_t stream)
{
	char *d = tp_json_reserve(j, AA_ROOM);
	if (!d)
		return;
	d = aa_hex(d, "ptr", 3, ptr);
	tp_json_commit(j, aa_stream_async(d, async, stream));
}

void tp_api_args_sync(struct tp_json *j, int has_stream, uint64_t stream, uint64_t event)
{
	char *d = tp_json_reserve(j, AA_ROOM);
	if (!d)
		return;
	if (has_stream)
		d = aa_hex(d, "stream handle", 13, stream);
	if (event)
		d = aa_hex(d, "event", 5, event);
	tp_json_commit(j, d);
}
