/* What identifies the bytes a footer's table summarizes, cheaply enough to
 * check at read time (issue 43): their length, and a CRC-32 of samples of
 * them at offsets that follow from the length alone.  A reader seeks to the
 * samples of a plain file (about 64 reads of 64 bytes) instead of parsing
 * its events.
 *
 * Sample k is the TP_DIGEST_SAMPLE bytes at k * stride.  The stride starts
 * at TP_DIGEST_STRIDE0; when TP_DIGEST_MAX samples are complete, every
 * other one is dropped and the stride doubles, so that fewer than
 * TP_DIGEST_MAX samples always cover the whole length evenly, whatever it
 * turns out to be.  The digest is the CRC-32 (zlib's) of the samples'
 * CRC-32s, each as 4 little-endian bytes, in order.
 *
 * What it proves: any change of the length (an event removed or added, the
 * file re-indented, two files joined, one cut short) and any change inside
 * a sample.  A change of the same length between samples is not seen.
 *
 * One writer's state (the flush thread's): no locking. */
#ifndef TP_FORMAT_DIGEST_H
#define TP_FORMAT_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/layout.h" /* TP_DIGEST_SAMPLE, _STRIDE0, _MAX */

struct tp_digest {
	uint64_t len;	 /* bytes seen */
	uint64_t stride; /* between samples' starts */
	uint32_t n;	 /* complete samples in crc[] */
	uint32_t cur;	 /* the CRC-32 of the sample in progress so far */
	uint32_t crc[TP_DIGEST_MAX];
};

void tp_digest_init(struct tp_digest *d);
/* Bytes that follow the ones seen so far. */
void tp_digest_add(struct tp_digest *d, const void *p, size_t n);
/* The digest of the complete samples. */
uint32_t tp_digest_value(const struct tp_digest *d);

#endif
