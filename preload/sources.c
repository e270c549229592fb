/* The event sources, in one table: what each starts on the constructor's
 * thread (its capture half) and its plugin on the flush thread, in the order
 * they run.  Its records are decoded in collector/ (convert.c dispatches by
 * record kind).  Adding a
 * source is one row here.
 *
 * The table lives in preload/, not collector/, because it names both
 * halves: the capture halves are in preload/ (the hooks), and collector/
 * must not depend on preload/ (the unit tests link collector/ without it,
 * build/libtpcore.a).  preload/init.c, the constructor, is its only user. */
#include "preload/sources.h"

#include <stddef.h>

#include "collector/flush.h"
#include "preload/steps.h"

struct tp_source {
	const char *name;
	/* Set up before the flush thread starts (may be NULL).  Returns 0, or
	 * -1 when the source is off (it said why). */
	int (*start)(const struct tp_config *cfg);
	/* Its part of each flush pass and of each file (may be NULL). */
	const struct tp_flush_plugin *plugin;
};

/* Each plugin's callbacks run in this order (for the footer: the order of
 * its members). */
static const struct tp_source sources[] = {
	/* CUDA API calls: the generated wrappers (build/gen/cuda_wrappers.c)
	 * capture, collector/cuda_decode.c decodes (kernel names: the registry
	 * collector/cuda_kernels.c, which asks the driver through
	 * preload/cuda_namer.c). */
	{ "cuda_api", tp_cuda_kernels_start, NULL },
	/* CUDA driver and runtime versions in the footer. */
	{ "meta", NULL, &tp_meta_plugin },
	/* TRACEPROF_ON_SAVE: a command for each saved file. */
	{ "on_save", NULL, &tp_onsave_plugin },
	/* TRACEPROF_SAMPLE_MS: host counters (collector/sampler.c). */
	{ "sampler", NULL, &tp_sampler_plugin },
	/* TRACEPROF_WITH_STACK / TRACEPROF_PYTHON_STACK: the frames the
	 * events name (preload/stack.c, preload/pystack.c capture). */
	{ "stacks", NULL, &tp_stacks_plugin },
	/* The GPU timeline: CUPTI activity records (preload/cupti*.c capture;
	 * collector/cupti_queue.c takes the buffers, cupti_decode.c and gpu*.c
	 * decode; collector/cupti_plugin.c is the plugin). */
	{ "cupti", tp_cupti_start, &tp_cupti_plugin },
	/* TRACEPROF_STEP's sources and TRACEPROF_CAPTURE's ranges: steps, no
	 * events of their own.  Before the flush thread, whose first window
	 * depends on the capture mode. */
	{ "steps", tp_steps_start, NULL },
};

#define NSOURCES ((int)(sizeof(sources) / sizeof(sources[0])))

void tp_sources_start(const struct tp_config *cfg, const struct tp_template_vars *vars)
{
	const struct tp_flush_plugin *plugins[NSOURCES];
	int n = 0;
	for (int i = 0; i < NSOURCES; i++) {
		const struct tp_source *s = &sources[i];
		if (s->start && s->start(cfg) < 0)
			continue;
		if (s->plugin)
			plugins[n++] = s->plugin;
	}
	tp_flush_start(cfg, vars, plugins, n);
}
