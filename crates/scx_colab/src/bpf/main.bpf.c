/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_colab: asymmetry-aware scheduling as a sched_ext scheduler. Two
 * policies share this object, chosen by user space before loading:
 * ROTA (rota.bpf.h, the default) and the paper's COLAB (colab.bpf.h,
 * `--policy colab`, colab-tpds sections 4-5, Fig. 6). User space
 * (src/labeller.rs) labels the tasks every 10 ms; both policies read the
 * labels; the futex hooks (futex.bpf.h) and the counters (pmu.bpf.h) feed
 * the labeller. This file holds the state both share and the ops table,
 * which hands each callback to the policy in force.
 */
#include <scx/common.bpf.h>
#include "intf.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#define CPU_MASK (COLAB_MAX_CPUS - 1)

/* Set by user space before loading. */
/* true: ROTA (rota.bpf.h); false: the paper's COLAB (colab.bpf.h). */
const volatile bool policy_rota = true;
const volatile u32 nr_cpus = 1;
const volatile u32 nr_big;
const volatile u32 nr_little;
/* CPU lists of the two clusters; a homogeneous machine is all "little". */
const volatile u32 big_cpus[COLAB_MAX_CPUS];
const volatile u32 little_cpus[COLAB_MAX_CPUS];
const volatile u8 cpu_is_big[COLAB_MAX_CPUS];
/* Three or more core types: each big CPU's type rank among the big ones
 * (0 the slowest big type; ROTA's tiers rule). */
const volatile bool tiered;
const volatile u8 cpu_tier[COLAB_MAX_CPUS];
/* Some core has SMT siblings online: ROTA claims idle whole cores first. */
const volatile bool smt_on;
/* A CPU's (first) SMT sibling, -1 for none; set by user space when smt_on. */
const volatile s32 sibling_cpu[COLAB_MAX_CPUS];
const volatile u32 default_speedup_fp = 2 * COLAB_FP_ONE;
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

struct task_ctx {
	u64 vruntime;
	u64 started_at;
	u64 wait_start;        /* start of the current futex wait, 0 if none */
	u64 label_gen;         /* labels copied at this generation */
	/* ROTA (rota.bpf.h) */
	struct rota_task r;    /* its rank inputs */
	u64 blocked_at;        /* when it last blocked */
	u64 avg_sleep_ns;      /* running mean (weight 1/4) of its sleeps */
	u64 avg_burst_ns;      /* ... of its CPU bursts between sleeps */
	u64 burst_ns;          /* its current burst so far */
	u64 queued_at;         /* when it last joined a queue (idle balance) */
	s64 lag;               /* COLAB: vruntime minus its queue's min_vtime at the last stop */
	s32 vcpu;              /* ROTA: the CPU whose queue its vruntime is on; -1: none */
	u32 out_to;            /* a fast CPU's occupant that gave way: CPU + 1 to queue on */
	u8 awake;              /* runnable or running (woken, not yet blocked) */
	u8 has_slept;
	u32 waker_pid;         /* who woke it from the current futex wait */
	char waker_comm[COLAB_COMM_LEN];
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

/* @used ns of run time as vruntime at @p's weight (nice 0: 1:1). */
static __always_inline u64 weighted_ns(const struct task_struct *p, u64 used)
{
	u64 weight = p->scx.weight ? p->scx.weight : 100;

	return used * 100 / weight;
}

static __always_inline u32 queued_on(s32 cpu)
{
	s32 n = scx_bpf_dsq_nr_queued(cpu);

	return n > 0 ? n : 0;
}

#include "cfs.bpf.h"
#include "colab.bpf.h"
#include "rota.bpf.h"

s32 BPF_STRUCT_OPS(colab_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = lookup_tctx(p);

	if (!tctx)
		return prev_cpu;
	refresh_labels(p, tctx);
	if (p->nr_cpus_allowed == 1 || colab_migration_disabled(p))
		return prev_cpu;
	if (policy_rota) {
		bool idle;
		s32 cpu = rota_select_cpu(p, tctx, prev_cpu, wake_flags, &idle);

		if (idle) {
			stat_inc(COLAB_STAT_DIRECT);
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfs_slice(1), 0);
		}
		return cpu;
	}
	return paper_select_cpu(p, tctx, prev_cpu);
}

void BPF_STRUCT_OPS(colab_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_tctx(p);
	bool new;

	if (!tctx)
		return;
	new = tctx->last_cpu < 0; /* never ran */
	if (!new && !(enq_flags & SCX_ENQ_WAKEUP))
		return; /* a requeue (affinity, priority), not a wake-up */
	if (policy_rota)
		rota_runnable(p, tctx, new, scx_bpf_task_cpu(p));
	else
		cfs_place(tctx, new);
}

void BPF_STRUCT_OPS(colab_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_tctx(p);
	struct colab_cpu_state *cs;
	s32 cpu = scx_bpf_task_cpu(p);
	bool pulled = false;

	if (!tctx) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfs_slice(1), enq_flags);
		return;
	}
	refresh_labels(p, tctx);

	/* A fast CPU asked for this task (preempted where it ran). */
	cs = lookup_cpu_state(cpu);
	if (cs && cs->pull_to > 0 && cs->pid == p->pid) {
		s32 big = cs->pull_to - 1;

		if (big >= 0 && big < COLAB_MAX_CPUS && bpf_cpumask_test_cpu(big, p->cpus_ptr) &&
		    !colab_migration_disabled(p)) {
			cs->pull_to = 0;
			cpu = big;
			pulled = true;
			stat_inc(COLAB_STAT_PULLED);
		} else if (policy_rota) {
			rota_pull_failed(cs);
		} else {
			cs->pull_to = 0;
		}
		/* It no longer runs there: colab_stopping kept the pid for this
		 * (pull_to was set); left, an idle CPU would look busy with a task
		 * running elsewhere, and a fast CPU would ask it for that task and
		 * wait for it in vain. */
		cs->pid = 0;
	}
	if (cpu < 0 || cpu >= COLAB_MAX_CPUS || cpu >= nr_cpus) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfs_slice(1), enq_flags);
		return;
	}
	if (policy_rota)
		rota_enqueue(p, tctx, enq_flags, cpu, pulled);
	else
		paper_enqueue(p, tctx, enq_flags, cpu, pulled);
}

void BPF_STRUCT_OPS(colab_dispatch, s32 cpu, struct task_struct *prev)
{
	if (debug_force_error) {
		scx_bpf_error("forced error (--debug-error-after)");
		return;
	}
	if (debug_stall)
		return;
	if (policy_rota)
		rota_dispatch(cpu, prev);
	else
		paper_dispatch(cpu, prev);
}

void BPF_STRUCT_OPS(colab_tick, struct task_struct *p)
{
	if (policy_rota)
		rota_tick(p);
}

void BPF_STRUCT_OPS(colab_running, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_tctx(p);
	s32 cpu = scx_bpf_task_cpu(p);
	struct colab_cpu_state *cs;

	if (!tctx)
		return;
	if (tctx->last_cpu >= 0 && tctx->last_cpu != cpu)
		stat_inc(COLAB_STAT_MIGRATIONS);
	tctx->last_cpu = cpu;
	tctx->started_at = bpf_ktime_get_ns();
	cs = lookup_cpu_state(cpu);
	if (cs) {
		cs->pid = p->pid;
		cs->block_level_fp = tctx->block_level_fp;
		cs->high_block = tctx->high_block;
		cs->pull_to = 0;
		cs->started_at = tctx->started_at;
		cs->run_speed_fp = tctx->speedup_fp;
		if (policy_rota)
			rota_running(p, tctx, cpu, cs, tctx->started_at);
		else
			paper_running(p, tctx, cpu, cs);
	}
}

void BPF_STRUCT_OPS(colab_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup_tctx(p);
	s32 cpu = scx_bpf_task_cpu(p);
	struct colab_cpu_state *cs;
	u64 used;

	if (!tctx)
		return;
	used = bpf_ktime_get_ns() - tctx->started_at;
	cs = lookup_cpu_state(cpu);
	if (policy_rota)
		rota_stopping(p, tctx, cpu, cs, weighted_ns(p, used), used, runnable);
	else
		paper_stopping(p, tctx, cs, used);

	if (cs && cs->pid == p->pid && !cs->pull_to)
		cs->pid = 0;
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
	if (policy_rota)
		rota_init_task(p, tctx);
	return 0;
}

void BPF_STRUCT_OPS(colab_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	u32 pid = p->pid;

	if (policy_rota)
		rota_exit_task(p);
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
	}
	return 0;
}

void BPF_STRUCT_OPS(colab_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

#include "futex.bpf.h"
#include "pmu.bpf.h"

SCX_OPS_DEFINE(colab_ops,
	       .select_cpu = (void *)colab_select_cpu,
	       .runnable = (void *)colab_runnable,
	       .enqueue = (void *)colab_enqueue,
	       .dispatch = (void *)colab_dispatch,
	       .tick = (void *)colab_tick,
	       .running = (void *)colab_running,
	       .stopping = (void *)colab_stopping,
	       .init_task = (void *)colab_init_task,
	       .exit_task = (void *)colab_exit_task,
	       .init = (void *)colab_init,
	       .exit = (void *)colab_exit,
	       .flags = SCX_OPS_ENQ_LAST,
	       .timeout_ms = 5000,
	       .name = "colab");
