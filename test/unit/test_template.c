/* Unit tests for format/template.c: expansion, brace escapes, error messages
 * and the launchers' environment variables.  Each test runs in its own
 * process (Check's fork mode), so setenv/unsetenv do not leak. */
/* program_invocation_short_name; the build defines it, a bare compile may not. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/template.h"

#include "test/unit/check_main.h"

static const char *const launcher_vars[] = {
	"RANK",
	"LOCAL_RANK",
	"WORLD_SIZE",
	"LOCAL_WORLD_SIZE",
	"GROUP_RANK",
	"OMPI_COMM_WORLD_RANK",
	"OMPI_COMM_WORLD_LOCAL_RANK",
	"OMPI_COMM_WORLD_SIZE",
	"OMPI_COMM_WORLD_LOCAL_SIZE",
	"OMPI_COMM_WORLD_NODE_RANK",
	"PMI_RANK",
	"PMI_SIZE",
	"MPI_LOCALRANKID",
	"MPI_LOCALNRANKS",
	"SLURM_PROCID",
	"SLURM_LOCALID",
	"SLURM_NTASKS",
	"SLURM_NTASKS_PER_NODE",
	"SLURM_NODEID",
	"SLURM_JOB_ID",
	"TORCHELASTIC_RUN_ID",
	"TRACEPROF_RUN_NAME",
	NULL,
};

/* The test may itself run under a launcher; start from a clean slate. */
static void clear_env(void)
{
	for (int i = 0; launcher_vars[i]; i++)
		unsetenv(launcher_vars[i]);
}

static struct tp_template_vars sample(void)
{
	struct tp_template_vars v;
	memset(&v, 0, sizeof(v));
	strcpy(v.run_name, "myrun");
	strcpy(v.hostname, "node7");
	v.rank = 3;
	v.local_rank = 1;
	v.world_size = 16;
	v.local_world_size = 8;
	v.node_rank = 2;
	v.pid = 4242;
	v.step = 17;
	v.launcher = "torchrun";
	return v;
}

static const char *expand(const char *tmpl, const struct tp_template_vars *v)
{
	static char out[1024];
	char err[512] = "";
	int n = tp_template_expand(tmpl, v, out, sizeof(out), err, sizeof(err));
	ck_assert_msg(n >= 0, "expand(%s) failed: %s", tmpl, err);
	ck_assert_int_eq(n, (int)strlen(out));
	return out;
}

START_TEST(test_every_variable)
{
	struct tp_template_vars v = sample();
	ck_assert_str_eq(expand("{run_name}", &v), "myrun");
	ck_assert_str_eq(expand("{rank}", &v), "3");
	ck_assert_str_eq(expand("{local_rank}", &v), "1");
	ck_assert_str_eq(expand("{world_size}", &v), "16");
	ck_assert_str_eq(expand("{local_world_size}", &v), "8");
	ck_assert_str_eq(expand("{node_rank}", &v), "2");
	ck_assert_str_eq(expand("{step}", &v), "17");
	ck_assert_str_eq(expand("{batch}", &v), "17"); /* alias of step */
	ck_assert_str_eq(expand("{pid}", &v), "4242");
	ck_assert_str_eq(expand("{hostname}", &v), "node7");
	ck_assert_str_eq(expand("{run_name}/traces", &v), "myrun/traces");
	ck_assert_str_eq(expand("rank{rank}.{batch}.pt.trace.json", &v), "rank3.17.pt.trace.json");
	ck_assert_str_eq(expand("ep-ba{batch}-rank{rank}-of-{world_size}@{hostname}.{pid}", &v),
			 "ep-ba17-rank3-of-16@node7.4242");
	ck_assert_str_eq(expand("", &v), "");
	ck_assert_str_eq(expand("no variables", &v), "no variables");
	v.step = -1;
	ck_assert_str_eq(expand("{step}", &v), "-1");
	ck_assert_int_eq(tp_template_check("{rank}{batch}{step}", NULL, 0), 0);
}
END_TEST

START_TEST(test_brace_escapes)
{
	struct tp_template_vars v = sample();
	ck_assert_str_eq(expand("{{", &v), "{");
	ck_assert_str_eq(expand("}}", &v), "}");
	ck_assert_str_eq(expand("{{rank}}", &v), "{rank}");
	ck_assert_str_eq(expand("{{{rank}}}", &v), "{3}");
	ck_assert_str_eq(expand("a{{b}}c", &v), "a{b}c");
	ck_assert_int_eq(tp_template_check("{{foo}}", NULL, 0), 0);
}
END_TEST

START_TEST(test_unknown_variable)
{
	char err[512];
	ck_assert_int_eq(tp_template_check("x{foo}y", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "unknown variable {foo} in \"x{foo}y\"; known: {run_name} {rank} "
			      "{local_rank} {world_size} {local_world_size} {node_rank} {step} "
			      "{batch} {pid} {hostname}");
	struct tp_template_vars v = sample();
	char out[64];
	ck_assert_int_eq(tp_template_expand("{Rank}", &v, out, sizeof(out), err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "unknown variable {Rank}") != NULL, "%s", err);
	ck_assert_int_eq(tp_template_check("{}", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "unknown variable {}") != NULL, "%s", err);
	/* A short error buffer is truncated, never overrun. */
	char small[8];
	ck_assert_int_eq(tp_template_check("{foo}", small, sizeof(small)), -1);
	ck_assert_str_eq(small, "unknown");
	ck_assert_int_eq(tp_template_check("{foo}", NULL, 0), -1);
}
END_TEST

START_TEST(test_unmatched_braces)
{
	char err[512];
	ck_assert_int_eq(tp_template_check("rank{rank", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "unmatched '{' at offset 4 in \"rank{rank\" "
			      "(write \"{{\" for a literal brace)");
	ck_assert_int_eq(tp_template_check("a}b", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "unmatched '}' at offset 1 in \"a}b\" "
			      "(write \"}}\" for a literal brace)");
	ck_assert_int_eq(tp_template_check("{", err, sizeof(err)), -1);
	ck_assert_int_eq(tp_template_check("}", err, sizeof(err)), -1);
	ck_assert_int_eq(tp_template_check("{rank}}", err, sizeof(err)), -1);
	ck_assert_int_eq(tp_template_check("{{rank}", err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_too_long)
{
	struct tp_template_vars v = sample();
	char out[8], err[256];
	ck_assert_int_eq(tp_template_expand("rank{rank}", &v, out, sizeof(out), err, sizeof(err)),
			 5);
	ck_assert_int_eq(tp_template_expand("{run_name}{run_name}", &v, out, sizeof(out), err,
					    sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "\"{run_name}{run_name}\" expands to 10 bytes, more than the 7 allowed");
	ck_assert_str_eq(out, "");
	/* Exactly fitting. */
	ck_assert_int_eq(tp_template_expand("1234567", &v, out, sizeof(out), err, sizeof(err)), 7);
	ck_assert_str_eq(out, "1234567");
}
END_TEST

START_TEST(test_sanitise)
{
	struct tp_template_vars v = sample();
	strcpy(v.run_name, "a/b/../c");
	strcpy(v.hostname, "/etc/x");
	ck_assert_str_eq(expand("{run_name}-{hostname}", &v), "a_b_.._c-_etc_x");
	strcpy(v.run_name, "..");
	ck_assert_str_eq(expand("{run_name}/x", &v), "_/x"); /* the template's own '/' stays */
	strcpy(v.run_name, ".");
	ck_assert_str_eq(expand("{run_name}", &v), "_");
	strcpy(v.run_name, "...");
	ck_assert_str_eq(expand("{run_name}", &v), "...");
}
END_TEST

static void from_env(struct tp_template_vars *v)
{
	char err[512] = "";
	int rc = tp_launcher_vars(v, NULL, err, sizeof(err));
	ck_assert_msg(rc == 0, "from_env failed: %s", err);
}

START_TEST(test_env_none)
{
	clear_env();
	struct tp_template_vars v;
	from_env(&v);
	ck_assert_str_eq(v.launcher, "none");
	ck_assert_int_eq(v.rank, 0);
	ck_assert_int_eq(v.local_rank, 0);
	ck_assert_int_eq(v.world_size, 1);
	ck_assert_int_eq(v.local_world_size, 1);
	ck_assert_int_eq(v.node_rank, 0);
	ck_assert_int_eq(v.pid, getpid());
	ck_assert_int_eq(v.step, 0);
	/* The program's basename (this test binary). */
	ck_assert_str_eq(v.run_name, program_invocation_short_name);
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	ck_assert_str_eq(v.hostname, host);
}
END_TEST

START_TEST(test_env_torchrun)
{
	clear_env();
	setenv("RANK", "5", 1);
	setenv("LOCAL_RANK", "1", 1);
	setenv("WORLD_SIZE", "8", 1);
	setenv("LOCAL_WORLD_SIZE", "4", 1);
	setenv("GROUP_RANK", "1", 1);
	setenv("TORCHELASTIC_RUN_ID", "job-abc", 1);
	/* Lower-precedence launchers are ignored. */
	setenv("OMPI_COMM_WORLD_RANK", "9", 1);
	setenv("SLURM_PROCID", "7", 1);
	setenv("SLURM_JOB_ID", "12345", 1);
	struct tp_template_vars v;
	from_env(&v);
	ck_assert_str_eq(v.launcher, "torchrun");
	ck_assert_int_eq(v.rank, 5);
	ck_assert_int_eq(v.local_rank, 1);
	ck_assert_int_eq(v.world_size, 8);
	ck_assert_int_eq(v.local_world_size, 4);
	ck_assert_int_eq(v.node_rank, 1);
	ck_assert_str_eq(v.run_name, "job-abc");

	/* torchrun's placeholder run id is skipped for the next source. */
	setenv("TORCHELASTIC_RUN_ID", "none", 1);
	from_env(&v);
	ck_assert_str_eq(v.run_name, "12345");
	/* The override wins over everything. */
	char err[256];
	ck_assert_int_eq(tp_launcher_vars(&v, "override", err, sizeof(err)), 0);
	ck_assert_str_eq(v.run_name, "override");
	ck_assert_int_eq(tp_launcher_vars(&v, "", err, sizeof(err)), 0);
	ck_assert_str_eq(v.run_name, "12345");
}
END_TEST

/* A UUID run id (torchrun --standalone's, torch 2.15's without
 * --master_port) is made per launch and given to the workers only: skipped
 * like "none", so that the agent, its workers and the next run share the
 * program's name (issue 42 item 1). */
START_TEST(test_env_uuid_run_id)
{
	clear_env();
	setenv("RANK", "1", 1);
	setenv("TORCHELASTIC_RUN_ID", "07a29c41-71d6-4b8e-9f0a-d226471ea2cc", 1);
	struct tp_template_vars v;
	from_env(&v);
	ck_assert_str_eq(v.run_name, program_invocation_short_name);
	ck_assert_int_eq(v.is_agent, 0);
	setenv("SLURM_JOB_ID", "881", 1);
	from_env(&v);
	ck_assert_str_eq(v.run_name, "881");
	/* Not UUIDs: kept. */
	static const char *const kept[] = {
		"07a29c41-71d6-4b8e-9f0a-d226471ea2cc-x", "07a29c4171d64b8e9f0ad226471ea2cc",
		"07a29c41-71d6-4b8e-9f0a-d226471ea2cg", "07a29c41-71d6-4b8e-9f0a-d226471ea2c",
	};
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		ck_assert_int_eq(tp_launcher_placeholder(kept[i]), 0);
		setenv("TORCHELASTIC_RUN_ID", kept[i], 1);
		from_env(&v);
		ck_assert_str_eq(v.run_name, kept[i]);
	}
	ck_assert_int_eq(tp_launcher_placeholder("07A29C41-71D6-4B8E-9F0A-D226471EA2CC"), 1);
	ck_assert_int_eq(tp_launcher_placeholder("none"), 1);
	ck_assert_int_eq(tp_launcher_placeholder(""), 0);
}
END_TEST

START_TEST(test_env_openmpi)
{
	clear_env();
	setenv("OMPI_COMM_WORLD_RANK", "6", 1);
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "12", 1);
	setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
	setenv("OMPI_COMM_WORLD_NODE_RANK", "3", 1);
	setenv("PMI_RANK", "1", 1);
	setenv("SLURM_PROCID", "1", 1);
	struct tp_template_vars v;
	from_env(&v);
	ck_assert_str_eq(v.launcher, "openmpi");
	ck_assert_int_eq(v.rank, 6);
	ck_assert_int_eq(v.local_rank, 2);
	ck_assert_int_eq(v.world_size, 12);
	ck_assert_int_eq(v.local_world_size, 4);
	ck_assert_int_eq(v.node_rank, 3);
	/* Without NODE_RANK: rank / local size. */
	unsetenv("OMPI_COMM_WORLD_NODE_RANK");
	from_env(&v);
	ck_assert_int_eq(v.node_rank, 1);
}
END_TEST

START_TEST(test_env_pmi)
{
	clear_env();
	setenv("PMI_RANK", "3", 1);
	setenv("PMI_SIZE", "4", 1);
	setenv("SLURM_PROCID", "1", 1);
	struct tp_template_vars v;
	from_env(&v);
	ck_assert_str_eq(v.launcher, "pmi");
	ck_assert_int_eq(v.rank, 3);
	ck_assert_int_eq(v.world_size, 4);
	ck_assert_int_eq(v.local_rank, 0);
	ck_assert_int_eq(v.local_world_size, 1);
	ck_assert_int_eq(v.node_rank, 0);
	/* MPICH's Hydra adds local ranks. */
	setenv("MPI_LOCALRANKID", "1", 1);
	setenv("MPI_LOCALNRANKS", "2", 1);
	from_env(&v);
	ck_assert_int_eq(v.local_rank, 1);
	ck_assert_int_eq(v.local_world_size, 2);
	ck_assert_int_eq(v.node_rank, 1);
}
END_TEST

START_TEST(test_env_slurm)
{
	clear_env();
	setenv("SLURM_PROCID", "10", 1);
	setenv("SLURM_LOCALID", "2", 1);
	setenv("SLURM_NTASKS", "16", 1);
	setenv("SLURM_NODEID", "2", 1);
	setenv("SLURM_JOB_ID", "998877", 1);
	struct tp_template_vars v;
	from_env(&v);
	ck_assert_str_eq(v.launcher, "slurm");
	ck_assert_int_eq(v.rank, 10);
	ck_assert_int_eq(v.local_rank, 2);
	ck_assert_int_eq(v.world_size, 16);
	ck_assert_int_eq(v.node_rank, 2);
	ck_assert_str_eq(v.run_name, "998877");
	setenv("SLURM_NTASKS_PER_NODE", "4", 1);
	from_env(&v);
	ck_assert_int_eq(v.local_world_size, 4);
	ck_assert_int_eq(v.node_rank, 2); /* SLURM_NODEID still wins */
}
END_TEST

START_TEST(test_env_not_numbers)
{
	static const struct {
		const char *var, *val, *launcher_rank;
	} bad[] = {
		{ "RANK", "abc", NULL },
		{ "RANK", "1x", NULL },
		{ "RANK", "-1", NULL },
		{ "RANK", " 1", NULL },
		{ "RANK", "99999999999999999999", NULL },
		{ "WORLD_SIZE", "0", "RANK" },
		{ "LOCAL_RANK", "one", "RANK" },
		{ "GROUP_RANK", "1.5", "RANK" },
		{ "OMPI_COMM_WORLD_SIZE", "x", "OMPI_COMM_WORLD_RANK" },
		{ "PMI_SIZE", "4k", "PMI_RANK" },
		{ "SLURM_NODEID", "n1", "SLURM_PROCID" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		clear_env();
		if (bad[i].launcher_rank)
			setenv(bad[i].launcher_rank, "0", 1);
		setenv(bad[i].var, bad[i].val, 1);
		struct tp_template_vars v;
		char err[256] = "";
		ck_assert_int_eq(tp_launcher_vars(&v, NULL, err, sizeof(err)), -1);
		char want[128];
		snprintf(want, sizeof(want), "%s='%s'", bad[i].var, bad[i].val);
		ck_assert_msg(strstr(err, want) != NULL, "message \"%s\" lacks %s", err, want);
	}
	/* Empty counts as unset. */
	clear_env();
	setenv("RANK", "", 1);
	struct tp_template_vars v;
	from_env(&v);
	ck_assert_str_eq(v.launcher, "none");
}
END_TEST

START_TEST(test_env_expand_end_to_end)
{
	clear_env();
	setenv("RANK", "2", 1);
	setenv("WORLD_SIZE", "4", 1);
	struct tp_template_vars v;
	char err[256];
	ck_assert_int_eq(tp_launcher_vars(&v, "exp/1", err, sizeof(err)), 0);
	v.step = 30;
	ck_assert_str_eq(expand("{run_name}/traces/rank{rank}.{batch}.pt.trace.json", &v),
			 "exp_1/traces/rank2.30.pt.trace.json");
}
END_TEST

/* The shared table of cases (test/data/template_cases.tsv), which the
 * command's expansion (python/traceprof/cli/runfiles.py) is tested against
 * too, by test/python/test_template.py: both must agree with it. */
START_TEST(test_shared_table)
{
	const char *top = getenv("TP_TOP");
	char path[4096];
	snprintf(path, sizeof(path), "%s/test/data/template_cases.tsv", top ? top : ".");
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s (set TP_TOP to the source tree)", path);
	char line[2048];
	int lineno = 0, cases = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		char *col[4];
		int n = 0;
		for (char *p = line; n < 4; n++) {
			col[n] = p;
			char *tab = strchr(p, '\t');
			if (!tab) {
				n++;
				break;
			}
			*tab = '\0';
			p = tab + 1;
		}
		ck_assert_msg(n == 4, "%s:%d: 4 tab-separated columns, not %d", path, lineno, n);
		struct tp_template_vars v = sample();
		snprintf(v.run_name, sizeof(v.run_name), "%s", col[0]);
		snprintf(v.hostname, sizeof(v.hostname), "%s", col[1]);
		char out[1024], err[512] = "";
		int r = tp_template_expand(col[2], &v, out, sizeof(out), err, sizeof(err));
		if (!strcmp(col[3], "ERROR")) {
			ck_assert_msg(r == -1, "%s:%d: \"%s\" expanded to \"%s\", want an error",
				      path, lineno, col[2], out);
			ck_assert_int_eq(tp_template_check(col[2], NULL, 0), -1);
		} else {
			ck_assert_msg(r >= 0, "%s:%d: \"%s\" refused: %s", path, lineno, col[2], err);
			ck_assert_msg(!strcmp(out, col[3]), "%s:%d: \"%s\" expanded to \"%s\", want \"%s\"",
				      path, lineno, col[2], out, col[3]);
			ck_assert_int_eq(tp_template_check(col[2], NULL, 0), 0);
		}
		cases++;
	}
	fclose(f);
	ck_assert_msg(cases >= 20, "%s: only %d cases", path, cases);
}
END_TEST

static Suite *template_suite(void)
{
	Suite *s = suite_create("template");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_every_variable);
	tcase_add_test(tc, test_brace_escapes);
	tcase_add_test(tc, test_unknown_variable);
	tcase_add_test(tc, test_unmatched_braces);
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_sanitise);
	tcase_add_test(tc, test_env_none);
	tcase_add_test(tc, test_env_torchrun);
	tcase_add_test(tc, test_env_openmpi);
	tcase_add_test(tc, test_env_pmi);
	tcase_add_test(tc, test_env_slurm);
	tcase_add_test(tc, test_env_uuid_run_id);
	tcase_add_test(tc, test_env_not_numbers);
	tcase_add_test(tc, test_env_expand_end_to_end);
	tcase_add_test(tc, test_shared_table);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(template_suite());
}
