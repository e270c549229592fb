/* Strings escaped once: the writer's cache of names it writes again and
 * again (kernels, CUDA functions, categories).  See format/json.h. */
#include "format/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

#define JS_LIKELY(x) __builtin_expect(!!(x), 1)
#define JS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The cache keeps its own table (struct tp_json_cached in json.h holds the
 * escaped text in the slot, read on the writer's per-string path, and a
 * slot keeps its key when its text is forgotten), hashed with common/hash.h. */
static size_t js_cache_slot(const struct tp_json_strcache *c, const char *key)
{
	size_t i = (size_t)tp_hash_u64((uint64_t)(uintptr_t)key) & (c->cap - 1);
	while (c->slots[i].key && c->slots[i].key != key)
		i = (i + 1) & (c->cap - 1);
	return i;
}

static int js_cache_grow(struct tp_json_strcache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 256;
	struct tp_json_cached *old = c->slots;
	size_t ocap = c->cap;
	c->slots = calloc(cap, sizeof(*c->slots));
	if (!c->slots) {
		c->slots = old;
		return -1;
	}
	c->cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].key)
			c->slots[js_cache_slot(c, old[i].key)] = old[i];
	free(old);
	return 0;
}

/* Frees what a slot holds; the slot keeps its key, so that the probe chains
 * through it stay whole (entries are never deleted). */
static void js_cache_forget(struct tp_json_strcache *c, struct tp_json_cached *e)
{
	c->bytes -= (size_t)e->src_len + 1 + e->len + 1;
	free(e->src);
	free(e->json);
	e->src = NULL;
	e->json = NULL;
	e->len = 0;
}

/* The slow half of tp_json_strcache_get(): s (n bytes) is not what slot e
 * holds (e is empty, or its address now holds another string). */
static const struct tp_json_cached *js_cache_fill(struct tp_json_strcache *c,
						  struct tp_json_cached *e, const char *s,
						  size_t n)
{
	if (e->src)
		js_cache_forget(c, e);
	if (n > TP_JSON_STR_CHUNK || c->bytes + n + 1 + tp_json_strn_max(n) + 1 > TP_JSON_STRCACHE_MAX)
		return NULL;
	if (!e->key && (c->n + 1) * 2 > c->cap) {
		if (js_cache_grow(c) < 0)
			return NULL;
		e = &c->slots[js_cache_slot(c, s)];
	}
	char *src = malloc(n + 1);
	char *tmp = malloc(tp_json_strn_max(n) + 1);
	if (!src || !tmp) {
		free(src);
		free(tmp);
		return NULL;
	}
	memcpy(src, s, n);
	src[n] = '\0';
	size_t len = (size_t)(tp_json_put_strn(tmp, s, n) - tmp);
	/* Keep only what the escaped form needs, not the worst case. */
	char *json = realloc(tmp, len + 1);
	if (!json)
		json = tmp;
	json[len] = '\0';
	if (!e->key) {
		e->key = s;
		c->n++;
	}
	e->src = src;
	e->json = json;
	e->len = (uint32_t)len;
	e->src_len = (uint32_t)n;
	c->bytes += n + 1 + len + 1;
	return e;
}

const struct tp_json_cached *tp_json_strcache_get(struct tp_json_strcache *c, const char *s)
{
	if (!s)
		return NULL;
	if (JS_UNLIKELY(!c->cap) && js_cache_grow(c) < 0)
		return NULL;
	struct tp_json_cached *e = &c->slots[js_cache_slot(c, s)];
	if (JS_LIKELY(e->src != NULL && strcmp(e->src, s) == 0))
		return e;
	return js_cache_fill(c, e, s, strlen(s));
}

const struct tp_json_cached *tp_json_strcache_getn(struct tp_json_strcache *c, const char *s,
						   size_t n)
{
	if (!s)
		return NULL;
	if (JS_UNLIKELY(!c->cap) && js_cache_grow(c) < 0)
		return NULL;
	struct tp_json_cached *e = &c->slots[js_cache_slot(c, s)];
	/* The length first, then memcmp(): faster than strcmp() on the long
	 * names this cache holds (about 25 instructions against 80 for a
	 * 70-byte kernel name). */
	if (JS_LIKELY(e->src != NULL && e->src_len == n && memcmp(e->src, s, n) == 0))
		return e;
	return js_cache_fill(c, e, s, n);
}

void tp_json_strcache_free(struct tp_json_strcache *c)
{
	for (size_t i = 0; i < c->cap; i++) {
		free(c->slots[i].src);
		free(c->slots[i].json);
	}
	free(c->slots);
	memset(c, 0, sizeof(*c));
}
