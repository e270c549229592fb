/* Unit tests for format/perfetto_writer.c: events written through a real
 * sink into a file, then decoded by Debian's protoc with Perfetto's
 * published schema (test/unit/perfetto_decode.h), and the decoded text
 * checked: names interned and resolved, slice counts, begins and ends
 * balanced per track, argument values, flows, times, track names, the
 * documents.  Without protoc or the schema, only the discard test runs and
 * the suite exits 77 after "SKIP: reason".  The encoder's bytes (format/pb.h):
 * test_perfetto_pb.c. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/pb.h"
#include "format/sink.h"
#include "format/writer.h"

#include "test/unit/check_main.h"
#include "test/unit/perfetto_decode.h"

/* ---- writing a trace ---------------------------------------------------------------- */

#define PID 100
#define GPU_PID 1000000000
#define T0 5000000000ull /* CLOCK_MONOTONIC ns of the first event */
#define N_COPIES 100

static char dir[64];
static char trace_path[4096];

static void write_trace(void)
{
	strcpy(dir, "/tmp/tp-pftrace.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	const struct tp_writer_ops *ops = tp_writer_find("perfetto");
	ck_assert_ptr_nonnull(ops);
	ck_assert_str_eq(ops->ext, ".pftrace");
	struct tp_sink *s;
	ck_assert_int_eq(tp_sink_open(&s, dir, "t.pftrace", TP_SINK_PLAIN, 0, 0), 0);
	struct tp_writer_header h = {
		.base_wall_ns = 1700000000000000000ll,
		.wall_offset_ns = 1700000001000000000ll,
		.pid = PID,
		.launcher = "none",
	};
	struct tp_writer *w = tp_writer_open(ops, s, &h);
	ck_assert_ptr_nonnull(w);

	/* One slice with every type of arg, a launch that starts arrow 7. */
	static const char *const frames[] = { "main", "train_step" };
	static const int64_t is[] = { -1, 2, 3 };
	struct tp_arg args[] = {
		TP_ARG(u64, "u64", UINT64_MAX),
		TP_ARG(i64, "i64", -5),
		TP_ARG(hex, "hex", 0xdeadbeef),
		TP_ARG(f64, "f64", 2.5),
		TP_ARG(bool, "bool", 1),
		TP_ARG(str, "str", "hello world", 5, 0),
		TP_ARG(str, "kernel", "ampere_sgemm_128x64_tn", 22, 1),
		{ TP_ARG_KEY("strs"), .type = TP_VAL_STRS, .n = 2, .strs = frames },
		{ TP_ARG_KEY("i64s"), .type = TP_VAL_I64S, .n = 3, .is = is },
		{ TP_ARG_KEY("grid"), .type = TP_VAL_DIM3, .v3 = { 4, 5, 6 } },
	};
	struct tp_event e = {
		.kind = TP_EV_SLICE,
		.name = "cudaLaunchKernel",
		.name_len = 16,
		.cat = "cuda_runtime",
		.pid = PID,
		.tid = 101,
		.ts = T0,
		.end = T0 + 3000,
		.flow_out = 7,
		.sf = 2,
		.nargs = sizeof(args) / sizeof(args[0]),
		.args = args,
	};
	tp_writer_event(w, &e);
	/* The arrow's ends as events too: the writer binds them to slices. */
	e = (struct tp_event){ .kind = TP_EV_FLOW_OUT, .name = "ac2g", .name_len = 4,
			       .cat = "ac2g", .pid = PID, .tid = 101, .ts = T0, .id = 7 };
	tp_writer_event(w, &e);
	e = (struct tp_event){ .kind = TP_EV_FLOW_IN, .name = "ac2g", .name_len = 4,
			       .cat = "ac2g", .pid = GPU_PID, .tid = 7, .ts = T0 + 10000, .id = 7 };
	tp_writer_event(w, &e);
	/* The kernel it launched, on GPU 0's stream 7: the arrow's end. */
	struct tp_arg kargs[] = { TP_ARG(u64, "correlation", 1) };
	e = (struct tp_event){ .kind = TP_EV_SLICE, .name = "kernelA", .name_len = 7,
			       .cat = "kernel", .pid = GPU_PID, .tid = 7, .ts = T0 + 10000,
			       .end = T0 + 20000, .flow_in = 7, .nargs = 1, .args = kargs };
	tp_writer_event(w, &e);
	/* Copies of one name on another thread, from a buffer that changes:
	 * interned by text, not by address. */
	uint64_t ts = T0 + 30000;
	for (int i = 0; i < N_COPIES; i++) {
		char name[32];
		strcpy(name, "cudaMemcpyAsync");
		struct tp_arg r = TP_ARG(i64, "result", 0);
		tp_writer_slice(w, "cuda_runtime", name, strlen(name), PID, 102, ts, ts + 1000,
				&r, 1);
		strcpy(name, "garbage garbage");
		ts += 2000;
	}
	/* An instant, earlier than the packet before it (sources interleave),
	 * with a string over 16 KiB (a 4-byte nested length). */
	static char big[20000];
	memset(big, 'b', sizeof(big));
	struct tp_arg barg = TP_ARG(str, "big", big, sizeof(big), 0);
	tp_writer_instant(w, "marker", "mark", 4, PID, 101, T0 + 1000, &barg, 1);
	/* A counter, twice. */
	tp_writer_counter(w, "Resident memory (MB)", 20, "value", 5, PID, 0, T0 + 2000, 1.5);
	tp_writer_counter(w, "Resident memory (MB)", 20, "value", 5, PID, 0, T0 + 400000, 2.5);
	/* Names at the end, as the collector gives them. */
	tp_writer_process(w, PID, "python train.py", "rank 0", 1);
	tp_writer_thread(w, PID, 101, "main", 0);
	tp_writer_thread(w, PID, 102, "worker", 1);
	tp_writer_thread(w, PID, 103, "idle", 2); /* no events: described once */
	tp_writer_process(w, GPU_PID, "GPU 0", NULL, 1000000);
	tp_writer_thread(w, GPU_PID, 7, "stream 7", 7);
	tp_writer_frame(w, 1, 0, "main", "native");
	tp_writer_frame(w, 2, 1, "train_step", "native");

	struct tp_doc footer, dev;
	tp_doc_init(&footer);
	tp_doc_u64(&footer, "events_written", 205);
	tp_doc_object(&footer, "drops");
	tp_doc_u64(&footer, "total", 0);
	tp_doc_end(&footer);
	tp_doc_array(&footer, "threads");
	tp_doc_i64(&footer, NULL, 101);
	tp_doc_i64(&footer, NULL, 102);
	tp_doc_end(&footer);
	tp_doc_str(&footer, "format", "perfetto");
	tp_doc_f64(&footer, "ratio", 0.25);
	tp_doc_bool(&footer, "complete", 1);
	tp_doc_init(&dev);
	tp_doc_array(&dev, NULL);
	tp_doc_object(&dev, NULL);
	tp_doc_str(&dev, "name", "NVIDIA H100");
	tp_doc_i64(&dev, "id", 0);
	tp_doc_end(&dev);
	tp_doc_end(&dev);
	ck_assert_int_eq(footer.error, 0);
	ck_assert_int_eq(dev.error, 0);
	struct tp_writer_trailer tr = { .trace_name = "t.pftrace", .footer = &footer,
					.devices = &dev };
	ck_assert_int_eq(tp_writer_error(w), 0);
	ck_assert_uint_gt(tp_writer_bytes(w), 20000);
	ck_assert_int_eq(tp_writer_close(w, &tr), 0);
	ck_assert_int_eq(tp_sink_close(s, trace_path, sizeof(trace_path)), 0);
	tp_doc_free(&footer);
	tp_doc_free(&dev);
}


static void setup(void)
{
	write_trace();
	decode(trace_path);
}

static void teardown(void)
{
	unlink(trace_path);
	rmdir(dir);
}


START_TEST(test_decodes)
{
	ck_assert_msg(protoc_rc == 0, "protoc --decode exit status %d", protoc_rc);
	ck_assert_uint_gt(npkts, 2 * N_COPIES);
	/* One sequence, cleared by its first packet. */
	ck_assert_str_eq(get(&pkts[0], "sequence_flags"), "1");
	for (size_t k = 0; k < npkts; k++)
		ck_assert_str_eq(get(&pkts[k], "trusted_packet_sequence_id"), "1");
}
END_TEST

START_TEST(test_interned_names)
{
	ck_assert_int_eq(protoc_rc, 0);
	int defs = 0, begins = 0, unresolved = 0;
	for (size_t k = 0; k < npkts; k++) {
		const struct pkt *p = &pkts[k];
		for (size_t i = 0; i < p->n; i++)
			if (!strcmp(p->e[i].path, "interned_data.event_names.name") &&
			    !strcmp(p->e[i].val, "\"cudaMemcpyAsync\""))
				defs++;
		if (is_type(p, "TYPE_SLICE_BEGIN") || is_type(p, "TYPE_INSTANT")) {
			const char *n = ev_name(p);
			if (!n)
				unresolved++;
			else if (!strcmp(n, "\"cudaMemcpyAsync\""))
				begins++;
			uint64_t cat = getu(p, "track_event.category_iids");
			if (cat)
				ck_assert_ptr_nonnull(interned("event_categories", cat));
		}
	}
	ck_assert_int_eq(defs, 1);
	ck_assert_int_eq(begins, N_COPIES);
	ck_assert_int_eq(unresolved, 0);
	const struct pkt *p = find_event("cudaLaunchKernel");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(interned("event_categories", getu(p, "track_event.category_iids")),
			 "\"cuda_runtime\"");
}
END_TEST

START_TEST(test_balance_per_track)
{
	ck_assert_int_eq(protoc_rc, 0);
	/* Depth per track in file order: never below zero, zero at the end. */
	uint64_t uuids[64] = { 0 };
	int depth[64] = { 0 }, n = 0, slices = 0;
	for (size_t k = 0; k < npkts; k++) {
		const struct pkt *p = &pkts[k];
		int b = is_type(p, "TYPE_SLICE_BEGIN"), e = is_type(p, "TYPE_SLICE_END");
		if (!b && !e)
			continue;
		uint64_t u = getu(p, "track_event.track_uuid");
		ck_assert_uint_ne(u, 0);
		int i = 0;
		while (i < n && uuids[i] != u)
			i++;
		if (i == n) {
			ck_assert_int_lt(n, 64);
			uuids[n++] = u;
		}
		depth[i] += b ? 1 : -1;
		ck_assert_int_ge(depth[i], 0);
		slices += b;
	}
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(depth[i], 0);
	ck_assert_int_eq(slices, 2 + N_COPIES);
	ck_assert_int_eq(n, 3);
}
END_TEST

START_TEST(test_arg_values)
{
	ck_assert_int_eq(protoc_rc, 0);
	const struct pkt *p = find_event("cudaLaunchKernel");
	ck_assert_ptr_nonnull(p);
	ASSERT_ARG(p, "u64", "uint_value", "18446744073709551615");
	ASSERT_ARG(p, "i64", "int_value", "-5");
	ASSERT_ARG(p, "hex", "string_value", "\"0xdeadbeef\"");
	ASSERT_ARG(p, "f64", "double_value", "2.5");
	ASSERT_ARG(p, "bool", "bool_value", "true");
	ASSERT_ARG(p, "str", "string_value", "\"hello\"");
	ASSERT_ARG(p, "strs", "string_value", "\"main\"");
	ASSERT_ARG(p, "i64s", "int_value", "-1");
	ASSERT_ARG(p, "grid", "int_value", "4");
	ASSERT_ARG(p, "sf", "uint_value", "2");
	/* A long-lived string: interned. */
	char f_[64];
	const char *iid = annotation(p, "kernel", f_, sizeof(f_));
	ck_assert_ptr_nonnull(iid);
	ck_assert_str_eq(f_, "string_value_iid");
	ck_assert_str_eq(interned_str(strtoull(iid, NULL, 10)), "\"ampere_sgemm_128x64_tn\"");
	/* Every element of the arrays. */
	ck_assert_ptr_nonnull(strstr(p->text, "string_value: \"train_step\""));
	ck_assert_ptr_nonnull(strstr(p->text, "int_value: 6"));
	ck_assert_ptr_nonnull(strstr(p->text, "int_value: 3"));
	/* The 20000-byte string, whole. */
	const struct pkt *m = find_event("mark");
	ck_assert_ptr_nonnull(m);
	char f[64];
	const char *v = annotation(m, "big", f, sizeof(f));
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(strlen(v), 20000 + 2);
}
END_TEST

START_TEST(test_flows)
{
	ck_assert_int_eq(protoc_rc, 0);
	const struct pkt *launch = find_event("cudaLaunchKernel"), *kernel = find_event("kernelA");
	ck_assert_ptr_nonnull(launch);
	ck_assert_ptr_nonnull(kernel);
	ck_assert_str_eq(get(launch, "track_event.flow_ids"), "7");
	ck_assert_ptr_null(get(launch, "track_event.terminating_flow_ids"));
	ck_assert_str_eq(get(kernel, "track_event.terminating_flow_ids"), "7");
	ck_assert_ptr_null(get(kernel, "track_event.flow_ids"));
	/* FLOW_OUT / FLOW_IN events themselves wrote nothing. */
	ck_assert_ptr_null(find_event("ac2g"));
}
END_TEST

/* The track descriptor packets for uuid, in order; returns how many, the
 * last one in *last. */
static int descriptors(uint64_t uuid, const struct pkt **last)
{
	int n = 0;
	for (size_t k = 0; k < npkts; k++)
		if (get(&pkts[k], "track_descriptor.uuid") &&
		    getu(&pkts[k], "track_descriptor.uuid") == uuid) {
			*last = &pkts[k];
			n++;
		}
	return n;
}

START_TEST(test_tracks)
{
	ck_assert_int_eq(protoc_rc, 0);
	const struct pkt *launch = find_event("cudaLaunchKernel"), *kernel = find_event("kernelA");
	const struct pkt *d = NULL;
	/* The launch's thread: described before its first event (unnamed),
	 * then again with its name, same uuid. */
	uint64_t u = getu(launch, "track_event.track_uuid");
	ck_assert_int_eq(descriptors(u, &d), 2);
	ck_assert_str_eq(get(d, "track_descriptor.thread.pid"), "100");
	ck_assert_str_eq(get(d, "track_descriptor.thread.tid"), "101");
	ck_assert_str_eq(get(d, "track_descriptor.thread.thread_name"), "\"main\"");
	/* The GPU's stream. */
	u = getu(kernel, "track_event.track_uuid");
	ck_assert_int_eq(descriptors(u, &d), 2);
	ck_assert_str_eq(get(d, "track_descriptor.thread.pid"), "1000000000");
	ck_assert_str_eq(get(d, "track_descriptor.thread.tid"), "7");
	ck_assert_str_eq(get(d, "track_descriptor.thread.thread_name"), "\"stream 7\"");
	/* A thread named without events: one descriptor, with its name. */
	int idle = 0;
	for (size_t k = 0; k < npkts; k++)
		if (get(&pkts[k], "track_descriptor.thread.tid") &&
		    !strcmp(get(&pkts[k], "track_descriptor.thread.tid"), "103")) {
			idle++;
			ck_assert_str_eq(get(&pkts[k], "track_descriptor.thread.thread_name"),
					 "\"idle\"");
		}
	ck_assert_int_eq(idle, 1);
	/* The processes, named as the JSON names them. */
	int procs = 0, gpu = 0;
	for (size_t k = 0; k < npkts; k++) {
		const char *n = get(&pkts[k], "track_descriptor.process.process_name");
		if (n && !strcmp(n, "\"python train.py\"")) {
			procs++;
			ck_assert_str_eq(get(&pkts[k], "track_descriptor.process.pid"), "100");
			ck_assert_str_eq(get(&pkts[k], "track_descriptor.process.process_labels"),
					 "\"rank 0\"");
		}
		if (n && !strcmp(n, "\"GPU 0\""))
			gpu++;
	}
	ck_assert_int_eq(procs, 1);
	ck_assert_int_eq(gpu, 1);
}
END_TEST

START_TEST(test_counter)
{
	ck_assert_int_eq(protoc_rc, 0);
	uint64_t track = 0;
	for (size_t k = 0; k < npkts; k++) {
		const char *n = get(&pkts[k], "track_descriptor.name");
		if (n && !strcmp(n, "\"Resident memory (MB)\"")) {
			ck_assert_uint_eq(track, 0);
			track = getu(&pkts[k], "track_descriptor.uuid");
			ck_assert_uint_ne(getu(&pkts[k], "track_descriptor.parent_uuid"), 0);
		}
	}
	ck_assert_uint_ne(track, 0);
	int n = 0;
	const char *want[] = { "1.5", "2.5" };
	for (size_t k = 0; k < npkts; k++) {
		if (!is_type(&pkts[k], "TYPE_COUNTER"))
			continue;
		ck_assert_uint_eq(getu(&pkts[k], "track_event.track_uuid"), track);
		ck_assert_int_lt(n, 2);
		ck_assert_str_eq(get(&pkts[k], "track_event.double_counter_value"), want[n]);
		n++;
	}
	ck_assert_int_eq(n, 2);
}
END_TEST

/* Times: the incremental clock replayed from the snapshot's value, or a
 * packet's absolute MONOTONIC time, give back the events' times; REALTIME is
 * MONOTONIC + wall_offset_ns. */
START_TEST(test_times)
{
	ck_assert_int_eq(protoc_rc, 0);
	const struct pkt *p0 = &pkts[0];
	uint64_t inc = 0, mono = 0, real = 0;
	int64_t last_id = 0;
	for (size_t i = 0; i < p0->n; i++) {
		const struct ent *x = &p0->e[i];
		if (!strcmp(x->path, "clock_snapshot.clocks.clock_id"))
			last_id = strtoll(x->val, NULL, 10);
		if (!strcmp(x->path, "clock_snapshot.clocks.timestamp")) {
			uint64_t v = strtoull(x->val, NULL, 10);
			if (last_id == 64)
				inc = v;
			else if (last_id == 3)
				mono = v;
			else if (last_id == 1)
				real = v;
		}
	}
	ck_assert_uint_ne(inc, 0);
	ck_assert_uint_eq(inc, mono);
	ck_assert_uint_eq(real - mono, 1700000001000000000ull);
	ck_assert_str_eq(get(p0, "trace_packet_defaults.timestamp_clock_id"), "64");
	uint64_t first_launch = 0, mark = 0, kernel_end = 0;
	int absolute = 0;
	for (size_t k = 1; k < npkts; k++) {
		const struct pkt *p = &pkts[k];
		if (!get(p, "timestamp"))
			continue;
		uint64_t ts = getu(p, "timestamp");
		if (get(p, "timestamp_clock_id")) {
			ck_assert_str_eq(get(p, "timestamp_clock_id"), "3");
			absolute++;
		} else {
			inc += ts;
			ts = inc;
		}
		const char *n = ev_name(p);
		if (n && !strcmp(n, "\"cudaLaunchKernel\"") && !first_launch)
			first_launch = ts;
		if (n && !strcmp(n, "\"mark\""))
			mark = ts;
		if (k > 0 && is_type(p, "TYPE_SLICE_END") && ev_name(&pkts[k - 1]) &&
		    !strcmp(ev_name(&pkts[k - 1]), "\"kernelA\""))
			kernel_end = ts;
	}
	ck_assert_uint_eq(first_launch, T0);
	ck_assert_uint_eq(mark, T0 + 1000);
	ck_assert_uint_eq(kernel_end, T0 + 20000);
	ck_assert_int_ge(absolute, 1);
}
END_TEST

START_TEST(test_documents)
{
	ck_assert_int_eq(protoc_rc, 0);
	const struct pkt *f = find_event("traceprof");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->text, "name: \"events_written\"\n"));
	ck_assert_ptr_nonnull(strstr(f->text, "uint_value: 205\n"));
	ck_assert_ptr_nonnull(strstr(f->text, "name: \"drops\"\n"));
	ck_assert_ptr_nonnull(strstr(f->text, "dict_entries {\n"));
	ck_assert_ptr_nonnull(strstr(f->text, "array_values {\n"));
	ck_assert_ptr_nonnull(strstr(f->text, "int_value: 102\n"));
	ck_assert_ptr_nonnull(strstr(f->text, "string_value: \"perfetto\"\n"));
	ck_assert_ptr_nonnull(strstr(f->text, "double_value: 0.25\n"));
	ck_assert_ptr_nonnull(strstr(f->text, "bool_value: true\n"));
	/* On the header's process track: the one pid 100's descriptor has. */
	const struct pkt *d = NULL;
	ck_assert_int_ge(descriptors(getu(f, "track_event.track_uuid"), &d), 1);
	ck_assert_str_eq(get(d, "track_descriptor.process.pid"), "100");
	const struct pkt *dev = find_event("deviceProperties");
	ck_assert_ptr_nonnull(dev);
	ck_assert_ptr_nonnull(strstr(dev->text, "string_value: \"NVIDIA H100\""));
	const struct pkt *sf = find_event("stackFrames");
	ck_assert_ptr_nonnull(sf);
	ck_assert_ptr_nonnull(strstr(sf->text, "string_value: \"train_step\""));
	ck_assert_ptr_nonnull(find_event("traceprof header"));
}
END_TEST

/* ---- failures ---------------------------------------------------------------------- */

/* A writer discarded halfway frees everything and leaves no file behind
 * once its sink is aborted. */
START_TEST(test_discard)
{
	char d[] = "/tmp/tp-pfdiscard.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(d));
	struct tp_sink *s;
	ck_assert_int_eq(tp_sink_open(&s, d, "t.pftrace", TP_SINK_PLAIN, 0, 0), 0);
	struct tp_writer_header h = { .pid = 1 };
	struct tp_writer *w = tp_writer_open(&tp_perfetto_writer, s, &h);
	ck_assert_ptr_nonnull(w);
	for (int i = 0; i < 100000; i++)
		tp_writer_slice(w, "c", "n", 1, 1, i & 15, 1000 + (uint64_t)i * 10,
				1005 + (uint64_t)i * 10, NULL, 0);
	ck_assert_uint_gt(tp_writer_bytes(w), TP_PB_BUF);
	ck_assert_uint_eq(w->events, 100000);
	tp_writer_discard(w);
	tp_sink_abort(s);
	ck_assert_int_eq(rmdir(d), 0);
}
END_TEST

static int have_protoc;

static Suite *suite(void)
{
	Suite *s = suite_create("perfetto_writer");
	TCase *tc = tcase_create("failures");
	tcase_add_test(tc, test_discard);
	suite_add_tcase(s, tc);
	if (have_protoc) {
		tc = tcase_create("decoded");
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_add_test(tc, test_decodes);
		tcase_add_test(tc, test_interned_names);
		tcase_add_test(tc, test_balance_per_track);
		tcase_add_test(tc, test_arg_values);
		tcase_add_test(tc, test_flows);
		tcase_add_test(tc, test_tracks);
		tcase_add_test(tc, test_counter);
		tcase_add_test(tc, test_times);
		tcase_add_test(tc, test_documents);
		tcase_set_timeout(tc, 60);
		suite_add_tcase(s, tc);
	}
	return s;
}

int main(void)
{
	const char *why = find_schema();
	have_protoc = why == NULL;
	int rc = tp_check_run(suite());
	if (rc)
		return rc;
	if (why) {
		printf("SKIP: %s: the decode tests did not run\n", why);
		return 77;
	}
	return 0;
}
