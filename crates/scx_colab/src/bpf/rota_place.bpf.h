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

/*
 * The first CPU @p may use that is idle with nothing queued, among the fast
 * CPUs if @fast_only, @near's cluster first (Rota::idle_in_where). With
 * SMT, whole idle cores (@whole) before a thread beside a busy sibling, as
 * the kernel's x86 hybrid priorities rank them.
 */
static __always_inline s32 idle_in(struct task_struct *p, const struct cpumask *idle,
				   const struct cpumask *whole, bool fast_only, s32 near)
{
	u32 pass, i;

	bpf_for(pass, 0, 4) {
		bool need_whole = pass < 2, own = !(pass & 1);

		if ((need_whole && !whole) || (own && near < 0))
			continue;
		bpf_for(i, 0, nr_cpus) {
			if ((fast_only && !is_fast(i)) || (own && !same_cluster(i, near)) ||
			    !bpf_cpumask_test_cpu(i, p->cpus_ptr) ||
			    (need_whole && !bpf_cpumask_test_cpu(i, whole)))
				continue;
			if (idle_empty(idle, i))
				return i;
		}
	}
	return -1;
}

/* A fast CPU idle (nothing queued) for at least a migration's worth
 * (Rota::long_idle_fast). */
static __always_inline s32 long_idle_fast(struct task_struct *p, const struct cpumask *idle, u64 now)
{
	struct colab_cpu_state *cs;
	u32 i;

	bpf_for(i, 0, nr_big) {
		s32 f = big_cpus[i & CPU_MASK];

		if (!bpf_cpumask_test_cpu(f, p->cpus_ptr) || !idle_empty(idle, f))
			continue;
		cs = lookup_cpu_state(f);
		if (cs && cs->idle_since && now - cs->idle_since >= rota_idle_worth_ns)
			return f;
	}
	return -1;
}

enum rota_pool {
	POOL_ALL,
	POOL_SLOW,
	POOL_NEAR, /* @prev's cluster */
};

/* The CPU of @pool @p may use with the fewest runnable tasks; on ties
 * @prev, then its cluster, then the lowest id (Rota::shortest_in). */
static __always_inline s32 shortest_in(struct task_struct *p, enum rota_pool pool, s32 prev)
{
	u32 best_load = ~0U, best_tie = 3, load, tie, i;
	s32 best = -1;

	bpf_for(i, 0, nr_cpus) {
		if ((pool == POOL_SLOW && is_fast(i)) || (pool == POOL_NEAR && !same_cluster(i, prev)) ||
		    !bpf_cpumask_test_cpu(i, p->cpus_ptr))
			continue;
		load = nr_running_on(i);
		tie = (s32)i == prev ? 0 : prev >= 0 && same_cluster(i, prev) ? 1 : 2;
		if (load < best_load || (load == best_load && tie < best_tie)) {
			best = i;
			best_load = load;
			best_tie = tie;
		}
	}
	return best;
}

/* Where waking or new @p goes; *@idle: an idle CPU was claimed for it
 * (dispatch there now). */
static __always_inline s32 rota_select_cpu(struct task_struct *p, struct task_ctx *t, s32 prev_cpu,
					   bool *idle)
{
	const struct cpumask *idle_mask, *whole = NULL;
	u64 now = bpf_ktime_get_ns();
	bool new = t->last_cpu < 0;
	s32 prev = new ? -1 : prev_cpu, cpu;
	enum rota_pool pool;

	if (prev >= (s32)nr_cpus || (prev >= 0 && !bpf_cpumask_test_cpu(prev, p->cpus_ptr)))
		prev = -1;
	idle_mask = scx_bpf_get_idle_cpumask();
	if (smt_on)
		whole = scx_bpf_get_idle_smtmask();
	/* Short bursts: the shortest queue of the previous CPU's cluster
	 * (an idle CPU is a queue of none), the previous CPU on a tie. */
	if (prev >= 0 && bursts_under(t, rota_idle_worth_ns)) {
		cpu = shortest_in(p, POOL_NEAR, prev);
		if (cpu < 0)
			cpu = prev;
		goto out;
	}
	/* 1. An idle previous fast CPU. 2. An idle previous slow one, unless a
	 *    fast CPU has been idle long enough to be worth the move. */
	if (idle_empty(idle_mask, prev)) {
		cpu = is_fast(prev) ? prev : long_idle_fast(p, idle_mask, now);
		if (cpu < 0)
			cpu = prev;
		goto out;
	}
	/* 3. Any idle fast CPU, then any idle CPU, near the previous one. */
	cpu = idle_in(p, idle_mask, whole, true, prev);
	if (cpu < 0)
		cpu = idle_in(p, idle_mask, whole, false, prev);
	if (cpu >= 0)
		goto out;
	/* 4. Nothing idle: the shortest queue anywhere for a new task or short
	 *    bursts, else the shortest slow queue (fast CPUs go by rank). */
	pool = new || bursts_under(t, cfs_min_gran_ns) ? POOL_ALL : POOL_SLOW;
	cpu = shortest_in(p, pool, prev);
	if (cpu < 0)
		cpu = shortest_in(p, POOL_ALL, prev);
	if (cpu < 0)
		cpu = prev_cpu;
out:
	*idle = cpu >= 0 && bpf_cpumask_test_cpu(cpu, idle_mask) && !queued_on(cpu) &&
		scx_bpf_test_and_clear_cpu_idle(cpu);
	if (*idle) {
		struct colab_cpu_state *cs = lookup_cpu_state(cpu);

		if (cs)
			cs->reserved = 1;
	}
	if (whole)
		scx_bpf_put_idle_cpumask(whole);
	scx_bpf_put_idle_cpumask(idle_mask);
	return cpu;
}
