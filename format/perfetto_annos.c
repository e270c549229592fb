/* The Perfetto writer's debug annotations (format/perfetto_internal.h):
 * an event's args, and the documents (header, devices, frames, footer) as
 * nested annotations, objects as dict_entries, arrays as array_values.
 * Strings are cut to TP_PF_STR_MAX (elements of a list to
 * TP_PF_ELEM_STR_MAX, lists to TP_PF_ELEMS_MAX), so that worst cases are
 * cheap to compute. */
#include <string.h>

#include "format/perfetto_internal.h"

#define PFA_CUT(n, max) ((n) > (max) ? (max) : (n))

size_t tp_pf_strlen(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	return n > TP_PF_STR_MAX ? TP_PF_STR_MAX : n;
}

/* Worst case of one arg's annotation. */
size_t tp_pf_arg_room(const struct tp_arg *a)
{
	size_t r = 2 * TP_PB_TAG_MAX + 4 + TP_PB_VARINT_MAX + TP_PB_TAG_MAX + TP_PB_VARINT_MAX;
	switch (a->type) {
	case TP_VAL_STR:
	case TP_VAL_JSON:
		return r + TP_PB_VARINT_MAX + TP_PB_TEXT_ROOM(PFA_CUT(a->n, TP_PF_STR_MAX));
	case TP_VAL_HEX:
		return r + 20;
	case TP_VAL_STRS: {
		uint32_t n = PFA_CUT(a->n, TP_PF_ELEMS_MAX);
		for (uint32_t i = 0; i < n; i++) {
			size_t l = a->strs[i] ? strlen(a->strs[i]) : 0;
			r += 2 * TP_PB_TAG_MAX + 4 + TP_PB_VARINT_MAX +
			     TP_PB_TEXT_ROOM(PFA_CUT(l, TP_PF_ELEM_STR_MAX));
		}
		return r;
	}
	case TP_VAL_I64S:
		return r + (size_t)(PFA_CUT(a->n, TP_PF_ELEMS_MAX)) *
				   (2 * TP_PB_TAG_MAX + 4 + TP_PB_VARINT_MAX);
	case TP_VAL_DIM3:
		return r + 3 * (2 * TP_PB_TAG_MAX + 4 + TP_PB_VARINT_MAX);
	default:
		return r;
	}
}

static uint8_t *pfa_put_hex(uint8_t *d, uint32_t field, uint64_t v)
{
	static const char hex[16] = "0123456789abcdef";
	char s[18];
	int n = 0;
	s[n++] = '0';
	s[n++] = 'x';
	int shift = 60;
	while (shift > 0 && !((v >> shift) & 0xf))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		s[n++] = hex[(v >> shift) & 0xf];
	return tp_pb_put_bytes(d, field, s, (size_t)n);
}

/* An element of an array annotation: a nameless annotation of one value. */
static uint8_t *pfa_put_elem_int(uint8_t *d, int64_t v)
{
	uint8_t *m;
	d = tp_pb_open(d, TP_PF_DA_ARRAY, &m);
	d = tp_pb_put_int(d, TP_PF_DA_INT, v);
	return tp_pb_close(m, d);
}

/* The value of an arg (the annotation's name already written). */
uint8_t *tp_pf_put_value(uint8_t *d, const struct tp_arg *a)
{
	switch (a->type) {
	case TP_VAL_U64:
		return tp_pb_put_uint(d, TP_PF_DA_UINT, a->u);
	case TP_VAL_I64:
		return tp_pb_put_int(d, TP_PF_DA_INT, a->i);
	case TP_VAL_HEX:
		return pfa_put_hex(d, TP_PF_DA_STRING, a->u);
	case TP_VAL_F64:
		return tp_pb_put_double(d, TP_PF_DA_DOUBLE, a->f);
	case TP_VAL_BOOL:
		return tp_pb_put_uint(d, TP_PF_DA_BOOL, a->u != 0);
	case TP_VAL_STR:
	case TP_VAL_JSON: /* as its text */
		return tp_pb_put_text(d, TP_PF_DA_STRING, a->s, PFA_CUT(a->n, TP_PF_STR_MAX));
	case TP_VAL_STRS: {
		uint32_t n = PFA_CUT(a->n, TP_PF_ELEMS_MAX);
		for (uint32_t i = 0; i < n; i++) {
			uint8_t *m;
			const char *s = a->strs[i] ? a->strs[i] : "";
			size_t l = strlen(s);
			d = tp_pb_open(d, TP_PF_DA_ARRAY, &m);
			d = tp_pb_put_text(d, TP_PF_DA_STRING, s, PFA_CUT(l, TP_PF_ELEM_STR_MAX));
			d = tp_pb_close(m, d);
		}
		return d;
	}
	case TP_VAL_I64S: {
		uint32_t n = PFA_CUT(a->n, TP_PF_ELEMS_MAX);
		for (uint32_t i = 0; i < n; i++)
			d = pfa_put_elem_int(d, a->is[i]);
		return d;
	}
	case TP_VAL_DIM3:
		for (int i = 0; i < 3; i++)
			d = pfa_put_elem_int(d, a->v3[i]);
		return d;
	default:
		return d;
	}
}

/* ---- documents ---- */

/* Deeper objects and arrays are left out, with what they hold. */
#define PFA_DOC_DEPTH 32

size_t tp_pf_doc_room(const struct tp_doc *doc)
{
	size_t r = 0;
	for (size_t i = 0; i < doc->n; i++) {
		const struct tp_doc_node *x = &doc->nodes[i];
		const char *k = tp_doc_key(doc, x);
		size_t text = x->kind == TP_DOC_VALUE && x->type == TP_VAL_STR ? x->len : 0;
		r += 3 * TP_PB_TAG_MAX + 4 + 2 * TP_PB_VARINT_MAX + 8 +
		     TP_PB_TEXT_ROOM((k ? tp_pf_strlen(k) : 0) + text);
	}
	return r;
}

/* The document's nodes as annotations of field `field` (an event's
 * debug_annotations at the top): each node one annotation named by its key
 * (or `name` for a keyless node at the top), objects as dict_entries,
 * arrays as array_values. */
uint8_t *tp_pf_put_doc(uint8_t *d, const struct tp_doc *doc, const char *name)
{
	uint8_t *marks[PFA_DOC_DEPTH];
	uint32_t fields[PFA_DOC_DEPTH + 1];
	int depth = 0, skipped = 0;
	fields[0] = TP_PF_TE_ANNOTATIONS;
	for (size_t i = 0; i < doc->n; i++) {
		const struct tp_doc_node *x = &doc->nodes[i];
		if (x->kind == TP_DOC_END) {
			if (skipped)
				skipped--;
			else if (depth > 0)
				d = tp_pb_close(marks[--depth], d);
			continue;
		}
		if (skipped || (x->kind != TP_DOC_VALUE && depth == PFA_DOC_DEPTH)) {
			/* Too deep: left out, with what it holds. */
			if (x->kind != TP_DOC_VALUE)
				skipped++;
			continue;
		}
		uint8_t *m;
		const char *k = tp_doc_key(doc, x);
		if (!k && depth == 0)
			k = name;
		d = tp_pb_open(d, fields[depth], &m);
		if (k)
			d = tp_pb_put_text(d, TP_PF_DA_NAME, k, tp_pf_strlen(k));
		switch (x->kind) {
		case TP_DOC_VALUE:
			switch (x->type) {
			case TP_VAL_U64:
				d = tp_pb_put_uint(d, TP_PF_DA_UINT, x->u);
				break;
			case TP_VAL_I64:
				d = tp_pb_put_int(d, TP_PF_DA_INT, x->i);
				break;
			case TP_VAL_F64:
				d = tp_pb_put_double(d, TP_PF_DA_DOUBLE, x->f);
				break;
			case TP_VAL_BOOL:
				d = tp_pb_put_uint(d, TP_PF_DA_BOOL, x->u != 0);
				break;
			default:
				d = tp_pb_put_text(d, TP_PF_DA_STRING, tp_doc_text(doc, x), x->len);
				break;
			}
			d = tp_pb_close(m, d);
			break;
		default:
			marks[depth++] = m;
			fields[depth] = x->kind == TP_DOC_OBJECT ? TP_PF_DA_DICT : TP_PF_DA_ARRAY;
			break;
		}
	}
	while (depth > 0)
		d = tp_pb_close(marks[--depth], d);
	return d;
}
