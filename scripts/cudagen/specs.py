"""The CUDA wrappers' tables, written by hand: which record slots each
decoder class fills and from what (SPECS, by base name), the calls that run
hand-written code before or after the real call (BEFORE, AFTER), the flags
of a function's table row (FLAGS_*, PLUMBING, CORRELATE) and the calls the
live file always publishes (LIVE_ALWAYS).  Part of scripts/gen-cuda-wrappers."""

RUNTIME, DRIVER = "runtime", "driver"

# ---- argument decoders ---------------------------------------------------
#
# The record has four 64-bit argument slots; what each holds depends on the
# decoder class, which collector/cuda_record.h defines and
# collector/cuda_decode.c writes out.  Each spec gives, for a base name (the name without _vN, _ptsz
# and _ptds), the class and the four slot expressions.  {N} is the N-th
# parameter's name, `ret` the return value.  Expressions are evaluated after
# the real call, only while recording.
P = "(uint64_t)(uintptr_t)"
OUTPTR = lambda i: "(ret == 0 && {%d} ? (uint64_t)(uintptr_t)*{%d} : 0)" % (i, i)
OUTDEV = lambda i: "(ret == 0 && {%d} ? (uint64_t)*{%d} : 0)" % (i, i)

SPECS = {
    # Kernel launches: a0 kernel (host stub, cudaKernel_t or CUfunction),
    # a1 grid, a2 block + dynamic shared memory, a3 stream.
    "cudaLaunchKernel": ("LAUNCH_RT", [P + "{0}", "tp_cuda_pack_dim3_xy(tp_cuda_dim3_xy(&{1}), {1}.z)",
                                      "tp_cuda_pack_block_xy(tp_cuda_dim3_xy(&{2}), {2}.z, {4})", P + "{5}"]),
    "cudaLaunchCooperativeKernel": ("LAUNCH_RT", None),
    "__cudaLaunchKernel": ("LAUNCH_RT", None),
    "cudaLaunchKernelExC": ("LAUNCH_RT", [P + "{1}",
                                         "({0} ? tp_cuda_pack_dim3({0}->gridDim.x, {0}->gridDim.y, {0}->gridDim.z) : 0)",
                                         "({0} ? tp_cuda_pack_block({0}->blockDim.x, {0}->blockDim.y, {0}->blockDim.z, {0}->dynamicSmemBytes) : 0)",
                                         "({0} ? " + P + "{0}->stream : 0)"]),
    "cuLaunchKernel": ("LAUNCH_DRV", [P + "{0}", "tp_cuda_pack_dim3({1}, {2}, {3})",
                                     "tp_cuda_pack_block({4}, {5}, {6}, {7})", P + "{8}"]),
    "cuLaunchCooperativeKernel": ("LAUNCH_DRV", None),
    "cuLaunchKernelEx": ("LAUNCH_DRV", [P + "{1}",
                                       "({0} ? tp_cuda_pack_dim3({0}->gridDimX, {0}->gridDimY, {0}->gridDimZ) : 0)",
                                       "({0} ? tp_cuda_pack_block({0}->blockDimX, {0}->blockDimY, {0}->blockDimZ, {0}->sharedMemBytes) : 0)",
                                       "({0} ? " + P + "{0}->hStream : 0)"]),
    # Copies: a0 dst, a1 src, a2 bytes | kind << 56, a3 stream.
    "cudaMemcpy": ("MEMCPY", [P + "{0}", P + "{1}", "tp_cuda_pack_bytes_kind({2}, {3})", "0"]),
    "cudaMemcpyAsync": ("MEMCPY", [P + "{0}", P + "{1}", "tp_cuda_pack_bytes_kind({2}, {3})", P + "{4}"]),
    "cudaMemcpy2D": ("MEMCPY", [P + "{0}", P + "{2}", "tp_cuda_pack_bytes_kind((uint64_t){4} * {5}, {6})", "0"]),
    "cudaMemcpy2DAsync": ("MEMCPY", [P + "{0}", P + "{2}", "tp_cuda_pack_bytes_kind((uint64_t){4} * {5}, {6})", P + "{7}"]),
    "cudaMemcpyPeer": ("MEMCPY", [P + "{0}", P + "{2}", "tp_cuda_pack_bytes_kind({4}, 4)", "0"]),
    "cudaMemcpyPeerAsync": ("MEMCPY", [P + "{0}", P + "{2}", "tp_cuda_pack_bytes_kind({4}, 4)", P + "{5}"]),
    "cudaMemcpyToSymbol": ("MEMCPY", [P + "{0}", P + "{1}", "tp_cuda_pack_bytes_kind({2}, {4})", "0"]),
    "cudaMemcpyToSymbolAsync": ("MEMCPY", [P + "{0}", P + "{1}", "tp_cuda_pack_bytes_kind({2}, {4})", P + "{5}"]),
    "cudaMemcpyFromSymbol": ("MEMCPY", [P + "{0}", P + "{1}", "tp_cuda_pack_bytes_kind({2}, {4})", "0"]),
    "cudaMemcpyFromSymbolAsync": ("MEMCPY", [P + "{0}", P + "{1}", "tp_cuda_pack_bytes_kind({2}, {4})", P + "{5}"]),
    "cuMemcpy": ("MEMCPY", ["(uint64_t){0}", "(uint64_t){1}", "tp_cuda_pack_bytes_kind({2}, 4)", "0"]),
    "cuMemcpyAsync": ("MEMCPY", ["(uint64_t){0}", "(uint64_t){1}", "tp_cuda_pack_bytes_kind({2}, 4)", P + "{3}"]),
    "cuMemcpyHtoD": ("MEMCPY", ["(uint64_t){0}", P + "{1}", "tp_cuda_pack_bytes_kind({2}, 1)", "0"]),
    "cuMemcpyHtoDAsync": ("MEMCPY", ["(uint64_t){0}", P + "{1}", "tp_cuda_pack_bytes_kind({2}, 1)", P + "{3}"]),
    "cuMemcpyDtoH": ("MEMCPY", [P + "{0}", "(uint64_t){1}", "tp_cuda_pack_bytes_kind({2}, 2)", "0"]),
    "cuMemcpyDtoHAsync": ("MEMCPY", [P + "{0}", "(uint64_t){1}", "tp_cuda_pack_bytes_kind({2}, 2)", P + "{3}"]),
    "cuMemcpyDtoD": ("MEMCPY", ["(uint64_t){0}", "(uint64_t){1}", "tp_cuda_pack_bytes_kind({2}, 3)", "0"]),
    "cuMemcpyDtoDAsync": ("MEMCPY", ["(uint64_t){0}", "(uint64_t){1}", "tp_cuda_pack_bytes_kind({2}, 3)", P + "{3}"]),
    "cuMemcpyPeer": ("MEMCPY", ["(uint64_t){0}", "(uint64_t){2}", "tp_cuda_pack_bytes_kind({4}, 4)", "0"]),
    "cuMemcpyPeerAsync": ("MEMCPY", ["(uint64_t){0}", "(uint64_t){2}", "tp_cuda_pack_bytes_kind({4}, 4)", P + "{5}"]),
    "cuMemcpy2D": ("MEMCPY", ["({0} ? (uint64_t){0}->dstDevice : 0)", "({0} ? (uint64_t){0}->srcDevice : 0)",
                              "({0} ? tp_cuda_pack_bytes_kind((uint64_t){0}->WidthInBytes * {0}->Height, 4) : 0)", "0"]),
    "cuMemcpy2DAsync": ("MEMCPY", ["({0} ? (uint64_t){0}->dstDevice : 0)", "({0} ? (uint64_t){0}->srcDevice : 0)",
                                   "({0} ? tp_cuda_pack_bytes_kind((uint64_t){0}->WidthInBytes * {0}->Height, 4) : 0)", P + "{1}"]),
    # Sets: a0 pointer, a1 value, a2 bytes, a3 stream.
    "cudaMemset": ("MEMSET", [P + "{0}", "(uint64_t)(uint32_t){1}", "(uint64_t){2}", "0"]),
    "cudaMemsetAsync": ("MEMSET", [P + "{0}", "(uint64_t)(uint32_t){1}", "(uint64_t){2}", P + "{3}"]),
    "cudaMemset2D": ("MEMSET", [P + "{0}", "(uint64_t)(uint32_t){2}", "(uint64_t){3} * {4}", "0"]),
    "cudaMemset2DAsync": ("MEMSET", [P + "{0}", "(uint64_t)(uint32_t){2}", "(uint64_t){3} * {4}", P + "{5}"]),
    "cuMemsetD8": ("MEMSET", ["(uint64_t){0}", "(uint64_t){1}", "(uint64_t){2}", "0"]),
    "cuMemsetD16": ("MEMSET", ["(uint64_t){0}", "(uint64_t){1}", "(uint64_t){2} * 2", "0"]),
    "cuMemsetD32": ("MEMSET", ["(uint64_t){0}", "(uint64_t){1}", "(uint64_t){2} * 4", "0"]),
    "cuMemsetD8Async": ("MEMSET", ["(uint64_t){0}", "(uint64_t){1}", "(uint64_t){2}", P + "{3}"]),
    "cuMemsetD16Async": ("MEMSET", ["(uint64_t){0}", "(uint64_t){1}", "(uint64_t){2} * 2", P + "{3}"]),
    "cuMemsetD32Async": ("MEMSET", ["(uint64_t){0}", "(uint64_t){1}", "(uint64_t){2} * 4", P + "{3}"]),
    # Device allocations: a0 pointer, a1 bytes, a2 stream, a3 pool.
    "cudaMalloc": ("ALLOC", [OUTPTR(0), "(uint64_t){1}", "0", "0"]),
    "cudaMallocManaged": ("ALLOC", [OUTPTR(0), "(uint64_t){1}", "0", "0"]),
    "cudaMallocPitch": ("ALLOC", [OUTPTR(0), "(ret == 0 && {1} ? (uint64_t)*{1} * {3} : 0)", "0", "0"]),
    "cudaMallocAsync": ("ALLOC", [OUTPTR(0), "(uint64_t){1}", P + "{2}", "0"]),
    "cudaMallocFromPoolAsync": ("ALLOC", [OUTPTR(0), "(uint64_t){1}", P + "{3}", P + "{2}"]),
    "cuMemAlloc": ("ALLOC", [OUTDEV(0), "(uint64_t){1}", "0", "0"]),
    "cuMemAllocManaged": ("ALLOC", [OUTDEV(0), "(uint64_t){1}", "0", "0"]),
    "cuMemAllocPitch": ("ALLOC", [OUTDEV(0), "(ret == 0 && {1} ? (uint64_t)*{1} * {3} : 0)", "0", "0"]),
    "cuMemAllocAsync": ("ALLOC", [OUTDEV(0), "(uint64_t){1}", P + "{2}", "0"]),
    "cuMemAllocFromPoolAsync": ("ALLOC", [OUTDEV(0), "(uint64_t){1}", P + "{3}", P + "{2}"]),
    # Pinned host allocations: decoded, not counted as device memory.
    "cudaMallocHost": ("ALLOC_HOST", [OUTPTR(0), "(uint64_t){1}", "0", "0"]),
    "cudaHostAlloc": ("ALLOC_HOST", [OUTPTR(0), "(uint64_t){1}", "0", "0"]),
    "cuMemAllocHost": ("ALLOC_HOST", [OUTPTR(0), "(uint64_t){1}", "0", "0"]),
    "cuMemHostAlloc": ("ALLOC_HOST", [OUTPTR(0), "(uint64_t){1}", "0", "0"]),
    # Frees: a0 pointer, a2 stream.
    "cudaFree": ("FREE", [P + "{0}", "0", "0", "0"]),
    "cudaFreeAsync": ("FREE", [P + "{0}", "0", P + "{1}", "0"]),
    "cuMemFree": ("FREE", ["(uint64_t){0}", "0", "0", "0"]),
    "cuMemFreeAsync": ("FREE", ["(uint64_t){0}", "0", P + "{1}", "0"]),
    "cudaFreeHost": ("FREE_HOST", [P + "{0}", "0", "0", "0"]),
    "cuMemFreeHost": ("FREE_HOST", [P + "{0}", "0", "0", "0"]),
    # Synchronization: a0 stream (a1 event).
    "cudaDeviceSynchronize": ("SYNC", ["0", "0", "0", "0"]),
    "cudaStreamSynchronize": ("SYNC", [P + "{0}", "0", "0", "0"]),
    "cudaEventSynchronize": ("SYNC", ["0", P + "{0}", "0", "0"]),
    "cudaStreamWaitEvent": ("SYNC", [P + "{0}", P + "{1}", "0", "0"]),
    "cuCtxSynchronize": ("SYNC", ["0", "0", "0", "0"]),
    "cuStreamSynchronize": ("SYNC", [P + "{0}", "0", "0", "0"]),
    "cuEventSynchronize": ("SYNC", ["0", P + "{0}", "0", "0"]),
    "cuStreamWaitEvent": ("SYNC", [P + "{0}", P + "{1}", "0", "0"]),
    # Recording an event is no wait, but it is numbered like one: a wait's
    # cuda_sync event names the correlation of the record it waits for
    # (wait_on_cuda_event_record_corr_id, collector/gpu.c), as Kineto's do.
    "cudaEventRecord": ("SYNC", [P + "{1}", P + "{0}", "0", "0"]),
    "cudaEventRecordWithFlags": ("SYNC", [P + "{1}", P + "{0}", "0", "0"]),
    "cuEventRecord": ("SYNC", [P + "{1}", P + "{0}", "0", "0"]),
    "cuEventRecordWithFlags": ("SYNC", [P + "{1}", P + "{0}", "0", "0"]),
    # Graph launches: a0 graph exec, a3 stream.
    "cudaGraphLaunch": ("GRAPH", [P + "{0}", "0", "0", P + "{1}"]),
    "cuGraphLaunch": ("GRAPH", [P + "{0}", "0", "0", P + "{1}"]),
    # Kernel registry and name lookups (hooks in collector/cuda_kernels.c).
    "__cudaRegisterFunction": ("KERNEL_REG", [P + "{1}", "0", "0", "0"]),
    "__cudaGetKernel": ("KERNEL_REG", [P + "{1}", OUTPTR(0), "0", "0"]),
    "cudaGetKernel": ("KERNEL_REG", [P + "{1}", OUTPTR(0), "0", "0"]),
    # cuGetProcAddress: a0 the wrapped variant's id + 1, a1 version, a2 flags,
    # a3 the outcome (enum tp_cuda_pa_outcome); set by the hook.
    "cuGetProcAddress": ("PROCADDR", ["tp_pa_id", "(uint64_t)(uint32_t){2}", "(uint64_t){3}", "tp_pa_outcome"]),
}

# Classes whose args are inputs only, read the same before the call as
# after: the short recording path packs them before the call, so that four
# words instead of the whole argument list live across it.
PACK_BEFORE = {"LAUNCH_RT", "LAUNCH_DRV", "MEMCPY", "MEMSET", "SYNC", "GRAPH", "FREE", "FREE_HOST"}

# Calls into hand-written code that must run whether or not the call is
# recorded: the kernel registry and cuGetProcAddress's pointer mapping.
BEFORE = {
    # Stream capture (preload/cuda_capture.c): while one is open traceprof
    # makes no CUDA call of its own (kernel names), since in global capture
    # mode a call from any thread can invalidate the program's capture.
    "cuStreamBeginCapture": "tp_cuda_capture_begin();",
    "cudaStreamBeginCapture": "tp_cuda_capture_begin();",
    "cuStreamBeginCaptureToGraph": "tp_cuda_capture_begin();",
    "cudaStreamBeginCaptureToGraph": "tp_cuda_capture_begin();",
}
AFTER = {
    # A capture that did not start; one that ended (a graph, or invalidated).
    "cuStreamBeginCapture": "tp_cuda_capture_began((int)ret);",
    "cudaStreamBeginCapture": "tp_cuda_capture_began((int)ret);",
    "cuStreamBeginCaptureToGraph": "tp_cuda_capture_began((int)ret);",
    "cudaStreamBeginCaptureToGraph": "tp_cuda_capture_began((int)ret);",
    "cuStreamEndCapture": "tp_cuda_capture_ended((int)ret);",
    "cudaStreamEndCapture": "tp_cuda_capture_ended((int)ret);",
    # CUPTI is loaded, and an exit handler set (preload/init.h), only after
    # the program's first successful cuInit.
    "cuInit": "tp_preload_on_cuinit((int)ret);",
    # Versions for the trace's metadata, from the calls the runtime makes.
    "cuDriverGetVersion": "if (ret == 0 && {0}) tp_meta_set_cuda_versions(0, *{0});",
    "cudaDriverGetVersion": "if (ret == 0 && {0}) tp_meta_set_cuda_versions(0, *{0});",
    "cudaRuntimeGetVersion": "if (ret == 0 && {0}) tp_meta_set_cuda_versions(*{0}, 0);",
    "__cudaRegisterFunction": "tp_cuda_kernels_register((const void *){1}, {3});",
    "__cudaGetKernel": "if (ret == 0 && {0}) tp_cuda_kernels_alias((const void *)*{0}, (const void *){1});",
    "cudaGetKernel": "if (ret == 0 && {0}) tp_cuda_kernels_alias((const void *)*{0}, (const void *){1});",
}
FLAGS_ASYNC = 1
FLAGS_PTSZ = 2
FLAGS_PTDS = 4
FLAGS_CORR = 8
# nvcc's launch plumbing (issue 22): every <<<>>> launch calls these around
# __cudaLaunchKernel; neither Kineto nor Nsight Systems shows them, and with
# TRACEPROF_CUDA_CALLS=outer (the default) a trace does not either
# (tp_cuda_quiet, preload/cuda_calls.c).  __cudaGetKernel still maps its
# kernel handle to the kernel's name.  The registration calls nvcc's code
# makes as each library loads are plumbing too (issue 31): `import torch`
# alone makes about 44,000 of them (21 MB of JSON in every process that
# imports a CUDA build of PyTorch, a DataLoader worker's included);
# __cudaRegisterFunction still names the kernels (AFTER runs either way).
FLAGS_PLUMBING = 16
PLUMBING = {"__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaGetKernel",
            "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaRegisterFunction",
            "__cudaRegisterVar", "__cudaRegisterManagedVar", "__cudaUnregisterFatBinary",
            "__cudaInitModule"}
# The classes whose wrappers push an external correlation id around the real
# call while CUPTI records, so that CUPTI links the GPU activity they cause
# (kernels, copies, sets, synchronizations, a graph's kernels) to the call;
# TP_CUDA_F_CORR tells the flush side which API events to number.
CORRELATE = {"LAUNCH_RT", "LAUNCH_DRV", "MEMCPY", "MEMSET", "SYNC", "GRAPH"}


# Calls that wait for the GPU: published for the live file (collector/live_pub.h)
# whether the step records or not, since a rank stalled outside any window is
# stalled in one of them.  They take the C wrapper (no tail jump while not
# recording): a few nanoseconds more on a call that waits microseconds at
# least.  Only on a thread that has its state (it recorded before): the
# not-recording path allocates nothing.  By base name (base_name()).
LIVE_ALWAYS = {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
               "cudaMemcpy", "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize",
               "cuMemcpy", "cuMemcpyDtoH", "cuMemcpyHtoD"}
