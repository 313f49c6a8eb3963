/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_colab: definitions shared by the BPF side (main.bpf.c) and user space
 * (bindgen turns this file into bpf_intf.rs).
 */
#ifndef __COLAB_INTF_H
#define __COLAB_INTF_H

#ifndef __VMLINUX_H__
typedef unsigned char u8;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;
#endif

enum colab_consts {
	/* Upper bound on CPU ids handled (a power of two, for masking). */
	COLAB_MAX_CPUS = 256,
	/* Fixed point of the predicted speedup: 1024 is 1.0. */
	COLAB_FP_ONE = 1024,
	COLAB_COMM_LEN = 16,
	/* Entries of the per-pid maps (blocking counters, labels). */
	COLAB_MAX_TASKS = 16384,
	/* Entries of the futex-waker map. */
	COLAB_MAX_FUTEXES = 16384,
	/* Counters programmed per CPU (a model's events plus CPU_CYCLES). */
	COLAB_MAX_EVENTS = 8,
	/* Clusters of struct colab_task_pmu: 0 big, 1 little. */
	COLAB_NR_CLUSTERS = 2,
};

/* Speedup labels (colab-tpds 5.4). */
enum colab_speedup_label {
	COLAB_SPEEDUP_MEDIUM = 0,
	COLAB_SPEEDUP_HIGH = 1,
	COLAB_SPEEDUP_LOW = 2,
};

/* Indices of the per-CPU counters (map `stats`). */
enum colab_stat {
	COLAB_STAT_DIRECT,      /* woken onto an idle CPU of its allocated set */
	COLAB_STAT_QUEUED,      /* queued on a CPU's DSQ (no idle CPU) */
	COLAB_STAT_BLOCK_FIRST, /* COLAB: a more blocking task went before the vruntime order */
	COLAB_STAT_LOCAL,       /* dispatched from the CPU's own DSQs */
	COLAB_STAT_STEAL_OWN,   /* taken from another CPU of the same cluster */
	COLAB_STAT_STEAL_OTHER, /* taken from a CPU of another cluster */
	COLAB_STAT_BIG_PREEMPT, /* an idle big CPU preempted a little one */
	COLAB_STAT_PULLED,      /* ... and the task moved to the big CPU */
	COLAB_STAT_MIGRATIONS,  /* a task started on another CPU than last time */
	COLAB_STAT_FUTEX_CHARGES, /* futex waits charged to a waker */
	COLAB_STAT_PMU_READS,   /* task switches that read the CPU's counters */
	COLAB_STAT_PMU_ERRORS,  /* ... and a counter could not be read */
	COLAB_STAT_PMU_MUX,     /* ... and counters were multiplexed */
	COLAB_STAT_ROTATIONS,   /* ROTA: a fast CPU's occupant gave way at a tick */
	COLAB_STAT_IDLE_KICKS,  /* ROTA: an idle fast CPU woken to look for work */
	COLAB_STAT_SMT_MOVES,   /* ROTA: an occupant moved off a shared core (SMT) */
	COLAB_NR_STATS,
};

/*
 * What the futex hooks count per waker, keyed by pid (thread id) in the
 * hash map `block_stats`; user space reads it every labelling period.
 */
struct colab_block_stat {
	u64 blocked_others_ns; /* futex wait time this task caused others */
	u64 charges;           /* number of waits charged */
	char comm[COLAB_COMM_LEN];
};

/*
 * A task's performance counts, keyed by pid in the hash map `task_pmu`:
 * per cluster, what the CPU's counters advanced while the task ran there
 * (index e is the e-th event programmed on that cluster) and for how long.
 * Totals that only grow; the labeller takes differences every period.
 */
struct colab_task_pmu {
	u64 counts[COLAB_NR_CLUSTERS][COLAB_MAX_EVENTS];
	u64 run_ns[COLAB_NR_CLUSTERS];
	char comm[COLAB_COMM_LEN];
};

/* Labels written by user space, keyed by pid in the hash map `labels`. */
struct colab_label {
	u32 speedup_label;   /* enum colab_speedup_label */
	u32 high_block;      /* labelled high-blocking */
	u32 block_level_fp;  /* blocking level * COLAB_FP_ONE (ranking) */
	u32 speedup_fp;      /* predicted speedup * COLAB_FP_ONE; 0: default */
};

/*
 * ROTA's rank inputs of a task (rota.bpf.h): kept in its task storage and
 * copied into its CPU's state while it runs, so other CPUs rank a running
 * task without its storage. Times in ns.
 */
struct rota_task {
	u64 fast_ns;        /* run time on fast CPUs */
	u64 slow_ns;        /* run time on slow CPUs */
	u64 runnable_ns;    /* time runnable (woken to blocked), finished spells */
	u64 woke_at_ns;     /* when its current runnable spell began */
	u64 fast_left_at;   /* when it last left a fast CPU (created: then) */
	u64 woke_at;        /* when it last woke another task */
	u32 speed_fp;       /* predicted speedup, fixed point */
	u32 tgid;           /* its process */
};

/*
 * Per-CPU state the dispatch path of other CPUs reads (map `cpu_state`).
 * Written by the CPU itself, read racily by others: a stale value costs
 * one less-than-best decision, never a lost task.
 */
struct colab_cpu_state {
	u32 pid;            /* running task (0: none) */
	u32 block_level_fp; /* its blocking level */
	u32 high_block;
	s32 pull_to;        /* fast CPU + 1 asking for the running task; 0: none */
	u64 started_at;     /* when the running task started running */
	u64 run_speed_fp;   /* its predicted speedup (COLAB) */
	/* ROTA (rota*.bpf.h) and the CFS engine (cfs.bpf.h) */
	u32 occ_pid;        /* occupant: the last task to start here (keeps */
	u32 occ_tgid;       /*   its turn across sleeps), its process, */
	u64 occ_since;      /*   since when, */
	u64 occ_avg_sleep_ns; /* and its mean sleep */
	u64 idle_since;     /* when dispatch last found nothing (0: busy) */
	u32 swap_pid;       /* a queued task this fast CPU takes at its next dispatch */
	u32 expect_pid;     /* a task this fast CPU asked another CPU to send (pull_to) */
	u64 expect_at;      /*   and when it asked */
	u32 reserved;       /* a task was sent to its local queue and has not run yet */
	u32 occ_blocked;    /* the occupant blocked here and has not woken since */
	u32 run_anywhere;   /* the running task may run on every CPU (a fast CPU may take it) */
	u32 pad2;
	struct rota_task run; /* the running task's rank inputs */
	u64 run_vtime;      /* its vruntime when it started */
	u64 run_scale_fp;   /* the rate its run is charged vruntime at */
	u64 min_vtime;      /* this CPU queue's vruntime floor (CFS min_vruntime) */
	u64 last_new_vtime; /* the vruntime the last new task got here */
};

#endif /* __COLAB_INTF_H */
