/* Native stack frames' symbols, for collector/stacks.c: each IP symbolised
 * once (dladdr, demangled), with whether it is a frame of traceprof itself
 * or of libunwind (the capture), which stacks leave out.  Flush thread only. */
#ifndef TP_COLLECTOR_STACK_SYMS_H
#define TP_COLLECTOR_STACK_SYMS_H

#include <stddef.h>
#include <stdint.h>

struct tp_stack_sym {
	char *text;	   /* "name (module)" */
	uint32_t name_len; /* the "name" part */
	uint8_t self;	   /* a frame of traceprof: left out */
	uint8_t unwind;	   /* a frame of libunwind: left out at the top only */
};

/* The symbol of ip (innermost: the stack's first frame, whose address is
 * not a return address), cached.  Returns its index or -1 (no memory). */
int64_t tp_stack_syms_get(uint64_t ip, int innermost);
const struct tp_stack_sym *tp_stack_syms_at(uint32_t idx);
size_t tp_stack_syms_count(void);

/* Which module is traceprof's own (addr: an address inside it; NULL: none,
 * as in a static test binary).  Found by dladdr on first use otherwise. */
void tp_stack_syms_set_self(const void *addr);

/* Tests: forgets every symbol. */
void tp_stack_syms_reset(void);

#endif
