# traceprof build.  `make` builds build/libtraceprof.so; `make check` runs every
# test; `make bench` runs the benchmarks; `make demo` runs a profiled example.
#
# Sources are picked up by folder, so adding a file to preload/, collector/,
# format/ or common/ needs no edit here.  Tests are picked up by name:
# test/unit/test_*.c (Check suites) and test/integration/*.sh; `make check
# T=NAME` runs one of any kind.  The fixtures' rules are test/fixtures.mk,
# the benchmarks' bench/bench.mk.

CC        ?= gcc
CUDA_HOME ?= /usr/local/cuda
# Where the library looks for a CUPTI the program has not loaded, at run
# time (preload/cupti_load.c): the toolkit built against, or the usual one
# when setup.py builds with the headers of NVIDIA's wheels.
CUDA_RUNTIME_HOME ?= $(CUDA_HOME)
PREFIX    ?= /usr/local
PYTHON    ?= python3
BUILD     := build
VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

# Build dependencies: `make deps` installs them (scripts/install-deps, which
# .ci/run also calls); nothing else installs.  Reading this file never
# installs anything (make -n included); the targets that compile check
# first (preflight, below) and stop with what is missing and the fix, and
# `make check` says which of the tests' packages and venvs are missing
# (check-deps).  TP_INSTALL_DEPS names another script (the tests' stand-in,
# test/integration/build_autodeps.sh).
PKGS := check libunwind libzstd zlib
TP_INSTALL_DEPS ?= scripts/install-deps

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS := $(CFLAGS) -std=gnu11 -D_GNU_SOURCE -fPIC -pthread -fvisibility=hidden $(WARN) \
           -I. -I$(BUILD)/gen -I$(CUDA_HOME)/include -DTRACEPROF_VERSION=\"$(VERSION)\" \
           -DTRACEPROF_CUDA_HOME=\"$(CUDA_RUNTIME_HOME)\" $(EXTRA_CFLAGS)
LIBS    := -ldl -lpthread -lunwind -lzstd -lz -lm

CORE_SRCS    := $(wildcard common/*.c collector/*.c format/*.c)
PRELOAD_SRCS := $(wildcard preload/*.c preload/*.S preload/resolve/*.c preload/resolve/*.S)
GEN_SRCS     := $(BUILD)/gen/cuda_wrappers.c
CORE_OBJS    := $(CORE_SRCS:%.c=$(BUILD)/obj/%.o)
PRELOAD_OBJS := $(addsuffix .o,$(basename $(PRELOAD_SRCS:%=$(BUILD)/obj/%))) $(GEN_SRCS:$(BUILD)/gen/%.c=$(BUILD)/obj/gen/%.o)

LIB       := $(BUILD)/libtraceprof.so
CORE_LIB  := $(BUILD)/libtpcore.a

UNIT_SRCS := $(wildcard test/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:test/unit/%.c=$(BUILD)/test/%)
PROG_SRCS := $(wildcard test/programs/*.c)
PROG_BINS := $(PROG_SRCS:test/programs/%.c=$(BUILD)/test/prog_%)
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

.PHONY: all check check-unit check-integration bench bench-gpu demo install uninstall clean \
        check-asan check-tsan deps preflight check-deps wheel

all: $(LIB) $(BUILD)/traceprof

# `make deps`: installs the packages the build and the tests need (Debian or
# Ubuntu, as root or through sudo).
deps:
	scripts/install-deps

# Everything that compiles needs this first, as an order-only prerequisite
# (so it never makes a file out of date).  It runs once per make invocation,
# before any compiler error could bury the cause, and installs nothing:
# - the libraries pkg-config finds: when one is missing it stops with one
#   line naming them and the fix (`make deps`, or the Debian packages);
# - a CUDA toolkit at CUDA_HOME: its headers (cuda.h, cuda_runtime_api.h,
#   cupti.h, nvtx3/) are needed by preload/ and the test stand-ins even
#   where no GPU exists.  Not a Debian package: it stops with how to get it.
TOOLKIT_HEADERS := cuda.h cuda_runtime_api.h cupti.h nvtx3/nvToolsExt.h
PKG_MISSING = missing=""; for p in $(PKGS); do pkg-config --exists $$p 2>/dev/null || missing="$$missing $$p"; done
preflight:
	@command -v pkg-config >/dev/null 2>&1 && pkg-config --exists $(PKGS) || { \
	    $(PKG_MISSING); \
	    echo "traceprof: missing build dependencies (pkg-config cannot find:$$missing); run 'make deps' (installs them with apt-get, as root or through sudo), or install the Debian packages libunwind-dev libzstd-dev zlib1g-dev check, or set PKG_CONFIG_PATH" >&2; \
	    exit 1; }
	@missing=""; for h in $(TOOLKIT_HEADERS); do [ -e "$(CUDA_HOME)/include/$$h" ] || missing="$$missing $$h"; done; \
	[ -z "$$missing" ] || { \
	    echo "traceprof: no CUDA toolkit at CUDA_HOME=$(CUDA_HOME) (missing include/:$$missing); install the CUDA 13 toolkit (NVIDIA's cuda-toolkit-13-0 package; no GPU is needed) and run make CUDA_HOME=<its folder> (default /usr/local/cuda)" >&2; \
	    exit 1; }

# Each object's headers come from the compiler (-MMD -MP: a .d file beside
# the object, read back below), so touching a header rebuilds only the
# files that include it.  The generated table is order-only: it must exist
# before the first compile; once it does, the .d files of its users name it.
DEPFLAGS = -MMD -MP -MF $@.d -MT $@
# A build folder made before the .d files existed would never see a header
# change: this stamp, made once per folder, is newer than all its objects,
# so they are rebuilt once (and write their .d files).
DEPS_STAMP := $(BUILD)/.deps-mmd
$(DEPS_STAMP):
	@mkdir -p $(BUILD) && touch $@

$(BUILD)/obj/%.o: %.c $(DEPS_STAMP) | preflight $(BUILD)/gen/cuda_table.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

# Hand-written entry points (preload/resolve/*.S): preprocessed, so they see the
# same -D flags (the sanitizer builds' TP_C_WRAPPERS, the architecture).
$(BUILD)/obj/%.o: %.S $(DEPS_STAMP) | preflight
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(DEPS_STAMP) | preflight
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

-include $(CORE_OBJS:=.d) $(PRELOAD_OBJS:=.d)

# The CUDA wrappers are generated from the toolkit's headers on every build of
# a new toolkit; see scripts/gen-cuda-wrappers.
# One run writes both files: the table depends on the wrappers, so that a
# parallel make runs the generator once (two targets of one rule would be two
# runs racing on the same temporary files).
# The generator rewrites a file only when its text changes (so that the
# objects built from it are not rebuilt for nothing); the stamp records that
# it ran, so that make does not run it again on every build.
$(BUILD)/gen/.stamp: scripts/gen-cuda-wrappers $(wildcard scripts/cudagen/*.py) $(wildcard $(CUDA_HOME)/include/cuda.h $(CUDA_HOME)/include/cuda_runtime_api.h) | preflight
	@mkdir -p $(BUILD)/gen
	$(PYTHON) scripts/gen-cuda-wrappers --cuda-home "$(CUDA_HOME)" --out $(BUILD)/gen
	@touch $@

$(BUILD)/gen/cuda_wrappers.c: $(BUILD)/gen/.stamp
	@:
$(BUILD)/gen/cuda_table.h: $(BUILD)/gen/cuda_wrappers.c
	@:

$(LIB): $(CORE_OBJS) $(PRELOAD_OBJS) preload/exports.map
	@echo "  LD      $@"
	@$(CC) -shared -o $@ $(CORE_OBJS) $(PRELOAD_OBJS) -Wl,--version-script=preload/exports.map \
	    -Wl,-soname,libtraceprof.so -Wl,--no-undefined $(LIBS) $(EXTRA_LDFLAGS)

$(CORE_LIB): $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The command of the build tree, the developer's route (the tests use it; no
# pip install per test run): a launcher script and a copy of the Python
# package (python/traceprof: the `traceprof` module, the command in cli/, the
# trace readers and writers in traces/, pyboot/) with VERSION, in
# build/python; a module gone from the package goes from the copy too.
# Installs go through pip (make install, below).
PKG_PY := $(shell find python/traceprof -name '*.py' -not -path '*/__pycache__/*')

$(BUILD)/traceprof: scripts/traceprof-launcher $(PKG_PY) VERSION
	@mkdir -p $(BUILD)
	rm -rf $(BUILD)/python && mkdir -p $(BUILD)/python
	for f in $(PKG_PY:python/%=%); do mkdir -p $(BUILD)/python/$${f%/*} && cp python/$$f $(BUILD)/python/$$f || exit 1; done
	cp VERSION $(BUILD)/python/traceprof/VERSION
	cp scripts/traceprof-launcher $@ && chmod +x $@

# The test fixtures' and the benchmarks' rules are in their own makefiles.
include test/fixtures.mk
include bench/bench.mk

# The tests' packages (clang, uftrace, Node.js, ...) and venvs (PyTorch, the
# wheel tools): install-deps --check says what is missing without
# installing; check-deps says so with the fix (install-deps --with-optional)
# and goes on (the tests that need them print SKIP).
check-deps: preflight
	@m=$$($(TP_INSTALL_DEPS) --check --with-optional) || \
	    echo "traceprof: make check: the tests need what is $$m; run '$(TP_INSTALL_DEPS) --with-optional' to install it (the tests that need it SKIP meanwhile)" >&2

# `make check T="NAME ..."`: only the tests of those names, of any kind (a
# Check suite test/unit/test_NAME.c, test/integration/NAME.sh, pytest's
# test/python/test_NAME.py or FILE.py::TEST; test/run-all resolves them),
# building the named suites and what the integration tests need.
T_UNIT_BINS := $(foreach n,$(T),$(patsubst test/unit/%.c,$(BUILD)/test/%,$(firstword \
                 $(wildcard test/unit/test_$(patsubst test_%,%,$(n)).c))))

check: all $(if $(T),$(T_UNIT_BINS),$(UNIT_BINS)) $(PROG_BINS) $(if $(T),,check-deps)
	@echo "make check: one test of any kind: make check T=NAME (test/unit/test_NAME.c, test/integration/NAME.sh, test/python/test_NAME.py or FILE.py::TEST; several: T=\"A B\")"
	@$(if $(T),true,$(MAKE) --no-print-directory check-python)
	@BUILD=$(BUILD) CUDA_HOME=$(CUDA_HOME) PYTHON=$(PYTHON) TP_T='$(T)' test/run-all $(if $(T),$(T_UNIT_BINS),$(UNIT_BINS))

# make check-python: the Python package's own tests (test/python; issue 45
# item 2) in the small pytest venv (pytest and hypothesis: scripts/install-deps
# makes it; like check-deps, this target installs nothing), without the tests
# marked torchvenv (they need pyarrow or numpy): seconds, no build, no torch.
# integration/python_units.sh runs the torchvenv ones with the torch venv.  The
# package comes from python/ (test/python/pytest.ini's pythonpath).  No venv:
# SKIP with the fix.  Pure Python: not run again under a sanitizer
# (check-asan, check-tsan).  make check runs it first, unless T= names tests.
PYTEST_VENV ?= $(or $(TP_VENVS),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/traceprof/venvs)/pytest
PYTEST_OK = $(PYTEST_VENV)/bin/python -c 'import pytest, hypothesis' 2>/dev/null
.PHONY: check-python
check-python:
	@if [ -n "$$TP_SANITIZER" ]; then echo "check-python: pure Python, not run again under TP_SANITIZER=$$TP_SANITIZER"; exit 0; fi; \
	if $(PYTEST_OK); then \
	    PYTHONDONTWRITEBYTECODE=1 $(PYTEST_VENV)/bin/python -m pytest -q -m 'not torchvenv' test/python; \
	else echo "SKIP: check-python: no pytest venv at $(PYTEST_VENV); run '$(TP_INSTALL_DEPS) --venv=pytest' (or make deps) to make it (needs PyPI)"; fi

check-unit: $(UNIT_BINS)
	@BUILD=$(BUILD) test/run-all --unit-only $(UNIT_BINS)

bench: all $(BENCH_BINS) $(PROG_BINS)
	@BUILD=$(BUILD) CUDA_HOME=$(CUDA_HOME) bench/run
	@BUILD=$(BUILD) CUDA_HOME=$(CUDA_HOME) bench/gpu

# The real-GPU launch benchmark (bench/gpu): prints SKIP with the reason on
# a machine without an NVIDIA GPU.
bench-gpu: all
	@BUILD=$(BUILD) CUDA_HOME=$(CUDA_HOME) bench/gpu

demo: all $(PROG_BINS)
	@BUILD=$(BUILD) CUDA_HOME=$(CUDA_HOME) scripts/demo

clean:
	rm -rf $(BUILD)
	rm -rf python/traceprof.egg-info  # left by pip install . (make install)

# ---- install / uninstall ----
# make install [PREFIX=/usr/local] [DESTDIR=...] [PYTHON=python3]: pip is the
# one install route of the Python package and the command (issue 45 item 2):
# `$(PYTHON) -m pip install --prefix=PREFIX [--root=DESTDIR] .` puts the
# package (with its own copy of the library, the header and VERSION, as in a
# wheel) into PREFIX's site-packages for that Python and the `traceprof`
# console script into PREFIX/bin; TRACEPROF_BUILD makes setup.py reuse this
# build's library.  For C users the library, the header and a pkg-config
# file go to PREFIX/lib, PREFIX/include and PREFIX/lib/pkgconfig too.  pip
# builds offline (--no-build-isolation) when that Python has setuptools 61+
# and wheel (or setuptools 70.1+), else it fetches them from PyPI.
# PIP_INSTALL_FLAGS adds options.  --prefix also skips PEP 668's
# externally-managed check: nothing goes into the system's own site-packages
# unless PREFIX is /usr.  make uninstall removes what the install's RECORD
# lists (the package, bin/traceprof) and the C files, then the package's
# folders once empty.
C_INSTALL_FILES := $(PREFIX)/lib/libtraceprof.so $(PREFIX)/include/traceprof.h \
                   $(PREFIX)/lib/pkgconfig/traceprof.pc
PIP_BUILD_TOOLS = $(PYTHON) -c 'import setuptools as s; v = tuple(int(x) for x in s.__version__.split(".")[:2]); \
    assert v >= (61, 0); v >= (70, 1) or __import__("wheel")' 2>/dev/null
SITE_GLOB = $(DESTDIR)$(PREFIX)/lib/python3*/*-packages

install: $(LIB) VERSION preload/traceprof.h
	@$(PYTHON) -m pip --version >/dev/null 2>&1 || { echo "traceprof: make install needs pip for PYTHON=$(PYTHON) (Debian: apt-get install python3-pip; or PYTHON=<a python with pip>)" >&2; exit 1; }
	rm -rf build/lib.* build/bdist.*  # setuptools' own copies, which keep a module gone from python/
	iso=--no-build-isolation; $(PIP_BUILD_TOOLS) || iso=""; \
	TRACEPROF_BUILD=$(BUILD) $(PYTHON) -m pip install -q --disable-pip-version-check --no-deps $$iso \
	    --prefix=$(PREFIX) $(if $(DESTDIR),--root=$(DESTDIR)) $(PIP_INSTALL_FLAGS) . || { \
	    echo "traceprof: pip install --prefix=$(PREFIX) failed (above); without setuptools 61+ and wheel in PYTHON=$(PYTHON) it needs PyPI for them" >&2; exit 1; }
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libtraceprof.so
	install -m 0644 preload/traceprof.h $(DESTDIR)$(PREFIX)/include/traceprof.h
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: traceprof' 'Description: zero-code LD_PRELOAD profiler for CUDA programs' \
	    'Version: $(VERSION)' 'Libs: -L$${libdir} -ltraceprof' 'Cflags: -I$${includedir}' \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/traceprof.pc
	@site=$$(ls -d $(SITE_GLOB)/traceprof 2>/dev/null | head -1); site=$${site%/traceprof}; \
	echo "traceprof: installed into $(DESTDIR)$(PREFIX): bin/traceprof, lib/libtraceprof.so,"; \
	echo "  include/traceprof.h, lib/pkgconfig/traceprof.pc, and the Python package in $$site"; \
	$(PYTHON) -c 'import sys, os; sys.exit(os.path.realpath(sys.argv[1]) not in [os.path.realpath(p) for p in sys.path])' \
	    "$${site#$(DESTDIR)}" 2>/dev/null || echo "  ($(PYTHON) does not search $${site#$(DESTDIR)}: add it to PYTHONPATH for bin/traceprof and import traceprof)"

uninstall:
	rm -f $(addprefix $(DESTDIR),$(C_INSTALL_FILES))
	@for rec in $(SITE_GLOB)/traceprof-*.dist-info/RECORD; do \
	    [ -f "$$rec" ] || continue; site=$${rec%/*/RECORD}; \
	    cut -d, -f1 "$$rec" | while IFS= read -r f; do [ -z "$$f" ] || rm -f "$$site/$$f"; done; \
	    [ ! -d "$$site/traceprof" ] || find "$$site/traceprof" -depth -name __pycache__ -type d -exec rm -rf {} +; \
	    [ ! -d "$$site/traceprof" ] || find "$$site/traceprof" -depth -type d -empty -delete; \
	    rmdir "$${rec%/RECORD}" 2>/dev/null || true; \
	    echo "traceprof: removed the Python package and bin/traceprof ($$rec)"; \
	done

# ---- the pip wheel ----
# make wheel: the wheel of pyproject.toml (setup.py builds the library with
# this Makefile), made portable by auditwheel repair (the libraries it links
# beyond the manylinux set vendored, a manylinux tag), in $(BUILD)/wheel/.
# The build tools come from the wheel venv of scripts/install-deps
# --with-optional.  docs/development.md, "The pip package", says why.
# WHEEL_DIR chooses the output folder (the platform wheel before the repair
# is left in its raw/).
WHEEL_VENV ?= $(or $(TP_VENVS),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/traceprof/venvs)/wheel
WHEEL_DIR ?= $(BUILD)/wheel
wheel: $(LIB)
	@[ -x $(WHEEL_VENV)/bin/auditwheel ] || $(TP_INSTALL_DEPS) --venv=wheel
	rm -rf $(WHEEL_DIR)
	TRACEPROF_BUILD=$(BUILD) $(WHEEL_VENV)/bin/python -m pip wheel -q --disable-pip-version-check \
	    --no-deps --no-build-isolation -w $(WHEEL_DIR)/raw .
	PATH=$(WHEEL_VENV)/bin:$$PATH auditwheel repair -w $(WHEEL_DIR) $(WHEEL_DIR)/raw/*.whl \
	    >$(WHEEL_DIR)/repair.log 2>&1 || { cat $(WHEEL_DIR)/repair.log; exit 1; }
	@ls $(WHEEL_DIR)/*.whl

# ---- sanitizers ----
# `make check-asan` (ASan + UBSan) and `make check-tsan` run the whole suite
# against a library, unit tests and test programs built with the sanitizer, in
# their own build folders (build-asan, build-tsan).  TP_SANITIZER tells
# test/lib/common.sh to preload the sanitizer's runtime before the library.
# Leak detection is off: test programs and forked children exit without
# freeing on purpose.  Tests preload "$TP_PRELOAD" (runtime first) and
# `traceprof run` puts a sanitizer build's runtime first itself;
# verify_asan_link_order=0 is still needed where a test preloads another,
# uninstrumented library alone into an instrumented program (rel_life's runs
# without traceprof).  Nightly instructions: docs/development.md, "Fuzzing and sanitizers".
SAN_ASAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SAN_TSAN := -fsanitize=thread -fno-omit-frame-pointer

# The sanitizer runtimes call dlsym() while they initialise, before their
# shadow memory exists; traceprof interposes dlsym, so the code that a dlsym
# call reaches first (preload/resolve/cuda_dlsym.c, the name lookup in
# preload/resolve/cuda_match.c, over the table of collector/cuda_record.c)
# must not be instrumented.
ifneq ($(filter build-asan build-tsan,$(BUILD)),)
$(BUILD)/obj/preload/resolve/cuda_dlsym.o $(BUILD)/obj/preload/resolve/cuda_match.o \
    $(BUILD)/obj/collector/cuda_record.o $(BUILD)/obj/common/dl.o: \
    override ALL_CFLAGS := $(filter-out -fsanitize=%,$(ALL_CFLAGS))
endif

# check-asan also builds the CUDA wrappers in their portable C form
# (TP_C_WRAPPERS: what builds for other architectures than x86-64 use), so
# that both forms run the whole suite: the assembly form under make check and
# check-tsan, the C form here.
check-asan:
	TP_SANITIZER=asan ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:verify_asan_link_order=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	$(MAKE) BUILD=build-asan CFLAGS='-O1 -g' EXTRA_CFLAGS='$(SAN_ASAN) -DTP_C_WRAPPERS' \
	    EXTRA_LDFLAGS='$(SAN_ASAN)' check

check-tsan:
	TP_SANITIZER=tsan TSAN_OPTIONS=halt_on_error=1:die_after_fork=0:report_signal_unsafe=0 \
	$(MAKE) BUILD=build-tsan CFLAGS='-O1 -g' EXTRA_CFLAGS='$(SAN_TSAN)' \
	    EXTRA_LDFLAGS='$(SAN_TSAN)' check
