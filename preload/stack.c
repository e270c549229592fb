/* Call stacks for TRACEPROF_WITH_STACK: instruction pointers only on the
 * calling thread; symbolization happens on the flush thread. */
#include <errno.h>
#include <libunwind.h>
#include <string.h>

#include "preload/hook.h"

int tp_hook_stack_depth;

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
	size_t room = (maxbytes - off) / 8 - 1;
	int depth = tp_hook_stack_depth < (int)room ? tp_hook_stack_depth : (int)room;
	void **ips = (void **)(p + off + 8);
	/* libunwind may set errno (it probes addresses with syscalls); the hook
	 * must leave the program's errno as it was. */
	int saved = errno;
	int n = unw_backtrace(ips, depth);
	errno = saved;
	if (n < 0)
		n = 0;
	memcpy(p + off, &(uint64_t){ (uint64_t)n }, 8);
	rec->flags |= TP_RF_STACK;
	tp_emit(t, rec, buf, off + 8 + (size_t)n * 8);
}
