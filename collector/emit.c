#include "collector/hot.h"

void tp_emit_named(struct tp_thread *t, struct tp_record *rec, const char *s, size_t len)
{
	/* The string and its NUL must fit in the extras. */
	const size_t max = TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES - 1;
	char buf[TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES];
	if (len > max) {
		len = max;
		rec->flags |= TP_RF_TRUNC;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	rec->flags |= TP_RF_STRING;
	tp_emit(t, rec, buf, len + 1);
}
