/* Python call stacks on CUDA calls (TRACEPROF_PYTHON_STACK).
 *
 * The capture (preload/pystack.c) runs on the calling thread while it holds
 * the GIL.  Each frame is stored in the record's extras, after the native
 * stack of collector/stacks.h, as one u64: (name index << 32) | line, where
 * the name index points into a table here that holds "file\0function\0" once
 * per code object.  The flush thread writes the frames as args.python_stack:
 * ["train.py:42 forward", ...], innermost first.
 *
 * Extras: [string NUL][pad to 8][u64 depth][depth IPs][u64 n][n frames],
 * with TP_RF_STACK and TP_RF_PYSTACK set.
 *
 * Threads: tp_pystack_find() and tp_pystack_add() are called only by threads
 * that hold the GIL, which serializes them (there is one GIL per process for
 * the interpreters we read; see preload/pystack.c).  The flush thread reads a
 * name only through an index it found in a record: the writer filled the
 * name before it released the GIL, the thread that recorded the index
 * acquired the GIL after that and published its record with the ring's
 * release store, which the flush thread's acquire load pairs with, so the
 * name is complete when the flush thread reads it. */
#ifndef TP_COLLECTOR_PYSTACK_DECODE_H
#define TP_COLLECTOR_PYSTACK_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "collector/record.h"

/* Frames stored per call at most (the innermost ones are kept). */
#define TP_PYSTACK_MAX 48
/* The name index of a frame whose code object did not fit in the table. */
#define TP_PYSTACK_NONAME 0xffffffffu

/* GIL holders only.  The index of code object `code`, or TP_PYSTACK_NONAME
 * when it is not in the table. */
uint32_t tp_pystack_find(const void *code);
/* GIL holders only.  Adds `code` with its file and function names; returns
 * its index, or TP_PYSTACK_NONAME when the table is full (counted). */
uint32_t tp_pystack_add(const void *code, const char *file, const char *func);

/* The Python frames a record carries: returns their number (0 without
 * TP_RF_PYSTACK or when malformed) and points *frames at the first. */
size_t tp_pystack_frames(const struct tp_record *r, const uint64_t **frames);

/* The most "python_stack" strings of one event, and the bytes of their text
 * (each "file:line func", at most 512 + 1 + 10 + 1 + 512 bytes and a NUL). */
#define TP_PYSTACK_ARGS_MAX TP_PYSTACK_MAX
#define TP_PYSTACK_TEXT (TP_PYSTACK_ARGS_MAX * 1040)

/* Flush thread.  The "python_stack" strings of r ("file:line func",
 * innermost first) into out[] (room for TP_PYSTACK_ARGS_MAX), their text in
 * text (TP_PYSTACK_TEXT bytes); returns their number, 0 when r has none. */
unsigned tp_pystack_strs(const struct tp_record *r, const char **out, char *text);

/* Flush thread: the file and function names of name index idx, as found
 * in a record or a thread's live publication (collector/live_pub.h, whose
 * release store of the index orders the name before it, as the ring's does
 * for a record).  Returns 0, or -1 (both "?") for an index with no name. */
int tp_pystack_name_of(uint32_t idx, const char **file, const char **func);

/* Code objects that did not fit in the table (their frames show "?"). */
uint64_t tp_pystack_unnamed(void);

/* Tests: forgets every name. */
void tp_pystack_reset(void);

#endif
