/* What the launcher of this process says about it: the values of the
 * file-name templates' variables (format/template.h expands them).  Read
 * once, by the constructor, from the environment that torchrun, mpirun,
 * srun and PMI launchers set. */
#ifndef TP_COMMON_LAUNCHER_H
#define TP_COMMON_LAUNCHER_H

#include <stdint.h>

struct tp_template_vars {
	char run_name[256];
	int64_t rank, local_rank, world_size, local_world_size, node_rank;
	int64_t pid;
	char hostname[256];
	int64_t step; /* {step} and {batch}: the last step of the window */
	const char *launcher; /* "torchrun", "openmpi", "pmi", "slurm" or "none" */
	/* 1 in a launcher's own process (torchrun's agent, python -m
	 * torch.distributed.run, composer, accelerate launch): it starts the
	 * workers and runs none of the job's work, so it records nothing. */
	int is_agent;
	/* The run this process belongs to (tp_launcher_run_id()), and the
	 * variable or rule it came from: the footer's run_id and run_id_from. */
	char run_id[160];
	const char *run_id_from;
};

/* Reads the launcher's variables: torchrun (RANK LOCAL_RANK WORLD_SIZE
 * LOCAL_WORLD_SIZE GROUP_RANK), else Open MPI (OMPI_COMM_WORLD_*), else PMI
 * (PMI_RANK PMI_SIZE), else Slurm (SLURM_PROCID SLURM_LOCALID SLURM_NTASKS
 * SLURM_NODEID), else 0/0/1/1/0.  run_name: TRACEPROF_RUN_NAME (given as
 * run_name_override when not empty), else TORCHELASTIC_RUN_ID, else
 * SLURM_JOB_ID (each unless empty, "none" or a UUID: tp_launcher_placeholder()),
 * else the program's basename.  Returns 0, or -1 with a message
 * when a launcher variable is not a number. */
/* Whether a run-name variable's value names nothing stable: torchrun's
 * "none", or a UUID (torchrun's --standalone, and torch 2.15's torchrun
 * without --master_port, make one per launch and give it only to the
 * workers, so the launcher's process and the next run would differ). */
int tp_launcher_placeholder(const char *value);

int tp_launcher_vars(struct tp_template_vars *v, const char *run_name_override, char *err,
		     int errlen);

/* Fills v->run_id and v->run_id_from: the processes of one run get the same
 * id, those of two runs different ones, so that readers never mix them
 * (summary --by rank).  The first of: TRACEPROF_RUN_ID (given as override
 * when not empty; `traceprof run` sets one for all it launches),
 * TORCHELASTIC_RUN_ID (not empty or "none": a UUID is fine here, every
 * worker of the launch has it), SLURM_JOB_ID with SLURM_STEP_ID, PMIX_NAMESPACE
 * (Open MPI's job), else the parent process: "parent-HOST-PPID-TICKS", the
 * parent's start time in clock ticks since boot making a reused PPID
 * another run.  The parent's id is weak (TP_RUN_ID_FROM_PARENT): siblings
 * share it (torchrun's local workers, which get a session each, so no
 * process group would do; mp.spawn's), but a recording parent and its
 * exec'd children, or two nodes' workers, differ; readers do not refuse
 * on it. */
void tp_launcher_run_id(struct tp_template_vars *v, const char *override);

#endif
