/* dlsym's entry point on x86-64 (the C side: preload/resolve/cuda_dlsym.c, whose
 * #else branch is the C forwarder other architectures use).
 *
 * It implements:
 *
 *     void *dlsym(void *handle, const char *name);
 *
 * dlsym's answer depends on who calls it: RTLD_NEXT and RTLD_DEFAULT search
 * relative to the caller's object, which glibc finds from the return
 * address.  So those two handles reach the real dlsym by a tail jump, with
 * the caller's return address still on top of the stack, never by a call.
 *
 * The ABI it relies on (System V AMD64):
 * - the arguments arrive in %rdi (handle) and %rsi (name), the result goes
 *   back in %rax; RTLD_DEFAULT is 0 and RTLD_NEXT is -1 (glibc's dlfcn.h);
 * - at entry %rsp is 8 below a 16-byte boundary (the return address): the
 *   two pushes plus 8 bytes make it 16-aligned again for the C calls;
 * - %rdi and %rsi are caller-saved, so they are pushed around the C calls
 *   and restored before the jump; %rax holds the C helpers' results:
 *       int tp_cuda_dlsym_hidden(const char *name, const void *caller);
 *       void *tp_cuda_dlsym_resolve(void);
 *       void *tp_cuda_dlsym_handle(void *handle, const char *name);
 *   and tp_cuda_real_dlsym (void *_Atomic, written once) is read with a
 *   plain load, which is what a relaxed atomic load of a pointer is here;
 * - all of them are hidden symbols of this library, so the references
 *   are PC-relative and need no PLT or GOT.
 * The CFI lines keep unwinders (libunwind, gdb, the sanitizers) right while
 * the stack holds the pushed arguments. */
#if defined(__x86_64__)
	.text
	.globl	dlsym
	.type	dlsym, @function
	.p2align 4
dlsym:
	.cfi_startproc
	testq	%rdi, %rdi
	je	1f
	cmpq	$-1, %rdi
	je	1f
	/* An explicit handle: C decides (the caller does not matter). */
	jmp	tp_cuda_dlsym_handle
	/* RTLD_DEFAULT or RTLD_NEXT: is the name hidden from this caller? */
1:	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	movq	%rsi, %rdi
	movq	24(%rsp), %rsi
	call	tp_cuda_dlsym_hidden
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	testl	%eax, %eax
	jne	4f
	/* Not hidden: tail-jump to the real dlsym, resolving it the first time. */
2:	movq	tp_cuda_real_dlsym(%rip), %rax
	testq	%rax, %rax
	je	3f
	jmp	*%rax
3:	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	call	tp_cuda_dlsym_resolve
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	testq	%rax, %rax
	je	4f
	jmp	*%rax
	/* Hidden, or no real dlsym: NULL. */
4:	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size	dlsym, .-dlsym
#endif

/* No executable stack for this object (the linker would otherwise ask for
 * one, for the whole library). */
	.section .note.GNU-stack,"",@progbits
