/* Logging for the traced process: one "traceprof:" line per message on
 * stderr, written with write(2) so that it is async-signal-safe, never
 * allocates, and never touches the program's stdio buffers.  errno is
 * preserved.  The level comes from TRACEPROF_LOG (error|warn|info|debug). */
#ifndef TP_COMMON_LOG_H
#define TP_COMMON_LOG_H

#include <stdarg.h>

enum tp_log_level {
	TP_LOG_ERROR = 0,
	TP_LOG_WARN = 1,
	TP_LOG_INFO = 2,
	TP_LOG_DEBUG = 3,
};

/* Set once by the configuration loader; read without ordering (a stale level
 * only changes which messages are shown). */
void tp_log_set_level(enum tp_log_level level);
enum tp_log_level tp_log_get_level(void);

/* Formats with a small subset of printf (%s %d %u %ld %lu %lld %llu %zu %x
 * %p %c %%) into a stack buffer and writes one line.  Longer lines are cut at
 * 512 bytes, ending in "...". */
void tp_log(enum tp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tp_vlog(enum tp_log_level level, const char *fmt, va_list ap);

/* Formats like tp_log into buf (always NUL-terminated when size > 0); returns
 * the length.  buf may be NULL (with any size): nothing is written, as for a
 * caller that wants no message. */
int tp_format(char *buf, int size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int tp_vformat(char *buf, int size, const char *fmt, va_list ap);

#define tp_error(...) tp_log(TP_LOG_ERROR, __VA_ARGS__)
#define tp_warn(...) tp_log(TP_LOG_WARN, __VA_ARGS__)
#define tp_info(...) tp_log(TP_LOG_INFO, __VA_ARGS__)
#define tp_debug(...) tp_log(TP_LOG_DEBUG, __VA_ARGS__)

#endif
