#include "collector/torch_ops_decode.h"

#include <string.h>

#include "collector/fthread.h"
#include "collector/stacks.h"
#include "common/clock.h"
#include "common/layout.h"

/* The arrow's id: its forward op's RecordFunction thread id and sequence
 * number, which the autograd node carries too (as its "Fwd thread id" and
 * "Sequence number").  Thread ids count from 1, so the ids are at least
 * 2^32, above the 32-bit correlation ids of the launch arrows; and below
 * 2^53 for the readers that hold JSON numbers as doubles. */
static uint64_t ops_flow_id(uint32_t rf_tid, int64_t seq)
{
	return ((uint64_t)(rf_tid & 0xfffff) << 32) | ((uint64_t)seq & 0xffffffffu);
}

static void ops_flow(struct tp_writer *out, int kind, uint64_t id, int64_t pid, int64_t tid,
		     uint64_t ts)
{
	tp_writer_flow(out, kind, TP_CAT_FWDBWD, id, pid, tid, ts);
}

void tp_ops_convert(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		    int64_t pid)
{
	size_t len;
	const char *s = tp_record_string(r, &len);
	uint64_t start = tp_clock_to_ns(r->start);
	int64_t seq = (int64_t)r->arg[0];
	int bwd = (r->flags & TP_RF_OP_BWD) != 0;
	uint32_t rf_tid = (uint32_t)r->result;
	struct tp_fthread *f = tp_fthread_get(t);
	static const char eval[] = "autograd::engine::evaluate_function: ";
	if (f && bwd) {
		f->node_seq = seq;
		f->node_ns = start;
		f->node_rf_tid = rf_tid;
	} else if (f && seq < 0 && rf_tid && len > sizeof(eval) - 1 &&
		   !memcmp(s, eval, sizeof(eval) - 1) && f->node_ns >= start && f->node_rf_tid) {
		/* PyTorch gives the evaluate_function range no sequence number;
		 * torch.profiler writes its node's (which ran inside it, so
		 * ended just before it) and draws no arrow to it. */
		seq = f->node_seq;
		rf_tid = f->node_rf_tid;
		f->node_rf_tid = 0;
		bwd = 2;
	}
	struct tp_arg args[5];
	struct tp_stack_args buf;
	unsigned n = 0;
	if (r->id)
		args[n++] = TP_ARG(u64, "External id", r->id);
	if (seq >= 0 && rf_tid) {
		args[n++] = TP_ARG(i64, "Sequence number", seq);
		args[n++] = TP_ARG(u64, "Fwd thread id", bwd ? rf_tid : 0);
	}
	/* TRACEPROF_PYTHON_STACK: "python_stack", as on CUDA calls (no native
	 * frames on ops: preload/stack.c takes none for them). */
	if (r->flags & TP_RF_PYSTACK)
		tp_stacks_args(out, r, &buf, args, &n);
	tp_writer_slice(out, TP_CAT_CPU_OP, s, len, pid, t->tid, start, tp_clock_to_ns(r->end),
			args, n);
	if (seq < 0 || !rf_tid)
		return;
	if (bwd == 2)
		return;
	if (bwd) {
		ops_flow(out, TP_EV_FLOW_IN, ops_flow_id(rf_tid, seq), pid, t->tid, start);
		return;
	}
	/* torch.profiler's arrow starts at the last op to start with the
	 * node's sequence number on its thread: the one that made the node
	 * (aten::t inside aten::linear, both of sequence number 14; not an
	 * aten::detach or aten::_local_scalar_dense before it that read the
	 * number and made no node).  Records come here as ops end, and a
	 * thread's numbers only grow as it makes nodes: the candidate for a
	 * number is kept (pend_*), replaced by an op of that number that
	 * started later, and drawn when an op of a higher number ends (or the
	 * window closes).  Ops of a number already drawn (the enclosing
	 * aten::linear, ending after aten::addmm's 15) draw none. */
	if (!f || seq < f->op_seq_next)
		return;
	if (f->pend_on && seq == f->pend_seq) {
		if (start > f->pend_ns) {
			f->pend_ns = start;
			f->pend_rf_tid = rf_tid;
		}
		return;
	}
	if (f->pend_on)
		tp_ops_close(out, t, pid, UINT64_MAX);
	f->pend_on = 1;
	f->pend_seq = seq;
	f->pend_ns = start;
	f->pend_rf_tid = rf_tid;
}

void tp_ops_close(struct tp_writer *out, struct tp_thread *t, int64_t pid, uint64_t end_ns)
{
	struct tp_fthread *f = t->fl;
	if (!f || !f->pend_on || f->pend_ns > end_ns)
		return;
	ops_flow(out, TP_EV_FLOW_OUT, ops_flow_id(f->pend_rf_tid, f->pend_seq), pid, t->tid,
		 f->pend_ns);
	f->op_seq_next = f->pend_seq + 1;
	f->pend_on = 0;
}
