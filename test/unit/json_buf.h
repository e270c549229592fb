/* The JSON buffer as text, for the format/json.c suites (test_json.c,
 * test_json_numbers.c). */
#ifndef TP_TEST_JSON_BUF_H
#define TP_TEST_JSON_BUF_H

#include <stddef.h>

#include "format/json.h"

/* The buffer as a C string (the writer does not NUL-terminate). */
static inline const char *jout(struct tp_json *j)
{
	tp_json_char(j, '\0');
	j->len--;
	return j->buf;
}

static inline void jreset(struct tp_json *j)
{
	j->len = 0;
}

/* tp_json_strn of n bytes, as a C string including the quotes. */
static inline const char *esc(struct tp_json *j, const char *s, size_t n)
{
	jreset(j);
	tp_json_strn(j, s, n);
	return jout(j);
}

#endif
