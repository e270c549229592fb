"""Kernel launches that return, through numba-cuda and Triton, over the test
stand-in driver (build/standin/libcuda.so.1, not NVIDIA's), run by
test/integration/cuda_pylaunch.sh with and without traceprof.  Prints what
each step answered, so that the two runs' outputs can be compared line by
line.  argv[1]: numba or triton."""
import sys
import warnings

warnings.simplefilter("ignore")
which = sys.argv[1]
if which == "numba":
    # numba-cuda: the kernel compiled by NVVM for the stand-in's compute
    # capability, loaded with cuLibraryLoadData and launched with
    # cuLaunchKernelEx (through cuda.core and cuda.bindings) on a stream of
    # its own.
    import numpy as np
    from numba import cuda

    print("numba.cuda.is_available() ->", cuda.is_available())

    @cuda.jit
    def scale(x, n):
        i = cuda.grid(1)
        if i < n:
            x[i] = 2 * x[i]

    s = cuda.stream()
    a = cuda.to_device(np.arange(8, dtype=np.float32), stream=s)
    scale[(4, 2), 128, s](a, 8)
    s.synchronize()
    print("numba launch returned")
    # The stand-in's memory reads back as zeros.
    print("copied back:", a.copy_to_host(stream=s).tolist())
elif which == "triton":
    # Triton: its utilities and launcher modules built by gcc -lcuda, the
    # kernel compiled to a cubin by Triton's ptxas (for the stand-in's
    # compute capability), loaded with cuModuleLoadData (load_binary) and
    # launched with cuLaunchKernelEx from its launcher's own handle of
    # libcuda.so.1, on the default stream.
    import triton
    import triton.language as tl

    @triton.jit
    def add_one(n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)

    add_one[(3, 2)](7, BLOCK=64)
    print("triton launch returned")
