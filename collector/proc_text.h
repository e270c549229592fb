/* The flush thread's one way of reading /proc: thread names, the command
 * line, and whether only the flush thread is left (collector/flush_*.c).
 *
 * One function on purpose: when common/procfs.h lands, this body is the
 * single place to switch to it. */
#ifndef TP_COLLECTOR_PROC_TEXT_H
#define TP_COLLECTOR_PROC_TEXT_H

#include <stddef.h>

/* Reads the small text file at path (e.g. "/proc/self/comm") into buf,
 * NUL-terminated, without its trailing newlines and NULs; with nul_to_space
 * the NULs inside (between /proc/self/cmdline's arguments) become spaces.
 * Returns the length, or -1 with buf empty when it cannot be read. */
int tp_proc_text(const char *path, char *buf, size_t size, int nul_to_space);

#endif
