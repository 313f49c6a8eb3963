/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ROTA's placement of a waking or new task (place.rs: Rota::choose_core):
 * short bursts stay in their cluster, an idle previous CPU first (a slow
 * one unless a fast CPU has been idle a migration's worth), then any idle
 * fast CPU and any idle CPU, else the shortest queue: anywhere for a new
 * task or short bursts (share-fast=short), a slow one otherwise. Included
 * by rota.bpf.h. Not ported: reclaim=barrier (porting.md, rule 4).
 */

/* Both fast or both slow (the simulator's clusters on two-type machines). */
static __always_inline bool same_cluster(s32 a, s32 b)
{
	return is_fast(a) == is_fast(b);
}

/*
 * Idle with nothing queued (Rota::is_idle_empty). A CPU whose task has
 * stopped counts even before it picks (and sets its idle bit), as the
 * simulator's CPU with no current thread does: a task placed there is
 * queued and the CPU kicked, not dispatched directly.
 */
static __always_inline bool idle_empty(const struct cpumask *idle, s32 cpu)
{
	struct colab_cpu_state *cs;

	if (cpu < 0 || queued_on(cpu))
		return false;
	if (bpf_cpumask_test_cpu(cpu, idle))
		return true;
	cs = lookup_cpu_state(cpu);
	return cs && !cs->pid && !cs->reserved;
}

enum rota_pool {
	POOL_ALL,
	POOL_SLOW,
	POOL_NEAR, /* the previous CPU's cluster */
};

/* What one pass over the CPUs finds for a waking task: CPU ids, -1 none. */
struct rota_place_scan {
	s32 prev;           /* in: its previous CPU; -1: none (a new task) */
	u32 prev_idle;      /* out: @prev is idle with nothing queued */
	u64 now;            /* in */
	/* The first idle CPU with nothing queued of each kind, in the order
	 * Rota::idle_in_where takes them (SMT: whole idle cores first): for
	 * the fast CPUs, then all, [whole near, whole, near, any]. */
	s32 idle_fast[4];
	s32 idle_all[4];
	s32 long_idle_fast; /* a fast one idle a migration's worth (Rota::long_idle_fast) */
	/* Rota::shortest_in over all CPUs, the slow ones, @prev's cluster. */
	s32 shortest[3];
	u32 load[3];
	u32 tie[3];
};

static __always_inline void first_idle(s32 *kinds, s32 cpu, bool whole, bool near)
{
	if (whole && near && kinds[0] < 0)
		kinds[0] = cpu;
	if (whole && kinds[1] < 0)
		kinds[1] = cpu;
	if (near && kinds[2] < 0)
		kinds[2] = cpu;
	if (kinds[3] < 0)
		kinds[3] = cpu;
}

static __always_inline void shortest_offer(struct rota_place_scan *s, u32 pool, s32 cpu, u32 load,
					   u32 tie)
{
	if (load < s->load[pool] || (load == s->load[pool] && tie < s->tie[pool])) {
		s->shortest[pool] = cpu;
		s->load[pool] = load;
		s->tie[pool] = tie;
	}
}

/*
 * The pass (place.rs's searches, each in one loop: Rota::idle_in_where,
 * long_idle_fast, shortest_in). A CPU whose task stopped counts as idle
 * before it picks (and sets its idle bit), as the simulator's CPU with no
 * current thread does, unless a task was sent to its local queue. A global
 * function, so the verifier checks it once and its loop converges (see
 * rota_walk); it sees no task, so it serves tasks that may run anywhere.
 */
__noinline int rota_place_scan(struct rota_place_scan *s)
{
	const struct cpumask *idle, *whole;
	struct colab_cpu_state *cs;
	bool fast, near, free, busy;
	u32 i, q, j;

	if (!s)
		return 0;
	s->prev_idle = 0;
	s->long_idle_fast = -1;
	bpf_for(j, 0, 4) {
		s->idle_fast[j & 3] = -1;
		s->idle_all[j & 3] = -1;
	}
	bpf_for(j, 0, 3) {
		s->shortest[j % 3] = -1;
		s->load[j % 3] = ~0U;
		s->tie[j % 3] = 3;
	}
	idle = scx_bpf_get_idle_cpumask();
	whole = scx_bpf_get_idle_smtmask();
	bpf_for(i, 0, nr_cpus) {
		fast = is_fast(i);
		near = s->prev >= 0 && same_cluster(i, s->prev);
		cs = lookup_cpu_state(i);
		q = queued_on(i);
		busy = cs && (cs->pid || cs->reserved);
		free = !q && (bpf_cpumask_test_cpu(i, idle) || (cs && !busy));
		if (free) {
			bool w = smt_on && bpf_cpumask_test_cpu(i, whole);

			if ((s32)i == s->prev)
				s->prev_idle = 1;
			if (fast)
				first_idle(s->idle_fast, i, w, near);
			first_idle(s->idle_all, i, w, near);
			if (fast && s->long_idle_fast < 0 && cs && cs->idle_since &&
			    since(s->now, cs->idle_since) >= rota_idle_worth_ns)
				s->long_idle_fast = i;
		}
		q += busy ? 1 : 0;
		j = (s32)i == s->prev ? 0 : near ? 1 : 2;
		shortest_offer(s, POOL_ALL, i, q, j);
		if (!fast)
			shortest_offer(s, POOL_SLOW, i, q, j);
		if (near)
			shortest_offer(s, POOL_NEAR, i, q, j);
	}
	scx_bpf_put_idle_cpumask(whole);
	scx_bpf_put_idle_cpumask(idle);
	return 0;
}

static __always_inline s32 first_of(s32 *kinds)
{
	if (kinds[0] >= 0)
		return kinds[0];
	if (kinds[1] >= 0)
		return kinds[1];
	return kinds[2] >= 0 ? kinds[2] : kinds[3];
}

/* Where waking or new @p goes; *@idle: an idle CPU was claimed for it
 * (dispatch there now). */
static __always_inline s32 rota_select_cpu(struct task_struct *p, struct task_ctx *t, s32 prev_cpu,
					   u64 wake_flags, bool *idle)
{
	struct rota_place_scan s = {};
	struct colab_cpu_state *cs;
	bool new = t->last_cpu < 0;
	s32 cpu;

	*idle = false;
	/* A task that may not run everywhere: the kernel's own choice. */
	if (p->nr_cpus_allowed < (s32)nr_cpus)
		return scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, idle);
	s.prev = new || prev_cpu >= (s32)nr_cpus ? -1 : prev_cpu;
	s.now = bpf_ktime_get_ns();
	rota_place_scan(&s);
	if (s.prev >= 0 && bursts_under(t, rota_idle_worth_ns)) {
		/* Short bursts: the shortest queue of the previous CPU's
		 * cluster (an idle CPU is a queue of none), it on a tie. */
		cpu = s.shortest[POOL_NEAR] >= 0 ? s.shortest[POOL_NEAR] : s.prev;
	} else if (s.prev >= 0 && s.prev_idle) {
		/* 1. An idle previous fast CPU. 2. An idle previous slow one,
		 *    unless a fast CPU has been idle long enough to be worth
		 *    the move. */
		cpu = !is_fast(s.prev) && s.long_idle_fast >= 0 ? s.long_idle_fast : s.prev;
	} else if ((cpu = first_of(s.idle_fast)) >= 0 || (cpu = first_of(s.idle_all)) >= 0) {
		/* 3. Any idle fast CPU, then any idle CPU, near the previous one. */
	} else {
		/* 4. Nothing idle: the shortest queue anywhere for a new task or
		 *    short bursts, else the shortest slow queue (fast CPUs go by
		 *    rank). */
		cpu = new || bursts_under(t, cfs_min_gran_ns) ? s.shortest[POOL_ALL] : s.shortest[POOL_SLOW];
		if (cpu < 0)
			cpu = s.shortest[POOL_ALL];
	}
	if (cpu < 0 || cpu >= (s32)nr_cpus)
		return prev_cpu;
	if (!queued_on(cpu) && scx_bpf_test_and_clear_cpu_idle(cpu)) {
		*idle = true;
		cs = lookup_cpu_state(cpu);
		if (cs)
			cs->reserved = 1;
	}
	return cpu;
}
