/* The flush thread's plugins (struct tp_flush_plugin, collector/flush.h):
 * the list of this run, and one call per callback that runs them in order.
 * The list comes from the sources table (preload/sources.c) through
 * tp_flush_start(). */
#include <errno.h>

#include "collector/flush_int.h"

#define MAX_PLUGINS 12

static const struct tp_flush_plugin *plugins[MAX_PLUGINS];
static int nplugins;
int tp_fl_plugins_set(const struct tp_flush_plugin *const *list, int n)
{
	nplugins = 0;
	for (int i = 0; i < n; i++) {
		const struct tp_flush_plugin *p = list[i];
		if (!p)
			continue;
		if (nplugins == MAX_PLUGINS)
			return -ENOSPC;
		plugins[nplugins++] = p;
	}
	return 0;
}

void tp_fl_plugins_init(const struct tp_config *cfg)
{
	/* A plugin whose init fails stays out (it logged why). */
	int k = 0;
	for (int i = 0; i < nplugins; i++)
		if (!plugins[i]->init || plugins[i]->init(cfg) == 0)
			plugins[k++] = plugins[i];
	nplugins = k;
}

void tp_fl_plugins_pass(uint64_t now_ns)
{
	for (int i = 0; i < nplugins; i++)
		if (plugins[i]->pass)
			plugins[i]->pass(now_ns);
}

void tp_fl_plugins_window_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns)
{
	for (int i = 0; i < nplugins; i++)
		if (plugins[i]->window_events)
			plugins[i]->window_events(out, first_ns, last_ns, tp_fl.pid);
}

void tp_fl_plugins_window_stream(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns)
{
	for (int i = 0; i < nplugins; i++)
		if (plugins[i]->window_stream)
			plugins[i]->window_stream(out, first_ns, last_ns, tp_fl.pid);
}

void tp_fl_plugins_footer(struct tp_doc *footer)
{
	for (int i = 0; i < nplugins; i++)
		if (plugins[i]->footer)
			plugins[i]->footer(footer);
}

void tp_fl_plugins_frames(struct tp_writer *out)
{
	for (int i = 0; i < nplugins; i++)
		if (plugins[i]->frames)
			plugins[i]->frames(out);
}

void tp_fl_plugins_saved(const char *path)
{
	for (int i = 0; i < nplugins; i++)
		if (plugins[i]->saved)
			plugins[i]->saved(path);
}

const struct tp_doc *tp_fl_plugins_devices(void)
{
	const struct tp_doc *p = NULL;
	for (int i = 0; i < nplugins && !p; i++)
		if (plugins[i]->device_properties)
			p = plugins[i]->device_properties();
	return p;
}
