/* The table of event sources (preload/sources.c): each source's start on the
 * constructor's thread, its record decoder, its flush-thread plugin, in one
 * place and in the order they run. */
#ifndef TP_PRELOAD_SOURCES_H
#define TP_PRELOAD_SOURCES_H

#include "common/config.h"
#include "format/template.h"

struct tp_api_decoder;

/* preload/cuda_events.c: CUDA API records as trace events. */
extern const struct tp_api_decoder tp_cuda_events_decoder;
/* preload/cupti_flush.c: the GPU timeline's part of each pass and file. */
extern const struct tp_flush_plugin tp_cupti_plugin;

/* Starts every source of the table, then sets the collector up with their
 * plugins (tp_flush_start(); the flush thread itself starts when there is
 * first something to flush, tp_flush_need()).  Called once by the library's constructor
 * (preload/init.c) after the step control is set up.  A source whose start
 * fails is left out (it said why). */
void tp_sources_start(const struct tp_config *cfg, const struct tp_template_vars *vars);

#endif
