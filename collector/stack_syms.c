/* The symbol cache of native stacks: IP -> "function+0xOFF (module)", made
 * once per IP (dladdr is a walk over every loaded object's symbols, far too
 * slow per event) and kept for the process's life; see collector/
 * stack_syms.h.  Flush thread only. */
#include "collector/stack_syms.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "common/demangle.h"
#include "common/hashmap.h"
#include "common/log.h"
#include "common/self_image.h"

/* Demangled template names can run to kilobytes; a viewer shows the start. */
#define ST_MAX_NAME 1024

static struct {
	struct tp_stack_sym *syms;
	size_t nsyms, syms_cap;
	struct tp_map sym_tab; /* IP (never 0) -> index in syms */
	int self_known;
	/* [self_lo, self_hi): traceprof's module (common/self_image.h), or
	 * empty. */
	uintptr_t self_lo, self_hi;
} S;

static const char *st_basename(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;
	return b ? b + 1 : path ? path : "";
}

void tp_stack_syms_set_self(const void *addr)
{
	struct tp_image im;
	S.self_known = 1;
	S.self_lo = S.self_hi = 0;
	if (addr && !tp_image_of(addr, &im)) {
		S.self_lo = im.lo;
		S.self_hi = im.hi;
	}
}

static void st_find_self(void)
{
	if (S.self_known)
		return;
	struct tp_image im;
	S.self_known = 1;
	S.self_lo = S.self_hi = 0;
	/* Inside a static test binary, the "own" module is the program: skip
	 * nothing there. */
	if (!tp_image_of((const void *)tp_stack_syms_get, &im) &&
	    !strncmp(st_basename(im.name), "libtraceprof", 12)) {
		S.self_lo = im.lo;
		S.self_hi = im.hi;
	}
}

/* Formats the frame at ip into a new st_sym.  Returns 0 or -1 (no memory). */
static int st_symbolize(uint64_t ip, int innermost, struct tp_stack_sym *out)
{
	Dl_info info;
	char buf[ST_MAX_NAME + 300];
	memset(out, 0, sizeof(*out));
	/* A return address may be one past the end of its function (a call to a
	 * noreturn function ends it): look up the call instruction's address,
	 * but report the offset of the address itself, as gdb does. */
	uint64_t look = innermost || ip == 0 ? ip : ip - 1;
	int n;
	memset(&info, 0, sizeof(info));
	if (!dladdr((void *)(uintptr_t)look, &info) || !info.dli_fname) {
		n = tp_format(buf, sizeof(buf), "0x%llx", (unsigned long long)ip);
		out->name_len = (uint32_t)n;
		tp_format(buf + n, (int)sizeof(buf) - n, " (?)");
	} else {
		const char *mod = st_basename(info.dli_fname);
		if (!mod[0])
			mod = "?";
		out->self = look >= S.self_lo && look < S.self_hi;
		out->unwind = !strncmp(mod, "libunwind", 9);
		if (info.dli_sname && info.dli_saddr) {
			/* libstdc++ is loaded in any C++ program (PyTorch
			 * included); in a C program mangled names do not occur. */
			const char *name = tp_demangle_into(info.dli_sname, buf, ST_MAX_NAME);
			n = name == buf ? (int)strlen(buf) : tp_format(buf, ST_MAX_NAME, "%s", name);
			n += tp_format(buf + n, (int)sizeof(buf) - n, "+0x%llx",
				       (unsigned long long)(ip - (uintptr_t)info.dli_saddr));
		} else {
			/* No exported symbol (a static function, a stripped
			 * library): the module offset, which addr2line takes. */
			n = tp_format(buf, (int)sizeof(buf), "0x%llx",
				      (unsigned long long)(ip - (uintptr_t)info.dli_fbase));
		}
		out->name_len = (uint32_t)n;
		tp_format(buf + n, (int)sizeof(buf) - n, " (%s)", mod);
	}
	out->text = strdup(buf);
	return out->text ? 0 : -1;
}

int64_t tp_stack_syms_get(uint64_t ip, int innermost)
{
	st_find_self();
	const struct tp_map_slot *s = tp_map_get(&S.sym_tab, ip);
	if (s)
		return (int64_t)s->val;
	if (S.nsyms == S.syms_cap) {
		size_t cap = S.syms_cap ? S.syms_cap * 2 : 256;
		struct tp_stack_sym *syms = realloc(S.syms, cap * sizeof(*syms));
		if (!syms)
			return -1;
		S.syms = syms;
		S.syms_cap = cap;
	}
	if (st_symbolize(ip, innermost, &S.syms[S.nsyms]) < 0)
		return -1;
	if (tp_map_put(&S.sym_tab, ip, S.nsyms, 0) < 0) {
		free(S.syms[S.nsyms].text);
		return -1;
	}
	return (int64_t)S.nsyms++;
}

const struct tp_stack_sym *tp_stack_syms_at(uint32_t idx)
{
	return &S.syms[idx];
}

size_t tp_stack_syms_count(void)
{
	return S.nsyms;
}

void tp_stack_syms_reset(void)
{
	for (size_t i = 0; i < S.nsyms; i++)
		free(S.syms[i].text);
	free(S.syms);
	tp_map_free(&S.sym_tab);
	memset(&S, 0, sizeof(S));
}
