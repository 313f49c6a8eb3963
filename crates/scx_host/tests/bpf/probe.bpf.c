/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sched_ext scheduler for the host's own tests: one shared DSQ, FIFO or
 * vtime ordered, and a record per task of what the callbacks saw (who woke
 * it, on which CPU, its ENQ_LAST enqueues, its slice at ticks, when it
 * first and last started running). Globals choose the behaviour under test.
 */
#include <scx/common.bpf.h>

char _license[] SEC("license") = "GPL";

#define SHARED_DSQ 7

const volatile u64 slice_ns = 5000000;
/* vtime-ordered DSQ, each task's vtime from vtime_of[pid]. */
const volatile bool use_vtime;
const volatile u64 vtime_of[16];
/* select_cpu: the built-in selection, direct dispatch to an idle CPU. */
const volatile bool dfl_select;
/* select_cpu: always CPU 0 (else the task's previous CPU). */
const volatile bool select_zero;
/* An ENQ_LAST enqueue goes to the local DSQ (else to the shared one). */
const volatile bool local_on_last = true;
/* Each enqueue of a task with pid >= 2 (not the main thread) kicks
 * kick_target with kick_flags (kick_target < 0: none). */
const volatile s32 kick_target = -1;
const volatile u64 kick_flags;

struct rec {
	u32 waker_pid;
	s32 waker_cpu;
	u32 enq_total;
	u32 enq_last;
	u32 runs;
	u32 direct;	/* direct dispatches from select_cpu */
	u64 first_run_ns;
	u64 last_run_ns;
	u64 max_tick_slice;
	s32 first_cpu;
	s32 last_cpu;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, struct rec);
} recs SEC(".maps");

static struct rec *rec_of(struct task_struct *p)
{
	struct rec zero = {};
	u32 pid = p->pid;
	struct rec *r = bpf_map_lookup_elem(&recs, &pid);

	if (r)
		return r;
	bpf_map_update_elem(&recs, &pid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&recs, &pid);
}

s32 BPF_STRUCT_OPS(probe_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct rec *r = rec_of(p);

	if (r) {
		r->waker_pid = bpf_get_current_task_btf()->pid;
		r->waker_cpu = bpf_get_smp_processor_id();
	}
	if (dfl_select) {
		bool idle = false;
		s32 cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &idle);

		if (idle) {
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
			if (r)
				r->direct++;
		}
		return cpu;
	}
	return select_zero ? 0 : prev_cpu;
}

void BPF_STRUCT_OPS(probe_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct rec *r = rec_of(p);

	if (r)
		r->enq_total++;
	if (enq_flags & SCX_ENQ_LAST) {
		if (r)
			r->enq_last++;
		if (local_on_last) {
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
			return;
		}
	}
	if (use_vtime)
		scx_bpf_dsq_insert_vtime(p, SHARED_DSQ, slice_ns, vtime_of[p->pid & 15], enq_flags);
	else
		scx_bpf_dsq_insert(p, SHARED_DSQ, slice_ns, enq_flags);
	if (kick_target >= 0 && p->pid >= 2)
		scx_bpf_kick_cpu(kick_target, kick_flags);
}

/* dispatch walks the shared DSQ and moves the task with the largest pid
 * to the local DSQ mid-walk (else it takes the head). */
const volatile bool walk_largest;
/* A dispatch that finds nothing kicks its own CPU (a livelock). */
const volatile bool kick_self;

void BPF_STRUCT_OPS(probe_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_struct *p;
	s32 best = -1;

	if (!walk_largest) {
		if (!scx_bpf_dsq_move_to_local(SHARED_DSQ) && kick_self)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	bpf_for_each(scx_dsq, p, SHARED_DSQ, 0) {
		if (p->pid > best)
			best = p->pid;
	}
	bpf_for_each(scx_dsq, p, SHARED_DSQ, 0) {
		if (p->pid == best) {
			scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0);
			break;
		}
	}
}

void BPF_STRUCT_OPS(probe_running, struct task_struct *p)
{
	struct rec *r = rec_of(p);
	u64 now = bpf_ktime_get_ns();

	if (!r)
		return;
	if (!r->runs) {
		r->first_run_ns = now;
		r->first_cpu = scx_bpf_task_cpu(p);
	}
	r->runs++;
	r->last_run_ns = now;
	r->last_cpu = scx_bpf_task_cpu(p);
}

void BPF_STRUCT_OPS(probe_tick, struct task_struct *p)
{
	struct rec *r = rec_of(p);

	if (r && p->scx.slice > r->max_tick_slice)
		r->max_tick_slice = p->scx.slice;
}

/* The context switches seen (tp_btf/sched_switch): prev pid, next pid,
 * prev_state | preempt << 16; the first 32. */
u32 switches[32][3];
u32 nr_switches;

SEC("tp_btf/sched_switch")
int BPF_PROG(probe_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	u32 n = nr_switches;

	if (n < 32) {
		switches[n][0] = prev->pid;
		switches[n][1] = next->pid;
		switches[n][2] = prev_state | ((u32)preempt << 16);
	}
	nr_switches = n + 1;
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(probe_init)
{
	return scx_bpf_create_dsq(SHARED_DSQ, -1);
}

SCX_OPS_DEFINE(probe_ops,
	       .select_cpu = (void *)probe_select_cpu,
	       .enqueue = (void *)probe_enqueue,
	       .dispatch = (void *)probe_dispatch,
	       .running = (void *)probe_running,
	       .tick = (void *)probe_tick,
	       .init = (void *)probe_init,
#ifndef PROBE_NO_ENQ_LAST
	       .flags = SCX_OPS_ENQ_LAST,
#endif
	       .name = "probe");
