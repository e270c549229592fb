/* The cut windows that earlier runs left in a trace folder (issue 44): the
 * next run of the job into the same folder finishes them, on its flush
 * thread, when it first opens that folder.  collector/cut.c. */
#ifndef TP_COLLECTOR_CUT_H
#define TP_COLLECTOR_CUT_H

/* Finishes, in the folder (created already), the JSON and Perfetto
 * temporary files (plain, .gz, .zst) of this host's processes that died,
 * into cut traces named as their windows would have been; names in one
 * line the ones it leaves to `traceprof recover` (large, unreadable).  Once per folder per
 * process; bounded work; errors as one line.  Does nothing on another
 * thread than the flush thread (the exiting thread's save). */
void tp_cut_folder(const char *folder);

/* Marks the calling thread as the flush thread, the only one that scans. */
void tp_cut_flush_thread(void);

#endif
