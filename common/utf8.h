/* UTF-8 as the writers need it: a trace holds valid UTF-8 only (JSON's
 * strings, and protobuf's string fields, which protobuf's own libraries
 * refuse or return as bytes otherwise), so every invalid sequence in a
 * name the program gave is replaced by U+FFFD, as Unicode recommends (one
 * replacement per maximal subpart).  format/json.c escapes with
 * tp_utf8_seq(); format/pb.h's tp_pb_put_text() with the functions below. */
#ifndef TP_COMMON_UTF8_H
#define TP_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (2 to 4), or, when it is invalid,
 * minus the length of its maximal subpart (the bytes replaced by one U+FFFD:
 * at least 1).  s[0] >= 0x80; n >= 1 bytes remain. */
static inline int tp_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	unsigned lo = 0x80, hi = 0xbf;
	int len;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates U+D800..U+DFFF */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		/* A stray continuation byte, C0/C1 (always overlong) or F5..FF. */
		return -1;
	}
	if (n < 2 || s[1] < lo || s[1] > hi)
		return -1;
	for (int k = 2; k < len; k++) {
		if ((size_t)k >= n || (s[k] & 0xc0) != 0x80)
			return -k;
	}
	return len;
}

/* 1 when s[0..n) is plain ASCII (the usual name), checked a word at a time. */
static inline int tp_utf8_ascii(const char *s, size_t n)
{
	uint64_t acc = 0, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		acc |= w;
	}
	for (; i < n; i++)
		acc |= (unsigned char)s[i];
	return (acc & 0x8080808080808080ull) == 0;
}

/* The length of s[0..n) once each invalid sequence is replaced by U+FFFD
 * (3 bytes): n when it is valid.  At most 3 * n. */
size_t tp_utf8_fixed_len(const char *s, size_t n);

/* Writes s[0..n) to dst with each invalid sequence replaced by U+FFFD;
 * dst has room for tp_utf8_fixed_len(s, n) bytes.  Returns the end. */
char *tp_utf8_fix(char *dst, const char *s, size_t n);

#endif
