/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ROTA at a CPU's tick (balance.rs): a fast CPU's occupant gives way to a
 * waiting serial phase at once, or, once it has held the CPU as long as the
 * best-ranked waiting task has run (quantum=age), to that task if it ranks
 * first, else after the same time to its own process's task longest away
 * from a fast CPU (sibling-turns); a slow CPU's tick makes an idle fast CPU
 * look again, a fast CPU's an idle faster one (tiers); then CFS's tick
 * preemption. The simulator's swap is one step;
 * here the occupant's slice ends now and both moves happen at the next
 * dispatches (ops.tick cannot move tasks). Included by rota.bpf.h. Not
 * ported: the slow CPUs' queue balancing (porting.md, rule 17).
 */

static __always_inline u64 turn_after(u64 cpu_ns)
{
	if (cpu_ns < rota_min_quantum_ns)
		return rota_min_quantum_ns;
	return cpu_ns < rota_quantum_ns ? cpu_ns : rota_quantum_ns;
}

/* Occupant @p of fast CPU @cpu gives way to @x: it goes to x's slow CPU or
 * the shortest slow queue, x comes here (Rota::swap_in). */
static __always_inline void swap_in(struct task_struct *p, struct task_ctx *t, s32 cpu,
				    struct colab_cpu_state *cs, struct rota_pick *x)
{
	struct colab_cpu_state *xs = lookup_cpu_state(x->cpu);
	struct rota_place_scan s = {};
	s32 to = x->cpu;

	if (is_fast(x->cpu)) {
		/* The shortest slow queue, x's CPU's cluster on ties. */
		s.prev = x->cpu;
		s.now = bpf_ktime_get_ns();
		rota_place_scan(&s);
		to = s.shortest[POOL_SLOW];
	}
	if (to < 0 || to >= (s32)nr_cpus || !bpf_cpumask_test_cpu(to, p->cpus_ptr) || !xs)
		return;
	if (xs->pid == x->pid) {
		/* It runs there: ask for it, as rota_remote does. */
		if (xs->pull_to)
			return;
		xs->pull_to = cpu + 1;
		cs->expect_pid = x->pid;
		cs->expect_at = bpf_ktime_get_ns();
		scx_bpf_kick_cpu(x->cpu, SCX_KICK_PREEMPT);
	} else {
		cs->swap_pid = x->pid;
	}
	t->out_to = to + 1;
	p->scx.slice = 0;
	stat_inc(COLAB_STAT_ROTATIONS);
}

/*
 * Occupant @p of fast CPU @cpu: a serial phase waiting on a slow CPU takes
 * its place at once unless it is one itself (Rota::serial_swap); else,
 * once it has held the CPU as long as the best-ranked waiting task has run,
 * that task if it ranks first (Rota::rotate, order=ntt), else after the
 * same time its own process's task longest off a fast CPU
 * (Rota::sibling_turn). One walk finds all three.
 */
static __always_inline void rota_swaps(struct task_struct *p, struct task_ctx *t, s32 cpu,
				       struct colab_cpu_state *cs, u64 now)
{
	struct rota_prog *pg = lookup_prog(t->r.tgid);
	bool serial = pg && pg->created > 1 && pg->active == 1;
	u64 held = cs->occ_pid == (u32)p->pid ? since(now, cs->occ_since) : 0, own;
	bool rotate = !rota_no_rotation && held >= rota_min_quantum_ns;
	struct rota_walk w = {};

	if (serial && !rotate)
		return;
	rota_walk(&w, cpu, t->r.tgid, true, now);
	if (!serial && w.serial.cpu >= 0) {
		swap_in(p, t, cpu, cs, &w.serial);
		return;
	}
	if (!rotate || w.best.cpu < 0)
		return;
	own = rota_rank(&t->r, since(now, cs->started_at), true, now);
	if (held >= turn_after(w.best.cpu_ns) &&
	    (w.best.key < own || (w.best.key == own && w.best.pid < (u32)p->pid))) {
		swap_in(p, t, cpu, cs, &w.best);
		return;
	}
	if (w.sibling.cpu >= 0 && held >= turn_after(w.sibling.cpu_ns))
		swap_in(p, t, cpu, cs, &w.sibling);
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

/*
 * SMT (not in the simulator, whose machines have none): the occupant of
 * fast CPU @cpu, beside a sibling busy for pull_min, moves to an idle whole
 * fast core (claimed) by the pull path: pull_to names the target and a
 * zero slice ends the run. True when it moves.
 */
static __always_inline bool smt_spread(struct task_struct *p, s32 cpu, struct colab_cpu_state *cs,
				       u64 now)
{
	const struct cpumask *whole;
	struct colab_cpu_state *sc;
	s32 to = -1;
	u32 i;

	if (!sibling_busy(cpu) || cs->pull_to || colab_migration_disabled(p))
		return false;
	sc = lookup_cpu_state(sibling_cpu[cpu & CPU_MASK]);
	if (!sc || since(now, sc->started_at) < rota_pull_min_ns)
		return false;
	whole = scx_bpf_get_idle_smtmask();
	bpf_for(i, 0, nr_big) {
		s32 f = big_cpus[i & CPU_MASK];

		if (f != cpu && bpf_cpumask_test_cpu(f, whole) && bpf_cpumask_test_cpu(f, p->cpus_ptr) &&
		    scx_bpf_test_and_clear_cpu_idle(f)) {
			to = f;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(whole);
	if (to < 0)
		return false;
	cs->pull_to = to + 1;
	p->scx.slice = 0;
	stat_inc(COLAB_STAT_SMT_MOVES);
	return true;
}

/* CFS's tick preemption (CfsCore::tick_preempt): the running task, after
 * its minimum slice, more than a slice ahead of the queue's leftmost. */
static __always_inline void cfs_tick(struct task_struct *p, s32 cpu, struct colab_cpu_state *cs,
				     u64 now)
{
	u64 head, cur;
	u32 pid;

	if (since(now, cs->started_at) < cfs_min_gran_ns || !cfs_head_vtime(cpu, &head, &pid))
		return;
	cur = cfs_cur_vtime(cs, now);
	if ((s64)(cur - head) > (s64)cfs_slice(queued_on(cpu) + 1))
		p->scx.slice = 0;
}

/* Kicks idle CPU @f to look again, once claimed (its idle bit cleared; the
 * kernel sets it again when @f finds nothing): CPUs ticking at the same
 * moment kick different idle CPUs, as the simulator's ticks, one after
 * another, see the first one busy. False when another claimed it. */
static __always_inline bool kick_claimed(s32 f)
{
	if (!scx_bpf_test_and_clear_cpu_idle(f))
		return false;
	scx_bpf_kick_cpu(f, SCX_KICK_IDLE);
	stat_inc(COLAB_STAT_IDLE_KICKS);
	return true;
}

/* Three or more core types (tiers): an idle fast CPU of a faster type than
 * @cpu looks again, as a slow CPU's tick makes an idle fast CPU do. */
static __always_inline void kick_idle_faster(s32 cpu)
{
	const struct cpumask *idle;
	u32 i;

	if (cpu < 0 || cpu >= COLAB_MAX_CPUS)
		return;
	idle = scx_bpf_get_idle_cpumask();
	bpf_for(i, 0, nr_big) {
		s32 f = big_cpus[i & CPU_MASK];

		if (cpu_tier[f & CPU_MASK] > cpu_tier[cpu] && idle_empty(idle, f) &&
		    kick_claimed(f))
			break;
	}
	scx_bpf_put_idle_cpumask(idle);
}

static __always_inline void rota_tick(struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct task_ctx *t = lookup_tctx(p);
	struct colab_cpu_state *cs = lookup_cpu_state(cpu);
	const struct cpumask *idle;
	u64 now = bpf_ktime_get_ns();
	u32 i;

	if (!t || !cs || cs->pid != (u32)p->pid)
		return;
	if (nr_big && nr_little && is_big(cpu)) {
		refresh_labels(p, t);
		t->r.speed_fp = t->speedup_fp;
		if (smt_on && smt_spread(p, cpu, cs, now))
			return;
		rota_swaps(p, t, cpu, cs, now);
		if (tiered)
			kick_idle_faster(cpu);
	} else if (nr_big && nr_little && !no_big_pull) {
		/* Idle fast CPUs look again: a task may now be worth taking. */
		idle = scx_bpf_get_idle_cpumask();
		bpf_for(i, 0, nr_big) {
			s32 f = big_cpus[i & CPU_MASK];

			if (idle_empty(idle, f) && kick_claimed(f))
				break;
		}
		scx_bpf_put_idle_cpumask(idle);
	}
	if (p->scx.slice)
		cfs_tick(p, cpu, cs, now);
}
