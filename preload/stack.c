/* Call stacks for TRACEPROF_WITH_STACK: instruction pointers only on the
 * calling thread; symbolization happens on the flush thread.
 *
 * Signal handlers that record (issue 17, item 14).  A 20 us interval timer
 * whose handler records markers never let the program run again: each
 * capture in the handler took longer than the interval, so the next signal
 * was pending when the handler returned.  A handler interrupts the program
 * at an arbitrary instruction (inside libunwind itself, or in the dynamic
 * linker's lazy binding), which libunwind's per-address trace cache cannot
 * trace through; unw_backtrace() then falls back to its slow unwind, which
 * calls sigprocmask and dl_iterate_phdr for each frame.  So:
 *   - a capture that starts while the same thread is already capturing (a
 *     handler interrupted it) is skipped: libunwind's per-thread cache is
 *     not reentrant either;
 *   - a capture whose stack shows it ran in a signal handler (a frame of
 *     the C library's sigreturn trampoline, whose address collector/stacks.c
 *     finds at start) pauses captures on that thread for
 *     four times as long as it took, so that captures in handlers take at
 *     most a fifth of the thread's time, whatever they cost.
 * A skipped capture keeps its record, without a stack, and is counted in
 * tp_stacks_skipped (the footer's "stack_captures_skipped").  Programs that
 * record nothing from signal handlers are not affected. */
#include <errno.h>
#include <libunwind.h>
#include <string.h>

#include "collector/pystack_decode.h"
#include "collector/stacks.h"
#include "collector/hot.h"
#include "preload/pystack_api.h"

int tp_hook_stack_depth;
int tp_hook_native_stack;

static void stk_skip(struct tp_thread *t, struct tp_record *rec, const void *str, size_t off)
{
	/* Relaxed: a counter the flush thread reads for the footer; it orders
	 * nothing (partner: the relaxed load in collector/stacks.c). */
	atomic_fetch_add_explicit(&tp_stacks_skipped, 1, memory_order_relaxed);
	tp_emit(t, rec, off ? str : NULL, off);
}

void tp_hook_emit_with_stack(struct tp_thread *t, struct tp_record *rec, const char *str,
			     size_t len)
{
	/* extras: [string NUL][pad to 8][u64 depth][ips...] */
	uint64_t buf[TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES / 8];
	char *p = (char *)buf;
	size_t off = 0;
	size_t maxbytes = sizeof(buf);
	if (str) {
		size_t room = maxbytes - 8 - 8 * 4; /* leave room for a few frames */
		if (len > room - 1) {
			len = room - 1;
			rec->flags |= TP_RF_TRUNC;
		}
		memcpy(p, str, len);
		p[len] = '\0';
		off = (len + 1 + 7) & ~(size_t)7;
		rec->flags |= TP_RF_STRING;
	}
	if (__builtin_expect(t->capturing, 0)) {
		stk_skip(t, rec, buf, off);
		return;
	}
	uint64_t start = tp_clock_now();
	if (__builtin_expect(start < t->capture_pause_until, 0)) {
		stk_skip(t, rec, buf, off);
		return;
	}
	size_t room = (maxbytes - off) / 8 - 1;
	int depth = tp_hook_stack_depth < (int)room ? tp_hook_stack_depth : (int)room;
	if (!tp_hook_native_stack || rec->kind == TP_REC_OP)
		depth = 0; /* TRACEPROF_PYTHON_STACK alone; ops get Python frames only */
	void **ips = (void **)(p + off + 8);
	int n = 0;
	if (depth) {
		t->capturing = 1;
		/* A compiler barrier is enough: only a signal handler on this same
		 * thread reads `capturing` (partner: the fence after the capture). */
		atomic_signal_fence(memory_order_seq_cst);
		/* libunwind may set errno (it probes addresses with syscalls); the hook
		 * must leave the program's errno as it was. */
		int saved = errno;
		n = unw_backtrace(ips, depth);
		errno = saved;
		if (n < 0)
			n = 0;
		/* Relaxed: set once before recording starts (collector/stacks.c). */
		uintptr_t tramp = atomic_load_explicit(&tp_stacks_sigreturn, memory_order_relaxed);
		for (int i = 0; tramp && i < n; i++) {
			/* The return address itself, or one byte before it where an
			 * unwinder reports call sites. */
			if ((uintptr_t)ips[i] - tramp + 1 <= 1) {
				uint64_t end = tp_clock_now();
				t->capture_pause_until = end + 4 * (end - start);
				break;
			}
		}
		/* Partner of the fence before the capture: the capture and the pause
		 * are in place before a handler can see the flag clear. */
		atomic_signal_fence(memory_order_seq_cst);
		t->capturing = 0;
	}
	memcpy(p + off, &(uint64_t){ (uint64_t)n }, 8);
	rec->flags |= TP_RF_STACK;
	size_t used = off + 8 + (size_t)n * 8;
	/* Python frames after the native ones, on CUDA calls and PyTorch's ops
	 * (preload/torch_ops.c) only: a marker or counter may be recorded from
	 * a signal handler, where the interpreter's frames may be half changed;
	 * an op's callback runs where PyTorch runs the op, never in one. */
	if (tp_pystack_on && (rec->kind == TP_REC_API || rec->kind == TP_REC_OP) &&
	    maxbytes - used >= 16) {
		size_t room_py = (maxbytes - used) / 8 - 1;
		size_t m = tp_pystack_capture((uint64_t *)(void *)(p + used + 8),
					      room_py < TP_PYSTACK_MAX ? room_py : TP_PYSTACK_MAX);
		if (m) {
			memcpy(p + used, &(uint64_t){ (uint64_t)m }, 8);
			used += 8 + m * 8;
			rec->flags |= TP_RF_PYSTACK;
		}
	}
	tp_emit(t, rec, buf, used);
}
