/* File-name templates: TRACEPROF_FOLDER and TRACEPROF_FILENAME with
 * {run_name} {rank} {local_rank} {world_size} {local_world_size} {node_rank}
 * {step} {batch} {pid} {hostname}.  An unknown variable is a configuration
 * error.  "{{" and "}}" stand for literal braces. */
#ifndef TP_FORMAT_TEMPLATE_H
#define TP_FORMAT_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

struct tp_template_vars {
	char run_name[256];
	int64_t rank, local_rank, world_size, local_world_size, node_rank;
	int64_t pid;
	char hostname[256];
	int64_t step; /* {step} and {batch}: the last step of the window */
	const char *launcher; /* "torchrun", "openmpi", "pmi", "slurm" or "none" */
};

/* Reads the launcher's variables: torchrun (RANK LOCAL_RANK WORLD_SIZE
 * LOCAL_WORLD_SIZE GROUP_RANK), else Open MPI (OMPI_COMM_WORLD_*), else PMI
 * (PMI_RANK PMI_SIZE), else Slurm (SLURM_PROCID SLURM_LOCALID SLURM_NTASKS
 * SLURM_NODEID), else 0/0/1/1/0.  run_name: TRACEPROF_RUN_NAME (given as
 * run_name_override when not empty), else TORCHELASTIC_RUN_ID, else
 * SLURM_JOB_ID, else the program's basename.  Returns 0, or -1 with a message
 * when a launcher variable is not a number. */
int tp_template_vars_from_env(struct tp_template_vars *v, const char *run_name_override,
			      char *err, int errlen);

/* Checks a template without expanding it.  Returns 0, or -1 with a message
 * naming the unknown variable or the unbalanced brace. */
int tp_template_check(const char *tmpl, char *err, int errlen);

/* Expands tmpl into out (NUL-terminated).  Values are sanitised for use in a
 * path: '/' in a value (run_name, hostname) becomes '_'.  Returns the length,
 * or -1 with a message (unknown variable, result longer than outlen - 1). */
int tp_template_expand(const char *tmpl, const struct tp_template_vars *v, char *out,
		       size_t outlen, char *err, int errlen);

#endif
