/* The launcher's variables: which launcher started this process (torchrun,
 * Open MPI, PMI, Slurm), its rank numbers, the run's name and the host; see
 * common/launcher.h. */
#include "common/launcher.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/layout.h"
#include "common/log.h"
#include "common/procfs.h"

/* glibc's short program name, declared here rather than via <errno.h>'s
 * _GNU_SOURCE block so that the build flags do not matter. */
extern char *program_invocation_short_name;

static const char *lch_env(const char *name)
{
	/* An empty variable is treated as unset: launchers' wrappers sometimes
	 * export VAR= to clear one. */
	const char *s = getenv(name);
	return s && s[0] ? s : NULL;
}

/* Reads name as a non-negative decimal (at least min) into *out when set.
 * Returns 1 when read, 0 when unset, -1 with a message when malformed. */
static int lch_env_num(const char *name, int64_t min, int64_t *out, const char *launcher,
		       char *err, int errlen)
{
	const char *s = lch_env(name);
	if (!s)
		return 0;
	int64_t v = 0;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - (*p - '0')) / 10)
			break;
		v = v * 10 + (*p - '0');
	}
	if (p == s || *p || v < min) {
		tp_format(err, errlen, "%s='%s' (set by %s) is not a number >= %lld", name, s, launcher,
			(long long)min);
		return -1;
	}
	*out = v;
	return 1;
}

/* The basename of s, without a ".py" ending for a script. */
static const char *lch_base(const char *s, size_t *len, int script)
{
	const char *b = strrchr(s, '/') ? strrchr(s, '/') + 1 : s;
	*len = strlen(b);
	if (script && *len > 3 && strcmp(b + *len - 3, ".py") == 0)
		*len -= 3;
	return b;
}

/* Whether name (a basename) is a Python interpreter: python, python3,
 * python3.11, ... */
static int lch_is_python(const char *name)
{
	if (strncmp(name, "python", 6) != 0)
		return 0;
	for (name += 6; *name; name++)
		if ((*name < '0' || *name > '9') && *name != '.')
			return 0;
	return 1;
}

/* What a Python command line runs, from its arguments (NUL-separated, argc
 * of them, after the interpreter): the script's name without ".py", or the
 * module's of -m.  NULL for -c, - and an interactive interpreter (the
 * interpreter's own name stays). */
static const char *lch_python_target(const char *a, const char *end, size_t *len)
{
	for (; a < end; a += strlen(a) + 1) {
		if (a[0] != '-')
			return lch_base(a, len, 1);
		if (a[1] == '\0' || strcmp(a, "--") == 0)
			return NULL;  /* the program comes from stdin, or "--" */
		if (a[1] == '-') {
			/* Long options; only --check-hash-based-pycs takes a
			 * separate value. */
			if (strcmp(a, "--check-hash-based-pycs") == 0 && a + strlen(a) + 1 < end)
				a += strlen(a) + 1;
			continue;
		}
		/* Short options, grouped as getopt groups them (-um mod, -Wd). */
		for (const char *c = a + 1; *c; c++) {
			if (*c != 'c' && *c != 'm' && *c != 'W' && *c != 'X')
				continue;
			const char *val = c[1] ? c + 1 : a + strlen(a) + 1;
			if (*c == 'c' || val >= end)
				return NULL;
			if (*c == 'm') {
				*len = strlen(val);
				return val;
			}
			a = c[1] ? a : val;  /* -W and -X: skip their value */
			break;
		}
	}
	return NULL;
}

/* For torchrun (or python -m torch.distributed.run, or composer): the name of the script
 * it starts, its first argument ending in ".py", so that the launcher and
 * its workers (`python -u train.py`) share one run name.  NULL when there is
 * none (torchrun --no-python, or a module). */
static const char *lch_torchrun_script(const char *a, const char *end, size_t *len)
{
	for (; a < end; a += strlen(a) + 1) {
		size_t l = strlen(a);
		if (a[0] != '-' && l > 3 && strcmp(a + l - 3, ".py") == 0)
			return lch_base(a, len, 1);
	}
	return NULL;
}

/* torchrun, python -m torch.distributed.run, Composer's launcher
 * (`composer -n 2 train.py`, whose workers are `python -u train.py`) and
 * Accelerate's (`accelerate launch train.py`, a Python script named
 * accelerate; the caller checks the "launch"). */
static int lch_is_torchrun(const char *name, size_t len)
{
	return (len == 8 && strncmp(name, "torchrun", 8) == 0) ||
	       (len == 21 && strncmp(name, "torch.distributed.run", 21) == 0) ||
	       (len == 8 && strncmp(name, "composer", 8) == 0) ||
	       (len == 10 && strncmp(name, "accelerate", 10) == 0);
}

/* The program's name: the basename of argv[0] as the kernel recorded it, so
 * that a renamed comm (prctl) does not matter; glibc's copy is the fallback.
 * For a Python interpreter, the script's name without ".py" (train for
 * `python3 train.py`) or the module of -m: the interpreter's name says
 * nothing about the run (a torchrun worker is `python -u train.py`); for
 * torchrun, its script's (lch_torchrun_script()).
 * scripts/traceprof/cli/run.py's program_name() is the same rule.  *agent: 1
 * when the process is one of those launchers. */
static void lch_program_name(char *dst, size_t size, int *agent)
{
	char buf[4096];
	const char *name = NULL;
	size_t l = 0;
	ssize_t n = tp_procfs_read("/proc/self/cmdline", buf, sizeof(buf));
	/* argv[0] ends at the first NUL. */
	if (n > 0) {
		name = lch_base(buf, &l, 0);
		if (lch_is_python(name)) {
			size_t tl;
			const char *t = lch_python_target(buf + strlen(buf) + 1, buf + n, &tl);
			if (t && tl) {
				name = t;
				l = tl;
			}
		}
		/* accelerate only as `accelerate launch`: its other commands
		 * (config, env) start no workers. */
		const char *next = name + strlen(name) + 1;
		if (lch_is_torchrun(name, l) &&
		    (l != 10 || (next < buf + n && strcmp(next, "launch") == 0))) {
			*agent = 1;
			size_t sl;
			const char *sc = lch_torchrun_script(next, buf + n, &sl);
			if (sc && sl) {
				name = sc;
				l = sl;
			}
		}
	}
	if (!name || !name[0]) {
		name = program_invocation_short_name;
		l = name ? strlen(name) : 0;
	}
	if (!name || !name[0]) {
		name = "traceprof";
		l = strlen(name);
	}
	if (l >= size)
		l = size - 1;
	memcpy(dst, name, l);
	dst[l] = '\0';
}

static int lch_hex(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return 0;
	return 1;
}

int tp_launcher_placeholder(const char *value)
{
	if (strcmp(value, TP_RUN_NAME_PLACEHOLDER) == 0)
		return 1;
	/* 8-4-4-4-12 hex digits, as uuid.uuid4() prints one. */
	static const int groups[] = { 8, 4, 4, 4, 12 };
	const char *p = value;
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		if (strlen(p) < (size_t)groups[g] || !lch_hex(p, groups[g]))
			return 0;
		p += groups[g];
		if (g + 1 < sizeof(groups) / sizeof(groups[0]) && *p++ != '-')
			return 0;
	}
	return *p == '\0';
}

static void lch_copy(char *dst, size_t size, const char *src)
{
	size_t l = strlen(src);
	if (l >= size)
		l = size - 1;
	memcpy(dst, src, l);
	dst[l] = '\0';
}

int tp_launcher_vars(struct tp_template_vars *v, const char *run_name_override,
			      char *err, int errlen)
{
	memset(v, 0, sizeof(*v));
	v->world_size = 1;
	v->local_world_size = 1;
	v->launcher = TP_LAUNCHER_NONE;
	v->pid = getpid();

	/* Each launcher's names: rank, local rank, world size, local world size,
	 * node rank.  The first launcher whose rank variable is set wins: torchrun
	 * first because it is often started by srun or mpirun, whose variables
	 * then describe the launcher processes, not the workers. */
	static const struct {
		const char *launcher;
		const char *rank, *local_rank, *world, *local_world, *node;
	} tab[] = {
	/* The table is scripts/layout.spec's LAUNCHERS, which the command's
	 * runfiles.py reads too. */
#define LCH_ROW(l, r, lr, w, lw, n) { l, r, lr, w, lw, n },
		TP_LAUNCHERS(LCH_ROW)
#undef LCH_ROW
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (!lch_env(tab[i].rank))
			continue;
		const char *l = tab[i].launcher;
		int r = 0, have_local_world = 0, have_node = 0;
		r = lch_env_num(tab[i].rank, 0, &v->rank, l, err, errlen);
		if (r >= 0)
			r = lch_env_num(tab[i].local_rank, 0, &v->local_rank, l, err, errlen);
		if (r >= 0)
			r = lch_env_num(tab[i].world, 1, &v->world_size, l, err, errlen);
		if (r >= 0)
			r = have_local_world = lch_env_num(tab[i].local_world, 1,
							   &v->local_world_size, l, err, errlen);
		if (r >= 0 && tab[i].node)
			r = have_node = lch_env_num(tab[i].node, 0, &v->node_rank, l, err, errlen);
		if (r < 0)
			return -1;
		/* Without a node variable, ranks are assumed to be packed node by
		 * node (the default of every launcher listed). */
		if (have_node <= 0 && have_local_world > 0)
			v->node_rank = v->rank / v->local_world_size;
		v->launcher = l;
		break;
	}

	/* The run name: the override, else the first of scripts/layout.spec's
	 * RUN_NAME_VARS that is set and is not a placeholder (torchrun's
	 * "none" when no --rdzv-id was given, shared by unrelated runs, or a
	 * UUID made for one launch and given to its workers only), else the
	 * program's name, which torchrun's agent and its workers share.
	 * traceprof run (cli/runfiles.py) applies the same rule to say where
	 * the files will be. */
#define LCH_NAME(id, name) name,
	static const char *const rn_vars[TP_RUN_NAME_VARS_N] = { TP_RUN_NAME_VARS(LCH_NAME) };
#undef LCH_NAME
	const char *rn = run_name_override && run_name_override[0] ? run_name_override : NULL;
	for (size_t i = 0; !rn && i < TP_RUN_NAME_VARS_N; i++) {
		const char *x = lch_env(rn_vars[i]);
		if (x && !tp_launcher_placeholder(x))
			rn = x;
	}
	/* Read in every case: it also says whether this is a launcher. */
	char prog[sizeof(v->run_name)];
	lch_program_name(prog, sizeof(prog), &v->is_agent);
	lch_copy(v->run_name, sizeof(v->run_name), rn ? rn : prog);

	if (gethostname(v->hostname, sizeof(v->hostname) - 1) != 0)
		lch_copy(v->hostname, sizeof(v->hostname), "localhost");
	v->hostname[sizeof(v->hostname) - 1] = '\0';
	return 0;
}

/* Process pid's start time (/proc/PID/stat's 22nd field, clock ticks since
 * boot), or 0 when it is gone or unreadable. */
static unsigned long long lch_start_ticks(long pid)
{
	char path[64], buf[1024];
	tp_format(path, sizeof(path), "/proc/%ld/stat", pid);
	if (tp_procfs_read_text(path, buf, sizeof(buf), 0) <= 0)
		return 0;
	/* The command name (field 2) may hold spaces and parentheses: the
	 * fields after it start after the last ')'. */
	const char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* Field 3 (state) is the first after ") "; field 22 is 19 more on. */
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

void tp_launcher_run_id(struct tp_template_vars *v, const char *override)
{
	const char *x = NULL;
	if (override && override[0]) {
		x = override;
		v->run_id_from = "TRACEPROF_RUN_ID";
	} else if ((x = lch_env(TP_RUN_ID_TORCHELASTIC)) && strcmp(x, TP_RUN_NAME_PLACEHOLDER)) {
		v->run_id_from = TP_RUN_ID_TORCHELASTIC;
	} else {
		x = NULL;
	}
	if (x) {
		lch_copy(v->run_id, sizeof(v->run_id), x);
		return;
	}
	const char *job = lch_env(TP_RUN_ID_SLURM_JOB);
	if (job) {
		const char *step = lch_env(TP_RUN_ID_SLURM_STEP);
		tp_format(v->run_id, (int)sizeof(v->run_id), "slurm-%s%s%s", job, step ? "." : "",
			  step ? step : "");
		v->run_id_from = TP_RUN_ID_SLURM_JOB;
		return;
	}
	if ((x = lch_env(TP_RUN_ID_PMIX))) {
		lch_copy(v->run_id, sizeof(v->run_id), x);
		v->run_id_from = TP_RUN_ID_PMIX;
		return;
	}
	long ppid = (long)getppid();
	tp_format(v->run_id, (int)sizeof(v->run_id), "parent-%s-%ld-%llu", v->hostname, ppid,
		  lch_start_ticks(ppid));
	v->run_id_from = TP_RUN_ID_FROM_PARENT;
}
