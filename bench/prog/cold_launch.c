/* The cold-cache launch benchmark (`make bench` row 11, issue 22): what a
 * <<<>>> launch pays on the real launch path, where the wrappers' code and
 * data are no longer in the caches when the next launch comes.
 *
 *   cold_launch [-n LAUNCHES] [-e 0|1|2] [-w WARMUP_LAUNCHES]
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
 * With -e 2 the work between launches is driver-like (the footprint a real
 * launch's ~4 us of driver code leaves, which -e 1 does not reproduce:
 * bench/RESULTS.md): each gap runs 512 of 4,096 functions, each aligned to
 * its own 256 bytes, so 1 MiB of code over 256 pages (more than L1i, the
 * L2, the iTLB's first level and the branch target buffer hold), chained
 * through an indirect call whose target depends on the data (mispredicted
 * targets), and walks a window of a 16 MiB buffer (more than the L2) that
 * moves on every gap, so that over a few gaps everything the recording path
 * touches has left L1 and L2, as on the real path.
 * Launches come in blocks of 10,000 (40,000 intercepted calls, within a
 * default ring; 2,000 with the eviction work) with 30 ms pauses, as in bench/prog/launch_loop.c, so that
 * the flush thread keeps up and nothing is dropped; 270,000 untimed launches
 * first fault the ring's pages in, and 3 untimed blocks warm the rest.  Prints launches=N ns_per_launch=X (median of
 * the blocks, converted with the TSC rate measured over the run) and
 * evict_ns=Y (the work between launches, for scale).
 *
 *   cold_launch -c KINDS [-e 0|2] [-n PER_PROBE]
 *
 * times, instead of the launch, the calibration probes of
 * bench/prog/cold_probe.S (KINDS: "all" or a comma-separated list of lines,
 * jnext, jumps, jpages, calls, ind, indd, data, tsc, chase, chasep; every N of each kind), the
 * same way: after the same gap, serialized rdtsc reads around the probe,
 * blocks of 400 gaps (10,000 tight), one warm-up round, the median of the
 * blocks.  The blocks of all probes are interleaved round by round, and a
 * probe runs for a whole block, so that its lines are as recently used when
 * the gap starts as the launch's are in the launch benchmark (touched at
 * every gap).  Prints one line per probe: probe=KIND n=N ns=X. */
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

/* ---- the driver-like eviction work (-e 2) -------------------------------- */

/* 16 MiB of data, more than any L2; each gap walks a 192 KiB window of it
 * that moves 192 KiB on every gap. */
#define BIG_BYTES (16u << 20)
#define BIG_WINDOW (192u << 10)
static uint8_t *big;
static uint32_t big_off;

/* One of 4,096 distinct functions, each on its own 256-byte boundary (1 MiB
 * of text): data-dependent branches, a load from the big buffer, and a
 * return value that picks the next function (an indirect call with a
 * varying target). */
#define DRV_FN(n)                                                                      \
	__attribute__((noinline, aligned(256))) static uint64_t d##n(uint64_t x)      \
	{                                                                              \
		x ^= big[(x * (n) + big_off) & (BIG_BYTES - 64)];                      \
		if (x & (1u << ((n) % 13)))                                            \
			x = x * 0x9E3779B97F4A7C15ull + (n);                           \
		else                                                                   \
			x ^= x >> 7;                                                   \
		switch ((x >> 5) & 7) {                                                \
		case 0: x += (n) * 5; break;                                          \
		case 1: x ^= (uint64_t)(n) << 17; break;                              \
		case 2: x = (x << 3) | (x >> 61); break;                              \
		case 3: x -= x >> 11; break;                                          \
		case 4: x *= (n) | 1; break;                                          \
		case 5: x += x >> 23; break;                                          \
		case 6: x ^= 0x5555u * (n); break;                                    \
		default: x = ~x; break;                                               \
		}                                                                      \
		return x;                                                              \
	}
#define R4096(M) R512(M##1) R512(M##2) R512(M##3) R512(M##4) R512(M##5) R512(M##6) \
	R512(M##7) R512(M##8)
/* R512 pastes digits after M's argument: DRV_FNk(n) is DRV_FN(kn). */
#define DRV_FN1(n) DRV_FN(1##n)
#define DRV_FN2(n) DRV_FN(2##n)
#define DRV_FN3(n) DRV_FN(3##n)
#define DRV_FN4(n) DRV_FN(4##n)
#define DRV_FN5(n) DRV_FN(5##n)
#define DRV_FN6(n) DRV_FN(6##n)
#define DRV_FN7(n) DRV_FN(7##n)
#define DRV_FN8(n) DRV_FN(8##n)
R4096(DRV_FN)
#define DRV_PTR(n) d##n,
#define DRV_PTR1(n) DRV_PTR(1##n)
#define DRV_PTR2(n) DRV_PTR(2##n)
#define DRV_PTR3(n) DRV_PTR(3##n)
#define DRV_PTR4(n) DRV_PTR(4##n)
#define DRV_PTR5(n) DRV_PTR(5##n)
#define DRV_PTR6(n) DRV_PTR(6##n)
#define DRV_PTR7(n) DRV_PTR(7##n)
#define DRV_PTR8(n) DRV_PTR(8##n)
static uint64_t (*const dtable[4096])(uint64_t) = { R4096(DRV_PTR) };
static uint32_t dpos;

static uint64_t evict_driver(uint64_t x)
{
	/* 512 calls, each to a function chosen by the data within a stretch
	 * of 1,024 that moves on every gap: every function runs every few
	 * gaps, and no gap repeats the last one's targets. */
	for (int i = 0; i < 512; i++)
		x = dtable[(dpos + (uint32_t)i * 2 + (uint32_t)(x & 1)) & 4095](x);
	dpos = (dpos + 1024 + 17) & 4095;
	for (uint32_t i = 0; i < BIG_WINDOW; i += 64)
		big[(big_off + i) & (BIG_BYTES - 1)] += (uint8_t)x;
	big_off = (big_off + BIG_WINDOW) & (BIG_BYTES - 1);
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

/* lfence; rdtsc; lfence rather than rdtscp: the same ordering for this
 * purpose, and valgrind (the cachegrind figures of row 11) cannot run
 * rdtscp. */
static uint64_t tsc_end(void)
{
	return tsc_begin();
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

/* ---- calibration probes (-c) -------------------------------------------- */

/* The functions of bench/prog/cold_probe.S.  Each returns whatever it left in
 * %rax (the data probes: the sum or the last pointer loaded). */
#define PROBE_LIST(X)                                                                  \
	X(lines, 0) X(lines, 4) X(lines, 8) X(lines, 16)                               \
	X(jnext, 0) X(jnext, 4) X(jnext, 8)                                            \
	X(jumps, 0) X(jumps, 4) X(jumps, 8)                                            \
	X(jpages, 0) X(jpages, 4) X(jpages, 8)                                         \
	X(calls, 0) X(calls, 4) X(calls, 8)                                            \
	X(ind, 0) X(ind, 4) X(ind, 8)                                                  \
	X(indd, 0) X(indd, 4) X(indd, 8)                                               \
	X(data, 0) X(data, 4) X(data, 8) X(data, 16)                                   \
	X(tsc, 0) X(tsc, 1) X(tsc, 3)                                                  \
	X(chase, 0) X(chase, 4) X(chase, 8) X(chase, 16)                               \
	X(chasep, 0) X(chasep, 4) X(chasep, 8) X(chasep, 16)
#define PROBE_DECL(kind, n) uint64_t cold_probe_##kind##_##n(void);
PROBE_LIST(PROBE_DECL)

struct probe {
	const char *kind;
	unsigned n;
	uint64_t (*fn)(void);
};
#define PROBE_ENTRY(kind, n) { #kind, n, cold_probe_##kind##_##n },
static const struct probe probes[] = { PROBE_LIST(PROBE_ENTRY) };
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

/* Line i of cold_probe.S's data area (1..17) is at 4,160 * i. */
extern uint8_t cold_probe_data[];
#define PROBE_STRIDE 4160
/* chasep's page: 16 lines 256 bytes apart, and the line it starts from. */
extern uint8_t cold_probe_page[];
extern uint8_t *cold_probe_page_start;

/* Whether kind is in the comma-separated list (or the list is "all"). */
static int probe_wanted(const char *list, const char *kind)
{
	if (strcmp(list, "all") == 0)
		return 1;
	size_t len = strlen(kind);
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == len && strncmp(p, kind, n) == 0)
			return 1;
		p += n + (end != NULL);
	}
	return 0;
}

static int run_probes(const char *list, int ev, uint64_t n)
{
	/* The pointer chase: data line i's first word points at line i + 1. */
	for (int i = 1; i <= 16; i++)
		memcpy(cold_probe_data + (size_t)i * PROBE_STRIDE,
		       &(uint8_t *){ cold_probe_data + (size_t)(i + 1) * PROBE_STRIDE }, sizeof(void *));
	/* chasep: line k of the page links to line (k * 5 + 3) % 16 (5 is
	 * odd: one cycle through all 16), so that no stride is seen. */
	for (unsigned k = 0; k < 16; k++)
		memcpy(cold_probe_page + k * 256, &(uint8_t *){ cold_probe_page + ((k * 5 + 3) % 16) * 256 },
		       sizeof(void *));
	cold_probe_page_start = cold_probe_page;
	size_t sel[NPROBES], nsel = 0;
	for (size_t p = 0; p < NPROBES; p++)
		if (probe_wanted(list, probes[p].kind))
			sel[nsel++] = p;
	if (nsel == 0) {
		fprintf(stderr, "cold_launch: -c %s: no such probe kind\n", list);
		return 2;
	}
	enum { WARM = 1, MAX_ROUNDS = 200 };
	uint64_t per_block = ev ? 400 : 10000;
	uint64_t rounds = n / per_block ? n / per_block : 1;
	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	static uint64_t blocks[NPROBES][WARM + MAX_ROUNDS];
	uint64_t x = 1, sink = 0;
	uint64_t t_ns0 = now_ns(), t_tsc0 = __rdtsc();
	for (uint64_t r = 0; r < WARM + rounds; r++) {
		for (size_t s = 0; s < nsel; s++) {
			uint64_t (*fn)(void) = probes[sel[s]].fn, ticks = 0;
			for (uint64_t i = 0; i < per_block; i++) {
				if (ev)
					x = ev == 2 ? evict_driver(x) : evict(x);
				uint64_t t0 = tsc_begin();
				sink += fn();
				ticks += tsc_end() - t0;
			}
			blocks[sel[s]][r] = ticks;
		}
	}
	double ns_per_tick = (double)(now_ns() - t_ns0) / (double)(__rdtsc() - t_tsc0);
	for (size_t s = 0; s < nsel; s++) {
		uint64_t *b = blocks[sel[s]];
		qsort(b + WARM, rounds, sizeof(b[0]), cmp_u64);
		printf("probe=%s n=%u ns=%.2f\n", probes[sel[s]].kind, probes[sel[s]].n,
		       (double)b[WARM + rounds / 2] * ns_per_tick / (double)per_block);
	}
	printf("probes=%zu rounds=%llu per_block=%llu sink=%llu\n", nsel, (unsigned long long)rounds,
	       (unsigned long long)per_block, (unsigned long long)((sink ^ x) & 1));
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n = 0; /* 40,000 launches, or 2,000 gaps per probe with -c */
	int ev = 1, opt;
	/* -w 0 for cachegrind (bench/run row 11), where page faults cost
	 * nothing and every launch counted should follow the eviction work. */
	uint64_t warmup = 270000;
	const char *probe_list = NULL;
	while ((opt = getopt(argc, argv, "n:e:w:c:")) != -1) {
		if (opt == 'c')
			probe_list = optarg;
		else if (opt == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (opt == 'w')
			warmup = strtoull(optarg, NULL, 10);
		else if (opt == 'e')
			ev = atoi(optarg);
		else
			return 2;
	}
	/* A fixed scramble (an LCG permutation step), the same in every run. */
	for (int i = 0; i < 512; i++)
		order[i] = (uint16_t)((i * 173 + 71) % 512);
	if (ev == 2) {
		big = malloc(BIG_BYTES);
		if (!big)
			return 1;
		memset(big, 1, BIG_BYTES);
	}
	if (probe_list)
		return run_probes(probe_list, ev, n ? n : 2000);
	if (!n)
		n = 40000;
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
	/* Warm-up: 270,000 launches, so that even at one recorded call a
	 * launch every page of a default ring (262,144 records,
	 * TRACEPROF_BUFFER_EVENTS) has been written once: a ring's pages are
	 * made resident as it fills (collector/ring.c), and in a tight loop the
	 * producer outruns the flush thread's prefault, so that on the first
	 * pass every 64th record waits for a page fault (~15 us in these VMs:
	 * +100 ns a launch, tight and cold, with the 70,000 launches this
	 * warm-up had when the default ring was 65,536 records).  That is not
	 * what a launch costs later.  20 ms pauses: 10,000 launches (40,000
	 * records with TRACEPROF_CUDA_CALLS=all) take the flush thread a few ms. */
	for (uint64_t w = 0; w < warmup; w += 10000) {
		struct timespec pause = { 0, 20 * 1000 * 1000 };
		nanosleep(&pause, NULL);
		for (uint64_t i = w; i < warmup && i < w + 10000; i++)
			errors += launch_once();
	}
	for (uint64_t b = 0; b < WARM + nblocks; b++) {
		struct timespec pause = { 0, 30 * 1000 * 1000 };
		nanosleep(&pause, NULL);
		uint64_t ticks = 0;
		for (uint64_t i = 0; i < per_block; i++) {
			if (ev) {
				uint64_t e0 = tsc_begin();
				x = ev == 2 ? evict_driver(x) : evict(x);
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
