/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sched_ext scheduler for the host's tests of the kfuncs added for
 * scx_bpfland 1.1.4 (tests/kfuncs.rs): one shared DSQ (vtime ordered when
 * asked), a record per task of what its callbacks saw, and syscall programs
 * that exercise the cpumask, per-CPU map and topology kfuncs and report
 * into their argument struct. Globals choose the behaviour under test.
 */
#include <scx/common.bpf.h>
#include <scx/percpu.bpf.h>

char _license[] SEC("license") = "GPL";

#define SHARED_DSQ 7

const volatile u64 slice_ns = 5000000;
/* select_cpu: scx_bpf_select_cpu_and(), restricted to allowed_bits when
 * use_allowed; an idle CPU found takes the task directly. */
const volatile bool select_and;
const volatile bool use_allowed;
const volatile u64 allowed_bits;
/* dispatch calls scx_bpf_select_cpu_and() (not allowed there). */
const volatile bool select_and_in_dispatch;
/* running: scx_bpf_task_set_slice(p, running_slice) when non-zero. */
const volatile u64 running_slice;
/* enable: scx_bpf_task_set_dsq_vtime(p, 1000 * (10 - pid)); the shared DSQ
 * is then vtime ordered by it. */
const volatile bool vtime_by_pid;
/* init: start a BPF timer. */
const volatile bool arm_timer;

struct rec {
	u32 enq_total;
	u32 enq_wakeup;
	u32 enq_cpu_selected;
	u32 enq_running;	/* scx_bpf_task_running(p) in ops.enqueue */
	s32 sel_ret;		/* the first scx_bpf_select_cpu_and() */
	u32 direct;
	u64 max_tick_slice;
	u64 first_run_ns;
	s32 first_cpu;
	u32 runs;
	u32 selects;
	u32 online;		/* CPUs online when it last started running */
	s32 sel_last;		/* the last scx_bpf_select_cpu_and() */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, struct rec);
} recs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} pcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} plain SEC(".maps");

struct timer_val {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct timer_val);
} timers SEC(".maps");

/* Notes for the tests: NOTE_PEEK + i, the i-th head peeked in ops.dispatch
 * (each logged once); NOTE_MISSING, whether peeking a DSQ that does not
 * exist gave NULL. */
#define NOTE_MISSING 1
#define NOTE_PEEK 100
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, u32);
	__type(value, u64);
} notes SEC(".maps");
static u32 nr_peeks;
static u32 last_peek;

static void note(u32 key, u64 value)
{
	bpf_map_update_elem(&notes, &key, &value, BPF_ANY);
}

struct bpf_cpumask __kptr *held;

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

s32 BPF_STRUCT_OPS(kf_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct rec *r = rec_of(p);
	struct cpumask mask = {};
	s32 cpu;

	if (!select_and)
		return prev_cpu;
	mask.bits[0] = allowed_bits;
	cpu = scx_bpf_select_cpu_and(p, prev_cpu, wake_flags, use_allowed ? &mask : p->cpus_ptr, 0);
	if (r && !r->selects++)
		r->sel_ret = cpu;
	if (r)
		r->sel_last = cpu;
	if (cpu >= 0) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
		if (r)
			r->direct++;
		return cpu;
	}
	return prev_cpu;
}

void BPF_STRUCT_OPS(kf_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct rec *r = rec_of(p);

	if (r) {
		r->enq_total++;
		if (enq_flags & SCX_ENQ_WAKEUP)
			r->enq_wakeup++;
		if (__COMPAT_is_enq_cpu_selected(enq_flags))
			r->enq_cpu_selected++;
		if (scx_bpf_task_running(p))
			r->enq_running++;
	}
	if (enq_flags & SCX_ENQ_LAST) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
		return;
	}
	if (vtime_by_pid)
		scx_bpf_dsq_insert_vtime(p, SHARED_DSQ, slice_ns, p->scx.dsq_vtime, enq_flags);
	else
		scx_bpf_dsq_insert(p, SHARED_DSQ, slice_ns, enq_flags);
}

void BPF_STRUCT_OPS(kf_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_struct *q = __COMPAT_scx_bpf_dsq_peek(SHARED_DSQ);

	note(NOTE_MISSING, !__COMPAT_scx_bpf_dsq_peek(12345));
	if (q && nr_peeks < 8 && (!nr_peeks || last_peek != (u32)q->pid)) {
		last_peek = q->pid;
		note(NOTE_PEEK + nr_peeks++, q->pid);
	}
	if (select_and_in_dispatch && prev)
		scx_bpf_select_cpu_and(prev, cpu, 0, prev->cpus_ptr, 0);
	scx_bpf_dsq_move_to_local(SHARED_DSQ);
}

void BPF_STRUCT_OPS(kf_running, struct task_struct *p)
{
	struct rec *r = rec_of(p);
	const struct cpumask *online;

	if (running_slice)
		scx_bpf_task_set_slice(p, running_slice);
	if (!r)
		return;
	online = scx_bpf_get_online_cpumask();
	r->online = bpf_cpumask_weight(online);
	scx_bpf_put_cpumask(online);
	if (!r->runs) {
		r->first_run_ns = bpf_ktime_get_ns();
		r->first_cpu = scx_bpf_task_cpu(p);
	}
	r->runs++;
}

void BPF_STRUCT_OPS(kf_tick, struct task_struct *p)
{
	struct rec *r = rec_of(p);

	if (r && p->scx.slice > r->max_tick_slice)
		r->max_tick_slice = p->scx.slice;
}

void BPF_STRUCT_OPS(kf_enable, struct task_struct *p)
{
	if (vtime_by_pid)
		scx_bpf_task_set_dsq_vtime(p, 1000 * (10 - p->pid));
}

static int timer_fn(void *map, int *key, struct bpf_timer *timer)
{
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(kf_init)
{
	u32 key = 0;
	struct timer_val *t;

	if (arm_timer) {
		t = bpf_map_lookup_elem(&timers, &key);
		if (!t)
			return -ENOENT;
		bpf_timer_init(&t->timer, &timers, 7);
		bpf_timer_set_callback(&t->timer, timer_fn);
		if (bpf_timer_start(&t->timer, 1000000, 0))
			scx_bpf_error("could not arm the timer");
	}
	return scx_bpf_create_dsq(SHARED_DSQ, -1);
}

/* ---- syscall programs (run by the tests' user side) -------------------- */

struct mask_args {
	u32 weight_set;		/* CPUs 0 and 2 set, and CPU nr_cpu_ids (ignored) */
	u32 first_set;
	u32 weight_cleared;	/* then CPU 0 cleared */
	u32 empty_after_clear;	/* then bpf_cpumask_clear */
	u32 and_nonempty;	/* {1,2} & {2,3} */
	u32 and_weight;
	u32 and_first;
	u32 and_disjoint;	/* {1} & {3}: the result is empty */
	u32 or_weight;		/* {1} | {3} */
	u32 copy_first;		/* copy of {3} */
	u32 copy_weight;
	s32 done;
};

SEC("syscall")
int cpumask_ops(struct mask_args *a)
{
	struct bpf_cpumask *m = bpf_cpumask_create(), *x = bpf_cpumask_create();
	u32 n = scx_bpf_nr_cpu_ids();

	if (!m || !x) {
		if (m)
			bpf_cpumask_release(m);
		if (x)
			bpf_cpumask_release(x);
		return -ENOMEM;
	}
	bpf_cpumask_set_cpu(0, m);
	bpf_cpumask_set_cpu(2, m);
	bpf_cpumask_set_cpu(n, m);
	a->weight_set = bpf_cpumask_weight(cast_mask(m));
	a->first_set = bpf_cpumask_first(cast_mask(m));
	bpf_cpumask_clear_cpu(0, m);
	a->weight_cleared = bpf_cpumask_weight(cast_mask(m));
	bpf_cpumask_clear(m);
	a->empty_after_clear = bpf_cpumask_empty(cast_mask(m));

	bpf_cpumask_set_cpu(1, m);
	bpf_cpumask_set_cpu(2, m);
	bpf_cpumask_set_cpu(2, x);
	bpf_cpumask_set_cpu(3, x);
	a->and_nonempty = bpf_cpumask_and(m, cast_mask(m), cast_mask(x));
	a->and_weight = bpf_cpumask_weight(cast_mask(m));
	a->and_first = bpf_cpumask_first(cast_mask(m));

	bpf_cpumask_clear(m);
	bpf_cpumask_clear(x);
	bpf_cpumask_set_cpu(1, m);
	bpf_cpumask_set_cpu(3, x);
	a->and_disjoint = !bpf_cpumask_and(m, cast_mask(m), cast_mask(x));
	bpf_cpumask_set_cpu(1, m);
	bpf_cpumask_or(m, cast_mask(m), cast_mask(x));
	a->or_weight = bpf_cpumask_weight(cast_mask(m));
	bpf_cpumask_copy(m, cast_mask(x));
	a->copy_first = bpf_cpumask_first(cast_mask(m));
	a->copy_weight = bpf_cpumask_weight(cast_mask(m));

	bpf_cpumask_release(m);
	bpf_cpumask_release(x);
	a->done = 1;
	return 0;
}

struct ref_args {
	s32 extra_release;	/* release once more than the references taken */
};

SEC("syscall")
int cpumask_refs(struct ref_args *a)
{
	struct bpf_cpumask *m = bpf_cpumask_create();

	if (!m)
		return -ENOMEM;
	bpf_cpumask_acquire(m);
	bpf_cpumask_release(m);
	bpf_cpumask_release(m);
	if (a->extra_release)
		bpf_cpumask_release(m);
	return 0;
}

struct kptr_args {
	s32 first_old_null;	/* the kptr held nothing */
	s32 second_old_first;	/* the second exchange returns the first mask */
	s32 cleared_null;	/* and a final exchange for NULL returns the second */
};

SEC("syscall")
int kptr_xchg(struct kptr_args *a)
{
	struct bpf_cpumask *m1 = bpf_cpumask_create(), *m2, *old;

	if (!m1)
		return -ENOMEM;
	old = bpf_kptr_xchg(&held, m1);
	a->first_old_null = !old;
	if (old)
		bpf_cpumask_release(old);
	m2 = bpf_cpumask_create();
	if (!m2)
		return -ENOMEM;
	old = bpf_kptr_xchg(&held, m2);
	a->second_old_first = old == m1;
	if (old)
		bpf_cpumask_release(old);
	old = bpf_kptr_xchg(&held, NULL);
	a->cleared_null = old == m2 && !held;
	if (old)
		bpf_cpumask_release(old);
	return 0;
}

struct percpu_args {
	u64 seen[4];		/* each CPU's copy, written as 100 + cpu */
	s32 beyond_null;	/* the copy of CPU nr_cpu_ids */
	s32 not_percpu;		/* look a plain array up per CPU (ends the run) */
	u64 mine;		/* bpf_map_lookup_elem: this CPU's (0) copy */
};

SEC("syscall")
int percpu_lookup(struct percpu_args *a)
{
	u32 key = 0, n = scx_bpf_nr_cpu_ids();
	u64 *v;

	for (u32 c = 0; c < n && c < 4; c++) {
		v = bpf_map_lookup_percpu_elem(&pcpu, &key, c);
		if (v)
			*v = 100 + c;
	}
	for (u32 c = 0; c < n && c < 4; c++) {
		v = bpf_map_lookup_percpu_elem(&pcpu, &key, c);
		a->seen[c] = v ? *v : 0;
	}
	a->beyond_null = !bpf_map_lookup_percpu_elem(&pcpu, &key, n);
	v = bpf_map_lookup_elem(&pcpu, &key);
	a->mine = v ? *v : 0;
	if (a->not_percpu)
		bpf_map_lookup_percpu_elem(&plain, &key, 0);
	return 0;
}

struct topo_args {
	u32 online_weight;
	s32 llc[4];
	s32 llc_beyond;
};

SEC("syscall")
int topology(struct topo_args *a)
{
	const struct cpumask *online = scx_bpf_get_online_cpumask();
	u32 n = scx_bpf_nr_cpu_ids();

	a->online_weight = bpf_cpumask_weight(online);
	scx_bpf_put_cpumask(online);
	for (u32 c = 0; c < n && c < 4; c++)
		a->llc[c] = cpu_llc_id(c);
	a->llc_beyond = cpu_llc_id(n);
	return 0;
}

SCX_OPS_DEFINE(kfuncs_ops,
	       .select_cpu = (void *)kf_select_cpu,
	       .enqueue = (void *)kf_enqueue,
	       .dispatch = (void *)kf_dispatch,
	       .running = (void *)kf_running,
	       .tick = (void *)kf_tick,
	       .enable = (void *)kf_enable,
	       .init = (void *)kf_init,
	       .flags = SCX_OPS_ENQ_LAST,
	       .name = "kfuncs");
