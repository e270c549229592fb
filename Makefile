# traceprof build.  `make` builds build/libtraceprof.so; `make check` runs every
# test; `make bench` runs the benchmarks; `make demo` runs a profiled example.
#
# Sources are picked up by folder, so adding a file to preload/, collector/,
# format/ or common/ needs no edit here.  Tests are picked up by name:
# test/unit/test_*.c (Check suites) and test/integration/*.sh.

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
# .ci/run also calls).  Reading this file never installs anything (make -n
# included); the targets that compile check first (preflight, below) and run
# install-deps themselves when a library is missing, and `make check` does
# the same for the tests' packages and venvs (check-deps).  TP_INSTALL_DEPS
# names another script (the tests' stand-in, test/integration/build_autodeps.sh).
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
PRELOAD_SRCS := $(wildcard preload/*.c preload/resolve/*.c)
GEN_SRCS     := $(BUILD)/gen/cuda_wrappers.c
CORE_OBJS    := $(CORE_SRCS:%.c=$(BUILD)/obj/%.o)
PRELOAD_OBJS := $(PRELOAD_SRCS:%.c=$(BUILD)/obj/%.o) $(GEN_SRCS:$(BUILD)/gen/%.c=$(BUILD)/obj/gen/%.o)

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
# before any compiler error could bury the cause:
# - the libraries pkg-config finds: when one is missing it says which and
#   runs scripts/install-deps (apt-get install, as root or through sudo),
#   then goes on; when they are still missing it stops with one line;
# - a CUDA toolkit at CUDA_HOME: its headers (cuda.h, cuda_runtime_api.h,
#   cupti.h, nvtx3/) are needed by preload/ and the test stand-ins even
#   where no GPU exists.  Not a Debian package: it stops with how to get it.
TOOLKIT_HEADERS := cuda.h cuda_runtime_api.h cupti.h nvtx3/nvToolsExt.h
PKG_MISSING = missing=""; for p in $(PKGS); do pkg-config --exists $$p 2>/dev/null || missing="$$missing $$p"; done
preflight:
	@command -v pkg-config >/dev/null 2>&1 && pkg-config --exists $(PKGS) || { \
	    $(PKG_MISSING); \
	    echo "traceprof: missing build dependencies (pkg-config cannot find:$$missing); running $(TP_INSTALL_DEPS) (apt-get install, as root or through sudo)" >&2; \
	    $(TP_INSTALL_DEPS) || { echo "traceprof: $(TP_INSTALL_DEPS) failed (above); install the packages it names, or run 'make deps' as root, then make again" >&2; exit 1; }; \
	    $(PKG_MISSING); \
	    [ -z "$$missing" ] || { echo "traceprof: still missing after $(TP_INSTALL_DEPS) (pkg-config cannot find:$$missing); install them (Debian: libunwind-dev libzstd-dev zlib1g-dev check) or set PKG_CONFIG_PATH" >&2; exit 1; }; }
	@missing=""; for h in $(TOOLKIT_HEADERS); do [ -e "$(CUDA_HOME)/include/$$h" ] || missing="$$missing $$h"; done; \
	[ -z "$$missing" ] || { \
	    echo "traceprof: no CUDA toolkit at CUDA_HOME=$(CUDA_HOME) (missing include/:$$missing); install the CUDA 13 toolkit (NVIDIA's cuda-toolkit-13-0 package; no GPU is needed) and run make CUDA_HOME=<its folder> (default /usr/local/cuda)" >&2; \
	    exit 1; }

$(BUILD)/obj/%.o: %.c $(wildcard */*.h preload/resolve/*.h) $(BUILD)/gen/cuda_table.h | preflight
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

# The options table expands inside config.c (parser, names, visitor).
$(BUILD)/obj/common/config.o: common/options.def

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(wildcard */*.h preload/resolve/*.h) | preflight
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

# The CUDA wrappers are generated from the toolkit's headers on every build of
# a new toolkit; see scripts/gen-cuda-wrappers.
# One run writes both files: the table depends on the wrappers, so that a
# parallel make runs the generator once (two targets of one rule would be two
# runs racing on the same temporary files).
$(BUILD)/gen/cuda_wrappers.c: scripts/gen-cuda-wrappers $(wildcard $(CUDA_HOME)/include/cuda.h $(CUDA_HOME)/include/cuda_runtime_api.h) | preflight
	@mkdir -p $(BUILD)/gen
	$(PYTHON) scripts/gen-cuda-wrappers --cuda-home "$(CUDA_HOME)" --out $(BUILD)/gen

$(BUILD)/gen/cuda_table.h: $(BUILD)/gen/cuda_wrappers.c

$(LIB): $(CORE_OBJS) $(PRELOAD_OBJS) preload/exports.map
	@echo "  LD      $@"
	@$(CC) -shared -o $@ $(CORE_OBJS) $(PRELOAD_OBJS) -Wl,--version-script=preload/exports.map \
	    -Wl,-soname,libtraceprof.so -Wl,--no-undefined $(LIBS) $(EXTRA_LDFLAGS)

$(CORE_LIB): $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The command: a launcher script and a copy of the Python package
# (scripts/traceprof: the `traceprof` module, the command in cli/, the trace
# readers and writers in traces/, pyboot/) with VERSION, in build/python; a
# module gone from the package goes from the copy too.
PKG_PY := $(shell find scripts/traceprof -name '*.py' -not -path '*/__pycache__/*')

$(BUILD)/traceprof: scripts/traceprof-launcher $(PKG_PY) VERSION
	@mkdir -p $(BUILD)
	rm -rf $(BUILD)/python && mkdir -p $(BUILD)/python
	for f in $(PKG_PY:scripts/%=%); do mkdir -p $(BUILD)/python/$${f%/*} && cp scripts/$$f $(BUILD)/python/$$f || exit 1; done
	cp VERSION $(BUILD)/python/traceprof/VERSION
	cp scripts/traceprof-launcher $@ && chmod +x $@

$(BUILD)/test/test_%: test/unit/test_%.c $(CORE_LIB) $(wildcard test/unit/*.h) | preflight
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	@$(CC) $(ALL_CFLAGS) -fvisibility=default -o $@ $< $(CORE_LIB) $$(pkg-config --libs check) $(LIBS) $(EXTRA_LDFLAGS)

$(BUILD)/test/prog_%: test/programs/%.c preload/traceprof.h | preflight
	@mkdir -p $(dir $@)
	@echo "  PROG    $@"
	@$(CC) $(ALL_CFLAGS) -fvisibility=default -o $@ $< -ldl -lpthread -lm $(EXTRA_LDFLAGS)

$(BUILD)/bench/%: bench/%.c $(CORE_LIB) | preflight
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -fvisibility=default -o $@ $< $(CORE_LIB) $(LIBS)

# The tests' packages (clang, uftrace, Node.js, ...) and venvs (PyTorch, the
# wheel tools): install-deps --check says what is missing without
# installing; only then does install-deps --with-optional run (it says what
# it installs).  After preflight, so that two apt-get never run at once.
check-deps: preflight
	@m=$$($(TP_INSTALL_DEPS) --check --with-optional) || { \
	    echo "traceprof: make check: the tests need what is $$m; running $(TP_INSTALL_DEPS) --with-optional" >&2; \
	    $(TP_INSTALL_DEPS) --with-optional || { echo "traceprof: $(TP_INSTALL_DEPS) --with-optional failed (above); the tests that need it will SKIP" >&2; }; }

check: all $(UNIT_BINS) $(PROG_BINS) check-deps
	@BUILD=$(BUILD) CUDA_HOME=$(CUDA_HOME) PYTHON=$(PYTHON) test/run-all $(UNIT_BINS)

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

# ---- bench ----
# Bench-only binaries that the bench/*.c rule above does not cover (bench/run
# uses them).  build/bench/libcudart.so.13 is a STAND-IN for NVIDIA's runtime:
# a no-op cudaLaunchKernel and cudaGetLastError (bench/standin/noop_cudart.c),
# so that the benchmark measures what traceprof adds to an intercepted call.
# build/bench/launch_loop calls it through the PLT and finds it by $ORIGIN.
# build/bench/libcuda.so.1 is its driver stand-in (a no-op cuLaunchKernel,
# which the runtime stand-in's __cudaLaunchKernel calls, as the real one
# does); build/bench/cold_launch makes nvcc's launch sequence between bursts
# of cache-evicting work (row 11).
BENCH_STANDIN := $(BUILD)/bench/libcudart.so.13
BENCH_DRIVER  := $(BUILD)/bench/libcuda.so.1
BENCH_PROGS   := $(BUILD)/bench/launch_loop $(BUILD)/bench/cold_launch

$(BENCH_DRIVER): bench/standin/noop_cuda.c | preflight
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -shared -Wl,-soname,libcuda.so.1 -o $@ $<

$(BENCH_STANDIN): bench/standin/noop_cudart.c $(BENCH_DRIVER) | preflight
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -shared -Wl,-soname,libcudart.so.13 -o $@ $< -L$(BUILD)/bench \
	    -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN'

$(BUILD)/bench/cold_launch: bench/prog/cold_launch.c bench/prog/cold_probe.S $(BENCH_STANDIN) | preflight
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -fvisibility=default -o $@ $< bench/prog/cold_probe.S -L$(BUILD)/bench \
	    -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN'

$(BUILD)/bench/launch_loop: bench/prog/launch_loop.c $(BENCH_STANDIN) preload/traceprof.h | preflight
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -fvisibility=default -o $@ $< -L$(BUILD)/bench \
	    -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN' -ldl -lpthread

bench: $(BENCH_STANDIN) $(BENCH_PROGS)
# test/integration/rel_burst.sh runs the bench's launch loop.
check: $(BENCH_STANDIN) $(BENCH_PROGS)

# ---- CUDA test stand-ins (test/standin) ----
# Test-only libcuda.so.1 / libcudart.so.13 that succeed without a GPU, a
# libcupti.so.13 that makes up one kernel per correlated call, and the
# C programs that drive them (see test/standin/*.c and test/integration/cuda_*.sh).
STANDIN_DIR  := $(BUILD)/standin
STANDIN_BINS := $(STANDIN_DIR)/libcuda.so.1 $(STANDIN_DIR)/libcudart.so.13 \
                $(STANDIN_DIR)/libcupti.so.13 $(STANDIN_DIR)/cupti12/libcupti.so.12 \
                $(STANDIN_DIR)/standin_app \
                $(STANDIN_DIR)/standin_dlopen \
                $(STANDIN_DIR)/standin_capture \
                $(STANDIN_DIR)/standin_graph
STANDIN_CFLAGS := -O2 -g -fPIC -Wall -Wextra -Werror -Wno-unused-parameter

$(STANDIN_DIR)/libcuda.so.1: test/standin/fake_cuda.c test/standin/fake_cuda_launch.c | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -shared -o $@ $^ -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -lpthread
	ln -sf libcuda.so.1 $(STANDIN_DIR)/libcuda.so

# Like NVIDIA's, the stand-in runtimes version every symbol with their soname
# (cudaMalloc@@libcudart.so.13), which decides what a caller binds to when two
# runtimes are loaded.
$(STANDIN_DIR)/libcudart.so.13 $(STANDIN_DIR)/rt12/libcudart.so.12: test/standin/fake_cudart.c | preflight
	@mkdir -p $(dir $@)
	printf '%s { global: *; };\n' $(notdir $@) > $@.map
	$(CC) $(STANDIN_CFLAGS) -DSTANDIN_MAJOR=$(subst .,,$(suffix $@)) -shared -o $@ $< \
	    -Wl,-soname,$(notdir $@) -Wl,--version-script,$@.map -ldl
	ln -sf $(notdir $@) $(dir $@)libcudart.so

# ---- Local scopes (test/scope, test/integration/cuda_scope.sh) ----
# Libraries that reach a CUDA runtime or driver in their own local scope, as
# extension modules do: the test stand-ins of two runtime majors, the stand-in
# driver, and the toolkit's real libcudart.so.13 when there is a toolkit.
SCOPE_DIR  := $(STANDIN_DIR)/scope
SCOPE_BINS := $(SCOPE_DIR)/scope_app $(SCOPE_DIR)/libprobe12.so $(SCOPE_DIR)/libprobe13.so \
              $(SCOPE_DIR)/libprobe_drv.so $(SCOPE_DIR)/libinit_top.so \
              $(if $(wildcard $(CUDA_HOME)/lib64/libcudart.so.13),$(SCOPE_DIR)/libprobe_real.so)

$(SCOPE_DIR)/scope_app: test/scope/scope_app.c | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -o $@ $< -ldl -lpthread

$(SCOPE_DIR)/libinit_a.so: test/scope/init_order.c | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -DINIT_A -shared -o $@ $< -ldl

$(SCOPE_DIR)/libinit_b.so: test/scope/init_order.c $(SCOPE_DIR)/libinit_a.so | preflight
	$(CC) $(STANDIN_CFLAGS) -DINIT_B -shared -o $@ $< -L$(SCOPE_DIR) -l:libinit_a.so \
	    -Wl,-rpath,'$$ORIGIN'

$(SCOPE_DIR)/libinit_top.so: test/scope/init_order.c $(SCOPE_DIR)/libinit_b.so | preflight
	$(CC) $(STANDIN_CFLAGS) -DINIT_TOP -shared -o $@ $< -L$(SCOPE_DIR) -Wl,--no-as-needed -l:libinit_b.so \
	    -l:libinit_a.so -Wl,-rpath,'$$ORIGIN'

$(SCOPE_DIR)/libprobe12.so: test/scope/probe.c $(STANDIN_DIR)/rt12/libcudart.so.12 | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -shared -o $@ $< -L$(STANDIN_DIR)/rt12 -l:libcudart.so.12 \
	    -Wl,-rpath,'$$ORIGIN/../rt12'

$(SCOPE_DIR)/libprobe13.so: test/scope/probe.c $(STANDIN_DIR)/libcudart.so.13 | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -shared -o $@ $< -L$(STANDIN_DIR) -l:libcudart.so.13 \
	    -Wl,-rpath,'$$ORIGIN/..'

$(SCOPE_DIR)/libprobe_drv.so: test/scope/probe.c $(STANDIN_DIR)/libcuda.so.1 | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -DPROBE_DRIVER -shared -o $@ $< -L$(STANDIN_DIR) -l:libcuda.so.1 \
	    -Wl,-rpath,'$$ORIGIN/..'

$(SCOPE_DIR)/libprobe_real.so: test/scope/probe.c | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -shared -o $@ $< -L$(CUDA_HOME)/lib64 -l:libcudart.so.13 \
	    -Wl,-rpath,$(CUDA_HOME)/lib64

# A plugin loaded, unloaded and loaded again (test/scope/reload.c,
# test/integration/cuda_reload.sh): two builds of the stand-in runtime that
# report different device counts (1 and 3), each beside its own plugin, and
# a plugin linked with the toolkit's real runtime.
RELOAD_BINS := $(SCOPE_DIR)/reload_app $(SCOPE_DIR)/reload_a/libplugin.so \
               $(SCOPE_DIR)/reload_b/libplugin.so \
               $(if $(wildcard $(CUDA_HOME)/lib64/libcudart.so.13),$(SCOPE_DIR)/libplugin_real.so)

$(SCOPE_DIR)/reload_app: test/scope/reload.c | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -o $@ $< -ldl

$(SCOPE_DIR)/reload_a/libcudart.so.13 $(SCOPE_DIR)/reload_b/libcudart.so.13: test/standin/fake_cudart.c | preflight
	@mkdir -p $(dir $@)
	printf '%s { global: *; };\n' $(notdir $@) > $@.map
	$(CC) $(STANDIN_CFLAGS) $(if $(findstring reload_a,$@),-DSTANDIN_DEVICES=1 -DSTANDIN_PAD=2,-DSTANDIN_DEVICES=3 -DSTANDIN_PAD=1) -shared -o $@ $< \
	    -Wl,-soname,$(notdir $@) -Wl,--version-script,$@.map -ldl

$(SCOPE_DIR)/reload_%/libplugin.so: test/scope/reload.c $(SCOPE_DIR)/reload_%/libcudart.so.13 | preflight
	$(CC) $(STANDIN_CFLAGS) -DRELOAD_PLUGIN -shared -o $@ $< -L$(dir $@) -l:libcudart.so.13 \
	    -Wl,-rpath,'$$ORIGIN'

$(SCOPE_DIR)/libplugin_real.so: test/scope/reload.c | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -DRELOAD_PLUGIN -shared -o $@ $< -L$(CUDA_HOME)/lib64 -l:libcudart.so.13 \
	    -Wl,-rpath,$(CUDA_HOME)/lib64

check: $(SCOPE_BINS) $(RELOAD_BINS)

# A preloaded CUDA interposer (test/integration/cuda_shim.sh): unversioned,
# and versioned as another runtime major's (libshim12.so); a program linked
# with the stand-in runtime.
SHIM_BINS := $(STANDIN_DIR)/libshim.so $(STANDIN_DIR)/libshim12.so $(STANDIN_DIR)/shim_app

$(STANDIN_DIR)/libshim.so: test/standin/shim.c | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -shared -o $@ $< -ldl

$(STANDIN_DIR)/libshim12.so: test/standin/shim.c | preflight
	@mkdir -p $(dir $@)
	printf 'libcudart.so.12 { global: cudaGetDeviceCount; local: *; };\n' > $@.map
	$(CC) $(STANDIN_CFLAGS) -shared -o $@ $< -Wl,--version-script,$@.map -ldl

$(STANDIN_DIR)/shim_app: test/standin/shim_app.c $(STANDIN_DIR)/libcudart.so.13 | preflight
	$(CC) $(STANDIN_CFLAGS) -o $@ $< -L$(STANDIN_DIR) -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN'

check: $(SHIM_BINS)

# With the toolkit's CUPTI headers: the stand-in writes their record layouts.
# Built twice: as our major's libcupti, and as another major's (cupti12/),
# which a program may have loaded already.  The soname is the file's name.
$(STANDIN_DIR)/libcupti.so.13 $(STANDIN_DIR)/cupti12/libcupti.so.12: test/standin/fake_cupti.c | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -I$(CUDA_HOME)/include -shared -o $@ $< -Wl,-soname,$(notdir $@) \
	    -lpthread

$(STANDIN_DIR)/standin_app: test/standin/standin_app.c $(STANDIN_DIR)/libcudart.so.13 $(STANDIN_DIR)/libcuda.so.1 | preflight
	$(CC) $(STANDIN_CFLAGS) -o $@ $< -L$(STANDIN_DIR) -lcudart -ldl -Wl,--no-as-needed -lstdc++ \
	    -Wl,-rpath,'$$ORIGIN'

$(STANDIN_DIR)/standin_capture: test/standin/standin_capture.c $(STANDIN_DIR)/libcudart.so.13 $(STANDIN_DIR)/libcuda.so.1 | preflight
	$(CC) $(STANDIN_CFLAGS) -I. -o $@ $< -L$(STANDIN_DIR) -lcudart -lcuda -ldl \
	    -Wl,-rpath,'$$ORIGIN'

$(STANDIN_DIR)/standin_graph: test/standin/standin_graph.c $(STANDIN_DIR)/libcuda.so.1 | preflight
	$(CC) $(STANDIN_CFLAGS) -o $@ $< -L$(STANDIN_DIR) -l:libcuda.so.1 -ldl -Wl,-rpath,'$$ORIGIN'

$(STANDIN_DIR)/standin_dlopen: test/standin/standin_dlopen.c | preflight
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -o $@ $< -ldl

$(BUILD)/bench/bench_cuda: $(STANDIN_DIR)/libcudart.so.13
check: $(STANDIN_BINS)

# ---- install / uninstall ----
# make install [PREFIX=/usr/local] [DESTDIR=...] installs the library, the
# header, the `traceprof` command (bin/traceprof, a launcher), the Python
# package (PYTHON_DIR/traceprof: `import traceprof`, and the command's own
# modules) and a pkg-config file; make uninstall removes exactly those
# files, and the package's folders once empty.  A pip install
# (pyproject.toml) is the other way, for a venv.
PYTHON_DIR ?= $(PREFIX)/lib/python3/dist-packages
PKG_FILES := $(PKG_PY:scripts/%=%) traceprof/VERSION
PKG_DIRS := $(sort $(dir $(PKG_FILES)))
INSTALL_FILES := $(PREFIX)/lib/libtraceprof.so $(PREFIX)/include/traceprof.h \
                 $(PREFIX)/bin/traceprof $(PREFIX)/lib/pkgconfig/traceprof.pc \
                 $(addprefix $(PYTHON_DIR)/,$(PKG_FILES))

install: $(LIB) scripts/traceprof-launcher $(PKG_PY) VERSION preload/traceprof.h
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig $(addprefix $(DESTDIR)$(PYTHON_DIR)/,$(PKG_DIRS))
	install -m 0755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libtraceprof.so
	install -m 0644 preload/traceprof.h $(DESTDIR)$(PREFIX)/include/traceprof.h
	sed 's|^PYDIR = "@PYDIR@"|PYDIR = "$(PYTHON_DIR)"|' scripts/traceprof-launcher \
	    > $(DESTDIR)$(PREFIX)/bin/traceprof
	chmod 0755 $(DESTDIR)$(PREFIX)/bin/traceprof
	for f in $(PKG_PY:scripts/%=%); do install -m 0644 scripts/$$f $(DESTDIR)$(PYTHON_DIR)/$$f || exit 1; done
	install -m 0644 VERSION $(DESTDIR)$(PYTHON_DIR)/traceprof/VERSION
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: traceprof' 'Description: zero-code LD_PRELOAD profiler for CUDA programs' \
	    'Version: $(VERSION)' 'Libs: -L$${libdir} -ltraceprof' 'Cflags: -I$${includedir}' \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/traceprof.pc
	@echo "traceprof: installed into $(DESTDIR)$(PREFIX): bin/traceprof, lib/libtraceprof.so,"
	@echo "  include/traceprof.h, lib/pkgconfig/traceprof.pc, and the Python package"
	@echo "  $(DESTDIR)$(PYTHON_DIR)/traceprof (add that folder to PYTHONPATH if python3"
	@echo "  does not search it; PYTHON_DIR=... chooses another)"

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALL_FILES))
	-rmdir $(addprefix $(DESTDIR)$(PYTHON_DIR)/,$(filter-out traceprof,$(PKG_DIRS:%/=%)) traceprof) 2>/dev/null

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
