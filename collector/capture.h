/* Capture ranges (TRACEPROF_CAPTURE=cudaProfilerApi): the steps between a
 * cudaProfilerStart()/cuProfilerStart() and the next stop record, each range
 * one window.
 *
 * A range starts and ends at step boundaries of its own: the start and the
 * stop each begin a new internal step (collector/control.c,
 * tp_control_capture()), so windows stay unions of whole steps as the
 * flush thread expects.  Those extra boundaries are not the program's
 * steps: tp_capture_display_step() maps an internal step back to the
 * program's step number for ProfilerStep#N and {step}.
 *
 * Writers (begin/end) are serialized by the caller; readers (action,
 * display) run on any thread without locks. */
#ifndef TP_COLLECTOR_CAPTURE_H
#define TP_COLLECTOR_CAPTURE_H

#include <stdint.h>

#include "collector/schedule.h"

/* Ranges a process can hold; a start beyond them is ignored (counted). */
#define TP_CAPTURE_MAX_RANGES 4096

/* Opens a range whose first internal step is `step` (the step the start
 * call begins).  Returns 0, -EALREADY when a range is open (a nested start:
 * ignored, as the CUDA profiler API and nsys ignore it), or -ENOSPC. */
int tp_capture_begin(uint64_t step);

/* Closes the open range before internal step `step` (the step the stop
 * call begins).  Returns 0, or -ENOENT when no range is open (an unpaired
 * stop: ignored). */
int tp_capture_end(uint64_t step);

/* Whether a range is open now. */
int tp_capture_is_open(void);

/* The action of an internal step: RECORD inside a range, RECORD_AND_SAVE
 * for the last step of a closed range, NONE outside. */
enum tp_action tp_capture_action(uint64_t step);

/* The program's step number of an internal step: the step minus the
 * boundaries the starts and stops added up to it. */
uint64_t tp_capture_display_step(uint64_t step);

/* Forgets every range (tests). */
void tp_capture_reset(void);

#endif
