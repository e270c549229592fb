/* The cold-cache launch benchmark (`make bench` row 11, issue 22): what a
 * <<<>>> launch pays on the real launch path, where the wrappers' code and
 * data are no longer in the caches when the next launch comes.
 *
 *   cold_launch [-n LAUNCHES] [-e 0|1]
 *
 * Each launch is what nvcc generates for kernel<<<grid, block>>>(args):
 * __cudaPushCallConfiguration, __cudaPopCallConfiguration and
 * __cudaLaunchKernel, whose stand-in calls the stand-in driver's
 * cuLaunchKernel (bench/standin/noop_cudart.c, noop_cuda.c), so four
 * intercepted calls as on a real GPU.  With -e 1 (the default) each launch
 * is preceded by about 4 us of unrelated work, roughly a real launch's own:
 * 512 distinct functions (about 60 KiB of code, more than L1i) with
 * data-dependent branches, called through a table in a scrambled order (the
 * branch predictors), over 64 KiB of data (more than L1d).  Only the launch
 * itself is timed, with serialized rdtsc reads; the eviction work is not.
 * Launches come in blocks of 10,000 (40,000 intercepted calls, within a
 * default ring; 2,000 with the eviction work) with 30 ms pauses, as in bench/prog/launch_loop.c, so that
 * the flush thread keeps up and nothing is dropped; 70,000 untimed launches
 * first fault the ring's pages in, and 3 untimed blocks warm the rest.  Prints launches=N ns_per_launch=X (median of
 * the blocks, converted with the TSC rate measured over the run) and
 * evict_ns=Y (the work between launches, for scale). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

struct bench_dim3 {
	unsigned x, y, z;
};
unsigned __cudaPushCallConfiguration(struct bench_dim3 grid, struct bench_dim3 block,
				     size_t shared, void *stream);
int __cudaPopCallConfiguration(struct bench_dim3 *grid, struct bench_dim3 *block, size_t *shared,
			       void *stream);
int __cudaLaunchKernel(const void *func, struct bench_dim3 grid, struct bench_dim3 block,
		       void **args, size_t shared, void *stream);

/* ---- the eviction work -------------------------------------------------- */

static uint8_t data[64 * 1024];

/* One of 512 distinct functions: a few data-dependent branches and loads. */
#define EVICT_FN(n)                                                                    \
	__attribute__((noinline)) static uint64_t f##n(uint64_t x)                    \
	{                                                                              \
		x ^= data[(x * (n) + (n)) & (sizeof(data) - 64)];                      \
		if (x & (1u << ((n) % 13)))                                            \
			x = x * 0x9E3779B97F4A7C15ull + (n);                           \
		else                                                                   \
			x ^= x >> 7;                                                   \
		if ((x >> ((n) % 11)) & 1)                                             \
			x += (uint64_t)(n) * 3;                                        \
		else                                                                   \
			x -= (n);                                                      \
		switch ((x >> 5) & 3) {                                                \
		case 0: x += data[(x >> 9) & (sizeof(data) - 1)]; break;              \
		case 1: x ^= (uint64_t)(n) << 17; break;                              \
		case 2: x = (x << 3) | (x >> 61); break;                              \
		default: x -= x >> 11; break;                                         \
		}                                                                      \
		return x;                                                              \
	}
/* 512 functions numbered with the digits 1-8 (111 ... 888): no leading 0
 * (octal) and no 9, so that every name and constant is distinct. */
#define R8(M, n) M(n##1) M(n##2) M(n##3) M(n##4) M(n##5) M(n##6) M(n##7) M(n##8)
#define R64(M, n) R8(M, n##1) R8(M, n##2) R8(M, n##3) R8(M, n##4) R8(M, n##5) R8(M, n##6) \
	R8(M, n##7) R8(M, n##8)
#define R512(M) R64(M, 1) R64(M, 2) R64(M, 3) R64(M, 4) R64(M, 5) R64(M, 6) R64(M, 7) R64(M, 8)

R512(EVICT_FN)
#define EVICT_PTR(n) f##n,
static uint64_t (*const table[512])(uint64_t) = { R512(EVICT_PTR) };
static uint16_t order[512];

static uint64_t evict(uint64_t x)
{
	for (int i = 0; i < 512; i++)
		x = table[order[i]](x);
	for (size_t i = 0; i < sizeof(data); i += 64)
		data[i] += (uint8_t)x;
	return x;
}

/* ---- timing ------------------------------------------------------------- */

static uint64_t tsc_begin(void)
{
	_mm_lfence();
	uint64_t t = __rdtsc();
	_mm_lfence();
	return t;
}

static uint64_t tsc_end(void)
{
	unsigned aux;
	uint64_t t = __rdtscp(&aux);
	_mm_lfence();
	return t;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void kernel_stub(void)
{
}

/* One <<<>>> launch as nvcc generates it; returns the failures. */
static uint64_t launch_once(void)
{
	struct bench_dim3 grid = { 128, 1, 1 }, block = { 256, 1, 1 }, g, bl;
	void *args[1] = { NULL };
	size_t shm;
	void *stream;
	uint64_t errors = __cudaPushCallConfiguration(grid, block, 0, NULL) != 0;
	errors += __cudaPopCallConfiguration(&g, &bl, &shm, &stream) != 0;
	errors += __cudaLaunchKernel((const void *)kernel_stub, g, bl, args, shm, stream) != 0;
	return errors;
}

int main(int argc, char **argv)
{
	uint64_t n = 40000;
	int ev = 1, opt;
	while ((opt = getopt(argc, argv, "n:e:")) != -1) {
		if (opt == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (opt == 'e')
			ev = atoi(optarg);
		else
			return 2;
	}
	/* A fixed scramble (an LCG permutation step), the same in every run. */
	for (int i = 0; i < 512; i++)
		order[i] = (uint16_t)((i * 173 + 71) % 512);
	enum { WARM = 3, MAX_BLOCKS = 1000 };
	/* Blocks of 10,000 tight launches, or 2,000 with the eviction work
	 * (which takes tens of us each). */
	uint64_t per_block = ev ? 2000 : 10000;
	uint64_t nblocks = n / per_block ? n / per_block : 1;
	if (nblocks > MAX_BLOCKS)
		nblocks = MAX_BLOCKS;
	static uint64_t blocks[WARM + MAX_BLOCKS];
	uint64_t x = 1, evict_ticks = 0, errors = 0;
	uint64_t t_ns0 = now_ns(), t_tsc0 = __rdtsc();
	/* Warm-up: 70,000 launches, so that even at one recorded call a launch
	 * every page of a default ring (65,536 records) has been written once:
	 * a ring's pages are made resident as it fills (collector/ring.c), and
	 * the first pass's page faults are not what a launch costs later. */
	for (int w = 0; w < 7; w++) {
		struct timespec pause = { 0, 30 * 1000 * 1000 };
		nanosleep(&pause, NULL);
		for (int i = 0; i < 10000; i++)
			errors += launch_once();
	}
	for (uint64_t b = 0; b < WARM + nblocks; b++) {
		struct timespec pause = { 0, 30 * 1000 * 1000 };
		nanosleep(&pause, NULL);
		uint64_t ticks = 0;
		for (uint64_t i = 0; i < per_block; i++) {
			if (ev) {
				uint64_t e0 = tsc_begin();
				x = evict(x);
				evict_ticks += tsc_end() - e0;
			}
			uint64_t t0 = tsc_begin();
			errors += launch_once();
			ticks += tsc_end() - t0;
		}
		blocks[b] = ticks;
	}
	double ns_per_tick = (double)(now_ns() - t_ns0) / (double)(__rdtsc() - t_tsc0);
	qsort(blocks + WARM, nblocks, sizeof(blocks[0]), cmp_u64);
	printf("launches=%llu ns_per_launch=%.2f evict_ns=%.1f errors=%llu sink=%llu\n",
	       (unsigned long long)(per_block * nblocks),
	       (double)blocks[WARM + nblocks / 2] * ns_per_tick / (double)per_block,
	       ev ? (double)evict_ticks * ns_per_tick / (double)(per_block * (WARM + nblocks)) : 0.0,
	       (unsigned long long)errors, (unsigned long long)(x & 1));
	return errors != 0;
}
