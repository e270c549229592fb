# Test fixtures: the Check unit suites, the test programs, and the CUDA
# stand-ins, local-scope libraries and interposers the integration tests
# run (included by the Makefile, which defines BUILD, CC, ALL_CFLAGS,
# CORE_LIB, LIBS and preflight; `make check` builds everything here).
# The unit suites and test programs write dependency files (-MMD) beside
# their binaries, as the library's objects do.

$(BUILD)/test/test_%: test/unit/test_%.c $(CORE_LIB) $(DEPS_STAMP) | preflight
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -MF $@.d -MT $@ -fvisibility=default -o $@ $< $(CORE_LIB) $$(pkg-config --libs check) $(LIBS) $(EXTRA_LDFLAGS)

$(BUILD)/test/prog_%: test/programs/%.c $(DEPS_STAMP) | preflight
	@mkdir -p $(dir $@)
	@echo "  PROG    $@"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -MF $@.d -MT $@ -fvisibility=default -o $@ $< -ldl -lpthread -lm $(EXTRA_LDFLAGS)

-include $(UNIT_BINS:=.d) $(PROG_BINS:=.d)

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

check: $(STANDIN_BINS)
