# The benchmarks' binaries (bench/*.c and what bench/run needs beside them),
# included by the Makefile after test/fixtures.mk (bench_cuda runs on its
# stand-in runtime).  `make bench` builds and runs them.

$(BUILD)/bench/%: bench/%.c $(CORE_LIB) $(DEPS_STAMP) | preflight
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -MF $@.d -MT $@ -O2 -fvisibility=default -o $@ $< $(CORE_LIB) $(LIBS)

-include $(BENCH_BINS:=.d)

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

# bench_cuda runs on the test stand-in runtime (test/fixtures.mk).
$(BUILD)/bench/bench_cuda: $(STANDIN_DIR)/libcudart.so.13
