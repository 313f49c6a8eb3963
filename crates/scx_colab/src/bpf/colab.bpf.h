/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The paper's COLAB (colab-tpds sections 4-5, Fig. 6), included by
 * main.bpf.c and run with `--policy colab`; the simulator's `colab`
 * (crates/policies/src/colab/) on the CFS engine of cfs.bpf.h:
 *
 * - the hierarchical core allocator at wake-up: high speedup to the big
 *   cluster, low speedup and not high-blocking to the little one, the rest
 *   to either, clusters taking turns, round-robin within one;
 * - bottleneck-first selection (max_block_): a CPU takes, from its own
 *   queue, then its cluster's, then the other cluster's, the most blocking
 *   task among those whose vruntime lag is within the fairness window
 *   (colab_window_ns, one sched_latency by default) of the smallest lag of
 *   the queues searched; ties go to the smaller lag;
 * - scale-slice: on a big CPU a task's slice shrinks, and its vruntime
 *   grows, by its predicted speedup;
 * - an idle big CPU takes over the most blocking task running on a little
 *   CPU (ties: the higher predicted speedup).
 *
 * Every queue is one vruntime-ordered DSQ per CPU. The lag of a queued
 * task is its DSQ vtime less its CPU's min_vtime, so tasks on different
 * queues compare like with like. Where this differs from the simulator:
 * crates/scx_colab/README.md, "Deviations".
 */

/* The fairness window in ns of vruntime lag; ~0 >> 2: none (`--window inf`). */
const volatile u64 colab_window_ns = 18000000ULL;
/* Ablation (--no-block-first): CFS's order, the smallest lag first. */
const volatile bool colab_no_block_first;

/* Round-robin cursors: 0 big set, 1 little set; and the cluster to try first. */
static u32 rr_cursor[2];
static u32 rr_cluster;

/*
 * Unless strict_rr: whether @p's previous CPU is allowed and idle (then
 * claimed). A deviation from Fig. 6's plain round-robin: a task that sleeps
 * and wakes in quick succession (message passing) would otherwise move at
 * almost every wake-up (see README.md for the measurements).
 */
static __always_inline bool claim_prev(struct task_struct *p, s32 prev_cpu)
{
	return !strict_rr && prev_cpu >= 0 && prev_cpu < COLAB_MAX_CPUS &&
	       bpf_cpumask_test_cpu(prev_cpu, p->cpus_ptr) &&
	       scx_bpf_test_and_clear_cpu_idle(prev_cpu);
}

/*
 * Round-robin over one cluster (@set: 0 big, 1 little) from its cursor: the
 * first allowed idle CPU (claimed), or -1. *@fallback gets the allowed CPU
 * with the shortest queue, for when no CPU is idle.
 */
static __always_inline s32 rr_pick(struct task_struct *p, u32 set, s32 prev_cpu,
				   s32 *fallback, u32 *fallback_load)
{
	u32 n = set ? nr_little : nr_big;
	u32 start = rr_cursor[set & 1];
	u32 i;

	if (!n)
		return -1;
	if ((u32)is_big(prev_cpu) == (set ? 0 : 1) && claim_prev(p, prev_cpu))
		return prev_cpu;
	bpf_for(i, 0, n) {
		u32 idx = (start + i) % n;
		s32 cpu = set ? little_cpus[idx & CPU_MASK] : big_cpus[idx & CPU_MASK];
		u32 load;

		if (cpu < 0 || cpu >= COLAB_MAX_CPUS)
			continue;
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		if (scx_bpf_test_and_clear_cpu_idle(cpu)) {
			rr_cursor[set & 1] = idx + 1;
			return cpu;
		}
		load = queued_on(cpu);
		if (*fallback < 0 || load < *fallback_load) {
			*fallback = cpu;
			*fallback_load = load;
		}
	}
	/* No idle CPU: the cursor moves past the queue it falls back to, if it
	 * is in this set, as the simulator's rr_allocator moves it past its
	 * pick. (A second loop: tracking the index in the first one made the
	 * verifier take 26 s instead of 2 under TCG.) */
	bpf_for(i, 0, n) {
		u32 idx = (start + i) % n;
		s32 cpu = set ? little_cpus[idx & CPU_MASK] : big_cpus[idx & CPU_MASK];

		if (cpu == *fallback) {
			rr_cursor[set & 1] = idx + 1;
			break;
		}
	}
	return -1;
}

/*
 * The hierarchical core allocator (Fig. 6 _core_allocator_): high speedup
 * to the big cluster; low speedup and not high-blocking to the little one;
 * otherwise any CPU, the clusters taking turns. Returns a claimed idle CPU
 * or -1, with *@fallback the least loaded allowed CPU of the set.
 */
static __always_inline s32 allocate(struct task_struct *p, struct task_ctx *tctx, s32 prev,
				    s32 *fallback)
{
	u32 load = 0;
	s32 cpu;
	u32 first;

	*fallback = -1;
	if (nr_big && nr_little) {
		if (tctx->speedup_label == COLAB_SPEEDUP_HIGH) {
			cpu = rr_pick(p, 0, prev, fallback, &load);
			if (cpu >= 0 || *fallback >= 0)
				return cpu;
		} else if (tctx->speedup_label == COLAB_SPEEDUP_LOW && !tctx->high_block) {
			cpu = rr_pick(p, 1, prev, fallback, &load);
			if (cpu >= 0 || *fallback >= 0)
				return cpu;
		}
		/* Any CPU (or the preferred set is outside the affinity); the
		 * previous CPU once, here, not again in each cluster's pick. */
		if (claim_prev(p, prev))
			return prev;
		first = rr_cluster & 1;
		rr_cluster = first + 1;
		cpu = rr_pick(p, first, -1, fallback, &load);
		if (cpu >= 0)
			return cpu;
		return rr_pick(p, first ^ 1, -1, fallback, &load);
	}
	return rr_pick(p, nr_big ? 0 : 1, prev, fallback, &load);
}


static __always_inline s32 paper_select_cpu(struct task_struct *p, struct task_ctx *tctx,
					    s32 prev_cpu)
{
	s32 cpu, fallback;

	cpu = allocate(p, tctx, prev_cpu, &fallback);
	if (cpu >= 0) {
		stat_inc(COLAB_STAT_DIRECT);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfs_slice(1), 0);
		return cpu;
	}
	/* No idle CPU: queue on the allocated set's least loaded CPU. */
	return fallback >= 0 ? fallback : prev_cpu;
}

/* @cpu: where the task goes (the big CPU that pulled it, if @pulled). */
static __always_inline void paper_enqueue(struct task_struct *p, struct task_ctx *tctx,
					  u64 enq_flags, s32 cpu, bool pulled)
{
	struct colab_cpu_state *cs;
	u64 vtime;

	if (!pulled && (enq_flags & SCX_ENQ_LAST)) {
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
	/* Wake-up preemption against the running task's scaled vruntime. */
	if ((enq_flags & SCX_ENQ_WAKEUP) && cfs_wakeup_preempts(cs, vtime, bpf_ktime_get_ns()))
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	else
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

/* The queues a search covers: @cpu's own (@set 2), or the other CPUs of a
 * cluster (@set 0 big, 1 little). */
static __always_inline s32 queue_of(s32 self, u32 set, u32 i)
{
	if (set == 2)
		return i ? -1 : self;
	if (i >= (set ? nr_little : nr_big))
		return -1;
	return set ? little_cpus[i & CPU_MASK] : big_cpus[i & CPU_MASK];
}

/* The @i-th queue a search over (@self, @set) covers, in *@q (< 0: no
 * more), and its CPU's state; NULL: skip it (empty, or @self's own in a
 * cluster search: it was searched first). */
static __always_inline struct colab_cpu_state *search_queue(s32 self, u32 set, u32 i, s32 *q)
{
	*q = queue_of(self, set, i);
	if (*q < 0 || (*q == self && set != 2) || scx_bpf_dsq_nr_queued(*q) <= 0)
		return NULL;
	return lookup_cpu_state(*q);
}

static __always_inline bool may_take(struct task_struct *p, s32 self)
{
	return bpf_cpumask_test_cpu(self, p->cpus_ptr) && !colab_migration_disabled(p);
}

/*
 * max_block_ over the queues of (@self, @set): the smallest lag of a task
 * @self may run, then the most blocking task within the window of it, then
 * moved to @self's local DSQ. Three walks, each bounded by the CPU count
 * and the queues' lengths, and empty queues are not walked; the first stops
 * at each queue's first runnable task, the second at the window's edge
 * (both walk in vruntime order).
 */
static __always_inline bool max_block(s32 self, u32 set)
{
	struct colab_cpu_state *cs;
	struct task_struct *p;
	struct task_ctx *t;
	s64 min_lag = 0, lag, best_lag = 0;
	u32 n = set == 2 ? 1 : nr_cpus, i, best_pid = 0, head_pid = 0, level, best_level = 0;
	s32 q, best_q = -1;
	bool any = false;

	bpf_for(i, 0, n) {
		cs = search_queue(self, set, i, &q);
		if (q < 0)
			break;
		if (!cs)
			continue;
		bpf_for_each(scx_dsq, p, q, 0) {
			if (!may_take(p, self))
				continue;
			lag = (s64)(p->scx.dsq_vtime - cs->min_vtime);
			if (!any || lag < min_lag) {
				min_lag = lag;
				head_pid = p->pid;
				best_q = q;
			}
			any = true;
			break;
		}
	}
	if (!any)
		return false;
	best_pid = head_pid;
	if (!colab_no_block_first) {
		best_q = -1;
		bpf_for(i, 0, n) {
			cs = search_queue(self, set, i, &q);
			if (q < 0)
				break;
			if (!cs)
				continue;
			bpf_for_each(scx_dsq, p, q, 0) {
				lag = (s64)(p->scx.dsq_vtime - cs->min_vtime);
				if (lag > min_lag + (s64)colab_window_ns)
					break;
				if (!may_take(p, self))
					continue;
				t = lookup_tctx(p);
				level = t ? t->block_level_fp : 0;
				if (best_q < 0 || level > best_level ||
				    (level == best_level && lag < best_lag)) {
					best_q = q;
					best_pid = p->pid;
					best_level = level;
					best_lag = lag;
				}
			}
		}
		if (best_q < 0)
			return false;
	}
	bpf_for_each(scx_dsq, p, best_q, 0) {
		if ((u32)p->pid != best_pid)
			continue;
		if (!scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return false;
		if (best_pid != head_pid)
			stat_inc(COLAB_STAT_BLOCK_FIRST);
		return true;
	}
	return false;
}

/*
 * An idle big CPU preempts the most blocking task running on a little CPU
 * (ties: the higher predicted speedup); the task's ops.enqueue() then sends
 * it here.
 */
static __always_inline void big_pull(s32 self)
{
	struct colab_cpu_state *cs, *best_cs = NULL;
	u64 now = bpf_ktime_get_ns();
	s32 best = -1;
	u32 best_level = 0;
	u64 best_speed = 0;
	u32 i;

	bpf_for(i, 0, nr_little) {
		s32 cpu = little_cpus[i & CPU_MASK];

		cs = lookup_cpu_state(cpu);
		if (!cs || !cs->pid || cs->pull_to)
			continue;
		/* A task about to block would only pay the migration. */
		if (since(now, cs->started_at) < pull_min_ns)
			continue;
		if (best < 0 || cs->block_level_fp > best_level ||
		    (cs->block_level_fp == best_level && cs->run_speed_fp > best_speed)) {
			best = cpu;
			best_level = cs->block_level_fp;
			best_speed = cs->run_speed_fp;
		}
	}
	if (best < 0)
		return;
	best_cs = lookup_cpu_state(best);
	if (!best_cs)
		return;
	best_cs->pull_to = self + 1;
	stat_inc(COLAB_STAT_BIG_PREEMPT);
	scx_bpf_kick_cpu(best, SCX_KICK_PREEMPT);
}

/* Fig. 6 _thread_selector_. */
static __always_inline void paper_dispatch(s32 cpu, struct task_struct *prev)
{
	u32 own = is_big(cpu) ? 0 : 1;

	/* 1. The CPU's own queue. */
	if (max_block(cpu, 2)) {
		stat_inc(COLAB_STAT_LOCAL);
		return;
	}
	/* 2. The same cluster, then the other one. */
	if (max_block(cpu, own)) {
		stat_inc(COLAB_STAT_STEAL_OWN);
		return;
	}
	if (nr_big && nr_little && max_block(cpu, own ^ 1)) {
		stat_inc(COLAB_STAT_STEAL_OTHER);
		return;
	}
	/* 3. An idle big CPU takes a task running on a little one. */
	if (!no_big_pull && is_big(cpu) && nr_little && !(prev && (prev->scx.flags & SCX_TASK_QUEUED)))
		big_pull(cpu);
}

/* How much faster than on a little CPU the task progresses on @cpu. */
static __always_inline u64 progress_scale_fp(s32 cpu, struct task_ctx *tctx)
{
	if (!is_big(cpu) || !nr_little || tctx->speedup_fp < COLAB_FP_ONE)
		return COLAB_FP_ONE;
	return tctx->speedup_fp;
}

static __always_inline void paper_running(struct task_struct *p, struct task_ctx *tctx, s32 cpu,
					  struct colab_cpu_state *cs)
{
	u64 scale = progress_scale_fp(cpu, tctx);

	cfs_running(tctx, cs, scale);
	/* Scale-slice: a big CPU's slice shrinks by the predicted speedup. */
	p->scx.slice = cfs_slice(queued_on(cpu) + 1) * COLAB_FP_ONE / scale;
}

/* Equal progress: vruntime grows by runtime times the speedup on big CPUs,
 * at the rate fixed when the run started. */
static __always_inline void paper_stopping(struct task_struct *p, struct task_ctx *tctx,
					   struct colab_cpu_state *cs, u64 used)
{
	u64 scale = cs ? cs->run_scale_fp : COLAB_FP_ONE;

	cfs_stopping(tctx, cs, weighted_ns(p, used * scale / COLAB_FP_ONE));
}
