/* The flush thread's state (struct tp_fl, collector/flush_int.h), defined
 * apart from flush.c: the files that do a pass's jobs (drain.c, parts.c,
 * footer.c, plugins.c, self.c) read it, and flush.c calls them, so the
 * state sits below all of them and none calls back up into flush.c. */
#include "collector/flush_int.h"

struct tp_fl tp_fl;
