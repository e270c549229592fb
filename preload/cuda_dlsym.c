/* The dlsym hook and the resolution of the real CUDA functions.
 *
 * Since CUDA 11.3 the runtime (static or shared) reaches the driver with
 * dlopen("libcuda.so.1") + dlsym(handle, "cuGetProcAddress_v2"), and a program
 * may dlopen libcudart itself: lookups on a handle bypass LD_PRELOAD, so
 * exporting the wrappers is not enough and dlsym itself is hooked.  A lookup
 * of a CUDA name on a handle returns the wrapper of that exact function, once
 * its real address is known.
 *
 * dlsym's answer depends on who calls it: RTLD_NEXT searches the objects
 * after the caller, and RTLD_DEFAULT uses the caller's namespace and scope.
 * Forwarding those through a C call would make traceprof the caller (HAMi-core
 * PR 315; OpenMP's tool loader looped), so the entry point is a few lines of
 * assembly that jump to the real dlsym with the original return address still
 * on the stack.  Only lookups on an explicit handle go through C, where the
 * caller only decides which object a dependency is recorded for (traceprof,
 * which is never unloaded, instead of the caller). */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "preload/cuda_pack.h"
#include "preload/cupti_hook.h"
#include "preload/export.h"

void *_Atomic tp_cuda_reals[TP_CUDA_NFUNCS + 1];

/* The real dlsym, read by the assembly below; written once (any racing
 * writer stores the same value). */
void *_Atomic tp_cuda_real_dlsym;

int tp_cuda_dlsym_hidden(const char *name);
void *tp_cuda_dlsym_handle(void *handle, const char *name);

/* Finds glibc's dlsym without calling the public one (which is us).  glibc
 * 2.34 moved dlsym into libc with a new version; older ones only have
 * the first version of the architecture. */
void *tp_cuda_dlsym_resolve(void)
{
	void *p = atomic_load_explicit(&tp_cuda_real_dlsym, memory_order_relaxed);
	if (p)
		return p;
	p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
#if defined(__x86_64__)
	if (!p)
		p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
#elif defined(__aarch64__)
	if (!p)
		p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
#endif
	if (p)
		atomic_store_explicit(&tp_cuda_real_dlsym, p, memory_order_relaxed);
	return p;
}

static inline tp_dlsym_fn real_dlsym(void)
{
	void *p = atomic_load_explicit(&tp_cuda_real_dlsym, memory_order_relaxed);
	return (tp_dlsym_fn)(p ? p : tp_cuda_dlsym_resolve());
}

static int is_cuda_name(const char *name)
{
	return name && ((name[0] == 'c' && name[1] == 'u') ||
			(name[0] == '_' && !strncmp(name, "__cuda", 6)));
}

void *tp_cuda_set_real(uint32_t id, void *p)
{
	void *expected = NULL;
	/* Relaxed is enough, see tp_cuda_real(); the CAS makes the first real
	 * address seen win, so that a wrapper never changes targets. */
	if (atomic_compare_exchange_strong_explicit(&tp_cuda_reals[id], &expected, p,
						    memory_order_relaxed, memory_order_relaxed))
		return p;
	return expected;
}

void *tp_cuda_resolve(uint32_t id)
{
	if (id >= TP_CUDA_NFUNCS)
		return NULL;
	tp_dlsym_fn dl = real_dlsym();
	if (!dl)
		return NULL;
	const char *name = tp_cuda_fns[id].name;
	/* Called from here, RTLD_NEXT means "after traceprof": never a wrapper. */
	void *p = dl(RTLD_NEXT, name);
	if (!p && tp_cuda_fns[id].lib == TP_CUDA_LIB_DRIVER) {
		/* The runtime dlopens the driver without RTLD_GLOBAL. */
		void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			p = dl(h, name);
			dlclose(h);
		}
	}
	if (!p || p == tp_cuda_wrappers[id])
		return NULL;
	return tp_cuda_set_real(id, p);
}

/* Non-zero when an RTLD_DEFAULT lookup must answer NULL: the name is one of
 * our wrappers but no real function exists, so without traceprof the lookup
 * would have failed (programs probe for the driver this way). */
int tp_cuda_dlsym_hidden(const char *name)
{
	if (!is_cuda_name(name))
		return 0;
	int id = tp_cuda_find(name);
	if (id < 0)
		return tp_cupti_hook_hidden(name);
	return !tp_cuda_real((uint32_t)id);
}

/* A lookup on an explicit handle: the real answer, or the wrapper of the
 * same function when the answer is that function's real address. */
void *tp_cuda_dlsym_handle(void *handle, const char *name)
{
	tp_dlsym_fn dl = real_dlsym();
	if (!dl)
		return NULL;
	void *p = dl(handle, name);
	if (!p || !is_cuda_name(name))
		return p;
	int id = tp_cuda_find(name);
	if (id < 0)
		return tp_cupti_hook_for(name, p);
	if (p == tp_cuda_wrappers[id])
		return p;
	/* A different address than the one already known is a second copy of
	 * the library (say, a bundled libcudart): left unwrapped, since a
	 * wrapper calls one real function. */
	return tp_cuda_set_real((uint32_t)id, p) == p ? tp_cuda_wrappers[id] : p;
}

#if defined(__x86_64__)
/* dlsym(handle, name): rdi = handle, rsi = name.  RTLD_DEFAULT (0) and
 * RTLD_NEXT (-1) jump to the real dlsym with the caller's frame untouched;
 * the calls to C helpers keep rdi/rsi on an aligned stack around them. */
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	".p2align 4\n"
	"dlsym:\n"
	".cfi_startproc\n"
	"	testq %rdi, %rdi\n"
	"	je 1f\n"
	"	cmpq $-1, %rdi\n"
	"	je 2f\n"
	"	jmp tp_cuda_dlsym_handle\n"
	"1:	pushq %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	movq %rsi, %rdi\n"
	"	call tp_cuda_dlsym_hidden\n"
	"	addq $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	testl %eax, %eax\n"
	"	jne 4f\n"
	"2:	movq tp_cuda_real_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	je 3f\n"
	"	jmp *%rax\n"
	"3:	pushq %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	call tp_cuda_dlsym_resolve\n"
	"	addq $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	testq %rax, %rax\n"
	"	je 4f\n"
	"	jmp *%rax\n"
	"4:	xorl %eax, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size dlsym, .-dlsym\n");
#else
/* Other architectures: a C forwarder.  RTLD_NEXT and RTLD_DEFAULT lookups are
 * then resolved relative to traceprof instead of the caller (a known
 * limitation; write the tail jump for the architecture to lift it). */
TP_EXPORT void *dlsym(void *handle, const char *name);
TP_EXPORT void *dlsym(void *handle, const char *name)
{
	if (handle != RTLD_DEFAULT && handle != RTLD_NEXT)
		return tp_cuda_dlsym_handle(handle, name);
	if (handle == RTLD_DEFAULT && tp_cuda_dlsym_hidden(name))
		return NULL;
	tp_dlsym_fn dl = real_dlsym();
	return dl ? dl(handle, name) : NULL;
}
#endif
