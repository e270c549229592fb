/* The window state machine (collector/window.h): torch's action table
 * applied step by step, the windows it opens and closes, and when they are
 * finalized.  Pure: no threads, no I/O; decisions go out through the
 * caller's callbacks. */
#include "collector/window.h"

#include <string.h>

/* Removes slot i, keeping the others oldest first. */
static void wsm_remove(struct tp_wsm *m, int i)
{
	memmove(&m->win[i], &m->win[i + 1], (size_t)(m->nwin - 1 - i) * sizeof(m->win[0]));
	m->nwin--;
}

static void wsm_open(struct tp_wsm *m, uint64_t first_step)
{
	if (m->nwin == TP_MAX_OPEN_WINDOWS) {
		/* More windows wait for stragglers than there are slots.  The
		 * oldest has waited longest: finalize it now (a record of it still
		 * in flight is then counted as late, never lost silently).  The
		 * callback gets a copy: the slot is reused below. */
		struct tp_win old = m->win[0];
		wsm_remove(m, 0);
		m->ops->finalize(m->ctx, &old);
	}
	struct tp_win *w = &m->win[m->nwin];
	memset(w, 0, sizeof(*w));
	w->id = ++m->next_id;
	w->first_step = first_step;
	if (m->ops->opened && m->ops->opened(m->ctx, w) < 0)
		return;
	m->nwin++;
}

/* The window that new steps join: the newest one not closed. */
static struct tp_win *wsm_current_open(struct tp_wsm *m)
{
	for (int i = m->nwin - 1; i >= 0; i--)
		if (!m->win[i].closed)
			return &m->win[i];
	return NULL;
}

static void wsm_close(struct tp_wsm *m, uint64_t last_step, int save)
{
	struct tp_win *w = wsm_current_open(m);
	if (!w)
		return;
	w->closed = 1;
	w->last_step = last_step;
	w->save = save;
	w->closed_pass = m->pass;
}

void tp_wsm_init(struct tp_wsm *m, const struct tp_wsm_ops *ops, void *ctx, uint64_t step)
{
	/* Ids keep counting across tp_wsm_forget() (a forked child), so that
	 * a thread's per-window statistics never match an older window. */
	uint64_t next_id = m->next_id;
	memset(m, 0, sizeof(*m));
	m->next_id = next_id;
	m->ops = ops;
	m->ctx = ctx;
	m->seen_step = step;
	if (tp_action_records(ops->action(ctx, step)))
		wsm_open(m, step);
}

void tp_wsm_forget(struct tp_wsm *m)
{
	memset(m->win, 0, sizeof(m->win));
	m->nwin = 0;
}

void tp_wsm_advance(struct tp_wsm *m, uint64_t step)
{
	while (m->seen_step < step) {
		enum tp_action prev = m->ops->action(m->ctx, m->seen_step);
		enum tp_action cur = m->ops->action(m->ctx, m->seen_step + 1);
		unsigned tr = tp_schedule_transition(prev, cur);
		if (tr & TP_TR_STOP)
			wsm_close(m, m->seen_step, !!(tr & TP_TR_SAVE));
		if (tr & TP_TR_START)
			wsm_open(m, m->seen_step + 1);
		m->seen_step++;
	}
}

struct tp_win *tp_wsm_record(struct tp_wsm *m, uint64_t step, enum tp_wsm_fate *fate)
{
	if (step > m->seen_step)
		tp_wsm_advance(m, step);
	for (int i = 0; i < m->nwin; i++) {
		struct tp_win *w = &m->win[i];
		if (step >= w->first_step && (!w->closed || step <= w->last_step)) {
			*fate = TP_WSM_IN;
			return w;
		}
	}
	*fate = tp_action_records(m->ops->action(m->ctx, step)) ? TP_WSM_LATE : TP_WSM_FILTERED;
	return NULL;
}

void tp_wsm_pass(struct tp_wsm *m)
{
	m->pass++;
}

void tp_wsm_finalize(struct tp_wsm *m, int all)
{
	/* Compacted in place: the callbacks see each window before its slot is
	 * reused, and may not open windows (they are not given the machine). */
	int k = 0;
	for (int i = 0; i < m->nwin; i++) {
		struct tp_win *w = &m->win[i];
		if (w->closed && (all || m->pass >= w->closed_pass + 2))
			m->ops->finalize(m->ctx, w);
		else
			m->win[k++] = *w;
	}
	m->nwin = k;
}

void tp_wsm_exit(struct tp_wsm *m, uint64_t step)
{
	tp_wsm_advance(m, step);
	if (tp_schedule_transition(m->ops->action(m->ctx, m->seen_step), TP_ACT_EXIT) & TP_TR_STOP)
		wsm_close(m, m->seen_step, 1);
	else if (wsm_current_open(m))
		wsm_close(m, m->seen_step, 0);
	m->pass += 2;
	tp_wsm_finalize(m, 1);
}

int tp_wsm_holds(const struct tp_wsm *m, uint64_t id)
{
	for (int i = 0; i < m->nwin; i++)
		if (m->win[i].id == id)
			return 1;
	return 0;
}
