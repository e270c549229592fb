#include "format/api_args.h"

#include <string.h>

static void aa_dim3(struct tp_arg *a, const char *key, size_t klen, const uint32_t v[3])
{
	*a = (struct tp_arg){ .key = key, .klen = (uint8_t)klen, .type = TP_VAL_DIM3 };
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

void tp_api_args_launch(struct tp_arg *args, unsigned *n, const struct tp_api_launch *a)
{
	if (a->name)
		args[(*n)++] = TP_ARG(str, "kernel", a->name, strlen(a->name), 1);
	else
		args[(*n)++] = TP_ARG(hex, "kernel", a->handle);
	aa_dim3(&args[(*n)++], "grid", 4, a->grid);
	aa_dim3(&args[(*n)++], "block", 5, a->block);
	args[(*n)++] = TP_ARG(u64, "shared memory", a->shared);
	args[(*n)++] = TP_ARG(hex, "stream handle", a->stream);
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
