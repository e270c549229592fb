"""The C text of the wrappers: one exported wrapper per function
(gen_wrapper(): the portable C form and, on x86-64, the assembly tail-jump
form, asm_wrapper()), its table row's flags (fn_flags()) and the generated
file's opening (HEADER_C).  Part of scripts/gen-cuda-wrappers."""
import re

from .headers import base_name, ret_kind
from .specs import (AFTER, BEFORE, CORRELATE, DRIVER, FLAGS_ASYNC, FLAGS_CORR, FLAGS_PLUMBING,
                    FLAGS_PTDS, FLAGS_PTSZ, LIVE_ALWAYS, PACK_BEFORE, PLUMBING, RUNTIME, SPECS)


def spec_for(fn):
    b = base_name(fn.name)
    if fn.name.startswith("__cuda"):
        b = re.sub(r"_(ptsz|ptds)$", "", fn.name)
    spec = SPECS.get(b)
    if not spec:
        return "NONE", None
    cls, slots = spec
    if slots is None:
        # Same layout as the plain launch of its library.
        slots = SPECS["cudaLaunchKernel" if cls == "LAUNCH_RT" else "cuLaunchKernel"][1]
    return cls, slots


def fn_flags(fn, cls):
    f = FLAGS_CORR if cls in CORRELATE else 0
    b = base_name(fn.name)
    if b.endswith("Async") or fn.name.endswith("_ptsz"):
        f |= FLAGS_ASYNC
    if fn.name.endswith("_ptsz"):
        f |= FLAGS_PTSZ
    if fn.name.endswith("_ptds"):
        f |= FLAGS_PTDS
    if is_plumbing(fn):
        f |= FLAGS_PLUMBING
    return f


def is_plumbing(fn):
    return re.sub(r"_(ptsz|ptds)$", "", fn.name) in PLUMBING


def subst(expr, fn):
    names = [n for _, n in fn.params]
    try:
        return expr.format(*names)
    except IndexError:
        return None


def asm_wrapper(name, fid, quiet_test=None):
    """The exported wrapper of the tail-jump shape, in x86-64 assembly: the
    C version's three tests and two jumps, without the argument copies and
    spills that GCC emits around by-value struct arguments (dim3).  It reads
    only memory and %r11 (free at a call boundary, as in a PLT stub), so it
    passes every argument, the stack and %al (varargs count) through as
    they are, whatever the prototype.  Same tests as the C version below:
    real known, schedule not recording, not the call:FUNCTION step call.
    While recording, tp_state's low byte equal to TP_STATE_RECORDING alone
    (no TP_STATE_FULL) and the thread's tp_self set up (neither NULL before
    its first event nor TP_THREAD_GONE) send the call to tp_short_ (the
    two-rdtsc path, which tests nothing), anything else to tp_rec_.  %r10 is
    free at a call boundary too (the static chain, unused by C).
    push/popsection: the compiler does not expect a top-level asm to leave
    it in another section than the one it was in."""
    return "\n".join([
        "__asm__(\".pushsection .text.tp.%s,\\\"ax\\\",@progbits\\n\"" % name,
        "\t\".globl %s\\n\"" % name,
        "\t\".type %s, @function\\n\"" % name,
        "\t\".p2align 6\\n\"",
        "\t\"%s:\\n\"" % name,
        "\t\".cfi_startproc\\n\"",
        "\tTP_ASM_ENDBR",
        "\t\"movq tp_cuda_reals+%d(%%rip), %%r11\\n\"" % (8 * fid),
        "\t\"testq %r11, %r11\\n\"",
        "\t\"jz tp_rec_%s\\n\"" % name,
        "\t\"cmpl $%d, tp_steps_call_id(%%rip)\\n\"" % fid,
        "\t\"je tp_rec_%s\\n\"" % name,
        "\t\"testb $1, tp_state(%rip)\\n\"",
        "\t\"jnz 1f\\n\"",
        "\t\"jmp *%r11\\n\"",
        "\t\"1: cmpb $1, tp_state(%rip)\\n\"",
        "\t\"jne tp_rec_%s\\n\"" % name,
        "\t\"movq tp_self_tpoff(%rip), %r10\\n\"",
        "\t\"cmpq $1, %fs:(%r10)\\n\"",
        "\t\"jbe tp_rec_%s\\n\"" % name,
    ] + (quiet_test or []) + [
        "\t\"jmp tp_short_%s\\n\"" % name,
    ] + (["\t\"2: jmp *%r11\\n\""] if quiet_test else []) + [
        "\t\".cfi_endproc\\n\"",
        "\t\".size %s, .-%s\\n\"" % (name, name),
        "\t\".popsection\\n\");",
    ])


def quiet_asm(fn, fid):
    """The assembly wrapper's test for a recording call that the trace does
    not hold (TRACEPROF_CUDA_CALLS=outer): nvcc's plumbing, and a driver call
    made inside a recorded runtime call (tp_cuda_in_runtime above
    tp_cuda_nest_max).  It jumps to 2:, the real function, unrecorded."""
    if is_plumbing(fn):
        return ["\t\"cmpb $0, tp_cuda_quiet+%d(%%rip)\\n\"" % fid, "\t\"jne 2f\\n\""]
    if fn.lib == DRIVER:
        return ["\t\"movq tp_cuda_in_runtime_tpoff(%rip), %r10\\n\"",
                "\t\"movl %fs:(%r10), %r10d\\n\"",
                "\t\"cmpl tp_cuda_nest_max(%rip), %r10d\\n\"",
                "\t\"ja 2f\\n\""]
    return None


def short_fn(fn, fid, cls, params, args, retexpr, slot_exprs):
    """The recording function the assembly wrapper jumps to when the
    schedule records and nothing asks for the full path: two rdtsc reads
    and one ring record (tp_span_begin_short() in collector/hot.h), without
    tp_rec_'s tests (the wrapper made them).  For the classes in PACK_BEFORE
    the args are packed before the call, so that fewer values live across
    it."""
    rk = ret_kind(fn.ret)
    L = ["TP_REC_FN %s tp_short_%s(%s);" % (fn.ret, fn.name, params),
         "TP_SHORT_FN(%s) %s tp_short_%s(%s)" % (fn.name, fn.ret, fn.name, params),
         "{",
         "\ttypedef %s (*fn_t)(%s);" % (fn.ret, params),
         "\tstruct tp_span sp;",
         "\tfn_t real = (fn_t)tp_cuda_real_known(%d);" % fid]
    if cls in PACK_BEFORE:
        for i, e in enumerate(slot_exprs):
            L.append("\tuint64_t tp_a%d = %s;" % (i, e))
        slot_exprs = ["tp_a%d" % i for i in range(4)]
    L.append("\ttp_span_begin_short(&sp);")
    # Where the thread is now, for the live file (collector/live_pub.h):
    # two stores here, one after the call.
    L.append("\ttp_live_call_enter(&sp.t->live, %d, sp.start);" % fid)
    # A runtime call being recorded: the driver calls it makes are not
    # (TRACEPROF_CUDA_CALLS=outer, quiet_asm()).
    if fn.lib == RUNTIME:
        L.append("\ttp_cuda_in_runtime_add_hot(1);")
    L.append("\treal(%s);" % args if rk == "void" else "\t%s ret = real(%s);" % (fn.ret, args))
    L.append("\tuint64_t tp_end = tp_clock_tsc();")
    L.append("\ttp_live_call_leave(&sp.t->live);")
    if fn.lib == RUNTIME:
        L.append("\ttp_cuda_in_runtime_add_hot(-1);")
    L.append("\ttp_span_end_api(&sp, TP_SPAN_SHORT, tp_end, %d, %s, %s);"
             % (fid, retexpr, ", ".join(slot_exprs)))
    if rk != "void":
        L.append("\treturn ret;")
    L.append("}")
    return "\n".join(L)


def bfn_of(fn):
    return base_name(fn.name)


def key_of(fn, bfn):
    """The name AFTER (work after the real call) is keyed by."""
    if fn.name in AFTER:
        return fn.name
    if fn.name.startswith("__cuda"):
        return re.sub(r"_(ptsz|ptds)$", "", fn.name)
    return bfn


def gen_wrapper(fn, fid):
    cls, slots = spec_for(fn)
    params = ", ".join(p for p, _ in fn.params) or "void"
    args = ", ".join(n for _, n in fn.params)
    rk = ret_kind(fn.ret)
    slot_exprs = ["0", "0", "0", "0"]
    if slots:
        ex = [subst(s, fn) for s in slots]
        if None in ex:
            cls = "NONE"  # the prototype does not match the spec: record no args
        else:
            slot_exprs = ex
    # The tail-jump shape (see below): nothing has to run after the real call
    # while not recording.
    live_always = bfn_of(fn) in LIVE_ALWAYS
    split = (key_of(fn, bfn_of(fn)) not in AFTER and cls != "PROCADDR" and fn.params and "..." not in params
             and not live_always)
    L = []
    L.append("#undef %s" % fn.name)
    L.append("TP_EXPORT %s %s(%s);" % (fn.ret, fn.name, params))
    L.append("TP_EXPORT %s %s(%s)" % (fn.ret, fn.name, params))
    L.append("{")
    L.append("\ttypedef %s (*fn_t)(%s);" % (fn.ret, params))
    # The real function is the one the caller's own scope reaches (a runtime
    # in a library's local scope, two runtimes: preload/resolve/cuda_scope.c).
    L.append("\tfn_t real = (fn_t)tp_cuda_real_at(%d, %s);"
             % (fid, "TP_REC_CALLER" if split else "__builtin_return_address(0)"))
    if rk == "void":
        L.append("\tif (__builtin_expect(!real, 0))\n\t\treturn;")
    elif rk == "ptr":
        L.append("\tif (__builtin_expect(!real, 0))\n\t\treturn 0;")
    elif rk == "struct":
        L.append("\tif (__builtin_expect(!real, 0)) {\n\t\t%s zero;\n\t\tmemset(&zero, 0, sizeof(zero));"
                 "\n\t\treturn zero;\n\t}" % fn.ret)
    else:
        L.append("\tif (__builtin_expect(!real, 0))\n\t\treturn (%s)TP_CUDA_NO_REAL;" % fn.ret)
    # TRACEPROF_STEP=call:FUNCTION: the call starts the new step, so it is
    # counted before its own span opens (one compare when unused).
    L.append("\ttp_steps_on_api(%d);" % fid)
    L.append("\tstruct tp_span sp;")
    L.append("\tint on = tp_span_begin(&sp);")
    # What the trace holds (TRACEPROF_CUDA_CALLS): see quiet_asm().
    if is_plumbing(fn):
        L.append("\tif (on && tp_cuda_quiet[%d])\n\t\ton = TP_SPAN_OFF;" % fid)
    elif fn.lib == DRIVER:
        L.append("\tif (on && tp_cuda_in_runtime > tp_cuda_nest_max)\n\t\ton = TP_SPAN_OFF;")
    # Where the thread is now (collector/live_pub.h), once `on` is final.
    if live_always:
        L.append("\tstruct tp_thread *tp_lt = on ? sp.t : tp_live_self();")
        L.append("\tif (tp_lt)\n\t\ttp_live_call_enter(&tp_lt->live, %d, on ? sp.start : tp_clock_now());" % fid)
    else:
        L.append("\tif (on)\n\t\ttp_live_call_enter(&sp.t->live, %d, sp.start);" % fid)
    bfn = base_name(fn.name)
    # Launches, copies, sets, synchronizations and graph launches push an
    # external correlation id around the real call so that CUPTI links the
    # GPU activity to this event (one relaxed load when CUPTI is off).
    correlate = cls in CORRELATE
    if correlate:
        L.append("\tint tp_pushed = on == TP_SPAN_FULL ? tp_cupti_push_span(&sp) : 0;")
    if fn.lib == RUNTIME:
        L.append("\tif (on)\n\t\ttp_cuda_in_runtime++;")
    if key_of(fn, bfn) in BEFORE:
        L.append("\t" + subst(BEFORE[key_of(fn, bfn)], fn))
    if rk == "void":
        L.append("\treal(%s);" % args)
        retexpr = "0"
    else:
        L.append("\t%s ret = real(%s);" % (fn.ret, args))
        retexpr = {"ptr": "0", "struct": "0"}.get(rk, "(int32_t)ret")
    if fn.lib == RUNTIME:
        L.append("\tif (on)\n\t\ttp_cuda_in_runtime--;")
    # The end time right after the call, so that the event's duration holds
    # as little of the wrapper's own work (argument packing, the ring write)
    # as possible.
    L.append("\tuint64_t tp_end = tp_span_end_time(on);")
    if live_always:
        L.append("\tif (tp_lt)\n\t\ttp_live_call_leave(&tp_lt->live);")
    else:
        L.append("\tif (on)\n\t\ttp_live_call_leave(&sp.t->live);")
    if correlate:
        L.append("\ttp_cupti_pop(tp_pushed);")
    key = key_of(fn, bfn)
    # Recording never touches errno (no syscall on the hot path; the slow
    # paths save it themselves), so only calls with extra work after the real
    # call (registration, cuGetProcAddress, CUPTI start) save it.
    keep_errno = key in AFTER or cls == "PROCADDR"
    if keep_errno:
        L.append("\tint saved_errno = errno;")
    extra_decl = ""
    if cls == "PROCADDR":
        L.append("\tuint64_t tp_pa_id = 0, tp_pa_outcome = 0;")
        L.append("\ttp_cuda_procaddr_fixup(%d, %s, %s, %s, (uint64_t)%s, (int)ret, &tp_pa_id, &tp_pa_outcome);"
                 % (fid, fn.params[0][1], fn.params[1][1], fn.params[2][1], fn.params[3][1]))
    if key in AFTER:
        L.append("\t" + subst(AFTER[key], fn))
    L.append("\tif (on)")
    L.append("\t\ttp_span_end_api(&sp, on, tp_end, %d, %s, %s);" % (fid, retexpr, ", ".join(slot_exprs)))
    if keep_errno:
        L.append("\terrno = saved_errno;")
    if rk != "void":
        L.append("\treturn ret;")
    L.append("}")
    del extra_decl
    if split:
        # Nothing has to run after the real call while not recording: the
        # exported wrapper tests that first and jumps straight to the real
        # function (no errno save, no spill); the recording path above
        # becomes a separate, out-of-line function.  See collector/hot.h.
        # tp_rec_ has the wrapper's own signature, so that both of the
        # wrapper's exits are tail jumps that pass the arguments on in place
        # (no copy, no spill); tp_rec_ resolves the real function itself
        # when it is not known yet.  It is a hidden global, not static, so
        # that the compiler keeps its exact ABI for the x86-64 wrapper below.
        L[2] = "TP_REC_FN %s tp_rec_%s(%s)" % (fn.ret, fn.name, params)
        L.insert(2, "TP_REC_FN %s tp_rec_%s(%s);" % (fn.ret, fn.name, params))
        L.append("#if TP_ASM_WRAPPERS")
        L.append(short_fn(fn, fid, cls, params, args, retexpr, slot_exprs))
        L.append(asm_wrapper(fn.name, fid, quiet_asm(fn, fid)))
        L.append("#else")
        L.append("TP_EXPORT %s %s(%s)" % (fn.ret, fn.name, params))
        L.append("{")
        L.append("\ttypedef %s (*fn_t)(%s);" % (fn.ret, params))
        L.append("\tfn_t real = (fn_t)tp_cuda_real_known(%d);" % fid)
        L.append("\tif (__builtin_expect(real != NULL && tp_span_idle() && %d != tp_steps_call_id, 1))" % fid)
        # tp_rec_ is reached by a call here, not a jump: it finds the
        # caller's return address in tp_cuda_caller (TP_REC_CALLER).
        if rk == "void":
            L.append("\t\treal(%s);" % args)
            L.append("\telse {")
            L.append("\t\ttp_cuda_caller = __builtin_return_address(0);")
            L.append("\t\ttp_rec_%s(%s);" % (fn.name, args))
            L.append("\t}")
        else:
            L.append("\t\treturn real(%s);" % args)
            L.append("\ttp_cuda_caller = __builtin_return_address(0);")
            L.append("\treturn tp_rec_%s(%s);" % (fn.name, args))
        L.append("}")
        L.append("#endif")
    return "\n".join(L) + "\n", cls


HEADER_C = """/* Generated by scripts/gen-cuda-wrappers from %(inc)s; do not edit.
 *
 * One exported wrapper per CUDA function that the headers declare and the
 * libraries export.  Each resolves the real function lazily (safe before the
 * library constructor ran), opens a span, calls it, decodes the arguments
 * that matter into the record (collector/cuda_record.h), and passes the return
 * value and errno through untouched. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <cuda.h>
#include <cudaProfiler.h>
#include <cuda_runtime_api.h>
#include <cuda_profiler_api.h>

#include "preload/cuda_pack.h"
#include "preload/export.h"
#include "preload/steps.h"
#include "preload/cupti.h"
#include "preload/init.h"
#include "collector/meta.h"
#include "collector/hot.h"

/* The recording functions of the tail-jump wrappers (see gen_wrapper()). */
#define TP_REC_FN __attribute__((noinline, visibility("hidden")))
/* A tp_short_ function shares its section with its assembly wrapper
 * (asm_wrapper()): the two lie next to each other, so that a recorded call
 * that finds them evicted (the real launch path, bench/RESULTS.md row 11)
 * reloads one run of adjacent cache lines on one page, not two in places a
 * few hundred KiB apart.  The wrapper starts a cache line, so that the
 * not-recording path (its first 41 bytes) is one line. */
#define TP_SHORT_FN(name) TP_REC_FN __attribute__((section(".text.tp." #name)))

/* x86-64 gets its tail-jump wrappers in assembly (see asm_wrapper() in
 * scripts/gen-cuda-wrappers); they test tp_state's TP_STATE_RECORDING bit
 * (bit 0 of its low byte), compare that byte with TP_STATE_RECORDING alone,
 * compare tp_steps_call_id (32 bits), and compare tp_self with 1 (NULL and
 * TP_THREAD_GONE, collector/thread.h, are both <= 1) directly. */
#if defined(__x86_64__) && !defined(TP_C_WRAPPERS)
#define TP_ASM_WRAPPERS 1
_Static_assert(TP_STATE_RECORDING == 1 && TP_STATE_FULL == 2 && TP_STATE_STEP_SHIFT == 8,
	       "the assembly wrappers test tp_state's low byte: bit 0, and the byte against 1");
_Static_assert(sizeof(tp_steps_call_id) == 4, "the assembly wrappers compare 32 bits");
_Static_assert(sizeof(tp_cuda_reals[0]) == 8, "the assembly wrappers index 8-byte pointers");
#else
#define TP_ASM_WRAPPERS 0
#endif
/* Where tp_rec_ finds its caller's return address: the assembly wrappers
 * jump to it with the caller's frame as it came; the C wrappers call it and
 * leave the address in tp_cuda_caller first. */
#if TP_ASM_WRAPPERS
#define TP_REC_CALLER __builtin_return_address(0)
#else
#define TP_REC_CALLER tp_cuda_caller
#endif
/* With -fcf-protection, indirect jumps (dlsym, cuGetProcAddress users) must
 * land on an ENDBR64. */
#ifdef __CET__
#define TP_ASM_ENDBR "endbr64\\n"
#else
#define TP_ASM_ENDBR ""
#endif

/* The nvcc-internal entry points are declared in C++-only headers; the
 * prototypes below are the C equivalent of theirs. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

"""
