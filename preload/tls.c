/* preload/tls.h: one pthread key for every module's per-thread state.  The
 * key's value is the thread's list of states, newest first. */
#include "preload/tls.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>

struct tls_hdr {
	struct tls_hdr *next;	/* the thread's states allocated before */
	void (*forget)(void);	/* clears the module's TLS pointer */
};

/* The state follows its header, aligned for any type. */
#define TLS_HDR_SIZE \
	((sizeof(struct tls_hdr) + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1))

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_key_ok; /* written inside pthread_once, which orders its reads */

/* The thread ends: every state it allocated goes, each module's pointer
 * first, so that nothing the destructors of other keys run afterwards can
 * find a freed state (it allocates a new one, freed in the next round). */
static void tls_free_all(void *p)
{
	for (struct tls_hdr *h = p, *next; h; h = next) {
		next = h->next;
		h->forget();
		free(h);
	}
}

static void tls_make_key(void)
{
	tls_key_ok = pthread_key_create(&tls_key, tls_free_all) == 0;
}

/* errno as the program left it: a failed calloc sets it, in a call the
 * program never made. */
void *tp_tls_new(size_t size, void (*forget)(void))
{
	int saved = errno;
	void *state = NULL;
	pthread_once(&tls_once, tls_make_key);
	struct tls_hdr *h = tls_key_ok ? calloc(1, TLS_HDR_SIZE + size) : NULL;
	if (h) {
		h->forget = forget;
		h->next = pthread_getspecific(tls_key);
		if (pthread_setspecific(tls_key, h))
			free(h);
		else
			state = (char *)h + TLS_HDR_SIZE;
	}
	errno = saved;
	return state;
}
