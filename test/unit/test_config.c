/* Configuration: defaults, every variable's accepted forms, and one message
 * naming the variable, the value and the fix for each bad value. */
#include <check.h>
#include <signal.h>
#include <string.h>

#include "common/config.h"

#include "test/unit/check_main.h"

struct env {
	const char *k[8];
	const char *v[8];
};

static const char *lookup(const char *name, void *ctx)
{
	struct env *e = ctx;
	for (int i = 0; i < 8 && e->k[i]; i++)
		if (!strcmp(e->k[i], name))
			return e->v[i];
	return NULL;
}

static int parse1(const char *k, const char *v, struct tp_config *cfg, char *err)
{
	struct env e = { { k }, { v } };
	return tp_config_parse(cfg, lookup, &e, err, 600);
}

START_TEST(test_defaults)
{
	struct tp_config c;
	char err[600];
	struct env e = { { NULL }, { NULL } };
	ck_assert_int_eq(tp_config_parse(&c, lookup, &e, err, sizeof(err)), 0);
	ck_assert_int_eq(c.enable, 1);
	ck_assert_int_eq(c.schedule.enabled, 0);
	ck_assert_str_eq(c.folder, "traceprof_traces/{run_name}");
	ck_assert_str_eq(c.filename, "rank{rank}.step{step}.trace.json");
	ck_assert_int_eq(c.num_traces_to_keep, -1);
	ck_assert_int_eq(c.overwrite, 0);
	ck_assert_uint_eq(c.buffer_events, 262144);
	ck_assert_int_eq(c.step_source, TP_STEP_API);
	ck_assert_int_eq(c.compress, TP_COMPRESS_NONE);
	ck_assert_int_eq(c.zstd_level, 1);
	ck_assert_int_eq(c.zstd_threads, 0);
	ck_assert_uint_eq(c.max_file_mb, 256);
	ck_assert_uint_eq(c.stack_depth, 16);
	ck_assert_uint_eq(c.sample_ms, 100);
	ck_assert_int_eq(c.follow_fork, 1);
	ck_assert_int_eq(c.follow_exec, 1);
}
END_TEST

START_TEST(test_accepted_values)
{
	struct tp_config c;
	char err[600];
	ck_assert_int_eq(parse1("TRACEPROF_SCHEDULE", "wait=1,warmup=1,active=3,repeat=2", &c, err), 0);
	ck_assert_uint_eq(c.schedule.active, 3);
	ck_assert_uint_eq(c.schedule.repeat, 2);
	ck_assert_int_eq(parse1("TRACEPROF_ENABLE", "off", &c, err), 0);
	ck_assert_int_eq(c.enable, 0);
	ck_assert_int_eq(parse1("TRACEPROF_COMPRESS", "ZSTD", &c, err), 0);
	ck_assert_int_eq(c.compress, TP_COMPRESS_ZSTD);
	ck_assert_int_eq(parse1("TRACEPROF_FORMAT", "perfetto", &c, err), 0);
	ck_assert_int_eq(c.format, TP_FORMAT_PERFETTO);
	ck_assert_int_eq(parse1("TRACEPROF_STEP", "nvtx:ProfilerStep*", &c, err), 0);
	ck_assert_int_eq(c.step_source, TP_STEP_NVTX);
	ck_assert_str_eq(c.step_arg, "ProfilerStep*");
	ck_assert_int_eq(parse1("TRACEPROF_STEP", "call:cudaGraphLaunch:4", &c, err), 0);
	ck_assert_int_eq(c.step_source, TP_STEP_CALL);
	ck_assert_str_eq(c.step_arg, "cudaGraphLaunch");
	ck_assert_uint_eq(c.step_every, 4);
	ck_assert_int_eq(parse1("TRACEPROF_STEP", "time:250", &c, err), 0);
	ck_assert_int_eq(c.step_source, TP_STEP_TIME);
	ck_assert_uint_eq(c.step_every, 250);
	ck_assert_int_eq(parse1("TRACEPROF_TRIGGER", "SIGUSR2", &c, err), 0);
	ck_assert_int_eq(c.trigger_signal, SIGUSR2);
	ck_assert_int_eq(parse1("TRACEPROF_TRIGGER", "usr1", &c, err), 0);
	ck_assert_int_eq(c.trigger_signal, SIGUSR1);
	ck_assert_int_eq(parse1("TRACEPROF_NUM_TRACES_TO_KEEP", "0", &c, err), 0);
	ck_assert_int_eq(c.num_traces_to_keep, 0);
	ck_assert_int_eq(parse1("TRACEPROF_ON_SAVE", "", &c, err), 0);
	ck_assert_int_eq(parse1("TRACEPROF_ZSTD_LEVEL", "-3", &c, err), 0);
	ck_assert_int_eq(c.zstd_level, -3);
	ck_assert_int_eq(parse1("TRACEPROF_ZSTD_LEVEL", "19", &c, err), 0);
	ck_assert_int_eq(c.zstd_level, 19);
	ck_assert_int_eq(parse1("TRACEPROF_ZSTD_THREADS", "4", &c, err), 0);
	ck_assert_int_eq(c.zstd_threads, 4);
	ck_assert_int_eq(parse1("TRACEPROF_STEP", "torch", &c, err), 0);
	ck_assert_int_eq(c.step_source, TP_STEP_API);
	ck_assert_str_eq(c.step_arg, "torch");
	ck_assert_int_eq(parse1("TRACEPROF_PYTORCH", "modules,shapes", &c, err), 0);
	ck_assert_uint_eq(c.pytorch, 5);
	ck_assert_int_eq(parse1("TRACEPROF_PYTORCH", "ops", &c, err), 0);
	ck_assert_uint_eq(c.pytorch, 2);
	ck_assert_int_eq(parse1("TRACEPROF_CAPTURE", "cudaProfilerApi", &c, err), 0);
	ck_assert_int_eq(c.capture, 1);
	ck_assert_int_eq(parse1("TRACEPROF_PYTHON_STACK", "1", &c, err), 0);
	ck_assert_int_eq(c.python_stack, 1);
	ck_assert_int_eq(parse1("TRACEPROF_PYTHON_STACK", "off", &c, err), 0);
	ck_assert_int_eq(c.python_stack, 0);
}
END_TEST

static void expect_error(const char *k, const char *v, const char *fragment)
{
	struct tp_config c;
	char err[600];
	ck_assert_msg(parse1(k, v, &c, err) != 0, "%s='%s' accepted", k, v);
	ck_assert_msg(strstr(err, k) != NULL, "message '%s' does not name %s", err, k);
	ck_assert_msg(strstr(err, fragment) != NULL, "%s='%s': message '%s' lacks '%s'", k, v, err,
		      fragment);
}

START_TEST(test_errors_name_variable_value_and_fix)
{
	expect_error("TRACEPROF_SCHEDULE", "active=0", "active must be > 0");
	expect_error("TRACEPROF_SCHEDULE", "wait=2", "'active' is required");
	expect_error("TRACEPROF_ENABLE", "maybe", "expected 1 or 0");
	expect_error("TRACEPROF_LOG", "loud", "expected one of error, warn, info, debug");
	expect_error("TRACEPROF_FOLDER", "", "empty; unset the variable");
	expect_error("TRACEPROF_FILENAME", "a/b.json", "must not contain '/'");
	expect_error("TRACEPROF_NUM_TRACES_TO_KEEP", "-2", "from -1 to");
	expect_error("TRACEPROF_NUM_TRACES_TO_KEEP", "ten", "expected an integer");
	expect_error("TRACEPROF_BUFFER_EVENTS", "1000", "power of two");
	expect_error("TRACEPROF_BUFFER_EVENTS", "8", "out of range");
	expect_error("TRACEPROF_BUFFER_EVENTS", "99999999999999999999", "expected an integer");
	expect_error("TRACEPROF_FLUSH_MS", "0", "out of range");
	expect_error("TRACEPROF_CLOCK", "hpet", "tsc, monotonic");
	expect_error("TRACEPROF_STEP", "steps", "expected api, nvtx:NAME");
	expect_error("TRACEPROF_STEP", "nvtx:", "needs a range name");
	expect_error("TRACEPROF_STEP", "call:", "needs a CUDA function");
	expect_error("TRACEPROF_STEP", "call:cuda-x", "C identifier");
	expect_error("TRACEPROF_STEP", "call:cudaMalloc:0", "from 1 to");
	expect_error("TRACEPROF_STEP", "time:0", "from 1 to");
	expect_error("TRACEPROF_STEP", "time:fast", "from 1 to");
	expect_error("TRACEPROF_PYTORCH", "module", "list of modules, ops, shapes");
	expect_error("TRACEPROF_PYTORCH", "modules,,ops", "list of modules, ops, shapes");
	expect_error("TRACEPROF_CAPTURE", "nvtx", "none, cudaProfilerApi");
	expect_error("TRACEPROF_TRIGGER", "SIGFOO", "signal name");
	expect_error("TRACEPROF_CUPTI", "yes", "auto, on, off");
	expect_error("TRACEPROF_WITH_STACK", "2", "expected 1 or 0");
	expect_error("TRACEPROF_STACK_DEPTH", "0", "out of range");
	expect_error("TRACEPROF_COMPRESS", "lz4", "none, zstd, gzip");
	expect_error("TRACEPROF_FORMAT", "protobuf", "json, perfetto");
	/* The levels' message names the two ranges, never "-10 to 19" (0 is
	 * not a level). */
	expect_error("TRACEPROF_ZSTD_LEVEL", "22", "out of range; use 1 to 19, or -1 to -10");
	expect_error("TRACEPROF_ZSTD_LEVEL", "-11", "out of range; use 1 to 19, or -1 to -10");
	expect_error("TRACEPROF_ZSTD_LEVEL", "0", "not a level");
	expect_error("TRACEPROF_ZSTD_LEVEL", "1x", "expected an integer; use 1 to 19, or -1 to -10");
	expect_error("TRACEPROF_BUFFER_EVENTS", "x", "expected an integer; use a value from ");
	expect_error("TRACEPROF_ZSTD_THREADS", "17", "out of range; use a value from 0 to 16");
	expect_error("TRACEPROF_ZSTD_THREADS", "two", "expected an integer");
	expect_error("TRACEPROF_MAX_FILE_MB", "0", "out of range");
	expect_error("TRACEPROF_SAMPLE_MS", "-5", "out of range");
	expect_error("TRACEPROF_FOLLOW_FORK", "", "expected 1 or 0");
	expect_error("TRACEPROF_FOLLOW_EXEC", "nope", "expected 1 or 0");
}
END_TEST

START_TEST(test_capture_excludes_schedule_and_trigger)
{
	struct tp_config c;
	char err[600];
	struct env e = { { "TRACEPROF_CAPTURE", "TRACEPROF_SCHEDULE" },
			 { "cudaProfilerApi", "wait=1,active=1" } };
	ck_assert_int_ne(tp_config_parse(&c, lookup, &e, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "TRACEPROF_CAPTURE: 'cudaProfilerApi': cannot be combined with "
				  "TRACEPROF_SCHEDULE") != NULL,
		      "message: %s", err);
	struct env t = { { "TRACEPROF_CAPTURE", "TRACEPROF_TRIGGER" }, { "cudaprofilerapi", "USR2" } };
	ck_assert_int_ne(tp_config_parse(&c, lookup, &t, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "TRACEPROF_TRIGGER") != NULL, "message: %s", err);
}
END_TEST

static int visited;
static void visit(const char *name, const char *value, void *ctx)
{
	(void)value;
	(void)ctx;
	int known = 0;
	for (int i = 0; tp_config_names[i]; i++)
		known |= !strcmp(tp_config_names[i], name);
	ck_assert_msg(known, "%s is visited but not in tp_config_names", name);
	visited++;
}

START_TEST(test_visit_covers_every_variable)
{
	struct tp_config c;
	char err[600];
	struct env e = { { NULL }, { NULL } };
	ck_assert_int_eq(tp_config_parse(&c, lookup, &e, err, sizeof(err)), 0);
	tp_config_visit(&c, visit, NULL);
	int n = 0;
	while (tp_config_names[n])
		n++;
	ck_assert_int_eq(visited, n);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("config");
	TCase *tc = tcase_create("config");
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_accepted_values);
	tcase_add_test(tc, test_errors_name_variable_value_and_fix);
	tcase_add_test(tc, test_visit_covers_every_variable);
	tcase_add_test(tc, test_capture_excludes_schedule_and_trigger);
	suite_add_tcase(su, tc);
	return tp_check_run(su);
}
