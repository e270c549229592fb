/* The table of event sources (preload/sources.c): each source's start on the
 * constructor's thread and its flush-thread plugin, in one place and in the
 * order they run.  Records are decoded in collector/ (collector/convert.c's
 * table by record kind). */
#ifndef TP_PRELOAD_SOURCES_H
#define TP_PRELOAD_SOURCES_H

#include "common/config.h"
#include "format/template.h"

/* preload/cuda_namer.c: gives the flush thread's kernel-name registry
 * its way to the real driver (collector/cuda_kernels.h).  Returns 0. */
int tp_cuda_kernels_start(const struct tp_config *cfg);
/* preload/cupti.c: TRACEPROF_CUPTI (CUPTI itself loads at the first
 * successful cuInit).  Returns 0. */
int tp_cupti_start(const struct tp_config *cfg);

/* Starts every source of the table, then sets the collector up with their
 * plugins (tp_flush_start(); the flush thread itself starts when there is
 * first something to flush, tp_flush_need()).  Called once by the library's constructor
 * (preload/init.c) after the step control is set up.  A source whose start
 * fails is left out (it said why). */
void tp_sources_start(const struct tp_config *cfg, const struct tp_template_vars *vars);

#endif
