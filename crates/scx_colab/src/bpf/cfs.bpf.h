/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CFS engine both policies build on, as the simulator's CfsCore
 * (crates/policies/src/cfs/engine.rs): every CPU's DSQ is ordered by
 * vruntime, a task keeps its vruntime *lag* behind its queue's floor
 * (min_vtime) across sleeps and moves, new tasks start a slice behind
 * (START_DEBIT), sleepers get at most half a latency of credit, slices are
 * the latency shared by the queue, and a waking task preempts when it is a
 * wake-up granularity ahead of the running one. Included by main.bpf.c.
 */

/* CFS's tunables for this CPU count (colab-policies CfsTunables::for_cpus). */
const volatile u64 cfs_latency_ns = 18000000ULL;
const volatile u64 cfs_min_gran_ns = 2250000ULL;
const volatile u64 cfs_wakeup_gran_ns = 3000000ULL;

/*
 * @now - @then, 0 if @then is later: a time another CPU wrote may be later
 * than this CPU's @now (read at its callback's start). Unchecked, such a run
 * of -1 us times a rate in 1/1024 became 2^54 ns of vruntime, a floor no
 * queue came back from, and a pinned kthread starved (found in the VM).
 */
static __always_inline u64 since(u64 now, u64 then)
{
	return now > then ? now - then : 0;
}

static __always_inline bool vtime_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/* CFS's slice for a CPU with @nr runnable tasks. */
static __always_inline u64 cfs_slice(u32 nr)
{
	u64 period;

	if (!nr)
		nr = 1;
	period = nr > 8 ? nr * cfs_min_gran_ns : cfs_latency_ns;
	period /= nr;
	return period > cfs_min_gran_ns ? period : cfs_min_gran_ns;
}

/* A task becomes runnable (ops.runnable): place its lag. */
static __always_inline void cfs_place(struct task_ctx *tctx, bool new)
{
	s64 credit = -(s64)(cfs_latency_ns / 2);

	if (new)
		tctx->lag = cfs_slice(1); /* START_DEBIT */
	else if (tctx->lag < credit)
		tctx->lag = credit; /* sleeper credit: half a latency */
}

/* The vruntime @tctx queues at on @cs's CPU. */
static __always_inline u64 cfs_vtime_on(struct colab_cpu_state *cs, struct task_ctx *tctx)
{
	return cs->min_vtime + (u64)tctx->lag;
}

/* Wake-up preemption (check_preempt_wakeup): does a task queued at @vtime
 * on @cs's CPU go before the running one, whose run is charged at
 * @cs->run_scale_fp? */
static __always_inline bool cfs_wakeup_preempts(struct colab_cpu_state *cs, u64 vtime, u64 now)
{
	u64 cur = cs->run_vtime + since(now, cs->started_at) * cs->run_scale_fp / COLAB_FP_ONE;

	return cs->pid && vtime_before(vtime + cfs_wakeup_gran_ns, cur);
}

/* @tctx starts on @cs's CPU, its run charged at @scale_fp. */
static __always_inline void cfs_running(struct task_ctx *tctx, struct colab_cpu_state *cs,
					u64 scale_fp)
{
	u64 vtime = cfs_vtime_on(cs, tctx);

	tctx->vruntime = vtime;
	if (vtime_before(cs->min_vtime, vtime))
		cs->min_vtime = vtime;
	cs->run_vtime = vtime;
	cs->run_scale_fp = scale_fp;
}

/* @tctx stops on @cs's CPU (NULL: unknown) after @vused of vruntime. */
static __always_inline void cfs_stopping(struct task_ctx *tctx, struct colab_cpu_state *cs,
					 u64 vused)
{
	tctx->vruntime += vused;
	if (cs)
		tctx->lag = (s64)(tctx->vruntime - cs->min_vtime);
}

/*
 * ROTA's queues follow the simulator's CfsCore exactly (cfs/engine.rs): a
 * task's vruntime is absolute on the queue it last joined (task_ctx.vcpu),
 * each CPU's min_vruntime is brought up to date lazily whenever it is read
 * (never back; the smaller of the running task's vruntime with its current
 * run and the queue's head), and a task that changes queues carries its
 * lag behind the old queue's floor, as that floor is at the move (so a
 * sleeper's credit wears off while it sleeps, unlike cfs_place's above).
 */

/* The vruntime of the task at the head of @cpu's queue; false if empty. */
static __always_inline bool cfs_head_vtime(s32 cpu, u64 *vtime, u32 *pid)
{
	struct task_struct *p;

	if (scx_bpf_dsq_nr_queued(cpu) <= 0)
		return false;
	bpf_for_each(scx_dsq, p, cpu, 0) {
		*vtime = p->scx.dsq_vtime;
		*pid = p->pid;
		return true;
	}
	return false;
}

/* The running task's vruntime on @cs's CPU, its current run counted. */
static __always_inline u64 cfs_cur_vtime(struct colab_cpu_state *cs, u64 now)
{
	return cs->run_vtime + since(now, cs->started_at) * cs->run_scale_fp / COLAB_FP_ONE;
}

/*
 * @cpu's min_vruntime brought up to date (update_min_vruntime), counting
 * the running task unless @stopped, and @extra (a task just stopped or
 * taken off the queue) when @with_extra.
 */
static __always_inline u64 cfs_min_vr(s32 cpu, struct colab_cpu_state *cs, u64 now, bool stopped,
				      bool with_extra, u64 extra)
{
	u64 m = 0, head;
	bool any = false;
	u32 pid;

	if (!stopped && cs->pid) {
		m = cfs_cur_vtime(cs, now);
		any = true;
	}
	if (cfs_head_vtime(cpu, &head, &pid) && (!any || vtime_before(head, m))) {
		m = head;
		any = true;
	}
	if (with_extra && (!any || vtime_before(extra, m))) {
		m = extra;
		any = true;
	}
	if (any && vtime_before(cs->min_vtime, m))
		cs->min_vtime = m;
	return cs->min_vtime;
}
