/* struct tp_schedule: the numbers of TRACEPROF_SCHEDULE, as the
 * configuration holds them.  Plain data, here in common/ so that
 * common/config.h need not include the collector; what the numbers mean
 * (torch.profiler.schedule's actions) is collector/schedule.h's. */
#ifndef TP_COMMON_SCHEDULE_SPEC_H
#define TP_COMMON_SCHEDULE_SPEC_H

#include <stdint.h>

struct tp_schedule {
	int enabled; /* 0: torch's default schedule, RECORD on every step */
	uint64_t skip_first, wait, warmup, active, repeat;
};

#endif
