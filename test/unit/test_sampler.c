/* The host sampler (collector/sampler.c): samples evicted from its ring
 * before any window's file took them are counted in the footer's
 * host_samples_lost, exactly; samples a file took are not. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "collector/control.h"
#include "collector/flush.h"
#include "common/config.h"

#include "test/unit/check_main.h"
#include "test/unit/writer_text.h"

#define MS 1000000ull
#define T0 (1000 * 1000 * MS) /* a monotonic time far from 0 */

static uint64_t lost(void)
{
	struct tp_doc d;
	tp_doc_init(&d);
	tp_sampler_plugin.footer(&d);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_str_eq(tp_doc_key(&d, &d.nodes[0]), "host_samples_lost");
	uint64_t v = d.nodes[0].u;
	tp_doc_free(&d);
	return v;
}

/* Passes at T0, T0 + 2 ms, ...: the first sets the CPU baseline, each next
 * one takes a sample (SAMPLE_MS 1). */
static void passes(uint64_t from, uint64_t n)
{
	for (uint64_t i = from; i < from + n; i++)
		tp_sampler_plugin.pass(T0 + 2 * MS * i);
}

START_TEST(test_evicted_unwritten_counted)
{
	struct tp_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.sample_ms = 1;
	ck_assert_int_eq(tp_sampler_plugin.init(&cfg), 0);
	atomic_store(&tp_state, TP_STATE_RECORDING);
	passes(0, 1 + 6000);
	ck_assert_uint_eq(lost(), 0); /* the ring (6000) is full, nothing evicted */
	passes(6001, 9);
	ck_assert_uint_eq(lost(), 9);
	/* A window takes all the ring holds: evicting those loses nothing. */
	struct wt t;
	wt_open(&t, NULL);
	tp_sampler_plugin.window_events(t.w, T0, T0 + 2 * MS * 6010, 1);
	wt_free(&t);
	passes(6010, 100);
	ck_assert_uint_eq(lost(), 9);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("sampler");
	TCase *tc = tcase_create("sampler");
	tcase_add_test(tc, test_evicted_unwritten_counted);
	suite_add_tcase(su, tc);
	return tp_check_run(su);
}
