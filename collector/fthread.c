/* The flush thread's per-thread state (collector/fthread.h): made on a
 * thread's first drain, freed with the thread. */
#include "collector/fthread.h"

#include <stdlib.h>

#include "collector/markers_decode.h"
#include "collector/thread.h"

struct tp_fthread *tp_fthread_get(struct tp_thread *t)
{
	if (!t->fl)
		t->fl = calloc(1, sizeof(*t->fl));
	return t->fl;
}

void tp_fthread_forget(struct tp_thread *t)
{
	if (!t->fl)
		return;
	tp_markers_free(t->fl->markers);
	free(t->fl);
	t->fl = NULL;
}
