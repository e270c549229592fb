#include "common/log.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* Plain int: written once at start-up, read racily afterwards. */
static int tp_log_level_cur = TP_LOG_WARN;

void tp_log_set_level(enum tp_log_level level)
{
	__atomic_store_n(&tp_log_level_cur, (int)level, __ATOMIC_RELAXED);
}

enum tp_log_level tp_log_get_level(void)
{
	return (enum tp_log_level)__atomic_load_n(&tp_log_level_cur, __ATOMIC_RELAXED);
}

struct fmt_out {
	char *buf;
	int size;
	int len;
};

static void out_char(struct fmt_out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void out_str(struct fmt_out *o, const char *s)
{
	if (!s)
		s = "(null)";
	while (*s)
		out_char(o, *s++);
}

static void out_unsigned(struct fmt_out *o, unsigned long long v, unsigned base)
{
	char tmp[24];
	int n = 0;

	do {
		unsigned d = (unsigned)(v % base);
		tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v /= base;
	} while (v);
	while (n)
		out_char(o, tmp[--n]);
}

static void out_signed(struct fmt_out *o, long long v)
{
	if (v < 0) {
		out_char(o, '-');
		out_unsigned(o, 0ULL - (unsigned long long)v, 10);
	} else {
		out_unsigned(o, (unsigned long long)v, 10);
	}
}

int tp_vformat(char *buf, int size, const char *fmt, va_list ap)
{
	if (!buf || size < 0)
		size = 0; /* a caller that wants no message passes NULL */
	struct fmt_out o = { buf, size, 0 };

	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			out_char(&o, *p);
			continue;
		}
		p++;
		int prec = -1;
		if (p[0] == '.' && p[1] == '*') {
			prec = va_arg(ap, int);
			p += 2;
		}
		int longs = 0;
		int size_t_arg = 0;
		while (*p == 'l') {
			longs++;
			p++;
		}
		if (*p == 'z') {
			size_t_arg = 1;
			p++;
		}
		switch (*p) {
		case 's': {
			const char *str = va_arg(ap, const char *);
			if (prec >= 0 && str) {
				for (int i = 0; i < prec && str[i]; i++)
					out_char(&o, str[i]);
			} else {
				out_str(&o, str);
			}
			break;
		}
		case 'c':
			out_char(&o, (char)va_arg(ap, int));
			break;
		case 'd':
			if (longs >= 2)
				out_signed(&o, va_arg(ap, long long));
			else if (longs == 1 || size_t_arg)
				out_signed(&o, va_arg(ap, long));
			else
				out_signed(&o, va_arg(ap, int));
			break;
		case 'u':
		case 'x':
			if (longs >= 2)
				out_unsigned(&o, va_arg(ap, unsigned long long), *p == 'x' ? 16 : 10);
			else if (longs == 1 || size_t_arg)
				out_unsigned(&o, va_arg(ap, unsigned long), *p == 'x' ? 16 : 10);
			else
				out_unsigned(&o, va_arg(ap, unsigned), *p == 'x' ? 16 : 10);
			break;
		case 'p':
			out_str(&o, "0x");
			out_unsigned(&o, (uintptr_t)va_arg(ap, void *), 16);
			break;
		case '%':
			out_char(&o, '%');
			break;
		case '\0':
			p--;
			break;
		default:
			out_char(&o, '%');
			out_char(&o, *p);
			break;
		}
	}
	if (size > 0)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return o.len < size ? o.len : size - 1;
}

int tp_format(char *buf, int size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = tp_vformat(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void tp_vlog(enum tp_log_level level, const char *fmt, va_list ap)
{
	if ((int)level > __atomic_load_n(&tp_log_level_cur, __ATOMIC_RELAXED))
		return;

	int saved = errno;
	char line[520];
	const char *prefix = "traceprof: ";
	size_t plen = strlen(prefix);

	memcpy(line, prefix, plen);
	int n = tp_vformat(line + plen, 512 - (int)plen, fmt, ap);
	size_t len = plen + (size_t)n;
	if (len >= 511 - 3) {
		memcpy(line + 508, "...", 3);
		len = 511;
	}
	/* One message is one line: a control character from a value (a
	 * newline in a variable, a path) must not start a line that looks like
	 * the program's own output. */
	for (size_t i = plen; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	line[len++] = '\n';
	const char *p = line;
	while (len > 0) {
		ssize_t w = write(STDERR_FILENO, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		len -= (size_t)w;
	}
	errno = saved;
}

void tp_log(enum tp_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tp_vlog(level, fmt, ap);
	va_end(ap);
}
