/* The devices' properties (Kineto's deviceProperties, and the occupancy
 * estimate of collector/gpu_devices.c), read through the real driver on the
 * thread that loaded CUPTI, right after cuInit (the driver may be gone by
 * the time an exit-time save runs), and reported to the collector
 * (tp_cupti_report_devices(), collector/cupti_plugin.c). */
#include <cuda.h>
#include <dlfcn.h>
#include <string.h>

#include "collector/cupti_queue.h"
#include "preload/cupti_internal.h"

void tp_cupti_query_devices(void)
{
	/* Static: 64 devices of 300 bytes; one thread, once (under
	 * preload/cupti.c's client lock, while loading). */
	static struct tp_gpu_device devs[TP_GPU_MAX_DEVICES];
	static int devs_ok[TP_GPU_MAX_DEVICES];
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return;
	__typeof__(&cuDeviceGetCount) get_count = tp_cupti_real_sym(h, "cuDeviceGetCount");
	__typeof__(&cuDeviceGet) get = tp_cupti_real_sym(h, "cuDeviceGet");
	__typeof__(&cuDeviceGetName) get_name = tp_cupti_real_sym(h, "cuDeviceGetName");
	__typeof__(&cuDeviceTotalMem) total = tp_cupti_real_sym(h, "cuDeviceTotalMem_v2");
	__typeof__(&cuDeviceGetAttribute) attr = tp_cupti_real_sym(h, "cuDeviceGetAttribute");
	int n = 0;
	if (!get_count || !get || !get_name || !total || !attr || get_count(&n) != CUDA_SUCCESS) {
		dlclose(h);
		return;
	}
	for (int i = 0; i < n && i < TP_GPU_MAX_DEVICES; i++) {
		CUdevice dev;
		if (get(&dev, i) != CUDA_SUCCESS)
			continue;
		struct tp_gpu_device d;
		memset(&d, 0, sizeof(d));
		get_name(d.name, sizeof(d.name), dev);
		size_t mem = 0;
		if (total(&mem, dev) == CUDA_SUCCESS)
			d.total_global_mem = mem;
		const struct {
			int *out;
			CUdevice_attribute a;
		} q[] = {
			{ &d.compute_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR },
			{ &d.compute_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR },
			{ &d.max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK },
			{ &d.max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR },
			{ &d.regs_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK },
			{ &d.warp_size, CU_DEVICE_ATTRIBUTE_WARP_SIZE },
			{ &d.shared_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK },
			{ &d.num_sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT },
			{ &d.regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR },
			{ &d.shared_per_block_optin,
			  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN },
			{ &d.shared_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR },
			{ &d.max_blocks_per_sm, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR },
		};
		for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
			if (attr(q[k].out, q[k].a, dev) != CUDA_SUCCESS)
				*q[k].out = 0;
		devs[i] = d;
		devs_ok[i] = 1;
	}
	dlclose(h);
	tp_cupti_report_devices(devs, devs_ok, TP_GPU_MAX_DEVICES);
}
