/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_colab: the hot path of COLAB (colab-tpds sections 4-5, Fig. 6) as a
 * sched_ext scheduler. User space (src/labeller.rs) labels the tasks every
 * 10 ms; this file allocates cores, selects threads, scales slices and
 * tracks who keeps whom waiting on futexes.
 *
 * DSQ layout: every CPU c has two vtime-ordered DSQs, c (normal) and
 * COLAB_HB_DSQ_BASE + c (high-blocking tasks). A CPU dispatches from its own
 * high-blocking DSQ first, then its normal DSQ, then (stealing) the DSQs of
 * its own cluster, high-blocking ones first, then those of the other
 * cluster. A high-blocking task enters the high-blocking DSQ only while its
 * vruntime is within fair_window_ns of the scheduler's vtime clock, so
 * bottleneck-first never starves the rest (the simulator's fairness window).
 *
 * Futex accounting (colab-tpds 5.2): fentry on futex_wake records, per
 * futex (address, and process for private futexes), the last waker and when;
 * fentry/fexit on futex_wait time every wait; a wait that ended by a wake-up
 * (return 0) after that waker's record is charged to the waker: its
 * blocked_others_ns grows by the wait time in the hash map block_stats that
 * the labeller reads (only there: a copy in the waker's task storage cost a
 * pid lookup and a task reference per charged wait and was never read).
 *
 * Performance counters (colab-tpds 5.1), when user space runs a model: it
 * opens the model's events on every CPU (perf_event_open, pid -1) and puts
 * them in the perf event array pmu_events. At every context switch the
 * tracepoint program reads the CPU's counters once: the task switched out
 * is charged what they advanced since it was switched in (map task_pmu, per
 * cluster), and the task switched in records where they stand. Struct_ops
 * programs cannot read perf counters (bpf_scx_get_func_proto), hence a
 * tracing program.
 */
#include <scx/common.bpf.h>
#include "intf.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#define CPU_MASK (COLAB_MAX_CPUS - 1)

/* Set by user space before loading. */
const volatile u32 nr_cpus = 1;
const volatile u32 nr_big;
const volatile u32 nr_little;
/* CPU lists of the two clusters; a homogeneous machine is all "little". */
const volatile u32 big_cpus[COLAB_MAX_CPUS];
const volatile u32 little_cpus[COLAB_MAX_CPUS];
const volatile u8 cpu_is_big[COLAB_MAX_CPUS];
const volatile u64 slice_ns = 5000000ULL;
const volatile u64 fair_window_ns = 12000000ULL;
const volatile u32 default_speedup_fp = 2 * COLAB_FP_ONE;
/*
 * At most this much of one wait is charged (the labelling period): a wait
 * of seconds that ends now (a join() on a thread that exits, say) kept one
 * thread waiting during the last period, not thousands.
 */
const volatile u64 max_charge_ns = 10000000ULL;
/* Counters programmed per CPU of each cluster (0 big, 1 little); 0: none. */
const volatile u32 nr_events[COLAB_NR_CLUSTERS];
/* Ablation (--no-big-pull): idle big CPUs do not take little CPUs' tasks. */
const volatile bool no_big_pull;
/* An idle big CPU takes only a task that has run this long (--pull-min-us). */
const volatile u64 pull_min_ns = 1000000ULL;
/* Fig. 6's plain round-robin wake-ups (--strict-rr): no previous CPU first. */
const volatile bool strict_rr;

/* Bumped by user space after every labelling pass. */
volatile u64 label_gen;
/* Set by user space (hidden --debug-error-after) to test the error exit path. */
volatile u32 debug_force_error;
/* Set by user space (hidden --debug-stall-after): dispatch nothing, so the
 * kernel's watchdog (timeout_ms) ends the scheduler with a runnable task stall. */
volatile u32 debug_stall;

/* Largest vruntime of a task that started running. */
static u64 vtime_now;
/* Round-robin cursors: 0 big set, 1 little set; and the cluster to try first. */
static u32 rr_cursor[2];
static u32 rr_cluster;

struct task_ctx {
	u64 vruntime;
	u64 started_at;
	u64 wait_start;        /* start of the current futex wait, 0 if none */
	u64 wait_uaddr;        /* the futex waited on */
	u64 label_gen;         /* labels copied at this generation */
	u32 speedup_fp;        /* predicted speedup, fixed point */
	u32 block_level_fp;
	u32 speedup_label;     /* enum colab_speedup_label */
	u32 high_block;
	s32 last_cpu;
	s32 pmu_cpu;           /* CPU whose counters pmu_start holds; -1: none */
	u64 pmu_started_at;    /* when it was switched in there */
	u64 pmu_start[COLAB_MAX_EVENTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, COLAB_MAX_TASKS);
	__type(key, u32);
	__type(value, struct colab_block_stat);
} block_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, COLAB_MAX_TASKS);
	__type(key, u32);
	__type(value, struct colab_label);
} labels SEC(".maps");

struct colab_futex_key {
	u64 uaddr;
	u32 tgid; /* 0 for shared futexes */
	u32 pad;
};

struct colab_futex_waker {
	u64 at;
	u32 pid;
	u32 pad;
	char comm[COLAB_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, COLAB_MAX_FUTEXES);
	__type(key, struct colab_futex_key);
	__type(value, struct colab_futex_waker);
} futex_wakers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, COLAB_MAX_CPUS);
	__type(key, u32);
	__type(value, struct colab_cpu_state);
} cpu_state SEC(".maps");

/* Counter e of CPU c at index c * COLAB_MAX_EVENTS + e (fds from user space). */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(u32));
	__uint(value_size, sizeof(u32));
	__uint(max_entries, COLAB_MAX_CPUS * COLAB_MAX_EVENTS);
} pmu_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, COLAB_MAX_TASKS);
	__type(key, u32);
	__type(value, struct colab_task_pmu);
} task_pmu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COLAB_NR_STATS);
	__type(key, u32);
	__type(value, u64);
} stats SEC(".maps");

static __always_inline void stat_inc(u32 idx)
{
	u64 *c = bpf_map_lookup_elem(&stats, &idx);

	if (c)
		(*c)++;
}

static __always_inline struct task_ctx *lookup_tctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
}

static __always_inline struct colab_cpu_state *lookup_cpu_state(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_state, &key);
}

/*
 * Whether @p must stay on its CPU. The header's is_migration_disabled()
 * reads CONFIG_PREEMPT_RCU as a __kconfig extern, which makes libbpf demand
 * the kernel's config file (/proc/config.gz or /boot/config-*): absent in a
 * minimal VM, and then the object does not load. This is its slow path
 * alone: the BPF trampoline's prolog adds 1 to the current task's count on
 * the kernels that do that (all before 6.18, e.g. 6.12), which the common
 * headers' fentry probe on bpf_scx_reg records at attach; until it ran, a
 * count of 1 is taken as disabled (safe: the task stays where it is).
 */
static __always_inline bool colab_migration_disabled(const struct task_struct *p)
{
	if (!bpf_core_field_exists(p->migration_disabled))
		return false;
	if (p->migration_disabled == 1)
		return __scx_prolog_disables_migration ? bpf_get_current_task_btf() != p : true;
	return p->migration_disabled > 1;
}

static __always_inline bool is_big(s32 cpu)
{
	return cpu_is_big[cpu & CPU_MASK];
}

static __always_inline u64 hb_dsq(s32 cpu)
{
	return COLAB_HB_DSQ_BASE + (u64)cpu;
}

/* Copy the labeller's latest labels into the task's storage. */
static __always_inline void refresh_labels(struct task_struct *p, struct task_ctx *tctx)
{
	u64 gen = label_gen;
	struct colab_label *l;
	u32 pid = p->pid;

	if (tctx->label_gen == gen)
		return;
	tctx->label_gen = gen;
	l = bpf_map_lookup_elem(&labels, &pid);
	if (l) {
		tctx->speedup_label = l->speedup_label;
		tctx->high_block = l->high_block;
		tctx->block_level_fp = l->block_level_fp;
		tctx->speedup_fp = l->speedup_fp ? l->speedup_fp : default_speedup_fp;
	} else {
		tctx->speedup_label = COLAB_SPEEDUP_MEDIUM;
		tctx->high_block = 0;
		tctx->block_level_fp = 0;
		tctx->speedup_fp = default_speedup_fp;
	}
}

/* How much faster than on a little CPU the task progresses on @cpu. */
static __always_inline u64 progress_scale_fp(s32 cpu, struct task_ctx *tctx)
{
	if (!is_big(cpu) || tctx->speedup_fp < COLAB_FP_ONE)
		return COLAB_FP_ONE;
	return tctx->speedup_fp;
}

static __always_inline u32 queued_on(s32 cpu)
{
	s32 a = scx_bpf_dsq_nr_queued(cpu);
	s32 b = scx_bpf_dsq_nr_queued(hb_dsq(cpu));

	return (a > 0 ? a : 0) + (b > 0 ? b : 0);
}

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

s32 BPF_STRUCT_OPS(colab_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = lookup_tctx(p);
	s32 cpu, fallback;

	if (!tctx)
		return prev_cpu;
	refresh_labels(p, tctx);
	if (p->nr_cpus_allowed == 1 || colab_migration_disabled(p))
		return prev_cpu;

	cpu = allocate(p, tctx, prev_cpu, &fallback);
	if (cpu >= 0) {
		stat_inc(COLAB_STAT_DIRECT);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
		return cpu;
	}
	/* No idle CPU: queue on the allocated set's least loaded CPU. */
	return fallback >= 0 ? fallback : prev_cpu;
}

void BPF_STRUCT_OPS(colab_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_tctx(p);
	struct colab_cpu_state *cs;
	s32 cpu = scx_bpf_task_cpu(p);
	bool pulled = false;
	u64 vtime, dsq, kick;

	if (!tctx) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags);
		return;
	}
	refresh_labels(p, tctx);

	/* An idle big CPU asked for this task (preempted on a little CPU). */
	cs = lookup_cpu_state(cpu);
	if (cs && cs->pull_to > 0 && cs->pid == p->pid) {
		s32 big = cs->pull_to - 1;

		cs->pull_to = 0;
		if (big >= 0 && big < COLAB_MAX_CPUS && bpf_cpumask_test_cpu(big, p->cpus_ptr) &&
		    !colab_migration_disabled(p)) {
			cpu = big;
			pulled = true;
			stat_inc(COLAB_STAT_PULLED);
		}
	}

	if (!pulled && (enq_flags & SCX_ENQ_LAST)) {
		/* Nothing else to run here: keep running. */
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags);
		return;
	}
	if (cpu < 0 || cpu >= COLAB_MAX_CPUS || cpu >= nr_cpus) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags);
		return;
	}

	/* Sleepers get at most one slice of credit. */
	vtime = tctx->vruntime;
	if (vtime + slice_ns < vtime_now)
		vtime = vtime_now - slice_ns;
	tctx->vruntime = vtime;

	dsq = cpu;
	kick = SCX_KICK_IDLE;
	if (tctx->high_block && vtime <= vtime_now + fair_window_ns) {
		dsq = hb_dsq(cpu);
		stat_inc(COLAB_STAT_HB_QUEUED);
		/* Bottleneck first: preempt a CPU running a non-bottleneck. */
		if (pulled) /* cs is the little CPU's; cpu is now the big one */
			cs = lookup_cpu_state(cpu);
		if (cs && cs->pid && cs->pid != p->pid && !cs->high_block)
			kick = SCX_KICK_PREEMPT;
	}
	stat_inc(COLAB_STAT_QUEUED);
	scx_bpf_dsq_insert_vtime(p, dsq, slice_ns, vtime, enq_flags & ~SCX_ENQ_LAST);
	scx_bpf_kick_cpu(cpu, kick);
}

static __always_inline bool take_from(s32 cpu)
{
	if (scx_bpf_dsq_nr_queued(hb_dsq(cpu)) > 0 && scx_bpf_dsq_move_to_local(hb_dsq(cpu), 0))
		return true;
	if (scx_bpf_dsq_nr_queued(cpu) > 0 && scx_bpf_dsq_move_to_local(cpu, 0))
		return true;
	return false;
}

/* Steal from the other CPUs of one cluster (@set), high-blocking DSQs first. */
static __always_inline bool steal_from(s32 self, u32 set)
{
	u32 n = set ? nr_little : nr_big;
	u32 i;

	bpf_for(i, 0, n) {
		s32 cpu = set ? little_cpus[i & CPU_MASK] : big_cpus[i & CPU_MASK];

		if (cpu == self)
			continue;
		if (scx_bpf_dsq_nr_queued(hb_dsq(cpu)) > 0 &&
		    scx_bpf_dsq_move_to_local(hb_dsq(cpu), 0))
			return true;
	}
	bpf_for(i, 0, n) {
		s32 cpu = set ? little_cpus[i & CPU_MASK] : big_cpus[i & CPU_MASK];

		if (cpu == self)
			continue;
		if (scx_bpf_dsq_nr_queued(cpu) > 0 && scx_bpf_dsq_move_to_local(cpu, 0))
			return true;
	}
	return false;
}

/*
 * An idle big CPU preempts the most blocking task running on a little CPU;
 * the task's ops.enqueue() then sends it here.
 */
static __always_inline void big_pull(s32 self)
{
	struct colab_cpu_state *cs, *best_cs = NULL;
	u64 now = bpf_ktime_get_ns();
	s32 best = -1;
	u32 best_level = 0;
	u32 i;

	bpf_for(i, 0, nr_little) {
		s32 cpu = little_cpus[i & CPU_MASK];

		cs = lookup_cpu_state(cpu);
		if (!cs || !cs->pid || cs->pull_to)
			continue;
		/* A task about to block would only pay the migration. */
		if (now - cs->started_at < pull_min_ns)
			continue;
		if (best < 0 || cs->block_level_fp > best_level) {
			best = cpu;
			best_level = cs->block_level_fp;
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

void BPF_STRUCT_OPS(colab_dispatch, s32 cpu, struct task_struct *prev)
{
	u32 own, other;

	if (debug_force_error) {
		scx_bpf_error("forced error (--debug-error-after)");
		return;
	}
	if (debug_stall)
		return;
	/* 1. The CPU's own queues, high-blocking first. */
	if (take_from(cpu)) {
		stat_inc(COLAB_STAT_LOCAL);
		return;
	}
	/* 2. The same cluster, then the other one. */
	own = is_big(cpu) ? 0 : 1;
	other = own ^ 1;
	if (steal_from(cpu, own)) {
		stat_inc(COLAB_STAT_STEAL_OWN);
		return;
	}
	if (steal_from(cpu, other)) {
		stat_inc(COLAB_STAT_STEAL_OTHER);
		return;
	}
	/* 3. An idle big CPU takes a task running on a little one. */
	if (!no_big_pull && is_big(cpu) && nr_little && !(prev && (prev->scx.flags & SCX_TASK_QUEUED)))
		big_pull(cpu);
}

void BPF_STRUCT_OPS(colab_running, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_tctx(p);
	s32 cpu = scx_bpf_task_cpu(p);
	struct colab_cpu_state *cs;
	u64 slice;

	if (!tctx)
		return;
	if (tctx->last_cpu >= 0 && tctx->last_cpu != cpu)
		stat_inc(COLAB_STAT_MIGRATIONS);
	tctx->last_cpu = cpu;
	tctx->started_at = bpf_ktime_get_ns();
	if (tctx->vruntime > vtime_now)
		vtime_now = tctx->vruntime;

	/* Scale-slice: a big CPU's slice shrinks by the predicted speedup. */
	if (is_big(cpu)) {
		slice = slice_ns * COLAB_FP_ONE / progress_scale_fp(cpu, tctx);
		if (p->scx.slice > slice)
			p->scx.slice = slice;
	}

	cs = lookup_cpu_state(cpu);
	if (cs) {
		cs->pid = p->pid;
		cs->block_level_fp = tctx->block_level_fp;
		cs->high_block = tctx->high_block;
		cs->pull_to = 0;
		cs->started_at = tctx->started_at;
	}
}

void BPF_STRUCT_OPS(colab_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup_tctx(p);
	s32 cpu = scx_bpf_task_cpu(p);
	struct colab_cpu_state *cs;
	u64 used, weight;

	if (!tctx)
		return;
	/* Equal progress: vruntime grows by runtime times the speedup on big CPUs. */
	used = bpf_ktime_get_ns() - tctx->started_at;
	used = used * progress_scale_fp(cpu, tctx) / COLAB_FP_ONE;
	weight = p->scx.weight ? p->scx.weight : 100;
	tctx->vruntime += used * 100 / weight;

	cs = lookup_cpu_state(cpu);
	if (cs && cs->pid == p->pid && !cs->pull_to)
		cs->pid = 0;
}

void BPF_STRUCT_OPS(colab_enable, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_tctx(p);

	if (tctx)
		tctx->vruntime = vtime_now;
}

s32 BPF_STRUCT_OPS(colab_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->last_cpu = -1;
	tctx->pmu_cpu = -1;
	tctx->label_gen = (u64)-1;
	tctx->speedup_fp = default_speedup_fp;
	return 0;
}

void BPF_STRUCT_OPS(colab_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	u32 pid = p->pid;

	bpf_map_delete_elem(&labels, &pid);
	bpf_map_delete_elem(&block_stats, &pid);
	bpf_map_delete_elem(&task_pmu, &pid);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(colab_init)
{
	u32 n = scx_bpf_nr_cpu_ids();
	u32 i;
	s32 ret;

	if (n > COLAB_MAX_CPUS)
		n = COLAB_MAX_CPUS;
	bpf_for(i, 0, n) {
		ret = scx_bpf_create_dsq(i, -1);
		if (ret) {
			scx_bpf_error("failed to create DSQ %u: %d", i, ret);
			return ret;
		}
		ret = scx_bpf_create_dsq(hb_dsq(i), -1);
		if (ret) {
			scx_bpf_error("failed to create high-blocking DSQ %u: %d", i, ret);
			return ret;
		}
	}
	return 0;
}

void BPF_STRUCT_OPS(colab_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

/* ---- Bottleneck tracking (colab-tpds 5.2) ---- */

static __always_inline void futex_key_of(struct colab_futex_key *key, u32 *uaddr, unsigned int flags)
{
	key->uaddr = (u64)uaddr;
	key->tgid = (flags & 0x0010 /* FLAGS_SHARED */) ? 0 : bpf_get_current_pid_tgid() >> 32;
	key->pad = 0;
}

SEC("fentry/futex_wait")
int BPF_PROG(colab_futex_wait_enter, u32 *uaddr, unsigned int flags, u32 val, ktime_t *abs_time,
	     u32 bitset)
{
	struct task_ctx *tctx = lookup_tctx(bpf_get_current_task_btf());

	if (tctx) {
		tctx->wait_start = bpf_ktime_get_ns();
		tctx->wait_uaddr = (u64)uaddr;
	}
	return 0;
}

static __always_inline void charge(u32 waker_pid, u64 waited, const char *comm)
{
	struct colab_block_stat zero = {}, *bs;

	bs = bpf_map_lookup_elem(&block_stats, &waker_pid);
	if (!bs) {
		bpf_map_update_elem(&block_stats, &waker_pid, &zero, BPF_NOEXIST);
		bs = bpf_map_lookup_elem(&block_stats, &waker_pid);
		if (!bs)
			return;
	}
	__sync_fetch_and_add(&bs->blocked_others_ns, waited);
	__sync_fetch_and_add(&bs->charges, 1);
	__builtin_memcpy(bs->comm, comm, COLAB_COMM_LEN);
}

SEC("fexit/futex_wait")
int BPF_PROG(colab_futex_wait_exit, u32 *uaddr, unsigned int flags, u32 val, ktime_t *abs_time,
	     u32 bitset, int ret)
{
	struct task_struct *self = bpf_get_current_task_btf();
	struct task_ctx *tctx = lookup_tctx(self);
	struct colab_futex_waker *w;
	struct colab_futex_key key;
	u64 start, now, waited;

	if (!tctx)
		return 0;
	start = tctx->wait_start;
	tctx->wait_start = 0;
	/* Only waits that ended with a wake-up are someone's doing. */
	if (!start || ret != 0)
		return 0;
	futex_key_of(&key, uaddr, flags);
	w = bpf_map_lookup_elem(&futex_wakers, &key);
	if (!w || w->at < start || w->pid == (u32)self->pid)
		return 0;
	now = bpf_ktime_get_ns();
	if (now <= start)
		return 0;
	waited = now - start;
	if (waited > max_charge_ns)
		waited = max_charge_ns;
	charge(w->pid, waited, w->comm);
	stat_inc(COLAB_STAT_FUTEX_CHARGES);
	return 0;
}

SEC("fentry/futex_wake")
int BPF_PROG(colab_futex_wake, u32 *uaddr, unsigned int flags, int nr_wake, u32 bitset)
{
	struct colab_futex_waker w = {};
	struct colab_futex_key key;

	futex_key_of(&key, uaddr, flags);
	w.at = bpf_ktime_get_ns();
	w.pid = bpf_get_current_pid_tgid();
	bpf_get_current_comm(w.comm, sizeof(w.comm));
	bpf_map_update_elem(&futex_wakers, &key, &w, BPF_ANY);
	return 0;
}

/* ---- Performance counters (colab-tpds 5.1) ---- */

static __always_inline struct colab_task_pmu *task_pmu_of(u32 pid)
{
	struct colab_task_pmu zero = {}, *tp;

	tp = bpf_map_lookup_elem(&task_pmu, &pid);
	if (tp)
		return tp;
	bpf_map_update_elem(&task_pmu, &pid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&task_pmu, &pid);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(colab_pmu_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct bpf_perf_event_value v;
	struct colab_task_pmu *tp = NULL;
	struct task_ctx *pctx, *nctx;
	u64 now_counts[COLAB_MAX_EVENTS] = {};
	u32 cpu = bpf_get_smp_processor_id();
	u32 set = is_big(cpu) ? 0 : 1;
	u32 n = nr_events[set];
	bool mux = false;
	u64 now;
	u32 e;

	if (!n || cpu >= COLAB_MAX_CPUS)
		return 0;
	/* (No early return when neither has storage: the verifier refuses
	 * the pointer OR clang makes of `!pctx && !nctx`.) */
	pctx = lookup_tctx(prev);
	nctx = lookup_tctx(next);
	for (e = 0; e < COLAB_MAX_EVENTS; e++) {
		if (e >= n)
			break;
		if (bpf_perf_event_read_value(&pmu_events, cpu * COLAB_MAX_EVENTS + e, &v,
					      sizeof(v))) {
			/* Not readable here: nobody is charged across this switch. */
			stat_inc(COLAB_STAT_PMU_ERRORS);
			if (pctx)
				pctx->pmu_cpu = -1;
			if (nctx)
				nctx->pmu_cpu = -1;
			return 0;
		}
		now_counts[e] = v.counter;
		mux |= v.running < v.enabled;
	}
	stat_inc(COLAB_STAT_PMU_READS);
	if (mux)
		stat_inc(COLAB_STAT_PMU_MUX);
	now = bpf_ktime_get_ns();
	if (pctx && pctx->pmu_cpu == (s32)cpu) {
		tp = task_pmu_of(prev->pid);
		if (tp) {
			for (e = 0; e < COLAB_MAX_EVENTS; e++) {
				if (e >= n)
					break;
				tp->counts[set][e] += now_counts[e] - pctx->pmu_start[e];
			}
			tp->run_ns[set] += now - pctx->pmu_started_at;
			bpf_probe_read_kernel_str(tp->comm, sizeof(tp->comm), prev->comm);
		}
	}
	if (pctx)
		pctx->pmu_cpu = -1;
	if (nctx) {
		for (e = 0; e < COLAB_MAX_EVENTS; e++)
			nctx->pmu_start[e] = now_counts[e];
		nctx->pmu_cpu = cpu;
		nctx->pmu_started_at = now;
	}
	return 0;
}

SCX_OPS_DEFINE(colab_ops,
	       .select_cpu = (void *)colab_select_cpu,
	       .enqueue = (void *)colab_enqueue,
	       .dispatch = (void *)colab_dispatch,
	       .running = (void *)colab_running,
	       .stopping = (void *)colab_stopping,
	       .enable = (void *)colab_enable,
	       .init_task = (void *)colab_init_task,
	       .exit_task = (void *)colab_exit_task,
	       .init = (void *)colab_init,
	       .exit = (void *)colab_exit,
	       .flags = SCX_OPS_ENQ_LAST,
	       .timeout_ms = 5000,
	       .name = "colab");
