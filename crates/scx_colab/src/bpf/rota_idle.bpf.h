/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a CPU takes when it must pick (idle.rs): its own queue's leftmost
 * (CFS's order, the running task included); an idle fast CPU steals the
 * best-ranked queued task anywhere, else takes over the best-ranked task
 * running on a slow CPU (or on a slower fast CPU, with three core types or
 * more) once pull_min and hold allow; a slow CPU pulls as
 * CFS's idle balance does. Included by rota.bpf.h. Not ported: the gang
 * hold (a timed idle, porting.md rule 10).
 */

/* Move @pid, queued on @dsq, to @cpu's local queue, its lag carried
 * (cfs_move; the floors are read before the walk, which holds the task,
 * so that no walk runs inside another). A global function: see rota_walk. */
__noinline int take_queued(s32 cpu, s32 dsq, u32 pid, u64 now)
{
	struct colab_cpu_state *from = lookup_cpu_state(dsq), *to = lookup_cpu_state(cpu);
	struct task_struct *p;
	struct task_ctx *t;
	u64 delta = 0;

	if (dsq < 0 || dsq >= COLAB_MAX_CPUS)
		return 0;
	if (from && to)
		delta = cfs_min_vr(cpu, to, now, false, false, 0) -
			cfs_min_vr(dsq, from, now, false, false, 0);
	bpf_for_each(scx_dsq, p, dsq, 0) {
		if ((u32)p->pid != pid)
			continue;
		t = lookup_tctx(p);
		if (t) {
			if (t->vcpu == dsq)
				t->vruntime += delta;
			t->vcpu = cpu;
		}
		return scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0);
	}
	return false;
}

/* Take @pid from whichever queue holds it (a global function: see rota_walk). */
__noinline int rota_take_pid(s32 cpu, u32 pid, u64 now)
{
	struct task_struct *p;
	s32 found = -1;
	u32 i;

	if (cpu < 0 || cpu >= COLAB_MAX_CPUS)
		return 0;
	bpf_for(i, 0, nr_cpus) {
		if (scx_bpf_dsq_nr_queued(i) <= 0)
			continue;
		bpf_for_each(scx_dsq, p, i, 0) {
			if ((u32)p->pid == pid) {
				found = i;
				break;
			}
		}
		if (found >= 0)
			break;
	}
	return found >= 0 && take_queued(cpu, found, pid, now);
}

/*
 * Gang hold (Rota::gang_hold): idle fast CPU @cs's occupant blocked while
 * every other runnable thread of its process runs on a fast CPU, in a
 * process whose live threads fit the fast CPUs: one of them will wake it,
 * so the CPU waits for it up to the minimum quantum after it went idle.
 * The simulator looks again at that time; without a timer this CPU looks
 * again at the next kick (a slow CPU's tick), see porting.md.
 */
static __always_inline bool gang_hold(struct colab_cpu_state *cs, u64 now)
{
	struct rota_prog *pg;
	u64 since;

	if (!cs->occ_pid || !cs->occ_blocked)
		return false;
	pg = lookup_prog(cs->occ_tgid);
	if (!pg || !pg->fast_running || pg->fast_running != pg->active || pg->live > nr_big)
		return false;
	since = cs->idle_since ? cs->idle_since : now;
	return since + rota_min_quantum_ns > now;
}

/* May idle fast CPU @me take over a task of any process: no occupant, or
 * its sleeps are long, or @me has been idle a migration's worth
 * (Rota::may_pull_any; with hold, asked for every process). */
static __always_inline bool may_pull_any(struct colab_cpu_state *me, u64 now)
{
	return !me->occ_pid || me->occ_avg_sleep_ns >= rota_idle_worth_ns ||
	       (me->idle_since && since(now, me->idle_since) >= rota_idle_worth_ns);
}

/* Offers the task running on CPU @o to @b if idle fast CPU @me may take
 * it over: it has run pull_min in its phase (since it got on its CPU or
 * last woke another task), a minimum only for the occupant's process. */
static __always_inline void remote_offer(struct rota_pick *b, struct colab_cpu_state *me, s32 o,
					 u64 now)
{
	struct colab_cpu_state *cs = lookup_cpu_state(o);
	u64 ran, phase, min;

	if (!cs || !cs->pid || cs->pull_to || !cs->run_anywhere)
		return;
	ran = since(now, cs->started_at);
	phase = since(now, cs->run.woke_at) < ran ? since(now, cs->run.woke_at) : ran;
	min = me->occ_pid && me->occ_tgid == cs->run.tgid ? rota_pull_min_ns : 0;
	if (phase >= min)
		pick_offer(b, rota_rank(&cs->run, ran, false, now), cs->pid, o, 0);
}

/* The best-ranked task running on a slow CPU that idle fast CPU @cpu (state
 * @me) may take over, else, with three or more core types, one running on
 * a fast CPU of a slower type (Rota::best_slower_running; see rota_remote;
 * a global function: see rota_walk). */
__noinline int rota_remote_scan(struct rota_pick *b, struct colab_cpu_state *me, s32 cpu, u64 now)
{
	u32 i;

	if (!b || !me || cpu < 0 || cpu >= COLAB_MAX_CPUS)
		return 0;
	pick_init(b);
	bpf_for(i, 0, nr_little) {
		remote_offer(b, me, little_cpus[i & CPU_MASK], now);
	}
	if (!tiered || b->cpu >= 0 || !cpu_tier[cpu])
		return 0;
	bpf_for(i, 0, nr_big) {
		s32 o = big_cpus[i & CPU_MASK];

		if (cpu_tier[o & CPU_MASK] < cpu_tier[cpu])
			remote_offer(b, me, o, now);
	}
	return 0;
}

/*
 * Idle fast CPU @cpu takes over the best-ranked task running on a slow
 * CPU that has run pull_min in its phase (since it got on its CPU or last
 * woke another task, whichever is later), a minimum that applies only to
 * the occupant's own process (Rota::best_slow_running), else one so running
 * on a slower fast CPU (tiers). It preempts the task; its ops.enqueue()
 * sends it here (pull_to).
 */
static __always_inline bool rota_remote(s32 cpu, struct colab_cpu_state *me, u64 now)
{
	struct colab_cpu_state *cs;
	struct rota_pick b = {};

	if (!may_pull_any(me, now))
		return false;
	rota_remote_scan(&b, me, cpu, now);
	if (b.cpu < 0 || b.cpu >= (s32)nr_cpus)
		return false;
	cs = lookup_cpu_state(b.cpu);
	if (!cs)
		return false;
	cs->pull_to = cpu + 1;
	me->expect_pid = b.pid;
	me->expect_at = now;
	stat_inc(COLAB_STAT_BIG_PREEMPT);
	scx_bpf_kick_cpu(b.cpu, SCX_KICK_PREEMPT);
	return true;
}

/* The busiest queues other than @cpu's: of its cluster and of all. */
struct rota_busiest {
	s32 own, all;
	u32 own_n, all_n; /* their runnable tasks */
};

/* A global function (see rota_walk). */
__noinline int rota_busiest(struct rota_busiest *b, s32 cpu)
{
	u32 i, n;

	if (!b)
		return 0;
	b->own = b->all = -1;
	b->own_n = b->all_n = 0;
	bpf_for(i, 0, nr_cpus) {
		if ((s32)i == cpu || scx_bpf_dsq_nr_queued(i) <= 0)
			continue;
		n = nr_running_on(i);
		if (n > b->all_n) {
			b->all_n = n;
			b->all = i;
		}
		if (same_cluster(i, cpu) && n > b->own_n) {
			b->own_n = n;
			b->own = i;
		}
	}
	return 0;
}

/* The pid of the longest-waiting task queued on @dsq that may run on @cpu
 * (0: none). A global function (see rota_walk). */
__noinline u32 rota_oldest(s32 cpu, s32 dsq)
{
	struct task_struct *p;
	struct task_ctx *t;
	u64 oldest = ~0ULL;
	u32 pid = 0;

	if (cpu < 0 || cpu >= COLAB_MAX_CPUS || dsq < 0 || dsq >= COLAB_MAX_CPUS)
		return 0;
	bpf_for_each(scx_dsq, p, dsq, 0) {
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr) || colab_migration_disabled(p))
			continue;
		t = lookup_tctx(p);
		if (t && (t->queued_at < oldest || (t->queued_at == oldest && (u32)p->pid < pid))) {
			oldest = t->queued_at;
			pid = p->pid;
		}
	}
	return pid;
}

/* From the busiest queue @b (@n runnable tasks): its longest-waiting task,
 * unless its only task runs there. */
static __always_inline bool pull_from(s32 cpu, s32 b, u32 n, u64 now)
{
	struct colab_cpu_state *cs;
	u32 pid;

	if (b < 0)
		return false;
	cs = lookup_cpu_state(b);
	if (n < 2 && cs && cs->pid)
		return false;
	pid = rota_oldest(cpu, b);
	return pid && take_queued(cpu, b, pid, now);
}

/* CFS's idle balance (CfsCore::idle_pull): the longest-waiting task of the
 * busiest queue, own cluster first, then all; a CPU whose only task runs
 * has nothing to give. */
static __always_inline bool rota_idle_pull(s32 cpu, u64 now)
{
	struct rota_busiest b = {};

	rota_busiest(&b, cpu);
	return pull_from(cpu, b.own, b.own_n, now) || pull_from(cpu, b.all, b.all_n, now);
}

static __always_inline void rota_dispatch(s32 cpu, struct task_struct *prev)
{
	struct colab_cpu_state *cs = lookup_cpu_state(cpu);
	struct task_ctx *pctx = prev ? lookup_tctx(prev) : NULL;
	u64 now = bpf_ktime_get_ns(), head, cur;
	struct rota_walk w = {};
	bool prev_stays;
	u32 hpid, swap;

	if (!cs)
		return;
	/* The running task goes on unless it blocked, gives its fast CPU up
	 * (a swap) or a fast CPU asked for it (its enqueue sends it there). */
	prev_stays = prev && (prev->scx.flags & SCX_TASK_QUEUED) && pctx && !pctx->out_to &&
		     !(cs->pull_to && cs->pid == (u32)prev->pid);
	/* 1. A swap decided at this CPU's tick: the queued task it chose. */
	swap = cs->swap_pid;
	if (swap) {
		cs->swap_pid = 0;
		if (rota_take_pid(cpu, swap, now))
			return;
	}
	/* 2. The own queue's leftmost, unless the running task (its current
	 *    run counted) is further left. */
	if (cfs_head_vtime(cpu, &head, &hpid)) {
		if (prev_stays && cs->pid == (u32)prev->pid) {
			cur = cfs_cur_vtime(cs, now);
			if (!vtime_before(head, cur) && !(head == cur && hpid < (u32)prev->pid)) {
				prev->scx.slice = cfs_slice(queued_on(cpu) + 1);
				return;
			}
		}
		if (scx_bpf_dsq_move_to_local(cpu, 0)) {
			stat_inc(COLAB_STAT_LOCAL);
			return;
		}
	}
	if (prev_stays) {
		prev->scx.slice = cfs_slice(1);
		return;
	}
	/* A task this CPU took over is on its way (its enqueue kicks us). */
	if (cs->expect_pid && since(now, cs->expect_at) < rota_quantum_ns)
		return;
	cs->expect_pid = 0;
	if (nr_big && nr_little && is_big(cpu)) {
		if (gang_hold(cs, now)) {
			if (!cs->idle_since)
				cs->idle_since = now;
			return;
		}
		/* 3. The best-ranked task queued anywhere. */
		rota_walk(&w, cpu, 0, false, now);
		if (w.queued.cpu >= 0 && take_queued(cpu, w.queued.cpu, w.queued.pid, now)) {
			stat_inc(COLAB_STAT_STEAL_OTHER);
			return;
		}
		/* 4. Or take over one running on a slow CPU. */
		if (!no_big_pull && rota_remote(cpu, cs, now))
			return;
	} else if (rota_idle_pull(cpu, now)) {
		stat_inc(COLAB_STAT_STEAL_OWN);
		return;
	}
	if (!cs->idle_since)
		cs->idle_since = now;
}
