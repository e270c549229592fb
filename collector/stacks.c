#include "collector/stacks.h"
#include "collector/pystack_decode.h"
#include "collector/stack_syms.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "collector/flush.h"
#include "common/hash.h"
#include "common/hashmap.h"
#include "common/log.h"

/* Two structures, grown by doubling and kept for the process's life, on top
 * of the symbol cache (collector/stack_syms.c: IP -> "function+0xOFF
 * (module)"):
 *   - the frame tree: (parent node, IP) -> node, so that a stack seen again
 *     maps to the same "sf" id;
 *   - one bitmap of referenced nodes per open file, for its "stackFrames". */

/* A frame tree larger than this stops growing (events keep args.stack but
 * lose "sf"): it bounds the memory a program with unbounded distinct stacks
 * (JIT code) can make us use, at 1 << 22 nodes * 24 bytes of tables. */
#define ST_MAX_NODES (1u << 22)
/* At most this many frames are kept per stack (TRACEPROF_STACK_DEPTH <= 56). */
#define ST_MAX_FRAMES (TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES / 8)
_Static_assert(ST_MAX_FRAMES <= sizeof(((struct tp_stack_args *)0)->native) / sizeof(char *),
	       "struct tp_stack_args holds every frame of a record");

struct st_node {
	uint32_t parent; /* 0: a root */
	uint32_t sym;
};

/* The frame tree's own open-addressing table (linear probing, grown at half
 * full, never deleted from), hashed with common/hash.h: its key is a pair
 * (IP, parent id), 96 bits, which common/hashmap.h's 64-bit keys cannot
 * hold without a second lookup per frame. */
struct st_node_slot {
	uint64_t ip;
	uint32_t parent;
	uint32_t id; /* 0: empty */
};

struct st_file {
	const struct tp_writer *out; /* the file's writer: its identity */
	uint64_t events; /* the file's event count when last marked */
	uint8_t *bits;	 /* bit id: node id referenced (with its ancestors) */
	size_t nbytes;
	struct st_file *next;
};

static struct {
	struct st_node *nodes; /* nodes[id - 1] */
	size_t nnodes, nodes_cap;
	struct st_node_slot *node_tab;
	size_t node_mask;

	struct st_file *files;
} S;

void tp_stacks_set_self_module(const void *addr)
{
	tp_stack_syms_set_self(addr);
}

/* The frames of r worth showing, innermost first: traceprof's own frames
 * left out, and libunwind's at the top (the capture itself).  Fills ips and
 * syms; returns their number. */
static size_t st_frames(const struct tp_record *r, uint64_t *ips, uint32_t *syms)
{
	/* Most records carry no stack: the flush thread's per-event writers
	 * return here at once. */
	if (!(r->flags & TP_RF_STACK))
		return 0;
	const uint64_t *raw;
	size_t n = tp_stacks_ips(r, &raw), k = 0;
	if (!n)
		return 0;
	for (size_t i = 0; i < n && i < ST_MAX_FRAMES; i++) {
		if (!raw[i])
			continue;
		int64_t s = tp_stack_syms_get(raw[i], i == 0);
		if (s < 0)
			break;
		const struct tp_stack_sym *sym = tp_stack_syms_at((uint32_t)s);
		if (sym->self || (sym->unwind && k == 0))
			continue;
		ips[k] = raw[i];
		syms[k++] = (uint32_t)s;
	}
	return k;
}

/* ---- the frame tree ------------------------------------------------------ */

static int st_node_grow(void)
{
	size_t size = S.node_mask ? (S.node_mask + 1) * 2 : 1024;
	struct st_node_slot *tab = calloc(size, sizeof(*tab));
	if (!tab)
		return -1;
	for (size_t i = 0; S.node_mask && i <= S.node_mask; i++) {
		const struct st_node_slot *o = &S.node_tab[i];
		if (!o->id)
			continue;
		size_t k = tp_hash_pair(o->ip, o->parent) & (size - 1);
		while (tab[k].id)
			k = (k + 1) & (size - 1);
		tab[k] = *o;
	}
	free(S.node_tab);
	S.node_tab = tab;
	S.node_mask = size - 1;
	return 0;
}

/* The node for frame (ip, sym) under parent, created if new.  Returns its id,
 * or 0 when the tree is full or out of memory. */
static uint32_t st_node_get(uint32_t parent, uint64_t ip, uint32_t sym)
{
	if ((S.nnodes + 1) * 2 > S.node_mask + 1 && st_node_grow() < 0)
		return 0;
	size_t k = tp_hash_pair(ip, parent) & S.node_mask;
	for (; S.node_tab[k].id; k = (k + 1) & S.node_mask)
		if (S.node_tab[k].ip == ip && S.node_tab[k].parent == parent)
			return S.node_tab[k].id;
	if (S.nnodes >= ST_MAX_NODES)
		return 0;
	if (S.nnodes == S.nodes_cap) {
		size_t cap = S.nodes_cap ? S.nodes_cap * 2 : 1024;
		struct st_node *nodes = realloc(S.nodes, cap * sizeof(*nodes));
		if (!nodes)
			return 0;
		S.nodes = nodes;
		S.nodes_cap = cap;
	}
	S.nodes[S.nnodes] = (struct st_node){ parent, sym };
	uint32_t id = (uint32_t)++S.nnodes;
	S.node_tab[k] = (struct st_node_slot){ ip, parent, id };
	return id;
}

static struct st_file *st_file_find(const struct tp_writer *out, struct st_file ***link)
{
	struct st_file **l = &S.files;
	for (; *l; l = &(*l)->next)
		if ((*l)->out == out)
			break;
	if (link)
		*link = l;
	return *l;
}

/* Marks node id and its ancestors as referenced by the file of out.
 * Returns 0 or -1 (no memory: the caller then writes no "sf"). */
static int st_mark(struct tp_writer *out, uint32_t id)
{
	struct st_file *f = st_file_find(out, NULL);
	if (f && out->events < f->events) {
		/* The address belongs to a new file's writer now (an earlier
		 * file's writer was discarded without its frames being
		 * written, and its memory reused). */
		memset(f->bits, 0, f->nbytes);
	}
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f)
			return -1;
		f->out = out;
		f->next = S.files;
		S.files = f;
	}
	f->events = out->events;
	size_t need = S.nnodes / 8 + 1;
	if (need > f->nbytes) {
		size_t nb = f->nbytes ? f->nbytes : 64;
		while (nb < need)
			nb *= 2;
		uint8_t *bits = realloc(f->bits, nb);
		if (!bits)
			return -1;
		memset(bits + f->nbytes, 0, nb - f->nbytes);
		f->bits = bits;
		f->nbytes = nb;
	}
	/* Ancestors have smaller ids; stop at the first already marked one,
	 * whose ancestors are then marked too. */
	while (id && !(f->bits[id / 8] & (1u << (id % 8)))) {
		f->bits[id / 8] |= (uint8_t)(1u << (id % 8));
		id = S.nodes[id - 1].parent;
	}
	return 0;
}

/* The leaf node of r's stack, marked for out's file; 0 when none. */
static uint32_t st_leaf(struct tp_writer *out, const uint64_t *ips, const uint32_t *syms,
			size_t n)
{
	uint32_t id = 0;
	/* From the outermost frame (main) inwards, so that stacks share roots. */
	for (size_t i = n; i-- > 0;) {
		id = st_node_get(id, ips[i], syms[i]);
		if (!id)
			return 0;
	}
	if (id && st_mark(out, id) < 0)
		return 0;
	return id;
}

uint32_t tp_stacks_args(struct tp_writer *out, const struct tp_record *r,
			struct tp_stack_args *buf, struct tp_arg *args, unsigned *n)
{
	uint64_t ips[ST_MAX_FRAMES];
	uint32_t syms[ST_MAX_FRAMES];
	size_t nf = st_frames(r, ips, syms);
	uint32_t leaf = 0;
	if (nf) {
		for (size_t i = 0; i < nf; i++)
			buf->native[i] = tp_stack_syms_at(syms[i])->text;
		args[(*n)++] = (struct tp_arg){ TP_ARG_KEY("stack"), .type = TP_VAL_STRS,
						.n = (uint32_t)nf, .strs = buf->native };
		leaf = st_leaf(out, ips, syms, nf);
	}
	unsigned np = tp_pystack_strs(r, buf->py, buf->py_text); /* TRACEPROF_PYTHON_STACK */
	if (np)
		args[(*n)++] = (struct tp_arg){ TP_ARG_KEY("python_stack"), .type = TP_VAL_STRS,
						.n = np, .strs = buf->py };
	return leaf;
}

void tp_stacks_frames(struct tp_writer *out)
{
	struct st_file **link;
	struct st_file *f = st_file_find(out, &link);
	if (!f)
		return;
	*link = f->next;
	size_t limit = f->nbytes * 8 < S.nnodes + 1 ? f->nbytes * 8 : S.nnodes + 1;
	for (size_t id = 1; id < limit; id++) {
		if (!(f->bits[id / 8] & (1u << (id % 8))))
			continue;
		const struct st_node *nd = &S.nodes[id - 1];
		const struct tp_stack_sym *s = tp_stack_syms_at(nd->sym);
		/* "name (module)": the module is between " (" and ")". */
		size_t tl = strlen(s->text);
		char *name = malloc(tl + 1);
		if (!name)
			break; /* the events' "sf" then name no frame: readers skip it */
		memcpy(name, s->text, tl + 1);
		name[s->name_len] = '\0';
		name[tl - 1] = '\0';
		tp_writer_frame(out, (uint32_t)id, nd->parent, name, name + s->name_len + 2);
		free(name);
	}
	free(f->bits);
	free(f);
}

/* ---- tests ---------------------------------------------------------------- */

void tp_stacks_reset(void)
{
	tp_stack_syms_reset();
	free(S.nodes);
	free(S.node_tab);
	while (S.files) {
		struct st_file *f = S.files;
		S.files = f->next;
		free(f->bits);
		free(f);
	}
	memset(&S, 0, sizeof(S));
}

size_t tp_stacks_symbol_count(void)
{
	return tp_stack_syms_count();
}

size_t tp_stacks_node_count(void)
{
	return S.nnodes;
}

/* ---- the flush plugin ------------------------------------------------------ */

_Atomic uint64_t tp_stacks_skipped;
_Atomic uintptr_t tp_stacks_sigreturn;

/* glibc's x86-64 signal trampoline, __restore_rt: mov $15,%rax; syscall. */
static const unsigned char st_tramp[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

struct st_tramp_find {
	uintptr_t in_libc; /* an address in the C library's code */
	uintptr_t found;
};

static int st_tramp_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	struct st_tramp_find *f = ctx;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !(ph->p_flags & PF_R))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_filesz;
		if (f->in_libc < lo || f->in_libc >= hi)
			continue;
		const void *at = memmem((const void *)lo, hi - lo, st_tramp, sizeof(st_tramp));
		f->found = (uintptr_t)at;
		return 1;
	}
	return 0;
}

/* Finds the trampoline's address once, at start, by its bytes in the C
 * library's code (it has no dynamic symbol), for preload/stack.c to tell a
 * capture made in a signal handler without reading memory then. */
static void st_find_sigreturn(void)
{
#if defined(__x86_64__)
	struct st_tramp_find f = { (uintptr_t)gnu_get_libc_version, 0 };
	dl_iterate_phdr(st_tramp_cb, &f);
	/* Relaxed: written before recording starts, read by the hooks; a
	 * capture that reads 0 only misses the pause. */
	atomic_store_explicit(&tp_stacks_sigreturn, f.found, memory_order_relaxed);
	if (!f.found)
		tp_debug("no signal trampoline found in the C library: captures in signal "
			 "handlers are bounded only when they interrupt a capture");
#endif
}

static int st_plugin_init(const struct tp_config *cfg)
{
	if (!cfg->with_stack)
		return -1;
	st_find_sigreturn();
	return 0;
}

/* The count so far, in every part's footer; said once in the log too. */
static void st_plugin_footer(struct tp_doc *d)
{
	static uint64_t logged;
	/* Relaxed pairs with the relaxed increments in preload/stack.c: a
	 * counter, no data hangs on it. */
	uint64_t n = atomic_load_explicit(&tp_stacks_skipped, memory_order_relaxed);
	tp_doc_u64(d, "stack_captures_skipped", n);
	if (n && !logged) {
		logged = n;
		tp_info("%llu call stacks were not captured in or around signal handlers that "
			"record (their cost is bounded there); the events are kept, without a "
			"stack",
			(unsigned long long)n);
	}
	/* TRACEPROF_PYTHON_STACK's code objects that found the table full. */
	uint64_t u = tp_pystack_unnamed();
	if (u)
		tp_doc_u64(d, "python_functions_unnamed", u);
}

const struct tp_flush_plugin tp_stacks_plugin = {
	.name = "stacks",
	.init = st_plugin_init,
	.footer = st_plugin_footer,
	.frames = tp_stacks_frames,
};
