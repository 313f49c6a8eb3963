/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ROTA's third freeze (crates/policies/src/rota, the simulator's `rota@3`;
 * the simulator's default `rota` is the nineteenth, not yet ported),
 * included by main.bpf.c; scx_colab's default policy.
 *
 * - Fast (big) CPUs run one task each; the other runnable tasks queue on
 *   slow CPUs' DSQs, which are ordered by vruntime (CFS's order, with
 *   per-queue min_vruntime, sleeper credit and wake-up preemption).
 * - A waking task goes to its idle previous CPU if that is fast; to its
 *   idle previous slow CPU unless a fast CPU has been idle for at least a
 *   cross-cluster migration; else to any idle fast CPU, any idle CPU, and
 *   failing all that to the shortest slow queue.
 * - A fast CPU with nothing to run takes the first waiting task in the
 *   capped FIFO order: runnable longest first, except that a task more than
 *   the cap of fast-CPU time (per unit of predicted speedup) ahead of the
 *   least-served waiting task goes after all others. Failing a queued task,
 *   it takes over (preempts and pulls) a task running on a slow CPU, in the
 *   same order, that has run at least pull_min and is not a sibling of the
 *   fast CPU's short-sleeping occupant (the fine-grained barrier guard).
 * - At a fast CPU's tick, an occupant that has held it a quantum or more
 *   and is more than the cap ahead of the least-served waiting task gives
 *   its CPU up: it queues on a slow CPU and the CPU takes the first waiting
 *   task.
 * - A new task's fast-CPU account starts level with the least served, a
 *   waking one at most a cap behind (CFS's place_entity, on fast time).
 *
 * "Waiting" is what the simulator means: queued anywhere, or running on a
 * slow CPU. The least-served value is found by walking the DSQs (bounded by
 * the CPU count and their lengths) at fast CPUs' dispatches and ticks;
 * placement at wake-up reads the last walk's value rather than walking
 * again. Every other difference from the simulator: README.md, "Deviations".
 */

/*
 * Set by user space; the first three from the machine's cross-cluster
 * migration cost exactly as the simulator derives them (rota/mod.rs):
 * quantum 200x, pull_min 4x, idle_worth 1x.
 */
const volatile u64 rota_quantum_ns = 20000000ULL;
const volatile u64 rota_cap_ns = 20000000ULL;
const volatile u64 rota_pull_min_ns = 400000ULL;
const volatile u64 rota_idle_worth_ns = 100000ULL;
/* Ablation (--no-rotation): occupants never give a fast CPU up at a tick. */
const volatile bool rota_no_rotation;
/* --eager-rotation: rotate as the simulator does (deviation 9 off): an
 * occupant rotates out even while a fast CPU is idle. */
const volatile bool rota_eager;

/* Least fast-CPU key of the tasks that want a CPU, waiting or on a fast
 * CPU, at the last walk; (u64)-1: none. Read by wake-up placement. */
static u64 rota_least_all = (u64)-1;

/* Fast-CPU time per unit of predicted speedup: what the rotation equalises. */
static __always_inline u64 owed_of(u64 fast_ns, u64 speed_fp)
{
	if (speed_fp < COLAB_FP_ONE)
		speed_fp = COLAB_FP_ONE;
	return fast_ns * COLAB_FP_ONE / speed_fp;
}

static __always_inline u64 task_owed(struct task_ctx *t)
{
	return owed_of(t->fast_ns, t->speedup_fp);
}

/* The capped order's rank, smaller first: behind if more than the cap
 * ahead of @floor, then runnable longest first. */
static __always_inline u64 rota_rank(u64 owed, u64 runnable_since, u64 floor)
{
	u64 behind = owed > floor + rota_cap_ns;
	u64 since = runnable_since < (1ULL << 62) ? runnable_since : (1ULL << 62) - 1;

	return (behind << 62) | since;
}

struct rota_walk {
	u64 least_wait; /* least key of the waiting tasks */
	u64 least_all;  /* ... and of the tasks on fast CPUs */
	bool any_wait;
};

/* Least keys of the waiting tasks (except those queued on @skip) and of
 * all tasks that want a CPU. */
static __always_inline void rota_walk(s32 skip, u64 now, struct rota_walk *w)
{
	struct task_struct *p;
	struct colab_cpu_state *cs;
	struct task_ctx *t;
	u64 k;
	u32 i;

	w->least_wait = (u64)-1;
	w->least_all = (u64)-1;
	w->any_wait = false;
	bpf_for(i, 0, nr_cpus) {
		/* An iterator costs three kfunc calls: skip empty queues (most
		 * of them, on a machine that is not overloaded). */
		if ((s32)i != skip && scx_bpf_dsq_nr_queued(i) > 0) {
			bpf_for_each(scx_dsq, p, i, 0) {
				t = lookup_tctx(p);
				if (!t)
					continue;
				k = task_owed(t);
				w->any_wait = true;
				if (k < w->least_wait)
					w->least_wait = k;
			}
		}
		cs = lookup_cpu_state(i);
		if (!cs || !cs->pid)
			continue;
		if (is_big(i)) {
			k = owed_of(cs->run_fast_ns + (now - cs->started_at), cs->run_speed_fp);
		} else {
			k = owed_of(cs->run_fast_ns, cs->run_speed_fp);
			w->any_wait = true;
			if (k < w->least_wait)
				w->least_wait = k;
		}
		if (k < w->least_all)
			w->least_all = k;
	}
	if (w->least_wait < w->least_all)
		w->least_all = w->least_wait;
}

/* A fast CPU takes the first queued task in the capped order, anywhere. */
static __always_inline bool rota_steal(s32 cpu, u64 floor)
{
	struct task_struct *p;
	struct task_ctx *t;
	u64 best = (u64)-1, r;
	u32 best_pid = 0;
	s32 best_dsq = -1;
	u32 i;

	bpf_for(i, 0, nr_cpus) {
		if ((s32)i == cpu || scx_bpf_dsq_nr_queued(i) <= 0)
			continue;
		bpf_for_each(scx_dsq, p, i, 0) {
			if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr) || colab_migration_disabled(p))
				continue;
			t = lookup_tctx(p);
			/* One that just gave a fast CPU up waits for a slow one:
			 * the simulator's swap is one step, here two. */
			if (!t || t->rota_out)
				continue;
			r = rota_rank(task_owed(t), t->runnable_since, floor);
			if (r < best || (r == best && (u32)p->pid < best_pid)) {
				best = r;
				best_pid = p->pid;
				best_dsq = i;
			}
		}
	}
	if (best_dsq < 0)
		return false;
	bpf_for_each(scx_dsq, p, best_dsq, 0) {
		if ((u32)p->pid == best_pid)
			return scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0);
	}
	return false;
}

/*
 * May idle fast CPU @me take over @cs's running task? At once, unless it is
 * a sibling (same process) of @me's occupant and that occupant's sleeps are
 * short: it would come back, find its CPU taken and trade clusters at every
 * sleep; then only once @me has been idle for a cross-cluster migration.
 */
static __always_inline bool rota_may_pull(struct colab_cpu_state *me, struct colab_cpu_state *cs,
					  u64 now)
{
	return !me->occ_pid || me->occ_tgid != cs->tgid ||
	       me->occ_avg_sleep_ns >= rota_idle_worth_ns ||
	       (me->idle_since && now - me->idle_since >= rota_idle_worth_ns);
}

/* Whether @cpu's SMT sibling runs a task (always false without SMT). */
static __always_inline bool sibling_busy(s32 cpu)
{
	struct colab_cpu_state *cs;
	s32 sib;

	if (!smt_on || cpu < 0 || cpu >= COLAB_MAX_CPUS)
		return false;
	sib = sibling_cpu[cpu & CPU_MASK];
	if (sib < 0 || sib >= COLAB_MAX_CPUS)
		return false;
	cs = lookup_cpu_state(sib);
	return cs && cs->pid;
}

/* An idle fast CPU, its sibling idle too when @whole; -1 if none. */
static __always_inline s32 idle_fast(bool whole)
{
	struct colab_cpu_state *cs;
	u32 i;

	bpf_for(i, 0, nr_big) {
		s32 f = big_cpus[i & CPU_MASK];

		cs = lookup_cpu_state(f);
		if (cs && cs->idle_since && !(whole && sibling_busy(f)))
			return f;
	}
	return -1;
}

/* An idle fast CPU, if any, looks for waiting tasks: a whole idle core's
 * first (SMT), since a thread beside a busy sibling runs slower. */
static __always_inline void rota_kick_idle_fast(void)
{
	s32 f = smt_on ? idle_fast(true) : -1;

	if (f < 0)
		f = idle_fast(false);
	if (f >= 0) {
		scx_bpf_kick_cpu(f, SCX_KICK_IDLE);
		stat_inc(COLAB_STAT_IDLE_KICKS);
	}
}

/* SMT: fast CPU @cpu, beside a busy sibling, leaves waiting work to an idle
 * whole fast core (and wakes it) rather than take it itself. */
static __always_inline bool defer_to_whole_core(s32 cpu)
{
	s32 f;

	if (!sibling_busy(cpu))
		return false;
	f = idle_fast(true);
	if (f < 0 || f == cpu)
		return false;
	scx_bpf_kick_cpu(f, SCX_KICK_IDLE);
	stat_inc(COLAB_STAT_IDLE_KICKS);
	return true;
}

/* An idle fast CPU preempts the first task in the order running on a slow
 * CPU; its ops.enqueue() then sends it here (pull_to). */
static __always_inline void rota_remote(s32 cpu, u64 now, u64 floor)
{
	struct colab_cpu_state *me = lookup_cpu_state(cpu), *cs;
	u64 best = (u64)-1, r;
	s32 best_cpu = -1;
	u32 i;

	if (!me)
		return;
	bpf_for(i, 0, nr_little) {
		s32 o = little_cpus[i & CPU_MASK];

		cs = lookup_cpu_state(o);
		if (!cs || !cs->pid || cs->pull_to)
			continue;
		if (now - cs->started_at < rota_pull_min_ns || !rota_may_pull(me, cs, now))
			continue;
		r = rota_rank(owed_of(cs->run_fast_ns, cs->run_speed_fp), cs->run_since, floor);
		if (r < best) {
			best = r;
			best_cpu = o;
		}
	}
	if (best_cpu < 0)
		return;
	cs = lookup_cpu_state(best_cpu);
	if (!cs)
		return;
	cs->pull_to = cpu + 1;
	stat_inc(COLAB_STAT_BIG_PREEMPT);
	scx_bpf_kick_cpu(best_cpu, SCX_KICK_PREEMPT);
}

/* A slow (or symmetric) CPU's idle balance: the head of the longest other
 * queue, its own cluster first. */
static __always_inline bool rota_idle_pull(s32 cpu)
{
	s32 best = -1, n, most = 0;
	u32 pass, i;

	bpf_for(pass, 0, 2) {
		bool want_big = (pass == 0) == is_big(cpu);

		bpf_for(i, 0, nr_cpus) {
			if ((s32)i == cpu || is_big(i) != want_big)
				continue;
			n = scx_bpf_dsq_nr_queued(i);
			if (n > most) {
				most = n;
				best = i;
			}
		}
		if (best >= 0 && scx_bpf_dsq_move_to_local(best, 0))
			return true;
		best = -1;
		most = 0;
	}
	return false;
}

static __always_inline bool cpu_idle_now(s32 cpu)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	bool yes = bpf_cpumask_test_cpu(cpu, idle);

	scx_bpf_put_idle_cpumask(idle);
	return yes;
}

/* The first allowed idle CPU of a cluster (@set: 0 big, 1 little), claimed;
 * with @worth, only fast CPUs idle for at least a cross-cluster migration;
 * with @core, only CPUs whose SMT siblings are idle too (a whole core). */
static __always_inline s32 claim_idle_in(struct task_struct *p, u32 set, bool worth, bool core,
					 u64 now)
{
	const struct cpumask *whole = NULL;
	struct colab_cpu_state *cs;
	u32 n = set ? nr_little : nr_big;
	s32 found = -1;
	u32 i;

	if (core)
		whole = scx_bpf_get_idle_smtmask();
	bpf_for(i, 0, n) {
		s32 cpu = set ? little_cpus[i & CPU_MASK] : big_cpus[i & CPU_MASK];

		if (cpu < 0 || cpu >= COLAB_MAX_CPUS || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		if (whole && !bpf_cpumask_test_cpu(cpu, whole))
			continue;
		if (worth) {
			cs = lookup_cpu_state(cpu);
			if (!cs || !cs->idle_since || now - cs->idle_since < rota_idle_worth_ns)
				continue;
		}
		if (scx_bpf_test_and_clear_cpu_idle(cpu)) {
			found = cpu;
			break;
		}
	}
	if (whole)
		scx_bpf_put_idle_cpumask(whole);
	return found;
}

/*
 * An idle CPU of the fast cluster, then of the slow one (@worth: fast CPUs
 * only, idle for a migration's worth). On SMT machines whole idle cores come
 * first in both clusters, and only then a thread beside a busy sibling, as
 * the kernel's x86 hybrid priorities rank a busy P-core's sibling below an
 * idle E-core: such a thread runs slower than its core's capacity says.
 */
static __always_inline s32 rota_claim_idle(struct task_struct *p, bool worth, u64 now)
{
	s32 cpu = -1;

	if (smt_on) {
		cpu = claim_idle_in(p, 0, worth, true, now);
		if (cpu < 0 && !worth)
			cpu = claim_idle_in(p, 1, false, true, now);
		if (cpu >= 0 || worth)
			return cpu;
	}
	cpu = claim_idle_in(p, 0, worth, false, now);
	if (cpu < 0 && !worth)
		cpu = claim_idle_in(p, 1, false, false, now);
	return cpu;
}

/* Whether @cpu's whole core (it and its SMT siblings) is idle. */
static __always_inline bool core_idle_now(s32 cpu)
{
	const struct cpumask *whole = scx_bpf_get_idle_smtmask();
	bool yes = bpf_cpumask_test_cpu(cpu, whole);

	scx_bpf_put_idle_cpumask(whole);
	return yes;
}

/* The allowed CPU of a cluster with the shortest queue, @prev on ties. */
static __always_inline s32 rota_shortest(struct task_struct *p, u32 set, s32 prev)
{
	u32 n = set ? nr_little : nr_big;
	u32 best_load = 0, load, i;
	s32 best = -1;

	bpf_for(i, 0, n) {
		s32 cpu = set ? little_cpus[i & CPU_MASK] : big_cpus[i & CPU_MASK];
		struct colab_cpu_state *cs;

		if (cpu < 0 || cpu >= COLAB_MAX_CPUS || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		cs = lookup_cpu_state(cpu);
		load = queued_on(cpu) + (cs && cs->pid ? 1 : 0);
		if (best < 0 || load < best_load || (load == best_load && cpu == prev)) {
			best = cpu;
			best_load = load;
		}
	}
	return best;
}

/* Where a waking task goes; *@idle: a claimed idle CPU (dispatch there now). */
static __always_inline s32 rota_select_cpu(struct task_struct *p, s32 prev, bool *idle)
{
	u64 now = bpf_ktime_get_ns();
	bool prev_ok = prev >= 0 && prev < COLAB_MAX_CPUS && bpf_cpumask_test_cpu(prev, p->cpus_ptr);
	s32 cpu = -1;

	*idle = true;
	if (nr_big && nr_little) {
		/* 1. An idle previous fast CPU (with SMT: its whole core idle;
		 *    beside a busy sibling it waits for step 3's later passes). */
		if (prev_ok && is_big(prev) && (!smt_on || core_idle_now(prev)) &&
		    scx_bpf_test_and_clear_cpu_idle(prev))
			return prev;
		/* 2. An idle previous slow CPU, unless a fast CPU has been idle
		 *    long enough to be worth the move. */
		if (prev_ok && !is_big(prev) && cpu_idle_now(prev)) {
			cpu = rota_claim_idle(p, true, now);
			if (cpu >= 0)
				return cpu;
			if (scx_bpf_test_and_clear_cpu_idle(prev))
				return prev;
		}
		/* 3. Any idle fast CPU, then any idle CPU (whole cores first). */
		cpu = rota_claim_idle(p, false, now);
		if (cpu >= 0)
			return cpu;
		/* 4. Queue on the shortest slow queue (fast CPUs rotate). */
		*idle = false;
		cpu = rota_shortest(p, 1, prev);
		if (cpu < 0)
			cpu = rota_shortest(p, 0, prev);
		return cpu >= 0 ? cpu : prev;
	}
	/* One cluster: CFS-like. */
	if (prev_ok && scx_bpf_test_and_clear_cpu_idle(prev))
		return prev;
	if (smt_on)
		cpu = claim_idle_in(p, nr_big ? 0 : 1, false, true, now);
	if (cpu < 0)
		cpu = claim_idle_in(p, nr_big ? 0 : 1, false, false, now);
	if (cpu >= 0)
		return cpu;
	*idle = false;
	cpu = rota_shortest(p, nr_big ? 0 : 1, prev);
	return cpu >= 0 ? cpu : prev;
}

/* A task becomes runnable (a wake-up, or @new: its first time): FIFO
 * stamp, sleep statistics, placement of its fast-CPU account. */
static __always_inline void rota_runnable(struct task_ctx *tctx, bool new)
{
	u64 now = bpf_ktime_get_ns();
	u64 least = rota_least_all, floor, slept;

	tctx->runnable_since = now;
	if (!new) {
		slept = now - tctx->blocked_at;
		tctx->avg_sleep_ns = (3 * tctx->avg_sleep_ns + slept) / 4;
	}
	if (least == (u64)-1)
		return;
	floor = new ? least : (least > rota_cap_ns ? least - rota_cap_ns : 0);
	if (task_owed(tctx) < floor) {
		u64 speed = tctx->speedup_fp < COLAB_FP_ONE ? COLAB_FP_ONE : tctx->speedup_fp;

		/* The inverse of owed_of, rounded up to reach the floor. */
		tctx->fast_ns = (floor * speed + COLAB_FP_ONE - 1) / COLAB_FP_ONE;
	}
}

/* @cpu: where the task goes (the fast CPU that pulled it, if @pulled). */
static __always_inline void rota_enqueue(struct task_struct *p, struct task_ctx *tctx,
					 u64 enq_flags, s32 cpu, bool pulled)
{
	struct colab_cpu_state *cs;
	u64 vtime, now;
	s32 to;

	if (!pulled && tctx->rota_out && nr_little) {
		/* It gave its fast CPU up: queue on a slow one. */
		to = rota_shortest(p, 1, -1);
		if (to >= 0)
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
	vtime = cfs_vtime_on(cs, tctx);
	stat_inc(COLAB_STAT_QUEUED);
	scx_bpf_dsq_insert_vtime(p, cpu, cfs_slice(queued_on(cpu) + 1), vtime,
				 enq_flags & ~SCX_ENQ_LAST);
	/* Wake-up preemption (CFS's check_preempt_wakeup) on slow CPUs; a
	 * fast CPU's occupant gives way only by rotation. */
	now = bpf_ktime_get_ns();
	if ((enq_flags & SCX_ENQ_WAKEUP) && !is_big(cpu) && cfs_wakeup_preempts(cs, vtime, now))
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	else
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	if (!is_big(cpu) && !tctx->rota_out)
		rota_kick_idle_fast();
}

static __always_inline void rota_dispatch(s32 cpu, struct task_struct *prev)
{
	struct colab_cpu_state *cs = lookup_cpu_state(cpu);
	struct task_ctx *pctx = prev ? lookup_tctx(prev) : NULL;
	/* The running task goes on unless it gives its fast CPU up or a fast
	 * CPU has asked for it (then its enqueue sends it there). */
	bool prev_stays = prev && (prev->scx.flags & SCX_TASK_QUEUED) &&
			  !(pctx && pctx->rota_out) &&
			  !(cs && cs->pull_to > 0 && cs->pid == (u32)prev->pid);
	struct rota_walk w;
	u64 now = bpf_ktime_get_ns();

	/* 1. The CPU's own queue (vruntime order). */
	if (scx_bpf_dsq_nr_queued(cpu) > 0 && scx_bpf_dsq_move_to_local(cpu, 0)) {
		stat_inc(COLAB_STAT_LOCAL);
		return;
	}
	/* 2. The running task goes on (a fast CPU's occupant until it
	 *    rotates out; on a slow CPU nothing else is queued). */
	if (prev_stays) {
		prev->scx.slice = cfs_slice(1);
		return;
	}
	if (is_big(cpu) && nr_little) {
		/* 3. The first waiting task in the capped order (SMT: unless
		 *    a whole fast core is idle to take it). */
		if (!defer_to_whole_core(cpu)) {
			rota_walk(-1, now, &w);
			rota_least_all = w.least_all;
			if (w.any_wait && rota_steal(cpu, w.least_wait)) {
				stat_inc(COLAB_STAT_STEAL_OTHER);
				return;
			}
			/* 4. Or take over one running on a slow CPU. */
			if (w.any_wait && !no_big_pull)
				rota_remote(cpu, now, w.least_wait);
		}
	} else if (rota_idle_pull(cpu)) {
		stat_inc(COLAB_STAT_STEAL_OWN);
		return;
	}
	if (cs && !cs->idle_since)
		cs->idle_since = now;
}

/*
 * SMT: the occupant of fast CPU @cpu, beside a sibling busy for a pull's
 * minimum, moves to an idle whole fast core (claimed), by the pull path:
 * @cpu's pull_to names the target and a zero slice ends the run, so its
 * enqueue sends it there. A move made at fork or wake-up beside a busy
 * sibling is thus undone at the next tick, as the kernel's SMT balancing
 * would. True when it moves.
 */
static __always_inline bool smt_spread(struct task_struct *p, s32 cpu,
				       struct colab_cpu_state *cs, u64 now)
{
	struct colab_cpu_state *sc;
	s32 sib, to;

	if (!sibling_busy(cpu) || cs->pull_to || colab_migration_disabled(p))
		return false;
	sib = sibling_cpu[cpu & CPU_MASK];
	sc = lookup_cpu_state(sib);
	if (!sc || now - sc->started_at < rota_pull_min_ns)
		return false;
	to = claim_idle_in(p, 0, false, true, now);
	if (to < 0)
		return false;
	cs->pull_to = to + 1;
	p->scx.slice = 0;
	stat_inc(COLAB_STAT_SMT_MOVES);
	return true;
}

/* Rotation at a fast CPU's tick; idle fast CPUs look again at a slow
 * CPU's tick (a running task may now be worth pulling). */
static __always_inline void rota_tick(struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct task_ctx *tctx = lookup_tctx(p);
	struct colab_cpu_state *cs = lookup_cpu_state(cpu);
	struct rota_walk w;
	u64 now = bpf_ktime_get_ns(), own;

	if (!tctx || !cs || !nr_big || !nr_little)
		return;
	if (!is_big(cpu)) {
		/* Only when its task could be taken: waking an idle CPU for
		 * nothing costs the busy ones (most of all on a shared host). */
		if (!no_big_pull && now - tctx->started_at >= rota_pull_min_ns)
			rota_kick_idle_fast();
		return;
	}
	if (smt_on && cs->pid == (u32)p->pid && smt_spread(p, cpu, cs, now))
		return;
	rota_walk(cpu, now, &w);
	rota_least_all = w.least_all;
	if (rota_no_rotation)
		return;
	if (cs->occ_pid != (u32)p->pid || now - cs->occ_since < rota_quantum_ns || !w.any_wait)
		return;
	/* A fast CPU is idle: it takes the waiter (woken here), and the
	 * occupant keeps its CPU; rotating it out would send it to a slow
	 * queue while a fast CPU idles. */
	if (!rota_eager && idle_fast(false) >= 0) {
		rota_kick_idle_fast();
		return;
	}
	own = owed_of(tctx->fast_ns + (now - tctx->started_at), tctx->speedup_fp);
	if (w.least_wait + rota_cap_ns < own) {
		tctx->rota_out = 1;
		p->scx.slice = 0;
		stat_inc(COLAB_STAT_ROTATIONS);
	}
}

static __always_inline void rota_running(struct task_struct *p, struct task_ctx *tctx, s32 cpu,
					 struct colab_cpu_state *cs, u64 now)
{
	tctx->rota_out = 0;
	cfs_running(tctx, cs, COLAB_FP_ONE);
	if (cs->occ_pid != (u32)p->pid) {
		cs->occ_pid = p->pid;
		cs->occ_tgid = p->tgid;
		cs->occ_since = now;
		cs->occ_avg_sleep_ns = tctx->avg_sleep_ns;
	}
	cs->idle_since = 0;
	cs->tgid = p->tgid;
	cs->run_fast_ns = tctx->fast_ns;
	cs->run_since = tctx->runnable_since;
}

/* @vused: @used at the task's weight. @cs: its CPU's state. */
static __always_inline void rota_stopping(struct task_ctx *tctx, s32 cpu,
					  struct colab_cpu_state *cs, u64 vused, u64 used,
					  bool runnable)
{
	if (is_big(cpu))
		tctx->fast_ns += used;
	cfs_stopping(tctx, cs, vused);
	if (!runnable)
		tctx->blocked_at = bpf_ktime_get_ns();
}

/* A task that exits is nobody's occupant. */
static __always_inline void rota_exit_task(struct task_struct *p)
{
	struct colab_cpu_state *cs = lookup_cpu_state(scx_bpf_task_cpu(p));

	if (cs && cs->occ_pid == (u32)p->pid)
		cs->occ_pid = 0;
}
