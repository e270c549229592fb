/* Entry points of cuBLAS, cuDNN and NCCL, each of which carries its own static
 * CUDA runtime and reaches the driver by dlopen("libcuda.so.1") and
 * cuGetProcAddress_v2 (test/integration/cuda_staticlibs.sh).  Prints every
 * status, so that runs with and without traceprof can be compared. */
#include <stdio.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <nccl.h>
#include <cuda.h>
#include <dlfcn.h>
int main(void)
{
	cublasHandle_t cb = 0;
	cublasStatus_t s = cublasCreate(&cb);
	printf("cublasCreate: %d (%s)\n", (int)s, cublasGetStatusString(s));
	int v = 0;
	s = cublasGetVersion(cb, &v);
	printf("cublasGetVersion: %d\n", (int)s);
	if (cb) printf("cublasDestroy: %d\n", (int)cublasDestroy(cb));
	printf("cudnnGetVersion: %zu\n", cudnnGetVersion());
	cudnnHandle_t dn = 0;
	cudnnStatus_t ds = cudnnCreate(&dn);
	printf("cudnnCreate: %d (%s)\n", (int)ds, cudnnGetErrorString(ds));
	if (dn) printf("cudnnDestroy: %d\n", (int)cudnnDestroy(dn));
	int nv = 0;
	ncclResult_t nr = ncclGetVersion(&nv);
	printf("ncclGetVersion: %d %d\n", (int)nr, nv);
	ncclComm_t comm = 0;
	int dev = 0;
	nr = ncclCommInitAll(&comm, 1, &dev);
	printf("ncclCommInitAll: %d (%s)\n", (int)nr, ncclGetErrorString(nr));
	ncclUniqueId id;
	nr = ncclGetUniqueId(&id);
	printf("ncclGetUniqueId: %d\n", (int)nr);
	return 0;
}
