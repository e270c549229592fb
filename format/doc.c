/* Documents of typed values (format/event.h): the footer and the devices'
 * properties, built by the collector, serialized by each writer. */
#include <stdlib.h>
#include <string.h>

#include "format/event.h"

void tp_doc_init(struct tp_doc *d)
{
	memset(d, 0, sizeof(*d));
}

void tp_doc_free(struct tp_doc *d)
{
	free(d->nodes);
	free(d->text);
	memset(d, 0, sizeof(*d));
}

void tp_doc_reset(struct tp_doc *d)
{
	d->n = 0;
	d->text_len = 0;
	d->error = 0;
}

/* A copy of s (n bytes and a NUL) in d's text: its offset, or -1. */
static int64_t doc_copy(struct tp_doc *d, const char *s, size_t n)
{
	if (d->text_len + n + 1 > d->text_cap) {
		size_t cap = d->text_cap ? d->text_cap : 1024;
		while (cap < d->text_len + n + 1)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -1;
		char *t = realloc(d->text, cap);
		if (!t)
			return -1;
		d->text = t;
		d->text_cap = cap;
	}
	memcpy(d->text + d->text_len, s, n);
	d->text[d->text_len + n] = '\0';
	int64_t off = (int64_t)d->text_len;
	d->text_len += n + 1;
	return off;
}

static struct tp_doc_node *doc_add(struct tp_doc *d, uint8_t kind, const char *key)
{
	if (d->error)
		return NULL;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct tp_doc_node *x = realloc(d->nodes, cap * sizeof(*x));
		if (!x) {
			d->error = 1;
			return NULL;
		}
		d->nodes = x;
		d->cap = cap;
	}
	uint32_t k = 0;
	if (key) {
		int64_t off = doc_copy(d, key, strlen(key));
		if (off < 0) {
			d->error = 1;
			return NULL;
		}
		k = (uint32_t)off + 1;
	}
	struct tp_doc_node *x = &d->nodes[d->n++];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->key = k;
	return x;
}

void tp_doc_u64(struct tp_doc *d, const char *key, uint64_t v)
{
	struct tp_doc_node *x = doc_add(d, TP_DOC_VALUE, key);
	if (x) {
		x->type = TP_VAL_U64;
		x->u = v;
	}
}

void tp_doc_i64(struct tp_doc *d, const char *key, int64_t v)
{
	struct tp_doc_node *x = doc_add(d, TP_DOC_VALUE, key);
	if (x) {
		x->type = TP_VAL_I64;
		x->i = v;
	}
}

void tp_doc_f64(struct tp_doc *d, const char *key, double v)
{
	struct tp_doc_node *x = doc_add(d, TP_DOC_VALUE, key);
	if (x) {
		x->type = TP_VAL_F64;
		x->f = v;
	}
}

void tp_doc_bool(struct tp_doc *d, const char *key, int v)
{
	struct tp_doc_node *x = doc_add(d, TP_DOC_VALUE, key);
	if (x) {
		x->type = TP_VAL_BOOL;
		x->u = v != 0;
	}
}

void tp_doc_str(struct tp_doc *d, const char *key, const char *s)
{
	tp_doc_strn(d, key, s ? s : "", s ? strlen(s) : 0);
}

void tp_doc_append(struct tp_doc *d, const struct tp_doc *src)
{
	for (size_t i = 0; i < src->n && !d->error; i++) {
		const struct tp_doc_node *x = &src->nodes[i];
		const char *k = tp_doc_key(src, x);
		if (x->kind == TP_DOC_VALUE && x->type == TP_VAL_STR) {
			tp_doc_strn(d, k, tp_doc_text(src, x), x->len);
			continue;
		}
		struct tp_doc_node *y = doc_add(d, x->kind, k);
		if (y) {
			y->type = x->type;
			y->u = x->u;
		}
	}
}

void tp_doc_strn(struct tp_doc *d, const char *key, const char *s, size_t n)
{
	struct tp_doc_node *x = doc_add(d, TP_DOC_VALUE, key);
	if (!x)
		return;
	int64_t off = doc_copy(d, s, n);
	if (off < 0) {
		d->error = 1;
		d->n--;
		return;
	}
	x->type = TP_VAL_STR;
	x->str = (uint32_t)off;
	x->len = (uint32_t)n;
}

void tp_doc_object(struct tp_doc *d, const char *key)
{
	doc_add(d, TP_DOC_OBJECT, key);
}

void tp_doc_array(struct tp_doc *d, const char *key)
{
	doc_add(d, TP_DOC_ARRAY, key);
}

void tp_doc_end(struct tp_doc *d)
{
	doc_add(d, TP_DOC_END, NULL);
}
