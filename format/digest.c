/* The samples' digest of a file's bytes (format/digest.h). */
#include "format/digest.h"

#include <string.h>
#include <zlib.h>

void tp_digest_init(struct tp_digest *d)
{
	memset(d, 0, sizeof(*d));
	d->stride = TP_DIGEST_STRIDE0;
}

void tp_digest_add(struct tp_digest *d, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t end = d->len + n;
	/* Each pass takes the part of the next sample inside [len, end), if
	 * any; the stride is larger than a sample, so samples never overlap. */
	for (;;) {
		uint64_t at = (uint64_t)d->n * d->stride;
		uint64_t from = at > d->len ? at : d->len;
		uint64_t to = at + TP_DIGEST_SAMPLE < end ? at + TP_DIGEST_SAMPLE : end;
		if (from >= to)
			break;
		d->cur = (uint32_t)crc32(d->cur, b + (from - d->len), (uInt)(to - from));
		if (to < at + TP_DIGEST_SAMPLE)
			break; /* the sample goes on in the next call */
		d->crc[d->n++] = d->cur;
		d->cur = 0;
		if (d->n == TP_DIGEST_MAX) {
			/* Keep samples 0, 2, 4, ...: they sit at the multiples
			 * of the doubled stride.  The next one, at n * stride,
			 * now lies past what was seen. */
			for (uint32_t i = 0; i < TP_DIGEST_MAX / 2; i++)
				d->crc[i] = d->crc[2 * i];
			d->n = TP_DIGEST_MAX / 2;
			d->stride *= 2;
		}
	}
	d->len = end;
}

uint32_t tp_digest_value(const struct tp_digest *d)
{
	unsigned char le[4 * TP_DIGEST_MAX];
	for (uint32_t i = 0; i < d->n; i++) {
		le[4 * i] = (unsigned char)d->crc[i];
		le[4 * i + 1] = (unsigned char)(d->crc[i] >> 8);
		le[4 * i + 2] = (unsigned char)(d->crc[i] >> 16);
		le[4 * i + 3] = (unsigned char)(d->crc[i] >> 24);
	}
	return (uint32_t)crc32(0, le, (uInt)(4 * d->n));
}
