# traceprof build.  `make` builds build/libtraceprof.so; `make check` runs every
# test; `make bench` runs the benchmarks; `make demo` runs a profiled example.
#
# Sources are picked up by folder, so adding a file to preload/, collector/,
# format/ or common/ needs no edit here.  Tests are picked up by name:
# test/unit/test_*.c (Check suites) and test/integration/*.sh.

CC        ?= gcc
CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
PYTHON    ?= python3
BUILD     := build
VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

# Dependencies are installed by the project itself when pkg-config cannot find
# them (a fresh machine): see scripts/install-deps.
PKGS := check libunwind libzstd zlib
DEPS_OK := $(shell pkg-config --exists $(PKGS) && echo yes)
ifneq ($(DEPS_OK),yes)
  $(info traceprof: installing missing build dependencies ($(PKGS)))
  $(shell scripts/install-deps >&2)
endif

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS := $(CFLAGS) -std=gnu11 -D_GNU_SOURCE -fPIC -pthread -fvisibility=hidden $(WARN) \
           -I. -I$(BUILD)/gen -DTRACEPROF_VERSION=\"$(VERSION)\" \
           -DTRACEPROF_CUDA_HOME=\"$(CUDA_HOME)\" $(EXTRA_CFLAGS)
LIBS    := -ldl -lpthread -lunwind -lzstd -lz -lm
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

CORE_SRCS    := $(wildcard common/*.c collector/*.c format/*.c)
PRELOAD_SRCS := $(wildcard preload/*.c)
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

.PHONY: all check check-unit check-integration bench demo install uninstall clean \
        check-asan check-tsan

all: $(LIB) $(BUILD)/traceprof

$(BUILD)/obj/%.o: %.c $(wildcard */*.h) $(BUILD)/gen/cuda_table.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(wildcard */*.h)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

# The CUDA wrappers are generated from the toolkit's headers on every build of
# a new toolkit; see scripts/gen-cuda-wrappers.
$(BUILD)/gen/cuda_wrappers.c $(BUILD)/gen/cuda_table.h: scripts/gen-cuda-wrappers $(wildcard $(CUDA_HOME)/include/cuda.h $(CUDA_HOME)/include/cuda_runtime_api.h)
	@mkdir -p $(BUILD)/gen
	$(PYTHON) scripts/gen-cuda-wrappers --cuda-home "$(CUDA_HOME)" --out $(BUILD)/gen

$(LIB): $(CORE_OBJS) $(PRELOAD_OBJS) preload/exports.map
	@echo "  LD      $@"
	@$(CC) -shared -o $@ $(CORE_OBJS) $(PRELOAD_OBJS) -Wl,--version-script=preload/exports.map \
	    -Wl,-soname,libtraceprof.so -Wl,--no-undefined $(LIBS) $(EXTRA_LDFLAGS)

$(CORE_LIB): $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/traceprof: scripts/traceprof
	@mkdir -p $(BUILD)
	cp scripts/traceprof $@ && chmod +x $@

$(BUILD)/test/test_%: test/unit/test_%.c $(CORE_LIB) $(wildcard test/unit/*.h)
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	@$(CC) $(ALL_CFLAGS) -fvisibility=default -o $@ $< $(CORE_LIB) $(CHECK_LIBS) $(LIBS) $(EXTRA_LDFLAGS)

$(BUILD)/test/prog_%: test/programs/%.c preload/traceprof.h
	@mkdir -p $(dir $@)
	@echo "  PROG    $@"
	@$(CC) $(ALL_CFLAGS) -fvisibility=default -o $@ $< -ldl -lpthread -lm $(EXTRA_LDFLAGS)

$(BUILD)/bench/%: bench/%.c $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -fvisibility=default -o $@ $< $(CORE_LIB) $(LIBS)

check: all $(UNIT_BINS) $(PROG_BINS)
	@BUILD=$(BUILD) CUDA_HOME=$(CUDA_HOME) PYTHON=$(PYTHON) test/run-all $(UNIT_BINS)

check-unit: $(UNIT_BINS)
	@BUILD=$(BUILD) test/run-all --unit-only $(UNIT_BINS)

bench: all $(BENCH_BINS) $(PROG_BINS)
	@BUILD=$(BUILD) CUDA_HOME=$(CUDA_HOME) bench/run

demo: all $(PROG_BINS)
	@BUILD=$(BUILD) CUDA_HOME=$(CUDA_HOME) scripts/demo

clean:
	rm -rf $(BUILD)
