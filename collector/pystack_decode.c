/* Python frame names for TRACEPROF_PYTHON_STACK (see collector/pystack_decode.h).
 *
 * A fixed table in static storage: the capture runs on the program's
 * threads, where nothing may allocate.  A code object is added once, the
 * first time one of its frames is seen; preload/pystack.c keeps a reference
 * to it so that its address is never reused by another code object. */
#include "collector/pystack_decode.h"

#include <stdatomic.h>
#include <string.h>

#include "collector/stacks.h"
#include "common/hash.h"

#define PS_SLOTS 65536 /* a power of two; at most PS_SLOTS / 2 used */
#define PS_ARENA (4u << 20) /* "file\0function\0" of every entry */

struct ps_slot {
	const void *code;
	uint32_t off; /* into ps_arena */
};

static struct ps_slot ps_slots[PS_SLOTS];
static char ps_arena[PS_ARENA];
static uint32_t ps_used;  /* bytes of ps_arena */
static uint32_t ps_count; /* slots in use */
/* Relaxed: a counter for the footer; it orders nothing (partner: the relaxed
 * load in tp_pystack_unnamed()). */
static _Atomic uint64_t ps_unnamed;

/* common/hash.h's mix: code objects are 16-byte aligned heap addresses, whose
 * low bits a table of PS_SLOTS must not take as they are. */
static uint32_t ps_hash(const void *code)
{
	return (uint32_t)tp_hash_u64((uint64_t)(uintptr_t)code) & (PS_SLOTS - 1);
}

uint32_t tp_pystack_find(const void *code)
{
	for (uint32_t i = ps_hash(code);; i = (i + 1) & (PS_SLOTS - 1)) {
		if (ps_slots[i].code == code)
			return i;
		if (!ps_slots[i].code)
			return TP_PYSTACK_NONAME;
	}
}

uint32_t tp_pystack_add(const void *code, const char *file, const char *func)
{
	size_t fl = strlen(file), nl = strlen(func);
	/* Half full at most, so that probes stay short and always end. */
	if (ps_count >= PS_SLOTS / 2 || fl + nl + 2 > PS_ARENA - ps_used) {
		atomic_fetch_add_explicit(&ps_unnamed, 1, memory_order_relaxed);
		return TP_PYSTACK_NONAME;
	}
	uint32_t i = ps_hash(code);
	while (ps_slots[i].code)
		i = (i + 1) & (PS_SLOTS - 1);
	memcpy(ps_arena + ps_used, file, fl + 1);
	memcpy(ps_arena + ps_used + fl + 1, func, nl + 1);
	ps_slots[i].off = ps_used;
	ps_slots[i].code = code;
	ps_used += (uint32_t)(fl + nl + 2);
	ps_count++;
	return i;
}

size_t tp_pystack_frames(const struct tp_record *r, const uint64_t **frames)
{
	*frames = NULL;
	if (!(r->flags & TP_RF_PYSTACK))
		return 0;
	const uint64_t *ips;
	size_t nips = tp_stacks_ips(r, &ips);
	if (!ips)
		return 0;
	const char *x = (const char *)(r + 1);
	size_t max = (size_t)r->nextra * TP_REC_EXTRA_BYTES;
	size_t off = (size_t)((const char *)(ips + nips) - x);
	return tp_stacks_counted(x, max, off, frames);
}

int tp_pystack_name_of(uint32_t idx, const char **file, const char **func)
{
	*file = *func = "?";
	if (idx >= PS_SLOTS || !ps_slots[idx].code)
		return -1;
	*file = ps_arena + ps_slots[idx].off;
	*func = *file + strlen(*file) + 1;
	return 0;
}

unsigned tp_pystack_strs(const struct tp_record *r, const char **out, char *text)
{
	const uint64_t *f;
	size_t n = tp_pystack_frames(r, &f);
	size_t used = 0;
	if (n > TP_PYSTACK_ARGS_MAX)
		n = TP_PYSTACK_ARGS_MAX;
	for (size_t i = 0; i < n; i++) {
		uint32_t idx = (uint32_t)(f[i] >> 32), line = (uint32_t)f[i];
		const char *file, *func;
		(void)tp_pystack_name_of(idx, &file, &func);
		char *buf = text + used;
		size_t fl = strnlen(file, 512), nl = strnlen(func, 512);
		char num[16];
		int k = 15;
		num[k] = '\0';
		do {
			num[--k] = (char)('0' + line % 10);
			line /= 10;
		} while (line && k > 0);
		size_t ll = (size_t)(15 - k);
		/* Each string fits: 1040 bytes per frame bound the longest. */
		memcpy(buf, file, fl);
		buf[fl] = ':';
		memcpy(buf + fl + 1, num + k, ll);
		buf[fl + 1 + ll] = ' ';
		memcpy(buf + fl + 2 + ll, func, nl);
		buf[fl + 2 + ll + nl] = '\0';
		used += fl + 3 + ll + nl;
		out[i] = buf;
	}
	return (unsigned)n;
}

uint64_t tp_pystack_unnamed(void)
{
	return atomic_load_explicit(&ps_unnamed, memory_order_relaxed);
}

void tp_pystack_reset(void)
{
	memset(ps_slots, 0, sizeof(ps_slots));
	ps_used = 0;
	ps_count = 0;
	atomic_store_explicit(&ps_unnamed, 0, memory_order_relaxed);
}
