/* The cut windows that earlier runs left in a trace folder (issue 44): the
 * next run of the job into the same folder finishes them, on its flush
 * thread, when it first opens that folder.  collector/cut.c. */
#ifndef TP_COLLECTOR_CUT_H
#define TP_COLLECTOR_CUT_H

/* Finishes, in the folder (created already), the plain JSON temporary files
 * of this host's processes that died, into cut traces named as their
 * windows would have been; names in one line the ones it leaves to
 * `traceprof recover` (compressed, Perfetto, large).  Once per folder per
 * process; bounded work; errors as one line.  Flush thread only. */
void tp_cut_folder(const char *folder);

#endif
