/* The window state machine (collector/window.h): torch.profiler.schedule's
 * windows (wait, warmup, active, repeat, skip_first), torch's action table
 * at each step and at exit, triggered captures, capture ranges, the two
 * passes a closed window waits for its stragglers, where records go, the
 * oldest window giving way, and the part-file decisions.
 *
 * Every case runs a machine and compares its decisions, written as a log,
 * with a log written out by hand from torch's definitions
 * (../shared/seeds/torch-profiler-source.txt):
 *   o<id>@<step>             a window opens with that step
 *   f<id>:<first>-<last>s    a window is finalized and saved
 *   f<id>:<first>-<last>d    ... discarded ("?" for a window not closed) */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collector/capture.h"
#include "collector/control.h"
#include "collector/window.h"

#include "test/unit/check_main.h"

struct t_ctx {
	const struct tp_schedule *sched; /* else acts, else the control module */
	const char *acts;		 /* one letter per step: N W R S; N past the end */
	int use_capture;
	int refuse_open; /* opened() returns -1 */
	char log[1024];
};

static enum tp_action t_action(void *ctx, uint64_t step)
{
	struct t_ctx *c = ctx;
	if (c->sched)
		return tp_schedule_action(c->sched, step);
	if (c->use_capture)
		return tp_capture_action(step);
	if (c->acts) {
		if (step >= strlen(c->acts))
			return TP_ACT_NONE;
		return (enum tp_action)(strchr("NWRS", c->acts[step]) - "NWRS");
	}
	return tp_control_action(step);
}

static void t_logf(struct t_ctx *c, const char *fmt, unsigned long long a, unsigned long long b,
		   unsigned long long d, const char *e)
{
	size_t n = strlen(c->log);
	snprintf(c->log + n, sizeof(c->log) - n, fmt, a, b, d, e);
}

static int t_opened(void *ctx, struct tp_win *w)
{
	struct t_ctx *c = ctx;
	t_logf(c, "o%llu@%llu ", w->id, w->first_step, 0, "");
	return c->refuse_open ? -1 : 0;
}

static void t_finalize(void *ctx, struct tp_win *w)
{
	struct t_ctx *c = ctx;
	char last[32];
	if (w->closed)
		snprintf(last, sizeof(last), "%llu", (unsigned long long)w->last_step);
	else
		snprintf(last, sizeof(last), "?");
	size_t n = strlen(c->log);
	snprintf(c->log + n, sizeof(c->log) - n, "f%llu:%llu-%s%c ", (unsigned long long)w->id,
		 (unsigned long long)w->first_step, last, w->save ? 's' : 'd');
}

static const struct tp_wsm_ops t_ops = { t_action, t_opened, t_finalize };

/* The flush thread's rhythm: the program reaches each step up to `last`,
 * one pass per step (finalizing what waited two passes), then exits. */
static const char *run_steps(struct t_ctx *c, uint64_t last)
{
	static struct tp_wsm m;
	memset(&m, 0, sizeof(m));
	tp_wsm_init(&m, &t_ops, c, 0);
	for (uint64_t s = 1; s <= last; s++) {
		tp_wsm_pass(&m);
		tp_wsm_advance(&m, s);
		tp_wsm_finalize(&m, 0);
	}
	tp_wsm_exit(&m, last);
	ck_assert_int_eq(m.nwin, 0);
	return c->log;
}

static const char *run_schedule(const char *spec, uint64_t last)
{
	static struct t_ctx c;
	static struct tp_schedule s;
	char err[200];
	memset(&c, 0, sizeof(c));
	ck_assert_msg(tp_schedule_parse(spec, &s, err, sizeof(err)) == 0, "%s: %s", spec, err);
	c.sched = &s;
	return run_steps(&c, last);
}

static const char *run_actions(const char *acts, uint64_t last)
{
	static struct t_ctx c;
	memset(&c, 0, sizeof(c));
	c.acts = acts;
	return run_steps(&c, last);
}

/* A machine at step 0 on the actions `acts` (one letter per step). */
static void start_actions(struct t_ctx *c, struct tp_wsm *m, const char *acts)
{
	memset(c, 0, sizeof(*c));
	c->acts = acts;
	tp_wsm_init(m, &t_ops, c, 0);
}

START_TEST(test_wait_warmup_active)
{
	/* NWRS NWRS NWRS: windows 2-3, 6-7, 10-11, each closed and to be saved
	 * as its RECORD_AND_SAVE step ends, finalized two passes later; the
	 * last one at exit. */
	ck_assert_str_eq(run_schedule("wait=1,warmup=1,active=2", 11),
			 "o1@2 o2@6 f1:2-3s o3@10 f2:6-7s f3:10-11s ");
	/* Exit in the middle of the third cycle's warmup: nothing more. */
	ck_assert_str_eq(run_schedule("wait=1,warmup=1,active=2", 9),
			 "o1@2 o2@6 f1:2-3s f2:6-7s ");
}
END_TEST

START_TEST(test_repeat_and_skip_first)
{
	ck_assert_str_eq(run_schedule("wait=1,warmup=1,active=2,repeat=1", 11), "o1@2 f1:2-3s ");
	/* NNN S N S N S: one-step windows. */
	ck_assert_str_eq(run_schedule("skip_first=2,wait=1,warmup=0,active=1", 7),
			 "o1@3 o2@5 f1:3-3s o3@7 f2:5-5s f3:7-7s ");
	/* N WW S WW S N: skip_first before the first wait. */
	ck_assert_str_eq(run_schedule("warmup=2,active=1,repeat=2,skip_first=1", 9),
			 "o1@3 o2@6 f1:3-3s f2:6-6s ");
}
END_TEST

START_TEST(test_back_to_back_windows)
{
	/* RRS RRS NNN: step 0 records, so the first window opens at start;
	 * RECORD_AND_SAVE -> RECORD closes, saves and opens in one step. */
	ck_assert_str_eq(run_schedule("active=3,repeat=2", 8), "o1@0 o2@3 f1:0-2s f2:3-5s ");
}
END_TEST

START_TEST(test_default_schedule_one_window_to_exit)
{
	struct t_ctx c;
	memset(&c, 0, sizeof(c));
	struct tp_schedule s = { 0 }; /* torch's default: RECORD every step */
	c.sched = &s;
	ck_assert_str_eq(run_steps(&c, 20), "o1@0 f1:0-20s ");
}
END_TEST

START_TEST(test_incorrect_schedules)
{
	/* RECORD followed by NONE or WARMUP: stopped, not saved. */
	ck_assert_str_eq(run_actions("NRRNN", 4), "o1@1 f1:1-2d ");
	ck_assert_str_eq(run_actions("NRWRS", 4), "o1@1 o2@3 f1:1-1d f2:3-4s ");
	/* WARMUP followed by NONE: start_trace + stop_trace, no window kept. */
	ck_assert_str_eq(run_actions("NWNN", 3), "");
}
END_TEST

START_TEST(test_exit_while_active)
{
	/* torch's stop(): RECORD -> exit stops and saves. */
	ck_assert_str_eq(run_actions("NRRRRS", 2), "o1@1 f1:1-2s ");
	ck_assert_str_eq(run_schedule("wait=1,warmup=1,active=3", 3), "o1@2 f1:2-3s ");
	/* WARMUP -> exit: starts and stops, saves nothing. */
	ck_assert_str_eq(run_actions("NWWWR", 2), "");
	/* Exit at a step that never ended: a step past the last the records
	 * name still applies its transitions. */
	ck_assert_str_eq(run_actions("NNRS", 3), "o1@2 f1:2-3s ");
}
END_TEST

START_TEST(test_triggered_capture)
{
	/* TRACEPROF_TRIGGER: the control module's actions, one capture of one
	 * warmup and two recording steps from the next step on. */
	struct tp_schedule s = { 0 };
	tp_control_init(&s);
	tp_control_set_trigger(1, 2);
	struct t_ctx c;
	memset(&c, 0, sizeof(c));
	static struct tp_wsm m;
	tp_wsm_init(&m, &t_ops, &c, 0);
	for (int i = 0; i < 3; i++)
		tp_control_step();
	tp_control_trigger();
	for (int i = 0; i < 6; i++)
		tp_control_step();
	ck_assert_uint_eq(tp_control_current_step(), 9);
	tp_wsm_advance(&m, tp_control_current_step());
	/* Triggered in step 3: warmup 4, record 5 and 6, saved. */
	ck_assert_str_eq(c.log, "o1@5 ");
	tp_wsm_pass(&m);
	tp_wsm_pass(&m);
	tp_wsm_finalize(&m, 0);
	ck_assert_str_eq(c.log, "o1@5 f1:5-6s ");
	/* A second trigger, and exit in the middle of its recording. */
	tp_control_trigger();
	tp_control_step();
	tp_control_step();
	tp_wsm_exit(&m, tp_control_current_step());
	ck_assert_str_eq(c.log, "o1@5 f1:5-6s o2@11 f2:11-11s ");
}
END_TEST

START_TEST(test_capture_ranges)
{
	/* cudaProfilerStart() in step 1 begins internal step 2, the stop ends
	 * it before step 5; a second range is still open at exit. */
	tp_capture_reset();
	struct t_ctx c;
	memset(&c, 0, sizeof(c));
	c.use_capture = 1;
	static struct tp_wsm m;
	tp_wsm_init(&m, &t_ops, &c, 0);
	ck_assert_int_eq(tp_capture_begin(2), 0);
	ck_assert_int_eq(tp_capture_begin(3), -EALREADY); /* nested: no new window */
	ck_assert_int_eq(tp_capture_end(5), 0);
	for (uint64_t s = 1; s <= 8; s++) {
		tp_wsm_pass(&m);
		tp_wsm_advance(&m, s);
		tp_wsm_finalize(&m, 0);
	}
	ck_assert_str_eq(c.log, "o1@2 f1:2-4s ");
	ck_assert_int_eq(tp_capture_begin(9), 0);
	tp_wsm_advance(&m, 9);
	tp_wsm_exit(&m, 11);
	ck_assert_str_eq(c.log, "o1@2 f1:2-4s o2@9 f2:9-11s ");
	/* A start and a stop with no step between: one step, saved. */
	tp_capture_reset();
	ck_assert_int_eq(tp_capture_begin(2), 0);
	ck_assert_int_eq(tp_capture_end(3), 0);
	memset(&c, 0, sizeof(c));
	c.use_capture = 1;
	tp_wsm_init(&m, &t_ops, &c, 1);
	tp_wsm_exit(&m, 5);
	ck_assert_str_eq(c.log, "o3@2 f3:2-2s ");
}
END_TEST

START_TEST(test_records_find_their_window)
{
	struct t_ctx c;
	static struct tp_wsm m;
	start_actions(&c, &m, "NWRRSNNRS");
	enum tp_wsm_fate fate;
	ck_assert_ptr_null(tp_wsm_record(&m, 0, &fate));
	ck_assert_int_eq(fate, TP_WSM_FILTERED);
	ck_assert_ptr_null(tp_wsm_record(&m, 1, &fate)); /* warmup: never written */
	ck_assert_int_eq(fate, TP_WSM_FILTERED);
	/* A record of a later step moves the machine on by itself. */
	struct tp_win *w = tp_wsm_record(&m, 3, &fate);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(fate, TP_WSM_IN);
	ck_assert_uint_eq(w->first_step, 2);
	ck_assert_str_eq(c.log, "o1@2 ");
	tp_wsm_advance(&m, 6);
	tp_wsm_pass(&m);
	/* Closed one pass ago: a straggler of step 4 still joins it. */
	tp_wsm_finalize(&m, 0);
	w = tp_wsm_record(&m, 4, &fate);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->last_step, 4);
	ck_assert(tp_wsm_holds(&m, 1));
	ck_assert_ptr_null(tp_wsm_record(&m, 5, &fate));
	ck_assert_int_eq(fate, TP_WSM_FILTERED);
	tp_wsm_pass(&m);
	tp_wsm_pass(&m);
	tp_wsm_finalize(&m, 0);
	ck_assert_str_eq(c.log, "o1@2 f1:2-4s ");
	ck_assert(!tp_wsm_holds(&m, 1));
	/* Two passes later: the straggler is late, not lost silently. */
	ck_assert_ptr_null(tp_wsm_record(&m, 4, &fate));
	ck_assert_int_eq(fate, TP_WSM_LATE);
	w = tp_wsm_record(&m, 8, &fate);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->first_step, 7);
}
END_TEST

START_TEST(test_a_closed_window_waits_two_passes)
{
	struct t_ctx c;
	static struct tp_wsm m;
	start_actions(&c, &m, "SN");
	tp_wsm_advance(&m, 1);
	tp_wsm_finalize(&m, 0);
	tp_wsm_pass(&m);
	tp_wsm_finalize(&m, 0);
	ck_assert_str_eq(c.log, "o1@0 ");
	tp_wsm_pass(&m);
	tp_wsm_finalize(&m, 0);
	ck_assert_str_eq(c.log, "o1@0 f1:0-0s ");
}
END_TEST

START_TEST(test_oldest_window_gives_way)
{
	/* Every step its own saved window and no pass in between (very short
	 * steps): the 17th window finalizes the oldest to take its slot. */
	struct t_ctx c;
	static struct tp_wsm m;
	start_actions(&c, &m, "SSSSSSSSSSSSSSSSSSSS");
	tp_wsm_advance(&m, TP_MAX_OPEN_WINDOWS - 1);
	ck_assert_int_eq(m.nwin, TP_MAX_OPEN_WINDOWS);
	ck_assert_ptr_null(strchr(c.log, 'f'));
	tp_wsm_advance(&m, TP_MAX_OPEN_WINDOWS);
	ck_assert_int_eq(m.nwin, TP_MAX_OPEN_WINDOWS);
	ck_assert_ptr_nonnull(strstr(c.log, "o16@15 f1:0-0s o17@16 "));
	ck_assert(!tp_wsm_holds(&m, 1));
	ck_assert(tp_wsm_holds(&m, 17));
	enum tp_wsm_fate fate;
	ck_assert_ptr_null(tp_wsm_record(&m, 0, &fate));
	ck_assert_int_eq(fate, TP_WSM_LATE);
}
END_TEST

START_TEST(test_refused_window_and_fork)
{
	struct t_ctx c;
	static struct tp_wsm m;
	start_actions(&c, &m, "NRRS");
	c.refuse_open = 1; /* out of memory for its files */
	enum tp_wsm_fate fate;
	ck_assert_ptr_null(tp_wsm_record(&m, 2, &fate));
	ck_assert_int_eq(fate, TP_WSM_LATE);
	ck_assert_int_eq(m.nwin, 0);
	/* A forked child forgets the parent's windows; ids keep counting. */
	c.refuse_open = 0;
	c.log[0] = '\0';
	tp_wsm_forget(&m);
	tp_wsm_init(&m, &t_ops, &c, 2);
	tp_wsm_exit(&m, 3);
	ck_assert_str_eq(c.log, "o2@2 f2:2-3s ");
}
END_TEST

START_TEST(test_nothing_recorded_saves_nothing)
{
	struct tp_win w = { .id = 1, .closed = 1, .save = 1 };
	ck_assert(tp_wsm_saves(&w, 1));
	ck_assert(!tp_wsm_saves(&w, 0));
	w.save = 0;
	ck_assert(!tp_wsm_saves(&w, 1));
}
END_TEST

START_TEST(test_part_decisions)
{
	/* 1/16 of the cap kept for metadata and footer, at most 256 KiB. */
	ck_assert_uint_eq(tp_wsm_part_cap(1), 1048576 - 65536);
	ck_assert_uint_eq(tp_wsm_part_cap(4), 4 * 1048576 - 262144);
	ck_assert_uint_eq(tp_wsm_part_cap(100), 100 * 1048576ULL - 262144);
	uint64_t cap = tp_wsm_part_cap(1);
	ck_assert(!tp_wsm_new_part(cap, cap, 0));
	ck_assert(tp_wsm_new_part(cap + 1, cap, 0));
	ck_assert(!tp_wsm_new_part(cap + 1, cap, 1)); /* disk full: no more parts */
}
END_TEST

static Suite *window_suite(void)
{
	Suite *s = suite_create("window");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_wait_warmup_active);
	tcase_add_test(tc, test_repeat_and_skip_first);
	tcase_add_test(tc, test_back_to_back_windows);
	tcase_add_test(tc, test_default_schedule_one_window_to_exit);
	tcase_add_test(tc, test_incorrect_schedules);
	tcase_add_test(tc, test_exit_while_active);
	tcase_add_test(tc, test_triggered_capture);
	tcase_add_test(tc, test_capture_ranges);
	tcase_add_test(tc, test_records_find_their_window);
	tcase_add_test(tc, test_a_closed_window_waits_two_passes);
	tcase_add_test(tc, test_oldest_window_gives_way);
	tcase_add_test(tc, test_refused_window_and_fork);
	tcase_add_test(tc, test_nothing_recorded_saves_nothing);
	tcase_add_test(tc, test_part_decisions);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(window_suite());
}
