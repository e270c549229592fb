/* Unit tests for format/json_writer.c: format-neutral events, documents and
 * frames written as the Chrome / Kineto JSON layout, read back from the file
 * a real sink wrote: event heads, typed args, flows, metadata, the footer
 * document, stackFrames, deviceProperties in the header or after the footer,
 * the trace name, bytes(). */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/event.h"
#include "format/sink.h"
#include "format/writer.h"

#include "test/unit/check_main.h"

static char dir[] = "/tmp/tp_jw_XXXXXX";
static struct tp_sink *sink;
static char *text; /* the file, after done() */

static struct tp_writer *start(const struct tp_doc *devices)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(tp_sink_open(&sink, dir, "t.json", 0, 0, 1), 0);
	/* base 0, offset 0: ts is the monotonic time in us. */
	struct tp_writer_header h = { .pid = 7, .world_size = 1, .local_world_size = 1,
				      .devices = devices };
	struct tp_writer *w = tp_writer_open(&tp_json_writer, sink, &h);
	ck_assert_ptr_nonnull(w);
	return w;
}

/* Closes the file with tr and reads it into text. */
static void done(struct tp_writer *w, const struct tp_writer_trailer *tr)
{
	ck_assert_int_eq(tp_writer_close(w, tr), 0);
	char path[PATH_MAX];
	ck_assert_int_eq(tp_sink_close(sink, path, sizeof(path)), 0);
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = calloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	unlink(path);
	rmdir(dir);
}

static void teardown(void)
{
	free(text);
	text = NULL;
	strcpy(dir, "/tmp/tp_jw_XXXXXX");
}

#define HAS(s) ck_assert_msg(strstr(text, (s)) != NULL, "missing\n%s\nin\n%s", (s), text)
#define HASNT(s) ck_assert_msg(strstr(text, (s)) == NULL, "unexpected\n%s\nin\n%s", (s), text)

static const struct tp_writer_trailer plain = { .trace_name = "t.json" };

START_TEST(test_slice_typed_args_and_sf)
{
	struct tp_writer *w = start(NULL);
	static const char *const strs[] = { "f+0x1 (m)", "g\"q" };
	static const int64_t is[] = { -1, 2 };
	struct tp_arg a[] = {
		TP_ARG(u64, "u", 18446744073709551615ull),
		TP_ARG(i64, "i", -5),
		TP_ARG(hex, "h", 0xdeadbeef),
		TP_ARG(f64, "f", 1.5),
		TP_ARG(bool, "b", 1),
		TP_ARG(str, "s", "a\"b", 3, 0),
		TP_ARG(str, "k", "kernel", 6, 1),
		{ TP_ARG_KEY("stack"), .type = TP_VAL_STRS, .n = 2, .strs = strs },
		{ TP_ARG_KEY("sizes"), .type = TP_VAL_I64S, .n = 2, .is = is },
		{ TP_ARG_KEY("grid"), .type = TP_VAL_DIM3, .v3 = { 1, 2, 3 } },
		TP_ARG(bool, "no", 0),
		/* Checked JSON text (PyTorch's Input Dims): written as it is. */
		TP_ARG(json, "Input Dims", "[[32, 8], []]", 13),
	};
	struct tp_event e = { .kind = TP_EV_SLICE, .nargs = sizeof(a) / sizeof(a[0]),
			      .name_len = 4, .cat = "cpu_op", .name = "op\n1", .pid = 7, .tid = 8,
			      .ts = 1000, .end = 2500, .sf = 42, .args = a };
	tp_writer_event(w, &e);
	/* No args: no "args" key at all. */
	tp_writer_slice(w, "user_annotation", "ProfilerStep#3", 14, 7, 8, 3000, 4000, NULL, 0);
	ck_assert_uint_eq(w->events, 2);
	done(w, &plain);
	HAS("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\\n1\",\"pid\":7,\"tid\":8,"
	    "\"ts\":1.000,\"dur\":1.500,\"args\":{\"u\":18446744073709551615,\"i\":-5,"
	    "\"h\":\"0xdeadbeef\",\"f\":1.5,\"b\":true,\"s\":\"a\\\"b\",\"k\":\"kernel\","
	    "\"stack\":[\"f+0x1 (m)\",\"g\\\"q\"],\"sizes\":[-1,2],\"grid\":[1,2,3],"
	    "\"no\":false,\"Input Dims\":[[32, 8], []]},\"sf\":42}");
	HAS(",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":7,"
	    "\"tid\":8,\"ts\":3.000,\"dur\":1.000}");
}
END_TEST

START_TEST(test_instant_counter_flows)
{
	struct tp_writer *w = start(NULL);
	struct tp_arg a = TP_ARG(u64, "category", 3);
	tp_writer_instant(w, "user_annotation", "mark", 4, 7, 8, 999, &a, 1);
	tp_writer_instant(w, "user_annotation", "bare", 4, 7, 8, 999, NULL, 0);
	tp_writer_counter(w, "GPU memory", 10, "bytes", 5, 7, 8, 2000, 4096);
	struct tp_event out = { .kind = TP_EV_FLOW_OUT, .name_len = 3, .cat = "ac2g",
				.name = "ac2g", .pid = 7, .tid = 8, .ts = 5000, .id = 11 };
	struct tp_event in = out;
	in.kind = TP_EV_FLOW_IN;
	in.pid = 0;
	in.tid = 13;
	in.ts = 6000;
	tp_writer_event(w, &out);
	tp_writer_event(w, &in);
	done(w, &plain);
	HAS("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":\"mark\",\"pid\":7,"
	    "\"tid\":8,\"ts\":0.999,\"args\":{\"category\":3}}");
	HAS("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":\"bare\",\"pid\":7,"
	    "\"tid\":8,\"ts\":0.999}");
	HAS("{\"ph\":\"C\",\"name\":\"GPU memory\",\"pid\":7,\"tid\":8,\"ts\":2.000,"
	    "\"args\":{\"bytes\":4096}}");
	HAS("{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2\",\"id\":11,\"pid\":7,\"tid\":8,"
	    "\"ts\":5.000}");
	HAS("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2\",\"id\":11,\"pid\":0,"
	    "\"tid\":13,\"ts\":6.000}");
}
END_TEST

START_TEST(test_metadata)
{
	struct tp_writer *w = start(NULL);
	tp_writer_process(w, 7, "rank 0: prog (pid 7)", "rank 0/1, host h", 0);
	tp_writer_process(w, 0, "GPU 0", NULL, 1000);
	tp_writer_thread(w, 7, 8, "main", 1);
	ck_assert_uint_eq(w->events, 3 + 2 + 2);
	done(w, &plain);
	HAS("\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,\"tid\":0,"
	    "\"args\":{\"name\":\"rank 0: prog (pid 7)\"}},\n"
	    "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":7,\"tid\":0,"
	    "\"args\":{\"labels\":\"rank 0/1, host h\"}},\n"
	    "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":7,\"tid\":0,"
	    "\"args\":{\"sort_index\":0}},\n");
	HAS("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":8,"
	    "\"args\":{\"name\":\"main\"}},\n"
	    "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":7,\"tid\":8,"
	    "\"args\":{\"sort_index\":1}}\n  ],");
	/* One labels event: GPU 0 has none. */
	const char *l = strstr(text, "process_labels");
	ck_assert_ptr_null(strstr(l + 1, "process_labels"));
}
END_TEST

/* The footer document: members of the "traceprof" object, nested arrays and
 * objects, then the trace name after it. */
START_TEST(test_footer_document)
{
	struct tp_writer *w = start(NULL);
	struct tp_doc d;
	tp_doc_init(&d);
	tp_doc_str(&d, "version", "1.2");
	tp_doc_u64(&d, "part", 1);
	tp_doc_array(&d, "steps");
	tp_doc_u64(&d, NULL, 3);
	tp_doc_u64(&d, NULL, 5);
	tp_doc_end(&d);
	tp_doc_array(&d, "threads");
	tp_doc_object(&d, NULL);
	tp_doc_i64(&d, "tid", -1);
	tp_doc_str(&d, "name", "a\"b");
	tp_doc_end(&d);
	tp_doc_end(&d);
	tp_doc_object(&d, "gpu");
	tp_doc_bool(&d, "on", 1);
	tp_doc_f64(&d, "x", 0.25);
	tp_doc_end(&d);
	tp_doc_object(&d, "empty");
	tp_doc_i64(&d, "cuda_driver_version", 1); /* nested: not Kineto's */
	tp_doc_end(&d);
	tp_doc_i64(&d, "cuda_runtime_version", 12080);
	tp_doc_i64(&d, "cuda_driver_version", 13000);
	ck_assert_int_eq(d.error, 0);
	struct tp_writer_trailer tr = { .trace_name = "rank0.step5.trace.json", .footer = &d };
	done(w, &tr);
	tp_doc_free(&d);
	HAS("\"traceprof\": {\"version\":\"1.2\",\"part\":1,\"steps\":[3,5],"
	    "\"threads\":[{\"tid\":-1,\"name\":\"a\\\"b\"}],\"gpu\":{\"on\":true,\"x\":0.25},"
	    "\"empty\":{\"cuda_driver_version\":1},\"cuda_runtime_version\":12080,"
	    "\"cuda_driver_version\":13000,"
	    /* The file's summary table, last (format/aggregate.h): no events. */
	    "\"aggregate\":{\"version\":1,\"rank\":0,\"span_ns\":0,\"names_cut\":0,"
	    "\"calls_cut\":0,\"steps_cut\":0,\"self_folded\":0,\"rows\":[],\"steps\":[],"
	    /* The start-up and teardown steps (none here). */
	    "\"step_phases\":[],"
	    /* What it covers (format/digest.h): the bytes before the footer,
	     * whose "\n  ]," is where the footer begins. */
	    "\"covers\":{\"bytes\":");
	{
		const char *cov = strstr(text, "\"covers\":{\"bytes\":");
		const char *mark = strstr(text, "\n  ],\n  \"traceprof\"");
		ck_assert_ptr_nonnull(mark);
		ck_assert_int_eq(strtoll(cov + strlen("\"covers\":{\"bytes\":"), NULL, 10),
				 mark - text);
		ck_assert_ptr_nonnull(strstr(cov, "\"events\":0,\"stride\":4096,\"samples\":"));
	}
	/* Kineto's top-level copies of the CUDA versions, then the name. */
	HAS("\"deviceProperties\": [],\n  \"cuda_runtime_version\":12080,\n"
	    "  \"cuda_driver_version\":13000,\n  \"traceName\": \"rank0.step5.trace.json\"");
	/* No devices known at either end: an empty list, once. */
	HAS("\"deviceProperties\": []");
	ck_assert_ptr_null(strstr(strstr(text, "deviceProperties") + 1, "deviceProperties"));
	HASNT("stackFrames");
}
END_TEST

static void one_device(struct tp_doc *d, int id)
{
	tp_doc_init(d);
	tp_doc_array(d, NULL);
	tp_doc_object(d, NULL);
	tp_doc_i64(d, "id", id);
	tp_doc_str(d, "name", "GPU");
	tp_doc_end(d);
	tp_doc_end(d);
}

/* deviceProperties: in the header when known as the file begins (Kineto's
 * place), else after the footer from the trailer. */
START_TEST(test_devices_header_or_trailer)
{
	struct tp_doc d0, d1;
	one_device(&d0, 0);
	one_device(&d1, 1);
	struct tp_writer *w = start(&d0);
	struct tp_writer_trailer tr = { .trace_name = "t.json", .devices = &d1 };
	done(w, &tr);
	HAS("\"deviceProperties\": [{\"id\":0,\"name\":\"GPU\"}],\n  \"traceEvents\": [\n");
	HASNT("\"id\":1");
	free(text);
	text = NULL;
	strcpy(dir, "/tmp/tp_jw_XXXXXX");

	w = start(NULL);
	done(w, &tr);
	const char *ev = strstr(text, "traceEvents");
	const char *dp = strstr(text, "\"deviceProperties\": [{\"id\":1,\"name\":\"GPU\"}]");
	ck_assert_ptr_nonnull(ev);
	ck_assert_ptr_nonnull(dp);
	ck_assert_msg(dp > strstr(text, "\"traceprof\""), "%s", text);
	tp_doc_free(&d0);
	tp_doc_free(&d1);
}
END_TEST

/* Frames: the top-level "stackFrames" map after the footer, roots without
 * "parent". */
START_TEST(test_frames)
{
	struct tp_writer *w = start(NULL);
	tp_writer_frame(w, 1, 0, "main+0x10", "prog");
	tp_writer_frame(w, 2, 1, "f\"x", "libm.so");
	done(w, &plain);
	HAS(",\n  \"stackFrames\": {\n    \"1\":{\"name\":\"main+0x10\",\"category\":\"prog\"},"
	    "\n    \"2\":{\"name\":\"f\\\"x\",\"category\":\"libm.so\",\"parent\":1}\n  }");
	ck_assert_msg(strstr(text, "stackFrames") > strstr(text, "\"traceprof\""), "%s", text);
}
END_TEST

/* bytes() counts what was produced, flushed or not; a discarded file
 * leaves nothing behind but the sink's. */
START_TEST(test_bytes_and_discard)
{
	struct tp_writer *w = start(NULL);
	uint64_t b0 = tp_writer_bytes(w);
	ck_assert_uint_gt(b0, 0); /* the header */
	for (int i = 0; i < 10000; i++)
		tp_writer_slice(w, "c", "name", 4, 1, 2, (uint64_t)i, (uint64_t)i + 1, NULL, 0);
	uint64_t b1 = tp_writer_bytes(w);
	ck_assert_uint_gt(b1, b0 + 10000 * 60);
	ck_assert_int_eq(tp_writer_error(w), 0);
	tp_writer_discard(w);
	tp_sink_abort(sink);
	rmdir(dir);
}
END_TEST

static Suite *json_writer_suite(void)
{
	Suite *s = suite_create("json_writer");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_slice_typed_args_and_sf);
	tcase_add_test(tc, test_instant_counter_flows);
	tcase_add_test(tc, test_metadata);
	tcase_add_test(tc, test_footer_document);
	tcase_add_test(tc, test_devices_header_or_trailer);
	tcase_add_test(tc, test_frames);
	tcase_add_test(tc, test_bytes_and_discard);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(json_writer_suite());
}
