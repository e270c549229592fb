"""The build step pyproject.toml cannot say by itself: the library comes
from the Makefile.  build_py runs `make BUILD/libtraceprof.so` and puts the
library (lib/), the header (include/) and VERSION into the package it
builds; bdist_wheel tags the wheel for the platform (py3-none-linux_x86_64:
the library is native code, the Python code works on any Python 3, so no
CPython ABI tag).  TRACEPROF_BUILD picks make's build folder (default
build/, the one `make` uses, so a built clone is not compiled twice).

CUDA's headers (cuda.h, cuda_runtime_api.h, cupti.h, nvtx3/) come from, in
this order: CUDA_HOME when it is set; the toolkit at /usr/local/cuda; the
NVIDIA wheels that pyproject.toml's [build-system] requires lists
(nvidia-cuda-runtime, -crt, -cupti, nvidia-nvtx), which pip installs into
the build environment and which merge under site-packages/nvidia/cu13.  The
library links none of CUDA's libraries (it finds the program's own at run
time), so the headers are all the build needs.  make's output goes to
BUILD/pip-build.log; a failure is said in one `traceprof: build failed:`
line with the fix, not in make's output inside pip's."""

import os
import re
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own; older ones use the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

TOP = os.path.dirname(os.path.abspath(__file__))
# The headers the Makefile's preflight checks, and crt/host_defines.h, which
# cuda_runtime_api.h includes (the toolkit has it; the wheels have it in
# nvidia-cuda-crt).
HEADERS = ("cuda.h", "cuda_runtime_api.h", "crt/host_defines.h", "cupti.h", "nvtx3/nvToolsExt.h")
WHEELS = ("nvidia-cuda-runtime", "nvidia-cuda-crt", "nvidia-cuda-cupti", "nvidia-nvtx")
TOOLKIT = "/usr/local/cuda"


def fail(what, fix):
    """One line, then exit 1: pip shows it inside its own error frame."""
    sys.stderr.write("traceprof: build failed: %s; %s\n" % (what, fix))
    sys.stderr.flush()
    raise SystemExit(1)


def wheel_cuda_home():
    """The folder holding include/ (and lib/libcudart.so.13) where the NVIDIA
    wheels put their headers, from their installed file lists; None with
    the list of what is missing when one is not installed."""
    from importlib import metadata  # Python 3.8+, as pyproject.toml requires

    roots, missing = set(), []
    for header in HEADERS:
        found = None
        for dist in WHEELS:
            try:
                files = metadata.files(dist) or []
            except metadata.PackageNotFoundError:
                continue
            for f in files:
                if str(f).replace("\\", "/").endswith("/include/" + header):
                    found = os.path.abspath(str(f.locate()))
                    break
            if found:
                break
        if not found:
            missing.append(header)
            continue
        roots.add(os.path.dirname(found[: -len(header) - 1]))
    if missing:
        return None, missing
    if len(roots) != 1:
        fail("the NVIDIA wheels' headers are in more than one folder (%s)" % ", ".join(sorted(roots)),
             "install %s into one environment, or set CUDA_HOME to a CUDA 13 toolkit" % " ".join(WHEELS))
    return roots.pop(), []


def cuda_make_args():
    """make's CUDA_HOME (and where the library looks for CUPTI at run time)."""
    env = os.environ.get("CUDA_HOME")
    if env:
        missing = [h for h in HEADERS if not os.path.exists(os.path.join(env, "include", h))]
        if missing:
            fail("CUDA_HOME=%s has no include/%s" % (env, ", include/".join(missing)),
                 "point CUDA_HOME at a CUDA 13 toolkit, or unset it to build with the headers of "
                 "the NVIDIA wheels pyproject.toml requires")
        return ["CUDA_HOME=" + env]
    if all(os.path.exists(os.path.join(TOOLKIT, "include", h)) for h in HEADERS):
        return ["CUDA_HOME=" + TOOLKIT]
    home, missing = wheel_cuda_home()
    if home is None:
        fail("no CUDA 13 headers: CUDA_HOME is not set, %s/include has no cuda.h, and the build "
             "environment lacks %s" % (TOOLKIT, ", ".join(missing)),
             "pip install with build isolation (the default: pip installs %s from PyPI), or "
             "pip install them before --no-build-isolation, or set CUDA_HOME to a CUDA 13 toolkit"
             % " ".join(WHEELS))
    # The build environment goes away after pip's build: the library looks
    # for a CUPTI the program has not loaded in the usual toolkit folder.
    return ["CUDA_HOME=" + home, "CUDA_RUNTIME_HOME=" + TOOLKIT]


def last_error(log):
    """The line of make's log that says what failed: the compiler's (or
    linker's) first error, else the last line that is not make's own or a
    progress line (the preflight's `traceprof:` line, a generator's)."""
    try:
        with open(log, errors="replace") as f:
            lines = [l.strip() for l in f if l.strip()]
    except OSError:
        return "make failed"
    for l in lines:
        if re.search(r": (fatal )?error: ", l):
            return l
    for l in reversed(lines):
        if not re.match(r"(make(\[\d+\])?: |\$ |[A-Z]+ )", l):
            return l[len("traceprof: "):] if l.startswith("traceprof: ") else l
    return "make failed"


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        build = os.environ.get("TRACEPROF_BUILD", "build")
        lib = os.path.join(build, "libtraceprof.so")
        jobs = os.environ.get("TRACEPROF_JOBS", str(min(os.cpu_count() or 1, 8)))
        cmd = ["make", "-C", TOP, "-j" + jobs, "BUILD=" + build] + cuda_make_args() + [lib]
        log = os.path.join(TOP, build, "pip-build.log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "w") as out:
            out.write("$ %s\n" % " ".join(cmd))
            out.flush()
            try:
                rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
            except OSError as e:
                fail("cannot run make (%s)" % e.strerror, "install make and a C compiler (Debian: build-essential)")
        if rc != 0:
            fail("%s (make's full output: %s)" % (last_error(log), log),
                 "fix that and pip install again; docs/development.md, 'The pip package', lists what the build needs")
        pkg = os.path.join(self.build_lib, "traceprof")
        for src, dst in ((os.path.join(TOP, lib), os.path.join(pkg, "lib", "libtraceprof.so")),
                         (os.path.join(TOP, "preload", "traceprof.h"),
                          os.path.join(pkg, "include", "traceprof.h")),
                         (os.path.join(TOP, "VERSION"), os.path.join(pkg, "VERSION"))):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
            shutil.copymode(src, dst)


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        plat = super().get_tag()[2]
        return "py3", "none", plat


class NativeDistribution(Distribution):
    """Native code inside: the files go to platlib, the wheel's root."""

    def has_ext_modules(self):
        return True


setup(distclass=NativeDistribution, cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel})
