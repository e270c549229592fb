/* The live file's place and its atomic replacement (collector/live_file.c).
 * Flush thread only (or the exiting thread once it stopped). */
#ifndef TP_COLLECTOR_LIVE_FILE_H
#define TP_COLLECTOR_LIVE_FILE_H

#include <stddef.h>

#include "common/config.h"
#include "format/template.h"

/* The folder (TRACEPROF_LIVE_DIR, or the trace folder's .live) made
 * absolute from the start directory, and the file's name.  Returns 1 when
 * the file can be written, 0 after one `traceprof:` line saying why not. */
int tp_live_file_init(const struct tp_config *cfg, const struct tp_template_vars *vars);

/* A forked child that follows: its own name (its pid), and its file listed
 * for its _exit() to remove (format/sink.h, tp_sink_live_add()). */
void tp_live_file_child(void);

/* Writes buf to the temporary file and renames it onto the file, making
 * the folder first when needed.  Returns 0 or -errno. */
int tp_live_file_store(const char *buf, size_t len);

/* The file's path, for messages. */
const char *tp_live_file_path(void);

#endif
