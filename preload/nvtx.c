/* traceprof as an NVTX injection library.
 *
 * NVTX v3 is header-only: on its first call, each library image compiled
 * with it reads NVTX_INJECTION64_PATH, dlopens that path (here: this already
 * loaded library, so dlopen returns our handle), and calls
 * InitializeInjectionNvtx2(getExportTable), which fills that image's table of
 * callbacks.  Every image calls it, so it fills the table it is given each
 * time and keeps no other state.
 *
 * The callbacks only write records (TP_REC_RANGE, collector/nvtx_decode.h):
 * push/pop and start/end are paired on the flush thread, so the program's
 * threads keep no range stack, only one 4-byte nesting counter in
 * initial-exec TLS, which pairs a pop with its push.
 *
 * Push and pop return NVTX_PUSH_POP_UNTRACKED (-1), whatever the nesting:
 * what Nsight Systems returns (it keeps no per-thread level either; NVIDIA's
 * own account of it in triton-inference-server issue 2798), never the 0, 1,
 * ... of a depth.  A program must take the same branches traced or not:
 * without a tool NVTX returns -2 (NVTX_NO_PUSH_POP_TRACKING), and a program
 * that tests for ">= 0" or pops only when push "succeeded" behaves the same
 * with both negative values. */
#define NVTX_NO_IMPL 1
#include <nvtx3/nvToolsExt.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "collector/control.h"
#include "collector/hot.h"
#include "collector/nvtx_decode.h"
#include "common/log.h"
#include "preload/export.h"
#include "preload/state.h"
#include "preload/resolve/nvtx_loader.h"
#include "preload/nvtx_payload.h"
#include "preload/steps.h"

#define NAME_MAX_BYTES (TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES)

/* What push and pop return (see above). */
#define NVTX_PUSH_POP_UNTRACKED (-1)

/* The handles NVTX passes back to us are pointers to these.  A domain's
 * records carry its name's address (tp_nvtx_domain_add()), so there is no
 * table to fill up: any number of domains keep their names. */
struct nvtxDomainRegistration_st {
	uint64_t id;
};
struct nvtxStringRegistration_st {
	size_t len;
	char s[];
};

/* Nesting level of push/pop ranges on this thread (all domains together:
 * ranges of different domains on one thread are nested in practice). */
static __thread uint32_t nvtx_depth __attribute__((tls_model("initial-exec")));

/* Range ids of nvtxRangeStart*: unique in the process. */
static _Atomic uint64_t next_range_id;

/* ---- strings ------------------------------------------------------------ */

/* UTF-32 (Linux wchar_t) to UTF-8, cut to fit; returns the length. */
static size_t wide_to_utf8(const wchar_t *w, char *out, size_t size)
{
	size_t n = 0;
	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		char b[4];
		size_t k;
		if (c < 0x80) {
			b[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			b[0] = (char)(0xC0 | (c >> 6));
			b[1] = (char)(0x80 | (c & 0x3F));
			k = 2;
		} else if (c < 0x10000) {
			b[0] = (char)(0xE0 | (c >> 12));
			b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
			b[2] = (char)(0x80 | (c & 0x3F));
			k = 3;
		} else if (c < 0x110000) {
			b[0] = (char)(0xF0 | (c >> 18));
			b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
			b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
			b[3] = (char)(0x80 | (c & 0x3F));
			k = 4;
		} else {
			continue;
		}
		if (n + k >= size)
			break;
		memcpy(out + n, b, k);
		n += k;
	}
	out[n] = '\0';
	return n;
}

/* The message of an event: points *s at it (in buf for wide strings). */
static size_t attr_message(const nvtxEventAttributes_t *a, char *buf, const char **s)
{
	*s = "";
	if (!a)
		return 0;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		if (!a->message.ascii)
			return 0;
		*s = a->message.ascii;
		return strnlen(*s, NAME_MAX_BYTES);
	case NVTX_MESSAGE_TYPE_UNICODE:
		*s = buf;
		return wide_to_utf8(a->message.unicode, buf, NAME_MAX_BYTES);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		if (!a->message.registered)
			return 0;
		*s = a->message.registered->s;
		return a->message.registered->len;
	default:
		return 0;
	}
}

static uint32_t attr_category(const nvtxEventAttributes_t *a)
{
	return a ? a->category : 0;
}

static uint64_t domain_id(nvtxDomainHandle_t d)
{
	return d ? d->id : 0;
}

uint64_t tp_nvtx_handle_domain(nvtxDomainHandle_t d)
{
	return domain_id(d);
}

/* ---- recording ---------------------------------------------------------- */

/* A record whose extras carry the name and the payload: out of line, so
 * that the common case keeps no extras buffer on its stack. */
static __attribute__((noinline)) void emit_payload(struct tp_thread *t, struct tp_record *r,
						   const nvtxEventAttributes_t *a,
						   const char *name, size_t len)
{
	char x[NAME_MAX_BYTES];
	int cut = 0;
	size_t xlen = tp_nvtx_payload_extras(a, name, len, x, sizeof(x), &cut);
	if (xlen) {
		r->flags = TP_RF_STRING | TP_RF_PAYLOAD | (cut ? TP_RF_TRUNC : 0);
		tp_emit(t, r, x, xlen);
	} else {
		tp_emit_named(t, r, name, len);
	}
}

/* a: the event's attributes, for an extended payload (NULL: none). */
static void emit(uint64_t domain, enum tp_nvtx_op op, uint64_t a2, const nvtxEventAttributes_t *a,
		 uint32_t category, const char *name, size_t len)
{
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	if (__builtin_expect(!(s & TP_STATE_RECORDING), 1))
		return;
	struct tp_thread *t = tp_emit_self();
	if (!t)
		return;
	struct tp_record r = { 0 };
	r.kind = TP_REC_RANGE;
	r.start = r.end = tp_clock_now();
	r.step = (uint32_t)(s >> TP_STATE_STEP_SHIFT);
	r.arg[0] = domain;
	r.arg[1] = op;
	r.arg[2] = a2;
	r.arg[3] = category;
	if (__builtin_expect(name && tp_nvtx_has_payload(a), 0))
		emit_payload(t, &r, a, name, len);
	else if (name)
		tp_emit_named(t, &r, name, len);
	else
		tp_emit(t, &r, NULL, 0);
}

/* A range starts: with TRACEPROF_STEP=nvtx:NAME, a matching one first
 * starts a new step, so that the range is the first thing of that step. */
static void range_begins(const char *name, size_t len)
{
	if (__builtin_expect(tp_steps_nvtx_on, 0) && tp_steps_nvtx_match(name, len) &&
	    tp_preload_active())
		tp_control_step();
}

/* The live file's view of this thread's open ranges (collector/live_pub.h),
 * recording or not, once the thread has its state: a copy of the name (the
 * program's string may be freed while the range is open) and the depth. */
static void live_push(uint32_t level, uint64_t domain, const nvtxEventAttributes_t *a,
		      const char *name, size_t len)
{
	struct tp_thread *t = tp_self;
	if ((uintptr_t)t <= (uintptr_t)TP_THREAD_GONE)
		return;
	if (level < TP_LIVE_NVTX) {
		/* NCCL's collectives carry their fields (op, bytes, peer) as an
		 * extended payload: copied with the name, decoded by the
		 * flush thread. */
		uint64_t schema = 0;
		const void *bytes = NULL;
		uint32_t size = tp_nvtx_payload_peek(a, &schema, &bytes);
		tp_live_nvtx_set(&t->live.nvtx[level], name ? name : "", name ? len : 0,
				 tp_clock_now(), domain, schema, bytes, size);
	}
	/* Release: the slot above is complete before the depth that shows it
	 * (pairs with the acquire load in collector/live.c). */
	atomic_store_explicit(&t->live.nvtx_depth, level + 1, memory_order_release);
}

static void live_pop(uint32_t level)
{
	struct tp_thread *t = tp_self;
	/* Relaxed: a reader that still sees the deeper level reports the
	 * range one update longer. */
	if ((uintptr_t)t > (uintptr_t)TP_THREAD_GONE)
		atomic_store_explicit(&t->live.nvtx_depth, level, memory_order_relaxed);
}

static int push(uint64_t domain, const nvtxEventAttributes_t *a, const char *name, size_t len)
{
	range_begins(name, len);
	uint32_t level = nvtx_depth++;
	live_push(level, domain, a, name, len);
	emit(domain, TP_NVTX_PUSH, level, a, attr_category(a), name, len);
	return NVTX_PUSH_POP_UNTRACKED;
}

static int pop(uint64_t domain)
{
	if (nvtx_depth == 0)
		return NVTX_PUSH_POP_UNTRACKED;
	uint32_t level = --nvtx_depth;
	live_pop(level);
	emit(domain, TP_NVTX_POP, level, NULL, 0, NULL, 0);
	return NVTX_PUSH_POP_UNTRACKED;
}

static nvtxRangeId_t start(uint64_t domain, const nvtxEventAttributes_t *a, const char *name,
			   size_t len)
{
	range_begins(name, len);
	nvtxRangeId_t id = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed) + 1;
	emit(domain, TP_NVTX_START, id, a, attr_category(a), name, len);
	return id;
}

/* ---- CORE --------------------------------------------------------------- */

static void NVTX_API cb_MarkEx(const nvtxEventAttributes_t *a)
{
	char buf[NAME_MAX_BYTES];
	const char *s;
	size_t len = attr_message(a, buf, &s);
	emit(0, TP_NVTX_MARK, 0, a, attr_category(a), s, len);
}

static void NVTX_API cb_MarkA(const char *m)
{
	if (m)
		emit(0, TP_NVTX_MARK, 0, NULL, 0, m, strnlen(m, NAME_MAX_BYTES));
}

static void NVTX_API cb_MarkW(const wchar_t *m)
{
	char buf[NAME_MAX_BYTES];
	size_t len = wide_to_utf8(m, buf, sizeof(buf));
	emit(0, TP_NVTX_MARK, 0, NULL, 0, buf, len);
}

static nvtxRangeId_t NVTX_API cb_RangeStartEx(const nvtxEventAttributes_t *a)
{
	char buf[NAME_MAX_BYTES];
	const char *s;
	size_t len = attr_message(a, buf, &s);
	return start(0, a, s, len);
}

static nvtxRangeId_t NVTX_API cb_RangeStartA(const char *m)
{
	return start(0, NULL, m ? m : "", m ? strnlen(m, NAME_MAX_BYTES) : 0);
}

static nvtxRangeId_t NVTX_API cb_RangeStartW(const wchar_t *m)
{
	char buf[NAME_MAX_BYTES];
	size_t len = wide_to_utf8(m, buf, sizeof(buf));
	return start(0, NULL, buf, len);
}

static void NVTX_API cb_RangeEnd(nvtxRangeId_t id)
{
	emit(0, TP_NVTX_END, id, NULL, 0, NULL, 0);
}

static int NVTX_API cb_RangePushEx(const nvtxEventAttributes_t *a)
{
	char buf[NAME_MAX_BYTES];
	const char *s;
	size_t len = attr_message(a, buf, &s);
	return push(0, a, s, len);
}

static int NVTX_API cb_RangePushA(const char *m)
{
	return push(0, NULL, m ? m : "", m ? strnlen(m, NAME_MAX_BYTES) : 0);
}

static int NVTX_API cb_RangePushW(const wchar_t *m)
{
	char buf[NAME_MAX_BYTES];
	size_t len = wide_to_utf8(m, buf, sizeof(buf));
	return push(0, NULL, buf, len);
}

static int NVTX_API cb_RangePop(void)
{
	return pop(0);
}

static void NVTX_API cb_NameOsThreadA(uint32_t tid, const char *name)
{
	if (name)
		tp_nvtx_thread_name_set((int64_t)tid, name, strlen(name));
}

static void NVTX_API cb_NameOsThreadW(uint32_t tid, const wchar_t *name)
{
	char buf[64];
	size_t len = wide_to_utf8(name, buf, sizeof(buf));
	tp_nvtx_thread_name_set((int64_t)tid, buf, len);
}

/* ---- CORE2: domains ----------------------------------------------------- */

static void NVTX_API cb_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	char buf[NAME_MAX_BYTES];
	const char *s;
	size_t len = attr_message(a, buf, &s);
	emit(domain_id(d), TP_NVTX_MARK, 0, a, attr_category(a), s, len);
}

static nvtxRangeId_t NVTX_API cb_DomainRangeStartEx(nvtxDomainHandle_t d,
						     const nvtxEventAttributes_t *a)
{
	char buf[NAME_MAX_BYTES];
	const char *s;
	size_t len = attr_message(a, buf, &s);
	return start(domain_id(d), a, s, len);
}

static void NVTX_API cb_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	emit(domain_id(d), TP_NVTX_END, id, NULL, 0, NULL, 0);
}

static int NVTX_API cb_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	char buf[NAME_MAX_BYTES];
	const char *s;
	size_t len = attr_message(a, buf, &s);
	return push(domain_id(d), a, s, len);
}

static int NVTX_API cb_DomainRangePop(nvtxDomainHandle_t d)
{
	return pop(domain_id(d));
}

static nvtxStringHandle_t register_string(const char *s, size_t len)
{
	struct nvtxStringRegistration_st *h = malloc(sizeof(*h) + len + 1);
	if (!h)
		return NULL;
	h->len = len;
	memcpy(h->s, s, len);
	h->s[len] = '\0';
	/* Registered strings live as long as the process, as NVTX requires. */
	return h;
}

static nvtxStringHandle_t NVTX_API cb_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return s ? register_string(s, strnlen(s, NAME_MAX_BYTES - 1)) : NULL;
}

static nvtxStringHandle_t NVTX_API cb_DomainRegisterStringW(nvtxDomainHandle_t d,
							     const wchar_t *s)
{
	(void)d;
	char buf[NAME_MAX_BYTES];
	size_t len = wide_to_utf8(s, buf, sizeof(buf));
	return register_string(buf, len);
}

static nvtxDomainHandle_t create_domain(const char *name, size_t len)
{
	struct nvtxDomainRegistration_st *d = malloc(sizeof(*d));
	if (!d)
		return NULL;
	/* Never freed (nvtxDomainDestroy is a no-op): the flush thread may still
	 * write events of the domain by its id. */
	d->id = tp_nvtx_domain_add(name, len);
	if (!d->id) {
		free(d);
		return NULL; /* what NVTX gives without a tool: the default domain */
	}
	return d;
}

static nvtxDomainHandle_t NVTX_API cb_DomainCreateA(const char *name)
{
	return create_domain(name ? name : "", name ? strlen(name) : 0);
}

static nvtxDomainHandle_t NVTX_API cb_DomainCreateW(const wchar_t *name)
{
	char buf[128];
	size_t len = wide_to_utf8(name, buf, sizeof(buf));
	return create_domain(buf, len);
}

static void NVTX_API cb_DomainDestroy(nvtxDomainHandle_t d)
{
	(void)d;
}

static void NVTX_API cb_Initialize(const void *reserved)
{
	(void)reserved;
}

/* ---- entry point -------------------------------------------------------- */

static int fill(const NvtxExportTableCallbacks *et, NvtxCallbackModule module,
		const NvtxFunctionPointer *fns, unsigned nfns)
{
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;
	if (!et->GetModuleFunctionTable(module, &table, &size) || !table)
		return -1;
	for (unsigned i = 1; i < nfns && i < size; i++)
		if (fns[i] && table[i])
			*table[i] = fns[i];
	return 0;
}

#define FP(f) ((NvtxFunctionPointer)(f))

static int inject(NvtxGetExportTableFunc_t getExportTable);

/* Kept short (see NVTX's start-up in preload/resolve/nvtx_loader.c): it
 * fills the image's tables and nothing else. */
TP_EXPORT int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable);
TP_EXPORT int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable)
{
	int ok = inject(getExportTable);
	tp_nvtx_loader_release();
	return ok;
}

static int inject(NvtxGetExportTableFunc_t getExportTable)
{
	/* Returning 0 makes this image's NVTX calls no-ops: right when
	 * profiling is off for the process. */
	if (!getExportTable || !tp_preload_config()->enable)
		return 0;
	const NvtxExportTableCallbacks *et = getExportTable(NVTX_ETID_CALLBACKS);
	if (!et || et->struct_size < sizeof(*et) || !et->GetModuleFunctionTable)
		return 0;
	NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE] = { 0 };
	core[NVTX_CBID_CORE_MarkEx] = FP(cb_MarkEx);
	core[NVTX_CBID_CORE_MarkA] = FP(cb_MarkA);
	core[NVTX_CBID_CORE_MarkW] = FP(cb_MarkW);
	core[NVTX_CBID_CORE_RangeStartEx] = FP(cb_RangeStartEx);
	core[NVTX_CBID_CORE_RangeStartA] = FP(cb_RangeStartA);
	core[NVTX_CBID_CORE_RangeStartW] = FP(cb_RangeStartW);
	core[NVTX_CBID_CORE_RangeEnd] = FP(cb_RangeEnd);
	core[NVTX_CBID_CORE_RangePushEx] = FP(cb_RangePushEx);
	core[NVTX_CBID_CORE_RangePushA] = FP(cb_RangePushA);
	core[NVTX_CBID_CORE_RangePushW] = FP(cb_RangePushW);
	core[NVTX_CBID_CORE_RangePop] = FP(cb_RangePop);
	core[NVTX_CBID_CORE_NameOsThreadA] = FP(cb_NameOsThreadA);
	core[NVTX_CBID_CORE_NameOsThreadW] = FP(cb_NameOsThreadW);
	NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE] = { 0 };
	core2[NVTX_CBID_CORE2_DomainMarkEx] = FP(cb_DomainMarkEx);
	core2[NVTX_CBID_CORE2_DomainRangeStartEx] = FP(cb_DomainRangeStartEx);
	core2[NVTX_CBID_CORE2_DomainRangeEnd] = FP(cb_DomainRangeEnd);
	core2[NVTX_CBID_CORE2_DomainRangePushEx] = FP(cb_DomainRangePushEx);
	core2[NVTX_CBID_CORE2_DomainRangePop] = FP(cb_DomainRangePop);
	core2[NVTX_CBID_CORE2_DomainRegisterStringA] = FP(cb_DomainRegisterStringA);
	core2[NVTX_CBID_CORE2_DomainRegisterStringW] = FP(cb_DomainRegisterStringW);
	core2[NVTX_CBID_CORE2_DomainCreateA] = FP(cb_DomainCreateA);
	core2[NVTX_CBID_CORE2_DomainCreateW] = FP(cb_DomainCreateW);
	core2[NVTX_CBID_CORE2_DomainDestroy] = FP(cb_DomainDestroy);
	core2[NVTX_CBID_CORE2_Initialize] = FP(cb_Initialize);
	if (fill(et, NVTX_CB_MODULE_CORE, core, NVTX_CBID_CORE_SIZE) < 0 ||
	    fill(et, NVTX_CB_MODULE_CORE2, core2, NVTX_CBID_CORE2_SIZE) < 0) {
		tp_debug("NVTX injection: no callback table; NVTX ranges are not recorded");
		return 0;
	}
	return 1;
}
