#include "collector/thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/hot_data.h"
#include "common/log.h"
#include "common/procfs.h"

__thread struct tp_thread *tp_self __attribute__((tls_model("initial-exec")));
_Atomic uint64_t tp_threads_lost;
_Atomic uint64_t tp_ops_lost_deep;
_Atomic uint64_t tp_threads_lost_as;
/* This thread found no room for its ring (th_ring_slots()): it is GONE for
 * the hot path, and its events count as tp_threads_lost_as. */
static __thread int th_no_room __attribute__((tls_model("initial-exec")));

static _Atomic(struct tp_thread *) registry_head;
static _Atomic uint64_t registry_serial;
static uint64_t ring_slots_cfg = 1u << 16;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_ok;

TP_HOT_DATA intptr_t tp_self_tpoff;

/* Called after each ring's creation (the flush thread's lazy start).
 * Relaxed: a function pointer set once before any thread records, to a
 * function that lives as long as the library. */
static void (*_Atomic first_use)(void);

void tp_threads_set_first_use(void (*fn)(void))
{
	atomic_store_explicit(&first_use, fn, memory_order_relaxed);
}

void tp_threads_configure(uint64_t ring_slots)
{
	ring_slots_cfg = ring_slots;
	tp_self_tpoff = tp_hot_tpoff(&tp_self);
}

static void on_thread_exit(void *arg)
{
	struct tp_thread *t = arg;
	tp_self = TP_THREAD_GONE;
	/* Release pairs with the acquire load of dead in the flush thread: every
	 * record this thread committed is visible before the flush thread sees it
	 * dead and frees the ring after a last drain. */
	atomic_store_explicit(&t->dead, 1, memory_order_release);
}

static void make_exit_key(void)
{
	exit_key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

/* The smallest ring worth having (16 KiB); below it a thread does not
 * record. */
#define TH_MIN_SLOTS 256u

/* Slots for a new thread's ring.  All that TRACEPROF_BUFFER_EVENTS asks,
 * unless the program limits its own address space (RLIMIT_AS): then at most
 * an eighth of the room left under the limit, so that the program's own
 * malloc() and pthread_create() still get what they would without us.  0:
 * not even TH_MIN_SLOTS fits.  A thread's first event only (a /proc read). */
static uint64_t th_ring_slots(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return ring_slots_cfg;
	char text[128];
	uint64_t pages;
	if (tp_procfs_read("/proc/self/statm", text, sizeof(text)) < 0 ||
	    tp_procfs_word_u64(text, 0, &pages) < 0)
		return 0;
	uint64_t used = pages * (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t room = rl.rlim_cur > used ? (rl.rlim_cur - used) / 8 : 0;
	uint64_t slots = ring_slots_cfg;
	while (slots > TH_MIN_SLOTS && slots * sizeof(struct tp_record) > room)
		slots /= 2;
	return slots * sizeof(struct tp_record) <= room ? slots : 0;
}

struct tp_thread *tp_thread_create_self(void)
{
	if (tp_self == TP_THREAD_GONE) {
		atomic_fetch_add_explicit(th_no_room ? &tp_threads_lost_as : &tp_threads_lost, 1,
					  memory_order_relaxed);
		return NULL;
	}
	int saved = errno;
	struct tp_thread *t = NULL;
	/* Guard against re-entry: a signal handler that records while we are
	 * creating the state sees GONE and counts its event as lost. */
	tp_self = TP_THREAD_GONE;
	pthread_once(&exit_key_once, make_exit_key);
	if (posix_memalign((void **)&t, 64, sizeof(*t)) != 0)
		goto fail;
	memset(t, 0, sizeof(*t));
	uint64_t slots = th_ring_slots();
	if (!slots || tp_ring_init(&t->ring, slots) != 0) {
		free(t);
		t = NULL;
		/* The program's own RLIMIT_AS leaves no room: this thread does
		 * not record (each of its events counted), and the program keeps
		 * its memory.  Said once per process. */
		static _Atomic int said;
		if (!atomic_exchange_explicit(&said, 1, memory_order_relaxed))
			tp_warn("no room for a recording buffer under the program's address-space "
				"limit (RLIMIT_AS); threads without one are not recorded and their "
				"events are counted as events_lost_no_memory");
		tp_self = TP_THREAD_GONE;
		th_no_room = 1;
		atomic_fetch_add_explicit(&tp_threads_lost_as, 1, memory_order_relaxed);
		errno = saved;
		return NULL;
	}
	t->tid = (pid_t)syscall(SYS_gettid);
	t->cupti_thread = (uint32_t)(uintptr_t)pthread_self();
	/* The name now, while the thread is alive: a short-lived thread may be
	 * gone before the flush thread could read /proc.  One-time cost. */
	prctl(PR_GET_NAME, t->name, 0, 0, 0);
	t->serial = atomic_fetch_add_explicit(&registry_serial, 1, memory_order_relaxed);
	if (exit_key_ok)
		pthread_setspecific(exit_key, t);
	/* Lock-free push.  Release on success pairs with the acquire load in
	 * tp_threads_first(): the flush thread sees an initialised state. */
	struct tp_thread *head = atomic_load_explicit(&registry_head, memory_order_relaxed);
	do {
		t->next = head;
	} while (!atomic_compare_exchange_weak_explicit(&registry_head, &head, t,
							memory_order_release,
							memory_order_relaxed));
	tp_self = t;
	void (*fn)(void) = atomic_load_explicit(&first_use, memory_order_relaxed);
	if (fn)
		fn();
	errno = saved;
	return t;
fail:
	tp_self = NULL;
	atomic_fetch_add_explicit(&tp_threads_lost, 1, memory_order_relaxed);
	errno = saved;
	return NULL;
}

struct tp_thread *tp_threads_first(void)
{
	/* Pairs with the release CAS in tp_thread_create_self(). */
	return atomic_load_explicit(&registry_head, memory_order_acquire);
}

int64_t tp_threads_tid_of_cupti(uint32_t cupti_thread)
{
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next)
		if (t->cupti_thread == cupti_thread)
			return t->tid;
	return -1;
}

/* Whether t has exited and its ring holds nothing more: its last records are
 * in the store or converted (or counted), so the ring can go even while the
 * store or a window still needs t. */
static int ring_drained(struct tp_thread *t)
{
	/* Acquire pairs with the release store in on_thread_exit(): every record
	 * t committed is visible, so head below is its last. */
	if (!atomic_load_explicit(&t->dead, memory_order_acquire))
		return 0;
	/* Acquire pairs with the release store of head in tp_ring_commit(). */
	uint64_t head = atomic_load_explicit(&t->ring.head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&t->ring.tail, memory_order_relaxed);
	return head == tail;
}

void tp_threads_reap(int (*in_use)(struct tp_thread *t, void *ctx),
		     void (*forget)(struct tp_thread *t, void *ctx), void *ctx)
{
	/* Resident memory follows the live threads: a drained ring of an exited
	 * thread gives its pages back now (the small state stays while a
	 * window needs it), and a live ring is made resident ahead of its
	 * producer. */
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		if (ring_drained(t))
			tp_ring_destroy(&t->ring);
		else if (!atomic_load_explicit(&t->dead, memory_order_relaxed))
			tp_ring_prefault(&t->ring);
	}
	struct tp_thread *prev = tp_threads_first();
	if (!prev)
		return;
	/* The head is never unlinked: a concurrent push holds it as its `next`. */
	struct tp_thread *t = prev->next;
	while (t) {
		struct tp_thread *next = t->next;
		if (ring_drained(t) && !in_use(t, ctx)) {
			prev->next = next;
			tp_ring_destroy(&t->ring);
			forget(t, ctx);
			free(t);
		} else {
			prev = t;
		}
		t = next;
	}
}

void tp_threads_after_fork_child(void)
{
	/* The parent's rings are copies that no thread here will write.  Reset,
	 * never free (issue 17 item 3): the parent's flush thread may have been
	 * freeing one of them (tp_threads_reap) when the program forked.  They
	 * leak here: copy-on-write pages of the parent's. */
	atomic_store_explicit(&registry_head, NULL, memory_order_relaxed);
	if (exit_key_ok)
		pthread_setspecific(exit_key, NULL);
	tp_self = NULL;
}
