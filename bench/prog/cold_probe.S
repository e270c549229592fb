/* Calibration probes for the cold-cache launch benchmark (`make bench` row
 * 11, issue 22): small pieces of code whose footprint is known exactly,
 * timed by build/bench/cold_launch -c after the same driver-like gap as the
 * launch (-e 2), so that what one cold code line, one cold taken branch, one
 * cold indirect call and one cold data line cost on this machine is measured
 * rather than inferred (bench/RESULTS.md, "what a cold line and a cold branch
 * cost here").  There are no hardware counters in the VMs we run on.
 *
 * Written in assembly so that the compiler can neither fold nor lay out the
 * code: every probe starts on its own page (the same iTLB state for all), and
 * N is the number of extra resources it touches beyond the N = 0 probe of its
 * kind, which is a bare `ret` at a page start:
 *   lines_N   N 64-byte lines of straight-line code (long nops), then ret:
 *             no taken branch; the next line is the next line in memory
 *   jnext_N   the same N+1 lines, each ending in a taken `jmp` to the next
 *             line: lines_N plus N taken direct branches
 *   jumps_N   N taken `jmp`s, each to a line 256 bytes on (distinct lines,
 *             not adjacent: no next-line prefetch), on the same page
 *   jpages_N  N taken `jmp`s, each to a line on the next page (at offset
 *             64 * i, so in distinct L1i sets): jumps_N plus N code pages
 *   calls_N   N direct calls from straight-line code, each to a `ret` on its
 *             own line 256 bytes apart (a taken call and a return each)
 *   ind_N     the same with `lea target(%rip), %rax; call *%rax`: an
 *             indirect call whose target never changes (warm, predicted
 *             perfectly), so calls_N plus what a cold indirect call adds
 *   indd_N    N indirect calls, each through a pointer loaded from its own
 *             data line (one page): the wrappers' `jmp *%r11` after a load
 *             from tp_cuda_reals
 *   data_N    N independent loads from N data lines on N distinct pages
 *             (cold_probe_data, lines 4,160 bytes apart), summed: they can
 *             overlap
 *   tsc_N     data_8 with N rdtsc between the loads (N = 0, 1, 3): what
 *             a rdtsc between cold loads adds
 *   chase_N   N dependent loads over the same lines (a pointer chase that
 *             cold_launch.c links): one after the other
 *   chasep_N  N dependent loads over N lines of one page (cold_probe_page,
 *             256 bytes apart, scrambled order): chase_N without the TLB
 *             miss per line (the start pointer's line is one more, in
 *             chasep_0 too)
 * Check the layout with `objdump -d build/bench/cold_launch`. */

	.text

/* One probe function, page-aligned, with a local size for objdump. */
.macro PROBE_BEGIN name
	.balign 4096
	.globl \name
	.hidden \name
	.type \name, @function
\name:
.endm

.macro PROBE_END name
	.size \name, . - \name
.endm

.macro LINES n
PROBE_BEGIN cold_probe_lines_\n
	.rept \n
	.nops 64
	.endr
	ret
PROBE_END cold_probe_lines_\n
.endm

/* Taken jumps: from a line start, `jmp` to the start of the next stride
 * boundary (stride 64: the adjacent line; 256: four lines on).  With
 * page = 1 the target is on the next page, at offset 64 * i. */
.macro JUMPS name, n, stride, page
PROBE_BEGIN \name\()_\n
	.irp i, 1, 2, 3, 4, 5, 6, 7, 8
	.if \i <= \n
	jmp \name\()_\n\()_t\i
	.if \page
	.balign 4096
	.skip 64 * \i
	.else
	.balign \stride
	.endif
\name\()_\n\()_t\i:
	.endif
	.endr
	ret
PROBE_END \name\()_\n
.endm

.macro CALLS name, n, ind
PROBE_BEGIN \name\()_\n
	.irp i, 1, 2, 3, 4, 5, 6, 7, 8
	.if \i <= \n
	.if \ind
	lea \name\()_\n\()_t\i(%rip), %rax
	call *%rax
	.else
	call \name\()_\n\()_t\i
	.endif
	.endif
	.endr
	ret
	.irp i, 1, 2, 3, 4, 5, 6, 7, 8
	.if \i <= \n
	.balign 256
\name\()_\n\()_t\i:
	ret
	.endif
	.endr
PROBE_END \name\()_\n
.endm

/* Indirect calls through pointers the gap evicted: call i loads its target
 * from line i of cold_probe_ptrs (one page, 256 bytes apart; the targets
 * are the ind_N probe's), as a wrapper's `jmp *%r11` does with
 * tp_cuda_reals.  Unless the target is predicted, the call waits for the
 * load, and the next load is fetched only after it.  The targets lie on a
 * page of their own (INDD_TARGETS), one page more than ind_N touches. */
.macro INDD n
PROBE_BEGIN cold_probe_indd_\n
	.irp i, 1, 2, 3, 4, 5, 6, 7, 8
	.if \i <= \n
	mov cold_probe_ptrs + 256 * \i(%rip), %rax
	call *%rax
	.endif
	.endr
	ret
PROBE_END cold_probe_indd_\n
.endm

/* indd_N's targets, shared by indd_4 and indd_8 (one page). */
.macro INDD_TARGETS
	.balign 4096
	.irp i, 1, 2, 3, 4, 5, 6, 7, 8
	.balign 256
cold_probe_indd_t\i:
	ret
	.endr
.endm

/* Data line i (1..16) is at cold_probe_data + 4160 * i: its own page, and a
 * distinct L1d set. */
.macro DATA n
PROBE_BEGIN cold_probe_data_\n
	xor %eax, %eax
	.irp i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16
	.if \i <= \n
	add cold_probe_data + 4160 * \i(%rip), %rax
	.endif
	.endr
	ret
PROBE_END cold_probe_data_\n
.endm

/* 8 independent loads from data lines 1..8 (data_8) with n rdtsc (n = 0,
 * 1, 3) between them, evenly: whether a rdtsc waits for the cold loads
 * before it, as the two in a recorded call's tp_short_ function would
 * make its misses wait for each other. */
.macro TSC n
PROBE_BEGIN cold_probe_tsc_\n
	xor %ecx, %ecx
	.irp i, 1, 2, 3, 4, 5, 6, 7, 8
	add cold_probe_data + 4160 * \i(%rip), %rcx
	.if ((\i * (\n + 1)) % 8 == 0) && (\i < 8)
	rdtsc
	.endif
	.endr
	mov %rcx, %rax
	ret
PROBE_END cold_probe_tsc_\n
.endm

/* The first word of data line i holds the address of line i + 1
 * (cold_launch.c sets it up), so each load waits for the one before. */
.macro CHASE n
PROBE_BEGIN cold_probe_chase_\n
	lea cold_probe_data + 4160(%rip), %rax
	.rept \n
	mov (%rax), %rax
	.endr
	ret
PROBE_END cold_probe_chase_\n
.endm

/* The same over 16 lines of one page, cold_probe_page, 256 bytes apart, in
 * a scrambled order (cold_launch.c): one page, so what a cold data line
 * costs without a TLB miss per line. */
.macro CHASEP n
PROBE_BEGIN cold_probe_chasep_\n
	mov cold_probe_page_start(%rip), %rax
	.rept \n
	mov (%rax), %rax
	.endr
	ret
PROBE_END cold_probe_chasep_\n
.endm

	LINES 0
	LINES 4
	LINES 8
	LINES 16
	JUMPS cold_probe_jnext, 0, 64, 0
	JUMPS cold_probe_jnext, 4, 64, 0
	JUMPS cold_probe_jnext, 8, 64, 0
	JUMPS cold_probe_jumps, 0, 256, 0
	JUMPS cold_probe_jumps, 4, 256, 0
	JUMPS cold_probe_jumps, 8, 256, 0
	JUMPS cold_probe_jpages, 0, 0, 1
	JUMPS cold_probe_jpages, 4, 0, 1
	JUMPS cold_probe_jpages, 8, 0, 1
	CALLS cold_probe_calls, 0, 0
	CALLS cold_probe_calls, 4, 0
	CALLS cold_probe_calls, 8, 0
	CALLS cold_probe_ind, 0, 1
	CALLS cold_probe_ind, 4, 1
	CALLS cold_probe_ind, 8, 1
	INDD 0
	INDD 4
	INDD 8
	INDD_TARGETS
	DATA 0
	DATA 4
	DATA 8
	DATA 16
	TSC 0
	TSC 1
	TSC 3
	CHASE 0
	CHASE 4
	CHASE 8
	CHASE 16
	CHASEP 0
	CHASEP 4
	CHASEP 8
	CHASEP 16
	/* The next page starts no probe: the last one's lines are not followed
	 * by code of ours that a prefetch could pull in with them. */
	.balign 4096

	.bss
	.balign 4096
	.globl cold_probe_data
	.hidden cold_probe_data
	.type cold_probe_data, @object
cold_probe_data:
	.skip 4160 * 18
	.size cold_probe_data, . - cold_probe_data
	.balign 4096
	.globl cold_probe_page
	.hidden cold_probe_page
	.type cold_probe_page, @object
cold_probe_page:
	.skip 4096
	.size cold_probe_page, . - cold_probe_page

	.data
	/* indd_N's call targets (line i: call i), one page. */
	.balign 4096
	.type cold_probe_ptrs, @object
cold_probe_ptrs:
	.quad 0
	.irp i, 1, 2, 3, 4, 5, 6, 7, 8
	.balign 256
	.quad cold_probe_indd_t\i
	.endr
	.size cold_probe_ptrs, . - cold_probe_ptrs
	.balign 4096
	/* The first line of cold_probe_page's chase (cold_launch.c sets it). */
	.globl cold_probe_page_start
	.hidden cold_probe_page_start
	.type cold_probe_page_start, @object
cold_probe_page_start:
	.quad 0
	.size cold_probe_page_start, 8

	.section .note.GNU-stack, "", @progbits
