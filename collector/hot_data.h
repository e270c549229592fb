/* The hot globals' one cache line, a leaf (nothing of the library
 * included): the files that define one of them (collector/control.c,
 * collector/thread.c, preload/steps.c, preload/cuda_calls.c) include it, so
 * that defining a hot global ties no module to the hot path's header
 * (collector/hot.h): collector/thread.c needs only this, where it used to
 * include collector/control.h, which made control, emit and thread one
 * circle of includes. */
#ifndef TP_COLLECTOR_HOT_DATA_H
#define TP_COLLECTOR_HOT_DATA_H

#include <stdint.h>

/* The globals every wrapper reads (tp_state, tp_steps_call_id, and the CUDA
 * wrappers' tp_cuda_nest_max and tp_cuda_quiet): one section of their own,
 * which the linker lays out as one block, so that a call that finds them
 * evicted from the caches (the real launch path, bench/RESULTS.md) reloads
 * one or two cache lines instead of four in as many places of .data and
 * .bss.  All are written rarely (step changes, configuration): no false
 * sharing with the hot path. */
#define TP_HOT_DATA __attribute__((section("tp_hot")))
/* For an array read at a few indexes (tp_cuda_quiet): a second section that
 * the linker places right after tp_hot, as it meets it later in link order,
 * so that the array's first bytes share tp_hot's line instead of the
 * scalars of later object files coming after the array. */
#define TP_HOT_DATA_TAIL __attribute__((section("tp_hot_tail")))

/* The offset from the thread pointer of an initial-exec TLS variable of this
 * library: the same in every thread (static TLS), and what the variable's
 * GOT entry holds.  The x86-64 assembly wrappers and tp_short_ functions
 * read their TLS through copies of these offsets kept in tp_hot instead of
 * through the GOT: on the real launch path, where every line is cold, that
 * is one data line fewer (the chain to struct tp_thread starts at the hot
 * line, which the wrappers read anyway; bench/RESULTS.md row 11).  Set by the
 * constructor before tp_control_init(): nothing takes those paths before
 * tp_state records. */
static inline intptr_t tp_hot_tpoff(const void *tls_var)
{
#if defined(__x86_64__)
	char *tp;
	/* %fs:0 holds the thread pointer itself (the TCB's self pointer). */
	__asm__("movq %%fs:0, %0" : "=r"(tp));
	return (intptr_t)((const char *)tls_var - tp);
#else
	(void)tls_var;
	return 0;
#endif
}

#endif
