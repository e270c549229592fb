"""The availability probe of one Python CUDA library (argv[1]: cupy,
cuda-python, numba, jax, triton; cuda-python-launch: a kernel launch through
cuda.bindings, over the test stand-in driver), run by test/integration/cuda_pylibs.sh with
and without traceprof: every answer, exception and warning is printed, so
that the two runs' outputs can be compared line by line."""
import sys
import warnings

warnings.simplefilter("always")
which = sys.argv[1]
def show(label, f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = f()
            print(label, "->", repr(r))
        except BaseException as e:
            print(label, "raised", type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        for x in w:
            print(label, "warning", x.category.__name__, str(x.message).splitlines()[0])
if which == "cupy":
    import cupy
    show("cupy.cuda.is_available()", cupy.cuda.is_available)
    show("cupy.cuda.runtime.getDeviceCount()", cupy.cuda.runtime.getDeviceCount)
elif which == "cuda-python":
    from cuda.bindings import driver
    show("cuInit(0)", lambda: driver.cuInit(0))
    show("cuDriverGetVersion()", lambda: driver.cuDriverGetVersion())
elif which == "numba":
    from numba import cuda
    show("numba.cuda.is_available()", cuda.is_available)
elif which == "jax":
    import jax
    show("jax.devices()", lambda: [str(d) for d in jax.devices()])
    show("jax.devices('cuda')", lambda: [str(d) for d in jax.devices("cuda")])
elif which == "triton":
    import triton
    show("triton.runtime.driver.active", lambda: type(triton.runtime.driver.active).__name__)
if which == "triton":
    from triton.backends.nvidia import driver as nv
    show("libcuda_dirs() (runs ldconfig -p)", lambda: len(nv.libcuda_dirs()))
    show("_cuda_driver_is_active()", nv._cuda_driver_is_active)
    # gcc ... -lcuda builds Triton's driver module, which is then loaded.
    # Not called: with the stub, its error path prints a pointer that
    # cuGetErrorString left unset (whatever the stack held).
    show("CudaUtils() built", lambda: callable(nv.CudaUtils().get_device_properties))
elif which == "cuda-python-launch":
    from cuda.bindings import driver as d

    def ok(label, r):
        print(label, r[0])
        return r[1] if len(r) > 1 else None

    ok("cuInit", d.cuInit(0))
    dev = ok("cuDeviceGet", d.cuDeviceGet(0))
    ctx = ok("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(dev))
    ok("cuCtxSetCurrent", d.cuCtxSetCurrent(ctx))
    mod = ok("cuModuleLoadData", d.cuModuleLoadData(b"stand-in image"))
    fn = ok("cuModuleGetFunction", d.cuModuleGetFunction(mod, b"saxpy_drv"))
    st = ok("cuStreamCreate", d.cuStreamCreate(0))
    ok("cuLaunchKernel", d.cuLaunchKernel(fn, 4, 2, 1, 128, 1, 1, 256, st, 0, 0))
    ok("cuStreamSynchronize", d.cuStreamSynchronize(st))
