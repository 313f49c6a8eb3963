/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ROTA, scx_colab's default policy: the simulator's default `rota`
 * (crates/policies/src/rota, `rota@19`) ported rule by rule; each rule's
 * port and what is not ported are in book/src/scx/porting.md. Included by
 * main.bpf.c and split by concern as the simulator's code is:
 *
 *   rota.bpf.h        constants, per-process counters, the rank (order.rs),
 *                     the accounting at run-state changes (mod.rs)
 *   cfs.bpf.h         each CPU's own queue by CFS's rules (cfs/engine.rs)
 *   rota_place.bpf.h  where a waking task goes (place.rs)
 *   rota_idle.bpf.h   what a CPU with an empty queue takes (idle.rs)
 *   rota_tick.bpf.h   the swaps at a fast CPU's tick (balance.rs)
 *
 * "Fast" CPUs are every type but the slowest (user space's big set).
 */

/*
 * Set by user space from the machine's cross-cluster migration cost `mig`
 * and CFS's tunables exactly as the simulator derives them (rota/mod.rs:
 * Rota::init): quantum 200 mig, its minimum min(CFS's min_granularity,
 * quantum), pull_min 4 mig, idle_worth 1 mig.
 */
const volatile u64 rota_quantum_ns = 20000000ULL;
const volatile u64 rota_min_quantum_ns = 2250000ULL;
const volatile u64 rota_pull_min_ns = 400000ULL;
const volatile u64 rota_idle_worth_ns = 100000ULL;
/* Ablation (--no-rotation, the simulator's rotate=off): occupants never
 * give a fast CPU up at a tick (serial phases still swap in). */
const volatile bool rota_no_rotation;

/* Per process (tgid): threads created and live, runnable or running
 * (`active`), and running on fast CPUs. An LRU map: entries outlive their
 * process, as the simulator's per-program counters outlive a run. */
struct rota_prog {
	u32 created;
	u32 live;
	u32 active;
	u32 fast_running;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, COLAB_MAX_TASKS);
	__type(key, u32);
	__type(value, struct rota_prog);
} rota_progs SEC(".maps");

static __always_inline struct rota_prog *lookup_prog(u32 tgid)
{
	return bpf_map_lookup_elem(&rota_progs, &tgid);
}

static __always_inline void prog_dec(u32 *v)
{
	if (*v)
		__sync_fetch_and_sub(v, 1);
}

static __always_inline bool is_fast(s32 cpu)
{
	return nr_big && nr_little ? is_big(cpu) : true;
}

/*
 * 64-bit fixed point, as rota/fixed.rs (BPF has no 128-bit arithmetic),
 * restated for the ranges a rank meets so that no path branches on bit
 * lengths (each branch multiplies the verifier's states): exact while a
 * task's CPU time is under 2^54 ns and its runnable time under 2^48 ns
 * (3.2 days), as fixed.rs is; beyond that the ratio keeps its top bits.
 */
static __always_inline u64 sat_add(u64 a, u64 b)
{
	u64 s = a + b;

	return s < a ? ~0ULL : s;
}

/* @a * COLAB_FP_ONE / @c without the 128-bit product (fixed.rs: mul_div). */
static __always_inline u64 mul_div_fp(u64 a, u64 c)
{
	if (!c)
		c = 1;
	return (a / c) * COLAB_FP_ONE + (a % c) * COLAB_FP_ONE / c;
}

/* (@num << 16) / @den, at most 2^24 (fixed.rs: shl_div); a numerator of
 * 2^48 or more shifts both sides right by 16 first. */
static __always_inline u64 shl16_div(u64 num, u64 den)
{
	u64 v;

	if (num >> 48) {
		num >>= 16;
		den >>= 16;
	}
	v = (num << 16) / (den ? den : 1);
	return v < (1ULL << 24) ? v : 1ULL << 24;
}

/* --- the rank (order.rs: Rota::rank_with, order=ntt) --- */

/*
 * The rank of a task that wants a fast CPU, smaller first (ties: smaller
 * pid): serial phases first (bit 63 clear: the one runnable thread of a
 * process that created more than one), then the largest gain in slowdown
 * per unit of fast-CPU time, gain x inv^2, with gain = 1 - 1/speedup and
 * inv its runnable time over its progress, each with a prior of a quantum
 * shared by the process's live threads. @ran: its current run so far, on
 * a fast CPU if @on_fast. The simulator's default ranks a process seen to
 * finish and restart by the process's rate (order=ntt-seen); here every
 * task ranks by its own (order=ntt), see porting.md.
 */
static __always_inline u64 rota_rank(const struct rota_task *r, u64 ran, bool on_fast, u64 now)
{
	struct rota_prog *pg = lookup_prog(r->tgid);
	u64 speed = r->speed_fp > COLAB_FP_ONE ? r->speed_fp : COLAB_FP_ONE;
	u64 gain = (speed - COLAB_FP_ONE) * COLAB_FP_ONE / speed;
	u64 fast = r->fast_ns + (on_fast ? ran : 0);
	u64 slow = r->slow_ns + (on_fast ? 0 : ran);
	u64 live = pg && pg->live ? pg->live : 1;
	u64 q = rota_quantum_ns / live;
	u64 runnable = r->runnable_ns + since(now, r->woke_at_ns);
	u64 progress = sat_add(fast + mul_div_fp(slow, speed), q);
	u64 inv = shl16_div(runnable + q, progress ? progress : 1);
	u64 g = gain * inv * inv; /* < 2^58 */
	bool serial = pg && pg->created > 1 && pg->active == 1;

	return ((u64)!serial << 63) | (((1ULL << 63) - 1) - g);
}

static __always_inline bool rank_serial(u64 rank)
{
	return !(rank >> 63);
}

/* The best candidate a walk found: smallest key, then smallest pid. */
struct rota_pick {
	u64 key;
	u64 cpu_ns; /* its CPU time so far (turn_after) */
	u32 pid;
	s32 cpu;    /* the CPU it is queued or running on; -1: none found */
};

static __always_inline void pick_init(struct rota_pick *b)
{
	b->key = ~0ULL;
	b->cpu_ns = 0;
	b->pid = ~0U;
	b->cpu = -1;
}

static __always_inline void pick_offer(struct rota_pick *b, u64 key, u32 pid, s32 cpu, u64 cpu_ns)
{
	/* An empty pick has key and pid ~0: every task beats it. */
	if (key > b->key || (key == b->key && pid >= b->pid))
		return;
	b->key = key;
	b->pid = pid;
	b->cpu = cpu;
	b->cpu_ns = cpu_ns;
}

/* What one walk over the tasks that want a fast CPU finds. */
struct rota_walk {
	struct rota_pick best;    /* best rank: queued (not on @skip) or running on a slow CPU */
	struct rota_pick queued;  /* best rank among the queued ones */
	struct rota_pick serial;  /* best-ranked serial phase on a slow CPU */
	struct rota_pick sibling; /* process @tgid's task on a slow CPU longest off a fast one */
};

static __always_inline void walk_offer(struct rota_walk *w, const struct rota_task *r, u32 pid,
				       s32 cpu, bool running, u64 ran, u32 tgid, u64 now)
{
	u64 rank = rota_rank(r, ran, false, now);
	u64 cpu_ns = r->fast_ns + r->slow_ns + ran;

	pick_offer(&w->best, rank, pid, cpu, cpu_ns);
	if (!running)
		pick_offer(&w->queued, rank, pid, cpu, cpu_ns);
	if (is_fast(cpu))
		return;
	if (rank_serial(rank))
		pick_offer(&w->serial, rank, pid, cpu, cpu_ns);
	if (tgid && r->tgid == tgid)
		pick_offer(&w->sibling, r->fast_left_at, pid, cpu, cpu_ns);
}

/*
 * One pass over the tasks that want a fast CPU (Rota::waiting): queued on
 * any CPU's queue but @skip's (those that may run on @skip), and with
 * @running the tasks running on slow CPUs that no fast CPU asked for yet
 * and that may run anywhere.
 * Its cost is linear in the queued tasks (porting.md, obstacle 7).
 *
 * A global function: the verifier checks it once, and what it writes
 * through @w is not tracked value by value, so the loops' states converge
 * (inlined, the picks' values kept each iteration apart: "the sequence of
 * 8193 jumps is too complex" on 6.12).
 */
__noinline int rota_walk(struct rota_walk *w, s32 skip, u32 tgid, u32 running, u64 now)
{
	struct colab_cpu_state *cs;
	struct task_struct *p;
	struct task_ctx *t;
	u32 i;

	if (!w || skip < 0 || skip >= COLAB_MAX_CPUS)
		return 0;
	pick_init(&w->best);
	pick_init(&w->queued);
	pick_init(&w->serial);
	pick_init(&w->sibling);
	bpf_for(i, 0, nr_cpus) {
		if ((s32)i == skip || scx_bpf_dsq_nr_queued(i) <= 0)
			continue;
		bpf_for_each(scx_dsq, p, i, 0) {
			if (!bpf_cpumask_test_cpu(skip, p->cpus_ptr) || colab_migration_disabled(p))
				continue;
			t = lookup_tctx(p);
			if (!t)
				continue;
			refresh_labels(p, t);
			t->r.speed_fp = t->speedup_fp;
			walk_offer(w, &t->r, p->pid, i, false, 0, tgid, now);
		}
	}
	if (!running)
		return 0;
	bpf_for(i, 0, nr_little) {
		s32 o = little_cpus[i & CPU_MASK];

		cs = lookup_cpu_state(o);
		if (cs && cs->pid && !cs->pull_to && cs->run_anywhere)
			walk_offer(w, &cs->run, cs->pid, o, true, since(now, cs->started_at), tgid, now);
	}
	return 0;
}

/* --- accounting at run-state changes (mod.rs) --- */

static __always_inline void rota_init_task(struct task_struct *p, struct task_ctx *t)
{
	struct rota_prog zero = {}, *pg;
	u32 tgid = p->tgid;

	t->r.tgid = tgid;
	t->r.fast_left_at = bpf_ktime_get_ns();
	t->vcpu = -1;
	pg = lookup_prog(tgid);
	if (!pg) {
		bpf_map_update_elem(&rota_progs, &tgid, &zero, BPF_NOEXIST);
		pg = lookup_prog(tgid);
	}
	if (pg) {
		__sync_fetch_and_add(&pg->created, 1);
		__sync_fetch_and_add(&pg->live, 1);
	}
}

/* Does @t block again sooner than @ns: it has slept, and its bursts
 * between sleeps, on average and now, are shorter (Rota::bursts_under)? */
static __always_inline bool bursts_under(struct task_ctx *t, u64 ns)
{
	u64 b = t->avg_burst_ns > t->burst_ns ? t->avg_burst_ns : t->burst_ns;

	return t->has_slept && b < ns;
}

/* Its CPU's count of runnable tasks: queued, and the running one. */
static __always_inline u32 nr_running_on(s32 cpu)
{
	struct colab_cpu_state *cs = lookup_cpu_state(cpu);

	return queued_on(cpu) + (cs && (cs->pid || cs->reserved) ? 1 : 0);
}

/* @t changes queues from its vruntime's CPU to @to: its lag behind the old
 * floor carries over (CfsCore::migrated; @woken: a wake-up's move, where
 * the sleeper does not count for its old queue's floor, CfsCore::enqueued). */
static __always_inline void cfs_move(struct task_ctx *t, s32 to, u64 now, bool woken)
{
	struct colab_cpu_state *from_cs, *to_cs;
	u64 from_min, to_min;

	if (t->vcpu == to)
		return;
	to_cs = lookup_cpu_state(to);
	if (!to_cs)
		return;
	from_cs = t->vcpu >= 0 ? lookup_cpu_state(t->vcpu) : NULL;
	if (from_cs) {
		from_min = cfs_min_vr(t->vcpu, from_cs, now, false, !woken, t->vruntime);
		to_min = cfs_min_vr(to, to_cs, now, false, false, 0);
		t->vruntime += to_min - from_min;
	}
	t->vcpu = to;
}

/*
 * A task becomes runnable on @cpu (ops.runnable: a wake-up, or @new, its
 * first): its runnable spell opens and CFS places it (CfsCore::enqueued:
 * lag carried from its old queue, START_DEBIT for a new task but never
 * ahead of the last new task there, at most half a latency of credit).
 */
static __always_inline void rota_runnable(struct task_struct *p, struct task_ctx *t, bool new,
					  s32 cpu)
{
	struct colab_cpu_state *cs = lookup_cpu_state(cpu), *last;
	struct rota_prog *pg = lookup_prog(t->r.tgid);
	u64 now = bpf_ktime_get_ns(), min, v;

	t->r.woke_at_ns = now;
	t->awake = 1;
	t->queued_at = now;
	if (pg)
		__sync_fetch_and_add(&pg->active, 1);
	if (!new) {
		t->avg_sleep_ns = (3 * t->avg_sleep_ns + since(now, t->blocked_at)) / 4;
		last = t->last_cpu >= 0 ? lookup_cpu_state(t->last_cpu) : NULL;
		if (last && last->occ_pid == (u32)p->pid) {
			last->occ_avg_sleep_ns = t->avg_sleep_ns;
			last->occ_blocked = 0;
		}
	}
	if (!cs)
		return;
	if (!new)
		cfs_move(t, cpu, now, true);
	t->vcpu = cpu;
	min = cfs_min_vr(cpu, cs, now, false, false, 0);
	if (new) {
		v = min + cfs_slice(nr_running_on(cpu) + 1);
		if (vtime_before(v, cs->last_new_vtime))
			v = cs->last_new_vtime;
		cs->last_new_vtime = v;
		t->vruntime = v;
	} else if (vtime_before(t->vruntime, min - cfs_latency_ns / 2)) {
		t->vruntime = min - cfs_latency_ns / 2;
	}
}

/* @p joins @cpu's queue (ops.enqueue; @pulled: a fast CPU took it over).
 * An occupant that gave its fast CPU up goes to the CPU its swap chose. */
static __always_inline void rota_enqueue(struct task_struct *p, struct task_ctx *t, u64 enq_flags,
					 s32 cpu, bool pulled)
{
	struct colab_cpu_state *cs;
	u64 now = bpf_ktime_get_ns();
	s32 to = (s32)t->out_to - 1;

	t->out_to = 0;
	if (!pulled && to >= 0 && to < (s32)nr_cpus && bpf_cpumask_test_cpu(to, p->cpus_ptr)) {
		cpu = to;
	} else if (!pulled && (enq_flags & SCX_ENQ_LAST)) {
		/* Nothing else to run here: keep running. */
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfs_slice(1), enq_flags);
		return;
	}
	cs = lookup_cpu_state(cpu);
	if (!cs) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfs_slice(1), enq_flags & ~SCX_ENQ_LAST);
		return;
	}
	if (pulled && cs->expect_pid == (u32)p->pid)
		cs->expect_pid = 0;
	cfs_move(t, cpu, now, false);
	t->queued_at = now;
	stat_inc(COLAB_STAT_QUEUED);
	scx_bpf_dsq_insert_vtime(p, cpu, cfs_slice(queued_on(cpu) + 1), t->vruntime,
				 enq_flags & ~SCX_ENQ_LAST);
	/* Wake-up preemption (CfsCore::wakeup_preempt), on every CPU. */
	if ((enq_flags & SCX_ENQ_WAKEUP) && cs->pid &&
	    (s64)(cfs_cur_vtime(cs, now) - t->vruntime) > (s64)cfs_wakeup_gran_ns)
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	else
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

static __always_inline void rota_running(struct task_struct *p, struct task_ctx *t, s32 cpu,
					 struct colab_cpu_state *cs, u64 now)
{
	struct rota_prog *pg;

	cfs_move(t, cpu, now, false);
	cs->run_vtime = t->vruntime;
	cs->run_scale_fp = COLAB_FP_ONE;
	cs->idle_since = 0;
	cs->expect_pid = 0;
	cs->reserved = 0;
	t->r.speed_fp = t->speedup_fp;
	t->out_to = 0;
	if (is_fast(cpu) && nr_little) {
		pg = lookup_prog(t->r.tgid);
		if (pg)
			__sync_fetch_and_add(&pg->fast_running, 1);
	}
	cs->occ_blocked = 0;
	if (cs->occ_pid != (u32)p->pid) {
		cs->occ_pid = p->pid;
		cs->occ_tgid = p->tgid;
		cs->occ_since = now;
		cs->occ_avg_sleep_ns = t->avg_sleep_ns;
	}
	cs->run = t->r;
	cs->run_anywhere = p->nr_cpus_allowed >= (s32)nr_cpus && !colab_migration_disabled(p);
	p->scx.slice = cfs_slice(queued_on(cpu) + 1);
}

/* The task a fast CPU asked @cs's CPU for blocked before it could move:
 * the fast CPU stops waiting and looks again. */
static __always_inline void rota_pull_failed(struct colab_cpu_state *cs)
{
	s32 to = cs->pull_to - 1;
	struct colab_cpu_state *ts = lookup_cpu_state(to);

	if (ts && ts->expect_pid == cs->pid) {
		ts->expect_pid = 0;
		scx_bpf_kick_cpu(to, SCX_KICK_IDLE);
	}
	cs->pull_to = 0;
}

/* @vused: @used at the task's weight. @cs: its CPU's state. */
static __always_inline void rota_stopping(struct task_struct *p, struct task_ctx *t, s32 cpu,
					  struct colab_cpu_state *cs, u64 vused, u64 used,
					  bool runnable)
{
	struct rota_prog *pg = lookup_prog(t->r.tgid);
	u64 now = bpf_ktime_get_ns();

	if (is_fast(cpu) && nr_little) {
		if (pg)
			prog_dec(&pg->fast_running);
		t->r.fast_ns += used;
		t->r.fast_left_at = now;
	} else {
		t->r.slow_ns += used;
	}
	t->burst_ns += used;
	t->vruntime += vused;
	if (cs)
		cfs_min_vr(cpu, cs, now, true, true, t->vruntime);
	if (runnable)
		return;
	if (cs && cs->pull_to && cs->pid == (u32)p->pid)
		rota_pull_failed(cs);
	t->avg_burst_ns = (3 * t->avg_burst_ns + t->burst_ns) / 4;
	t->burst_ns = 0;
	if (pg)
		prog_dec(&pg->active);
	t->has_slept = 1;
	t->blocked_at = now;
	if (cs && cs->occ_pid == (u32)p->pid)
		cs->occ_blocked = 1;
	t->r.runnable_ns += since(now, t->r.woke_at_ns);
	t->awake = 0;
}

/* A task that exits is nobody's occupant, and its process has one less. */
static __always_inline void rota_exit_task(struct task_struct *p)
{
	struct colab_cpu_state *cs = lookup_cpu_state(scx_bpf_task_cpu(p));
	struct rota_prog *pg = lookup_prog(p->tgid);

	if (cs && cs->occ_pid == (u32)p->pid)
		cs->occ_pid = 0;
	if (pg)
		prog_dec(&pg->live);
}

/* The current task woke @p from a futex wait (tp_btf/sched_waking, in the
 * waker's context): stamp the waker (pull-from=sync). */
static __always_inline void rota_waker_stamp(void)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct task_ctx *w = lookup_tctx(cur);
	struct colab_cpu_state *cs;
	u64 now = bpf_ktime_get_ns();

	if (!w)
		return;
	w->r.woke_at = now;
	cs = lookup_cpu_state(bpf_get_smp_processor_id());
	if (cs && cs->pid == (u32)cur->pid)
		cs->run.woke_at = now;
}

#include "rota_place.bpf.h"
#include "rota_idle.bpf.h"
#include "rota_tick.bpf.h"
