/* dlopen's entry point on x86-64 (the C side: preload/resolve/dl_open.c, whose
 * #else branch is the C forwarder other architectures use).
 *
 * It implements:
 *
 *     void *dlopen(const char *file, int mode);
 *
 * What dlopen finds depends on its caller (the caller's RUNPATH, $ORIGIN,
 * its namespace), which glibc reads from the return address.  So the entry
 * point asks the C plan where to go, then jumps there with the caller's
 * frame exactly as it came:
 *
 *     void *tp_dl_open_plan(const char *file, int mode, const void *caller);
 *
 * returns the function to jump to (the real dlopen, or a C path that opens
 * in traceprof's place), or NULL, which becomes dlopen's NULL.
 *
 * The ABI it relies on (System V AMD64):
 * - the arguments arrive in %rdi (file) and %esi (mode); the caller's
 *   return address is at 0(%rsp) at entry, so at 24(%rsp) after the two
 *   pushes and the 8-byte pad, and goes to the plan in %rdx;
 * - the pushes and the pad also make %rsp 16-byte aligned for the call;
 *   %rdi and %rsi are caller-saved, so they are restored from the stack
 *   before the jump, and the target sees the original arguments;
 * - tp_dl_open_plan is a hidden symbol of this library: a direct call.
 * The CFI lines keep unwinders right while the arguments are pushed. */
#if defined(__x86_64__)
	.text
	.globl	dlopen
	.type	dlopen, @function
	.p2align 4
dlopen:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	movq	24(%rsp), %rdx
	call	tp_dl_open_plan
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	testq	%rax, %rax
	je	1f
	jmp	*%rax
1:	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size	dlopen, .-dlopen
#endif

/* No executable stack for this object (the linker would otherwise ask for
 * one, for the whole library). */
	.section .note.GNU-stack,"",@progbits
