/* The live file (docs/live.md): each process's state, rewritten by the
 * flush thread about once a second in `<trace folder>/.live/<host>.<pid>.json`
 * (TRACEPROF_LIVE_DIR chooses another folder, TRACEPROF_LIVE=0 none), and at
 * the final save with "state":"finished", for `traceprof top`.  What it
 * holds comes from atomics the program's threads already keep (the step,
 * the rings' counters) or publish for it (collector/live_pub.h), and from
 * the step times below. */
#ifndef TP_COLLECTOR_LIVE_H
#define TP_COLLECTOR_LIVE_H

#include <stdint.h>

struct tp_config;
struct tp_template_vars;
struct tp_thread;

/* Flush thread's set-up (tp_flush_start(), before any pass). */
void tp_live_init(const struct tp_config *cfg, const struct tp_template_vars *vars);

/* Flush thread, each pass: rewrites the file when the interval passed.
 * now: CLOCK_MONOTONIC ns. */
void tp_live_pass(uint64_t now);

/* Flush thread, before windows may be finalized (their tables go with
 * them): keeps the newest window's top names for the file when that
 * window is closed (its last records converted), or always.  Between two
 * files the top is the last one's. */
void tp_live_top_note(int always);

/* The final save (flush thread, or the exiting thread once it stopped):
 * the file says "finished", with the exit status set before, if any. */
void tp_live_final(void);

/* The flush thread is about to start (on the program's thread that starts
 * it): registers the on_exit() handler that keeps exit()'s status for the
 * final file.  Once per process. */
void tp_live_thread_started(void);

/* Flush thread: t is about to be freed; its counts stay in the totals. */
void tp_live_forget_thread(const struct tp_thread *t);

/* A forked child that follows: its own file, its own steps. */
void tp_live_after_fork_child(void);

#endif
