/* The public API (preload/traceprof.h): steps and markers. */
#define TRACEPROF_BUILDING_LIBRARY 1
#include "preload/traceprof.h"

#include <string.h>

#include "collector/control.h"
#include "collector/hot.h"
#include "preload/export.h"
#include "preload/state.h"

/* Whether this process records: 0 without profiling (TRACEPROF_ENABLE=0, a
 * configuration error, an internal failure).  For the Python hook's
 * enabled(), which cannot tell otherwise; not in traceprof.h (C callers
 * have no need of it yet), so declared here for -Wmissing-prototypes. */
TP_EXPORT int traceprof_active(void);
TP_EXPORT int traceprof_active(void)
{
	return tp_preload_active() != 0;
}

/* Whether the current step records: for the Python module hooks, which
 * --step torch installs only while it does (pyboot/traceprof_torch.py).
 * Relaxed: a hint read after the step that changed it, on the same thread. */
TP_EXPORT int traceprof_recording(void);
TP_EXPORT int traceprof_recording(void)
{
	return tp_preload_active() &&
	       (atomic_load_explicit(&tp_state, memory_order_relaxed) & TP_STATE_RECORDING);
}

TP_EXPORT void traceprof_step(void)
{
	if (tp_preload_active())
		tp_control_step();
}

/* Emits a named record on the calling thread when the current step records.
 * Markers are rare next to CUDA calls, so copying the name is fine here.
 * cats: a marker's or instant's categories ("forward,train"), NULL or ""
 * for none; they follow the name in the same string (TP_RF_CATS), copied
 * into a buffer on the stack: no allocation. */
static void emit_named(uint16_t kind, const char *name, const char *key, double value,
		       const char *cats)
{
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	if (!(s & TP_STATE_RECORDING) || !name)
		return;
	struct tp_thread *t = tp_emit_self();
	if (!t)
		return;
	struct tp_record r = { 0 };
	r.kind = kind;
	r.start = r.end = tp_clock_now();
	r.step = (uint32_t)(s >> TP_STATE_STEP_SHIFT);
	char buf[TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES];
	if (kind == TP_REC_COUNTER) {
		/* "name\0key": both in the extras. */
		size_t n = strnlen(name, 255), k = key ? strnlen(key, 255) : 0;
		memcpy(buf, name, n);
		buf[n] = '\0';
		memcpy(buf + n + 1, key ? key : "", k);
		memcpy(&r.arg[0], &value, sizeof(value));
		tp_emit_named(t, &r, buf, n + 1 + k);
		return;
	}
	size_t len = strnlen(name, TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES);
	if (cats && *cats) {
		/* 255 + 255 bytes leave the NUL room in the extras; a stack may
		 * still cut the categories (the decoder clamps to the string). */
		size_t n = strnlen(name, 255), c = strnlen(cats, 255);
		memcpy(buf, name, n);
		memcpy(buf + n, cats, c);
		if (name[n] || cats[c])
			r.flags |= TP_RF_TRUNC;
		r.flags |= TP_RF_CATS;
		r.arg[0] = n;
		name = buf;
		len = n + c;
	}
	if (tp_hook_stack_depth && kind != TP_REC_MARKER_END)
		tp_hook_emit_with_stack(t, &r, name, len);
	else
		tp_emit_named(t, &r, name, len);
}

TP_EXPORT void traceprof_marker_start(const char *name)
{
	emit_named(TP_REC_MARKER_BEGIN, name, NULL, 0, NULL);
}

TP_EXPORT void traceprof_marker_finish(const char *name)
{
	emit_named(TP_REC_MARKER_END, name, NULL, 0, NULL);
}

TP_EXPORT void traceprof_marker_instant(const char *name)
{
	emit_named(TP_REC_INSTANT, name, NULL, 0, NULL);
}

TP_EXPORT void traceprof_marker_counter(const char *name, const char *key, double value)
{
	emit_named(TP_REC_COUNTER, name, key, value, NULL);
}

TP_EXPORT void traceprof_marker_start_cat(const char *name, const char *categories)
{
	emit_named(TP_REC_MARKER_BEGIN, name, NULL, 0, categories);
}

TP_EXPORT void traceprof_marker_instant_cat(const char *name, const char *categories)
{
	emit_named(TP_REC_INSTANT, name, NULL, 0, categories);
}
