"""The build step pyproject.toml cannot say by itself: the library comes
from the Makefile.  build_py runs `make BUILD/libtraceprof.so` and puts the
library (lib/), the header (include/) and VERSION into the package it
builds; bdist_wheel tags the wheel for the platform (py3-none-linux_x86_64:
the library is native code, the Python code works on any Python 3, so no
CPython ABI tag).  TRACEPROF_BUILD picks make's build folder (default
build/, the one `make` uses, so a built clone is not compiled twice)."""

import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own; older ones use the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

TOP = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        build = os.environ.get("TRACEPROF_BUILD", "build")
        lib = os.path.join(build, "libtraceprof.so")
        jobs = os.environ.get("TRACEPROF_JOBS", str(min(os.cpu_count() or 1, 8)))
        subprocess.check_call(["make", "-C", TOP, "-j" + jobs, "BUILD=" + build, lib])
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
