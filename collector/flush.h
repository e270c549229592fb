/* The flush thread: drains every ring, applies the schedule, and writes one
 * trace file per saved window.  Everything that formats, allocates, or does
 * I/O happens here, never on the program's threads.  Its jobs live in
 * several files (collector/flush_int.h lists them). */
#ifndef TP_COLLECTOR_FLUSH_H
#define TP_COLLECTOR_FLUSH_H

#include <stdint.h>

#include "common/config.h"
#include "format/event.h"
#include "format/template.h"
#include "format/writer.h"

/* Optional parts (CUPTI, the host sampler, upload hooks) plug in here.  Every
 * callback runs on the flush thread, or on the exiting thread after the flush
 * thread has stopped; never two at once.  Any callback may be NULL. */
struct tp_flush_plugin {
	const char *name;
	/* Called once by tp_flush_start() (on the constructor's thread) with the
	 * configuration; returns 0, or -1 to stay out (the plugin logs why).
	 * The plugins are listed in the sources table (preload/sources.c). */
	int (*init)(const struct tp_config *cfg);
	/* Each pass, before the rings are drained (e.g. to flush CUPTI). */
	void (*pass)(uint64_t now_ns);
	/* A window is about to be closed: write the plugin's events whose times
	 * fall in [first_ns, last_ns] into out (the window's last part). */
	void (*window_events)(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
			      int64_t pid);
	/* The window [first_ns, last_ns so far] is being put on disk while it
	 * records (every TP_FL_DISK_NS, when it is the only open window): the
	 * plugin may write into out (its current part) the events it knows
	 * already to fall in it, and must then not write them again in
	 * window_events.  So that a process that dies keeps them. */
	void (*window_stream)(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
			      int64_t pid);
	/* Adds the plugin's members to the footer object (the "traceprof"
	 * object in JSON): tp_doc_u64(d, "key", v), tp_doc_object(d, "gpu")
	 * ... tp_doc_end(d). */
	void (*footer)(struct tp_doc *footer);
	/* Called just before a file is closed: emits with tp_writer_frame()
	 * the native stack frames this file's events named in their sf field. */
	void (*frames)(struct tp_writer *out);
	/* A trace file is complete and in place at path. */
	void (*saved)(const char *path);
	/* The GPUs' properties: a document whose single top node is an array
	 * of objects (one per GPU), or NULL when not known. */
	const struct tp_doc *(*device_properties)(void);
};

/* The collector's own plugins, for the sources table (preload/sources.c). */
extern const struct tp_flush_plugin tp_meta_plugin;	/* meta.c: CUDA versions */
extern const struct tp_flush_plugin tp_onsave_plugin;	/* onsave.c: TRACEPROF_ON_SAVE */
extern const struct tp_flush_plugin tp_sampler_plugin; /* sampler.c: host counters */
extern const struct tp_flush_plugin tp_stacks_plugin;	/* stacks.c: call stack frames */
extern const struct tp_flush_plugin tp_cupti_plugin;	/* cupti_plugin.c: the GPU timeline */

/* Sets the collector up with the plugins given (in the order their callbacks
 * run; NULL entries skipped).  The flush thread is not started here: see
 * tp_flush_need().  Nothing here can fail: what cannot be set up (a writer,
 * the folders' anchor) falls back with one warning. */
void tp_flush_start(const struct tp_config *cfg, const struct tp_template_vars *vars,
		   const struct tp_flush_plugin *const *plugins, int nplugins);

/* There is something to flush: starts the flush thread (signals blocked)
 * if it is not started yet, once per process.  Called on slow paths only: a
 * thread's first record (its ring's creation, tp_threads_set_first_use()),
 * a step (tp_activity_note(), collector/activity.h), the first successful cuInit.  A
 * process that never gets here stays single-threaded.  Preserves errno. */
void tp_flush_need(void);

/* Process exit: stops the flush thread, ends the current step, drains all
 * rings, applies the exit transition (a recording window is saved), and
 * writes the files.  Idempotent. */
void tp_flush_finish(void);

/* How many windows this process saved to files; after tp_flush_finish()
 * (whose wait for the save orders the flush thread's count before this
 * read), for the exit's "no trace file" line (preload/init.c). */
uint64_t tp_flush_files_saved(void);

/* Asks the flush thread for one whole pass (drain, convert) and waits for it,
 * at most timeout_ms.  For an exit handler that runs before the CUDA
 * runtime's own teardown (preload/init.c): kernel names and other answers
 * of the driver are looked up while it still gives them.  A no-op on the
 * flush thread itself and once the final save has begun. */
void tp_flush_sync(int timeout_ms);

/* Async-signal-safe: asks the flush thread to do tp_flush_finish()'s work
 * and waits up to timeout_ms for it.  Returns 0 when the files are saved. */
int tp_flush_finish_from_signal(int timeout_ms);

/* In a forked child: forget the parent's windows and files; the child starts
 * its own flush thread when it first records (follow=1), or recording is
 * disabled (follow=0). */
void tp_flush_after_fork_child(int follow);

#endif
