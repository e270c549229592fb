#include "format/api_args.h"

#include <string.h>

/* Each arg's fields stored one by one: a compound literal assigned to
 * args[i] is built on the stack and copied (with its padding cleared), about
 * twice the instructions, and a launch's args are built for every launch. */
static inline void aa_set(struct tp_arg *a, const char *key, size_t klen, unsigned type,
			  uint64_t u)
{
	a->key = key;
	a->klen = (uint8_t)klen;
	a->type = (uint8_t)type;
	a->stable = 0;
	a->n = 0;
	a->u = u;
}

static void aa_dim3(struct tp_arg *a, const char *key, size_t klen, const uint32_t v[3])
{
	aa_set(a, key, klen, TP_VAL_DIM3, 0);
	memcpy(a->v3, v, sizeof(a->v3));
}

/* The tail of the copy, set and free builders: the stream when the call is
 * asynchronous, then "async". */
static void aa_stream_async(struct tp_arg *args, unsigned *n, int async, uint64_t stream)
{
	if (async)
		args[(*n)++] = TP_ARG(hex, "stream handle", stream);
	args[(*n)++] = TP_ARG(bool, "async", async);
}

#define AA_SET(a, key, type, v) aa_set(a, key, sizeof(key) - 1, type, v)

void tp_api_args_launch(struct tp_arg *args, unsigned *n, const struct tp_api_launch *a)
{
	/* A local index: through *n, every store to args would make the
	 * compiler load *n again. */
	struct tp_arg *p = args + *n;
	if (a->name) {
		AA_SET(p, "kernel", TP_VAL_STR, 0);
		p->s = a->name;
		p->n = a->name_len ? a->name_len : (uint32_t)strlen(a->name);
		p->stable = 1;
	} else {
		AA_SET(p, "kernel", TP_VAL_HEX, a->handle);
	}
	aa_dim3(p + 1, "grid", 4, a->grid);
	aa_dim3(p + 2, "block", 5, a->block);
	AA_SET(p + 3, "shared memory", TP_VAL_U64, a->shared);
	AA_SET(p + 4, "stream handle", TP_VAL_HEX, a->stream);
	*n += 5;
}

void tp_api_args_memcpy(struct tp_arg *args, unsigned *n, uint64_t bytes, unsigned kind,
			uint64_t dst, uint64_t src, int async, uint64_t stream)
{
	/* With their lengths: no strlen() per call. */
	static const struct {
		const char *s;
		uint32_t len;
	} kinds[] = { { "HtoH", 4 }, { "HtoD", 4 }, { "DtoH", 4 }, { "DtoD", 4 },
		      { "Default", 7 }, { "unknown", 7 } };
	unsigned k = kind < 5 ? kind : 5;
	args[(*n)++] = TP_ARG(u64, "bytes", bytes);
	args[(*n)++] = TP_ARG(str, "kind", kinds[k].s, kinds[k].len, 1);
	args[(*n)++] = TP_ARG(hex, "dst", dst);
	args[(*n)++] = TP_ARG(hex, "src", src);
	aa_stream_async(args, n, async, stream);
}

void tp_api_args_memset(struct tp_arg *args, unsigned *n, uint64_t bytes, uint64_t value,
			uint64_t ptr, int async, uint64_t stream)
{
	args[(*n)++] = TP_ARG(u64, "bytes", bytes);
	args[(*n)++] = TP_ARG(u64, "value", value);
	args[(*n)++] = TP_ARG(hex, "ptr", ptr);
	aa_stream_async(args, n, async, stream);
}

void tp_api_args_alloc(struct tp_arg *args, unsigned *n, uint64_t bytes, uint64_t ptr,
		       int async, uint64_t stream, uint64_t pool)
{
	args[(*n)++] = TP_ARG(u64, "bytes", bytes);
	args[(*n)++] = TP_ARG(hex, "ptr", ptr);
	if (async) {
		args[(*n)++] = TP_ARG(hex, "stream handle", stream);
		if (pool)
			args[(*n)++] = TP_ARG(hex, "pool", pool);
		else
			args[(*n)++] = TP_ARG(str, "pool", "default", 7, 1);
	}
	args[(*n)++] = TP_ARG(bool, "async", async);
}

void tp_api_args_free(struct tp_arg *args, unsigned *n, uint64_t ptr, int async,
		      uint64_t stream)
{
	args[(*n)++] = TP_ARG(hex, "ptr", ptr);
	aa_stream_async(args, n, async, stream);
}

void tp_api_args_sync(struct tp_arg *args, unsigned *n, int has_stream, uint64_t stream,
		      uint64_t event)
{
	if (has_stream)
		args[(*n)++] = TP_ARG(hex, "stream handle", stream);
	if (event)
		args[(*n)++] = TP_ARG(hex, "event", event);
}
