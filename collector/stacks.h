/* Call stacks of records (TRACEPROF_WITH_STACK), symbolized on the flush
 * thread.
 *
 * The hot path (preload/stack.c) stores only instruction pointers in a
 * record's extras: [string NUL][pad to 8][u64 depth][depth IPs], with
 * TP_RF_STACK set.  Here each IP is resolved once with dladdr() to
 * "function+0xOFF" and its module (C++ names demangled when libstdc++'s
 * __cxa_demangle is loaded), and the answer is cached per address.  Frames of
 * traceprof itself are left out.
 *
 * A stack is written twice, for the two kinds of viewers:
 *   - args.stack: ["c+0x1e (prog)", "b+0x12 (prog)", ...], innermost first,
 *     which Perfetto and chrome://tracing show in the event's details;
 *   - "sf": N on the event, naming the innermost node of a frame tree that the
 *     file's top-level "stackFrames" map defines ({"N":{"name":..,
 *     "category":module,"parent":M}}), Chrome's native form.
 * Node ids are stable for the whole process; each file's "stackFrames" holds
 * exactly the nodes its events reference (and their ancestors).
 *
 * Flush thread only: nothing here is thread-safe. */
#ifndef TP_COLLECTOR_STACKS_H
#define TP_COLLECTOR_STACKS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "collector/record.h"
#include "collector/pystack_decode.h"
#include "format/writer.h"

/* Captures skipped in or around signal handlers (preload/stack.c): the
 * record is written without a stack.
 * Written into each trace's footer as "stack_captures_skipped". */
extern _Atomic uint64_t tp_stacks_skipped;
/* The address of the C library's signal trampoline (glibc's __restore_rt),
 * found once at start; 0 when unknown.  preload/stack.c: an IP equal to it
 * in a captured stack means the capture ran in a signal handler. */
extern _Atomic uintptr_t tp_stacks_sigreturn;

/* A counted array in a record's extras x (max bytes): at offset off, a
 * 64-bit count n, then n 64-bit words.  Returns n and sets *out, or 0 (and
 * leaves *out) when the count does not fit in max.  Inline, as
 * tp_stacks_ips() below: collector/pystack_decode.c reads its frames with them and
 * stacks.c calls pystack.c, so pystack.c never calls back into stacks.c. */
static inline size_t tp_stacks_counted(const char *x, size_t max, size_t off,
				       const uint64_t **out)
{
	if (off + 8 > max)
		return 0;
	uint64_t n;
	memcpy(&n, x + off, 8);
	if (n > (max - off - 8) / 8)
		return 0; /* cannot happen with preload/: not trusted anyway */
	*out = (const uint64_t *)(const void *)(x + off + 8);
	return (size_t)n;
}

/* The IPs a record carries: returns their number (0 when the record has no
 * stack or a malformed one) and points *ips at the first. */
static inline size_t tp_stacks_ips(const struct tp_record *r, const uint64_t **ips)
{
	*ips = NULL;
	if (!(r->flags & TP_RF_STACK) || r->nextra == 0)
		return 0;
	const char *x = (const char *)(r + 1);
	size_t max = (size_t)r->nextra * TP_REC_EXTRA_BYTES;
	size_t off = 0;
	if (r->flags & TP_RF_STRING) {
		const char *nul = memchr(x, '\0', max);
		if (!nul)
			return 0;
		off = ((size_t)(nul - x) + 1 + 7) & ~(size_t)7;
	}
	return tp_stacks_counted(x, max, off, ips);
}

/* Storage for the strings of one event's stack args (flush thread, on the
 * stack). */
struct tp_stack_args {
	const char *native[64];
	const char *py[TP_PYSTACK_ARGS_MAX];
	char py_text[TP_PYSTACK_TEXT];
};

/* Appends to args[*n] (room for 2 more) the record's "stack" (TP_VAL_STRS,
 * native frames, TRACEPROF_WITH_STACK) and "python_stack" (TP_VAL_STRS)
 * args when the record has them; returns the leaf frame id for the event's
 * sf field (0: none), marked as used by `out`.  The frames are looked up
 * once for both. */
uint32_t tp_stacks_args(struct tp_writer *out, const struct tp_record *r,
			struct tp_stack_args *buf, struct tp_arg *args, unsigned *n);

/* Emits with tp_writer_frame() the frames out's events named (and their
 * ancestors), then forgets the file: the flush plugin's frames callback.
 * Files are told apart by their writer. */
void tp_stacks_frames(struct tp_writer *out);

/* Tests: whether frames in the module containing `addr` are skipped as
 * traceprof's own (default: the module of this code when it is a shared
 * library named libtraceprof*; none in a static test binary). */
void tp_stacks_set_self_module(const void *addr);

/* Frees every cache (tests; the library keeps them for its lifetime). */
void tp_stacks_reset(void);

/* Counters for tests and the footer: distinct addresses symbolized, nodes. */
size_t tp_stacks_symbol_count(void);
size_t tp_stacks_node_count(void);

#endif
