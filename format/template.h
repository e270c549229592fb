/* File-name templates: TRACEPROF_FOLDER and TRACEPROF_FILENAME with
 * {run_name} {rank} {local_rank} {world_size} {local_world_size} {node_rank}
 * {step} {batch} {pid} {hostname}.  An unknown variable is a configuration
 * error.  "{{" and "}}" stand for literal braces. */
#ifndef TP_FORMAT_TEMPLATE_H
#define TP_FORMAT_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/launcher.h" /* struct tp_template_vars */

/* Checks a template without expanding it.  Returns 0, or -1 with a message
 * naming the unknown variable or the unbalanced brace. */
int tp_template_check(const char *tmpl, char *err, int errlen);

/* Expands tmpl into out (NUL-terminated).  Values are sanitised for use in a
 * path: '/' in a value (run_name, hostname) becomes '_'.  Returns the length,
 * or -1 with a message (unknown variable, result longer than outlen - 1). */
int tp_template_expand(const char *tmpl, const struct tp_template_vars *v, char *out,
		       size_t outlen, char *err, int errlen);

#endif
