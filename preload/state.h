/* The preloaded library's own state: whether it records, and the
 * configuration in force.
 *
 * A leaf: it includes nothing of preload/ and calls nothing, so that the
 * files that read this state (api, cupti, nvtx, nvtx_payload, steps) depend
 * on it alone and not on the constructor (init.c), which writes it and
 * calls into them.  Before this file, they read it from init.c, and the
 * constructor was both the top and the bottom of one loop of calls through
 * the folder (scripts/check-layers). */
#ifndef TP_PRELOAD_STATE_H
#define TP_PRELOAD_STATE_H

#include "common/config.h"

/* Non-zero once the constructor has set everything up and until exit.  Hooks
 * work without it (they forward the call and record nothing). */
int tp_preload_active(void);

/* The configuration in force (valid when tp_preload_active(); all zero,
 * enable included, before the constructor names its own). */
const struct tp_config *tp_preload_config(void);

/* The writers, init.c's alone: recording on (1) or off (0); off returning
 * whether it was on (one caller of several racing ones sees 1); and the
 * configuration the constructor fills in and keeps for the process's life. */
void tp_preload_set_active(int on);
int tp_preload_clear_active(void);
void tp_preload_set_config(const struct tp_config *cfg);

#endif
