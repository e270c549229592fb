/* struct tp_schedule: the numbers of TRACEPROF_SCHEDULE, as the
 * configuration holds them, and the parser of its text.  Here in common/
 * because the configuration (common/config.c) parses it; what the numbers
 * mean (torch.profiler.schedule's actions) is collector/schedule.h's. */
#ifndef TP_COMMON_SCHEDULE_SPEC_H
#define TP_COMMON_SCHEDULE_SPEC_H

#include <stdint.h>

struct tp_schedule {
	int enabled; /* 0: torch's default schedule, RECORD on every step */
	uint64_t skip_first, wait, warmup, active, repeat;
};

/* Parses "skip_first=N,wait=N,warmup=N,active=N,repeat=N" (any order, each
 * key at most once; wait and warmup default to 0, repeat and skip_first to 0;
 * active is required).  Returns 0, or -1 with a message in err. */
int tp_schedule_parse(const char *text, struct tp_schedule *out, char *err, int errlen);

#endif
