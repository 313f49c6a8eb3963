/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched_ext host's shim: what a scheduler's .bpf.c includes as
 * <scx/common.bpf.h> when it is compiled as native code for the simulator
 * instead of as BPF for the kernel. Types, constants and the kfuncs and
 * helpers the host implements; each kfunc calls through `scx_host`, a table
 * the simulator fills (src/ffi.rs). Values follow Linux 6.12
 * (include/linux/sched/ext.h, kernel/sched/ext.c). A kfunc or helper that is
 * not declared here fails the build naming it: never a silent stub.
 */
#ifndef SCX_HOST_COMMON_BPF_H
#define SCX_HOST_COMMON_BPF_H

#include <stdbool.h>
#include <stddef.h>

/* intf.h files skip their own typedefs when vmlinux.h was included. */
#define __VMLINUX_H__ 1

typedef unsigned char u8;
typedef signed char s8;
typedef unsigned short u16;
typedef signed short s16;
typedef unsigned int u32;
typedef signed int s32;
typedef unsigned long long u64;
typedef signed long long s64;
typedef u8 __u8;
typedef s8 __s8;
typedef u16 __u16;
typedef s16 __s16;
typedef u32 __u32;
typedef s32 __s32;
typedef u64 __u64;
typedef s64 __s64;
typedef s64 ktime_t;
typedef int pid_t;

#define SCX_HOST_MAX_CPUS 1024

/* ---- attributes and macros of the BPF toolchain ---------------------- */
#define SEC(name)
#define __always_inline inline __attribute__((always_inline))
#define __noinline __attribute__((noinline))
#define __weak __attribute__((weak))
#define __hidden
#define __ksym
#define __kptr
#define __kptr_untrusted
#define __arg_trusted
#define __arg_nullable
#define __arg_ctx
#define __arg_arena
#define __percpu_kptr
#define __rcu
#define __user
#define __kernel
#define __iomem
#define __must_check
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#define barrier() __asm__ __volatile__("" ::: "memory")
#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val) ((*(volatile __typeof__(x) *)&(x)) = (val))
#define MEMBER_VREAD(p, m) ((p)->m)
#define BPF_CORE_READ(src, a) ((src)->a)
#define bpf_core_field_exists(field) 1
#define bpf_core_type_exists(type) 1
#define bpf_ksym_exists(sym) 1
#define ARRAY_ELEM_PTR(arr, i, n) (((i) < (n)) ? &(arr)[(i)] : NULL)
#ifndef min
#define min(x, y) ((x) < (y) ? (x) : (y))
#define max(x, y) ((x) > (y) ? (x) : (y))
#endif

/* Map definitions: the BPF encoding (values as array sizes); the host reads
 * each map's type, sizes and entries from a table build.rs generates. */
#define __uint(name, val) int(*name)[val]
#define __type(name, val) __typeof__(val) *name
#define __array(name, val) __typeof__(val) *name[]

/* Loops: the verifier's open-coded iterators, as plain C loops. */
#define bpf_for(i, start, end) for ((i) = (start); (i) < (end); (i)++)
#define bpf_repeat(n) for (int ___i = 0; ___i < (n); ___i++)
#define BPF_FOR_EACH_ITER (&___it)
#define bpf_for_each(type, cur, args...)                                                   \
	for (struct bpf_iter_##type ___it __attribute__((aligned(8),                      \
							  cleanup(bpf_iter_##type##_destroy))), \
	     *___p __attribute__((unused)) = (bpf_iter_##type##_new(&___it, ##args), (void *)0); \
	     ((cur) = bpf_iter_##type##_next(&___it));)

/* ---- errno ------------------------------------------------------------ */
#define EPERM 1
#define ENOENT 2
#define ESRCH 3
#define E2BIG 7
#define ENOMEM 12
#define EBUSY 16
#define EEXIST 17
#define EINVAL 22
#define ENOSPC 28
#define EOPNOTSUPP 95

/* ---- maps --------------------------------------------------------------- */
enum bpf_map_type {
	BPF_MAP_TYPE_UNSPEC = 0,
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PROG_ARRAY = 3,
	BPF_MAP_TYPE_PERF_EVENT_ARRAY = 4,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_STACK_TRACE = 7,
	BPF_MAP_TYPE_CGROUP_ARRAY = 8,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_LRU_PERCPU_HASH = 10,
	BPF_MAP_TYPE_LPM_TRIE = 11,
	BPF_MAP_TYPE_ARRAY_OF_MAPS = 12,
	BPF_MAP_TYPE_HASH_OF_MAPS = 13,
	BPF_MAP_TYPE_QUEUE = 22,
	BPF_MAP_TYPE_STACK = 23,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
	BPF_MAP_TYPE_BLOOM_FILTER = 30,
	BPF_MAP_TYPE_USER_RINGBUF = 31,
	BPF_MAP_TYPE_CGRP_STORAGE = 32,
	BPF_MAP_TYPE_ARENA = 33,
};
#define BPF_ANY 0
#define BPF_NOEXIST 1
#define BPF_EXIST 2
#define BPF_F_LOCK 4
#define BPF_F_NO_PREALLOC (1U << 0)
#define BPF_F_MMAPABLE (1U << 10)
#define BPF_LOCAL_STORAGE_GET_F_CREATE (1ULL << 0)

/* ---- the kernel's types, as much as schedulers read ------------------- */
struct cpumask {
	unsigned long long bits[SCX_HOST_MAX_CPUS / 64];
};
struct bpf_cpumask {
	struct cpumask cpumask;
};

struct scx_dispatch_q;

struct sched_ext_entity {
	struct scx_dispatch_q *dsq;
	u32 flags;
	u32 weight;
	s32 sticky_cpu;
	s32 holding_cpu;
	u32 kf_mask;
	u64 ddsp_dsq_id;
	u64 ddsp_enq_flags;
	u64 slice;
	u64 dsq_vtime;
	bool disallow;
	unsigned long runnable_at;
};

struct task_struct {
	int pid;
	int tgid;
	unsigned int flags;
	int prio;
	int static_prio;
	int normal_prio;
	unsigned int policy;
	int nr_cpus_allowed;
	const struct cpumask *cpus_ptr;
	unsigned short migration_disabled;
	char comm[16];
	struct task_struct *real_parent;
	struct task_struct *group_leader;
	void *mm;
	struct sched_ext_entity scx;
	/* The host's index of this task (not in the kernel's struct). */
	u32 scx_host_idx;
};

#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000

struct scx_init_task_args {
	bool fork;
	void *cgroup;
};
struct scx_exit_task_args {
	bool cancelled;
};
struct scx_cpu_acquire_args {
	int __unused;
};
struct scx_cpu_release_args {
	int reason;
	struct task_struct *task;
};
struct scx_exit_info {
	int kind;
	s64 exit_code;
	const char *reason;
	unsigned long *bt;
	u32 bt_len;
	char *msg;
	char *dump;
};

struct bpf_iter_scx_dsq {
	u64 __opaque[6];
} __attribute__((aligned(8)));

/* ---- sched_ext's constants (Linux 6.12) ------------------------------- */
enum scx_consts {
	SCX_OPS_NAME_LEN = 128,
	SCX_DSP_DFL_MAX_BATCH = 32,
	SCX_CPUPERF_ONE = 1024,
};
#define SCX_SLICE_DFL (20ULL * 1000000ULL)
#define SCX_SLICE_INF (~0ULL)
#define SCX_DSQ_FLAG_BUILTIN (1ULL << 63)
#define SCX_DSQ_FLAG_LOCAL_ON (1ULL << 62)
#define SCX_DSQ_INVALID (SCX_DSQ_FLAG_BUILTIN | 0)
#define SCX_DSQ_GLOBAL (SCX_DSQ_FLAG_BUILTIN | 1)
#define SCX_DSQ_LOCAL (SCX_DSQ_FLAG_BUILTIN | 2)
#define SCX_DSQ_LOCAL_ON (SCX_DSQ_FLAG_BUILTIN | SCX_DSQ_FLAG_LOCAL_ON)
#define SCX_DSQ_LOCAL_CPU_MASK 0xffffffffULL
#define SCX_DSQ_ITER_REV (1U << 16)
#define SCX_TASK_QUEUED (1U << 0)
#define SCX_TASK_RESET_RUNNABLE_AT (1U << 2)
#define SCX_TASK_DEQD_FOR_SLEEP (1U << 3)
#define SCX_WAKE_FORK 0x04ULL
#define SCX_WAKE_TTWU 0x08ULL
#define SCX_WAKE_SYNC 0x10ULL
#define SCX_ENQ_WAKEUP (1ULL << 0)
#define SCX_ENQ_HEAD (1ULL << 4)
#define SCX_ENQ_CPU_SELECTED (1ULL << 10)
#define SCX_ENQ_PREEMPT (1ULL << 32)
#define SCX_ENQ_REENQ (1ULL << 40)
#define SCX_ENQ_LAST (1ULL << 41)
#define SCX_ENQ_CLEAR_OPSS (1ULL << 56)
#define SCX_ENQ_DSQ_PRIQ (1ULL << 57)
#define SCX_DEQ_SLEEP (1ULL << 0)
#define SCX_DEQ_CORE_SCHED_EXEC (1ULL << 32)
#define SCX_PICK_IDLE_CORE (1ULL << 0)
#define SCX_KICK_IDLE (1ULL << 0)
#define SCX_KICK_PREEMPT (1ULL << 1)
#define SCX_KICK_WAIT (1ULL << 2)
#define SCX_OPS_KEEP_BUILTIN_IDLE (1ULL << 0)
#define SCX_OPS_ENQ_LAST (1ULL << 1)
#define SCX_OPS_ENQ_EXITING (1ULL << 2)
#define SCX_OPS_SWITCH_PARTIAL (1ULL << 3)
#define SCX_OPS_HAS_CGROUP_WEIGHT (1ULL << 16)
#define SCX_EXIT_NONE 0
#define SCX_EXIT_DONE 1
#define SCX_EXIT_UNREG 64
#define SCX_EXIT_ERROR 1024
#define SCX_EXIT_ERROR_BPF 1025
#define SCX_EXIT_ERROR_STALL 1026
#define SCX_ECODE_ACT_RESTART (1ULL << 48)

/* The ops table (struct_ops); the host calls what a scheduler defines. */
struct sched_ext_ops {
	s32 (*select_cpu)(struct task_struct *p, s32 prev_cpu, u64 wake_flags);
	void (*enqueue)(struct task_struct *p, u64 enq_flags);
	void (*dequeue)(struct task_struct *p, u64 deq_flags);
	void (*dispatch)(s32 cpu, struct task_struct *prev);
	void (*tick)(struct task_struct *p);
	void (*runnable)(struct task_struct *p, u64 enq_flags);
	void (*running)(struct task_struct *p);
	void (*stopping)(struct task_struct *p, bool runnable);
	void (*quiescent)(struct task_struct *p, u64 deq_flags);
	bool (*yield)(struct task_struct *from, struct task_struct *to);
	bool (*core_sched_before)(struct task_struct *a, struct task_struct *b);
	void (*set_weight)(struct task_struct *p, u32 weight);
	void (*set_cpumask)(struct task_struct *p, const struct cpumask *cpumask);
	void (*update_idle)(s32 cpu, bool idle);
	void (*cpu_acquire)(s32 cpu, struct scx_cpu_acquire_args *args);
	void (*cpu_release)(s32 cpu, struct scx_cpu_release_args *args);
	s32 (*init_task)(struct task_struct *p, struct scx_init_task_args *args);
	void (*exit_task)(struct task_struct *p, struct scx_exit_task_args *args);
	void (*enable)(struct task_struct *p);
	void (*disable)(struct task_struct *p);
	void (*dump)(void *ctx);
	void (*dump_cpu)(void *ctx, s32 cpu, bool idle);
	void (*dump_task)(void *ctx, struct task_struct *p);
	s32 (*cgroup_init)(void *cgrp, void *args);
	void (*cgroup_exit)(void *cgrp);
	s32 (*cgroup_prep_move)(struct task_struct *p, void *from, void *to);
	void (*cgroup_move)(struct task_struct *p, void *from, void *to);
	void (*cgroup_cancel_move)(struct task_struct *p, void *from, void *to);
	void (*cgroup_set_weight)(void *cgrp, u32 weight);
	void (*cpu_online)(s32 cpu);
	void (*cpu_offline)(s32 cpu);
	s32 (*init)(void);
	void (*exit)(struct scx_exit_info *info);
	u32 dispatch_max_batch;
	u64 flags;
	u32 timeout_ms;
	u32 exit_dump_len;
	u64 hotplug_seq;
	char name[SCX_OPS_NAME_LEN];
};

/* Callbacks and programs: plain functions with their typed arguments. */
#define BPF_STRUCT_OPS(name, args...) name(args)
#define BPF_STRUCT_OPS_SLEEPABLE(name, args...) name(args)
#define BPF_PROG(name, args...) name(args)
#define SCX_OPS_DEFINE(__name, ...)                                                        \
	struct sched_ext_ops __name = {__VA_ARGS__};                                       \
	struct sched_ext_ops *scx_host_ops = &__name

/* user_exit_info: the exit record user space reads. */
struct user_exit_info {
	int kind;
	s64 exit_code;
	char reason[128];
	char msg[1024];
};
#define UEI_DEFINE(__name) struct user_exit_info __name
#define UEI_RECORD(__uei_name, __ei)                                                       \
	({                                                                                 \
		(__uei_name).kind = (__ei)->kind;                                          \
		(__uei_name).exit_code = (__ei)->exit_code;                                \
	})

/* The trampoline prolog question of the scx headers (6.12 has no prolog
 * migration count in a simulation): no task has migration disabled. */
static const bool __scx_prolog_disables_migration = false;

/* ---- the host's table ---------------------------------------------------- */
struct scx_host_vtable {
	void *ctx;
	u64 (*now)(void *ctx);
	s32 (*cpu)(void *ctx);
	struct task_struct *(*current)(void *ctx);
	void (*dsq_insert)(void *ctx, struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
			   u64 enq_flags, int has_vtime);
	bool (*dsq_move_to_local)(void *ctx, u64 dsq_id);
	s32 (*dsq_nr_queued)(void *ctx, u64 dsq_id);
	s32 (*create_dsq)(void *ctx, u64 dsq_id, s32 node);
	void (*destroy_dsq)(void *ctx, u64 dsq_id);
	int (*iter_new)(void *ctx, u64 *it, u64 dsq_id, u64 flags);
	struct task_struct *(*iter_next)(void *ctx, u64 *it);
	bool (*dsq_move)(void *ctx, u64 *it, struct task_struct *p, u64 dsq_id, u64 enq_flags,
			 int has_vtime);
	void (*dsq_move_set)(void *ctx, u64 *it, u64 value, int what);
	void (*kick_cpu)(void *ctx, s32 cpu, u64 flags);
	s32 (*task_cpu)(void *ctx, const struct task_struct *p);
	bool (*test_and_clear_cpu_idle)(void *ctx, s32 cpu);
	const struct cpumask *(*idle_cpumask)(void *ctx, int smt);
	s32 (*pick_idle_cpu)(void *ctx, const struct cpumask *allowed, u64 flags);
	s32 (*pick_any_cpu)(void *ctx, const struct cpumask *allowed, u64 flags);
	s32 (*select_cpu_dfl)(void *ctx, struct task_struct *p, s32 prev_cpu, u64 wake_flags,
			      bool *is_idle);
	u32 (*nr_cpu_ids)(void *ctx);
	u32 (*cpuperf)(void *ctx, s32 cpu, int what);
	void (*cpuperf_set)(void *ctx, s32 cpu, u32 perf);
	void (*error)(void *ctx, int is_exit, s64 code, const char *fmt, const u64 *args, u32 nr);
	void *(*map_lookup)(void *ctx, void *map, const void *key);
	long (*map_update)(void *ctx, void *map, const void *key, const void *value, u64 flags);
	long (*map_delete)(void *ctx, void *map, const void *key);
	void *(*task_storage_get)(void *ctx, void *map, struct task_struct *p, void *value,
				  u64 flags);
	long (*task_storage_delete)(void *ctx, void *map, struct task_struct *p);
	u32 (*prandom)(void *ctx);
	/* Added for scx_bpfland 1.1.4 (src/kernel.rs, from `cpumask_create` on). */
	struct bpf_cpumask *(*cpumask_create)(void *ctx);
	void (*cpumask_acquire)(void *ctx, struct bpf_cpumask *mask);
	void (*cpumask_release)(void *ctx, struct bpf_cpumask *mask);
	void *(*map_lookup_percpu)(void *ctx, void *map, const void *key, u32 cpu);
	s32 (*select_cpu_and)(void *ctx, struct task_struct *p, s32 prev_cpu, u64 wake_flags,
			      const struct cpumask *allowed, u64 flags);
	bool (*task_running)(void *ctx, const struct task_struct *p);
	const struct cpumask *(*online_cpumask)(void *ctx);
	s32 (*llc_id)(void *ctx, s32 cpu);
	void (*unsupported)(void *ctx, const char *what);
};
extern struct scx_host_vtable scx_host;
#define SCX_HOST(fn, ...) scx_host.fn(scx_host.ctx, ##__VA_ARGS__)

/* ---- helpers -------------------------------------------------------------- */
static inline u64 bpf_ktime_get_ns(void) { return SCX_HOST(now); }
static inline u64 bpf_ktime_get_boot_ns(void) { return SCX_HOST(now); }
static inline u64 scx_bpf_now(void) { return SCX_HOST(now); }
static inline u32 bpf_get_smp_processor_id(void) { return (u32)SCX_HOST(cpu); }
static inline struct task_struct *bpf_get_current_task_btf(void) { return SCX_HOST(current); }
static inline u64 bpf_get_current_task(void) { return (u64)(unsigned long)SCX_HOST(current); }
static inline u64 bpf_get_current_pid_tgid(void)
{
	struct task_struct *p = SCX_HOST(current);

	return ((u64)(u32)p->tgid << 32) | (u32)p->pid;
}
static inline long bpf_get_current_comm(void *buf, u32 size)
{
	struct task_struct *p = SCX_HOST(current);

	__builtin_memset(buf, 0, size);
	for (u32 i = 0; i + 1 < size && i < sizeof(p->comm) && p->comm[i]; i++)
		((char *)buf)[i] = p->comm[i];
	return 0;
}
static inline long bpf_probe_read_kernel_str(void *dst, u32 size, const void *src)
{
	u32 i = 0;

	if (!size)
		return 0;
	for (; i + 1 < size && ((const char *)src)[i]; i++)
		((char *)dst)[i] = ((const char *)src)[i];
	((char *)dst)[i] = 0;
	return i + 1;
}
static inline long bpf_probe_read_kernel(void *dst, u32 size, const void *src)
{
	__builtin_memcpy(dst, src, size);
	return 0;
}
static inline u32 bpf_get_prandom_u32(void) { return SCX_HOST(prandom); }
static inline void *bpf_map_lookup_elem(void *map, const void *key)
{
	return SCX_HOST(map_lookup, map, key);
}
static inline long bpf_map_update_elem(void *map, const void *key, const void *value, u64 flags)
{
	return SCX_HOST(map_update, map, key, value, flags);
}
static inline long bpf_map_delete_elem(void *map, const void *key)
{
	return SCX_HOST(map_delete, map, key);
}
static inline void *bpf_task_storage_get(void *map, struct task_struct *p, void *value, u64 flags)
{
	return SCX_HOST(task_storage_get, map, p, value, flags);
}
static inline long bpf_task_storage_delete(void *map, struct task_struct *p)
{
	return SCX_HOST(task_storage_delete, map, p);
}
struct bpf_perf_event_value {
	u64 counter;
	u64 enabled;
	u64 running;
};
/* No performance counters in a simulation: as a kernel answers for an
 * index with no event. */
static inline long bpf_perf_event_read_value(void *map, u64 flags, struct bpf_perf_event_value *buf,
					     u32 size)
{
	(void)map;
	(void)flags;
	__builtin_memset(buf, 0, size);
	return -ENOENT;
}
static inline void bpf_rcu_read_lock(void) {}
static inline void bpf_rcu_read_unlock(void) {}
#define bpf_printk(fmt, args...) ((void)0)

/* ---- cpumasks ------------------------------------------------------------- */
static inline bool bpf_cpumask_test_cpu(u32 cpu, const struct cpumask *mask)
{
	return cpu < SCX_HOST_MAX_CPUS && mask && ((mask->bits[cpu / 64] >> (cpu % 64)) & 1);
}
static inline u32 bpf_cpumask_weight(const struct cpumask *mask)
{
	u32 n = 0;

	for (u32 i = 0; i < SCX_HOST_MAX_CPUS / 64; i++)
		n += __builtin_popcountll(mask->bits[i]);
	return n;
}
static inline u32 bpf_cpumask_first(const struct cpumask *mask)
{
	for (u32 i = 0; i < SCX_HOST_MAX_CPUS / 64; i++)
		if (mask->bits[i])
			return i * 64 + __builtin_ctzll(mask->bits[i]);
	return SCX_HOST_MAX_CPUS;
}
static inline bool bpf_cpumask_empty(const struct cpumask *mask)
{
	return bpf_cpumask_first(mask) >= SCX_HOST_MAX_CPUS;
}

/* ---- sched_ext kfuncs ----------------------------------------------------- */
static inline void scx_bpf_dsq_insert(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags)
{
	SCX_HOST(dsq_insert, p, dsq_id, slice, 0, enq_flags, 0);
}
static inline void scx_bpf_dsq_insert_vtime(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
					    u64 enq_flags)
{
	SCX_HOST(dsq_insert, p, dsq_id, slice, vtime, enq_flags, 1);
}
/* 6.12's names of the same kfuncs (renamed in 6.13). */
#define scx_bpf_dispatch scx_bpf_dsq_insert
#define scx_bpf_dispatch_vtime scx_bpf_dsq_insert_vtime
static inline bool scx_host_dsq_move_to_local(u64 dsq_id, u64 enq_flags)
{
	(void)enq_flags;
	return SCX_HOST(dsq_move_to_local, dsq_id);
}
/* The scx headers of 1.1.x take an optional enq_flags (later kernels). */
#define scx_bpf_dsq_move_to_local(dsq_id, args...) scx_host_dsq_move_to_local((dsq_id), (0, ##args))
#define scx_bpf_consume(dsq_id) scx_host_dsq_move_to_local((dsq_id), 0)
static inline s32 scx_bpf_dsq_nr_queued(u64 dsq_id) { return SCX_HOST(dsq_nr_queued, dsq_id); }
static inline s32 scx_bpf_create_dsq(u64 dsq_id, s32 node) { return SCX_HOST(create_dsq, dsq_id, node); }
static inline void scx_bpf_destroy_dsq(u64 dsq_id) { SCX_HOST(destroy_dsq, dsq_id); }
static inline int bpf_iter_scx_dsq_new(struct bpf_iter_scx_dsq *it, u64 dsq_id, u64 flags)
{
	return SCX_HOST(iter_new, it->__opaque, dsq_id, flags);
}
static inline struct task_struct *bpf_iter_scx_dsq_next(struct bpf_iter_scx_dsq *it)
{
	return SCX_HOST(iter_next, it->__opaque);
}
static inline void bpf_iter_scx_dsq_destroy(struct bpf_iter_scx_dsq *it)
{
	it->__opaque[0] = SCX_DSQ_INVALID;
}
static inline bool scx_bpf_dsq_move(struct bpf_iter_scx_dsq *it, struct task_struct *p, u64 dsq_id,
				    u64 enq_flags)
{
	return SCX_HOST(dsq_move, it->__opaque, p, dsq_id, enq_flags, 0);
}
static inline bool scx_bpf_dsq_move_vtime(struct bpf_iter_scx_dsq *it, struct task_struct *p,
					  u64 dsq_id, u64 enq_flags)
{
	return SCX_HOST(dsq_move, it->__opaque, p, dsq_id, enq_flags, 1);
}
static inline void scx_bpf_dsq_move_set_slice(struct bpf_iter_scx_dsq *it, u64 slice)
{
	SCX_HOST(dsq_move_set, it->__opaque, slice, 0);
}
static inline void scx_bpf_dsq_move_set_vtime(struct bpf_iter_scx_dsq *it, u64 vtime)
{
	SCX_HOST(dsq_move_set, it->__opaque, vtime, 1);
}
#define scx_bpf_dispatch_from_dsq scx_bpf_dsq_move
#define scx_bpf_dispatch_vtime_from_dsq scx_bpf_dsq_move_vtime
#define scx_bpf_dispatch_from_dsq_set_slice scx_bpf_dsq_move_set_slice
#define scx_bpf_dispatch_from_dsq_set_vtime scx_bpf_dsq_move_set_vtime
static inline void scx_bpf_kick_cpu(s32 cpu, u64 flags) { SCX_HOST(kick_cpu, cpu, flags); }
static inline s32 scx_bpf_task_cpu(const struct task_struct *p) { return SCX_HOST(task_cpu, p); }
static inline bool scx_bpf_test_and_clear_cpu_idle(s32 cpu)
{
	return SCX_HOST(test_and_clear_cpu_idle, cpu);
}
static inline const struct cpumask *scx_bpf_get_idle_cpumask(void) { return SCX_HOST(idle_cpumask, 0); }
static inline const struct cpumask *scx_bpf_get_idle_smtmask(void) { return SCX_HOST(idle_cpumask, 1); }
static inline void scx_bpf_put_idle_cpumask(const struct cpumask *mask) { (void)mask; }
static inline s32 scx_bpf_pick_idle_cpu(const struct cpumask *allowed, u64 flags)
{
	return SCX_HOST(pick_idle_cpu, allowed, flags);
}
static inline s32 scx_bpf_pick_any_cpu(const struct cpumask *allowed, u64 flags)
{
	return SCX_HOST(pick_any_cpu, allowed, flags);
}
static inline s32 scx_bpf_select_cpu_dfl(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
					 bool *is_idle)
{
	return SCX_HOST(select_cpu_dfl, p, prev_cpu, wake_flags, is_idle);
}
static inline u32 scx_bpf_nr_cpu_ids(void) { return SCX_HOST(nr_cpu_ids); }
static inline u32 scx_bpf_cpuperf_cap(s32 cpu) { return SCX_HOST(cpuperf, cpu, 0); }
static inline u32 scx_bpf_cpuperf_cur(s32 cpu) { return SCX_HOST(cpuperf, cpu, 1); }
static inline void scx_bpf_cpuperf_set(s32 cpu, u32 perf) { SCX_HOST(cpuperf_set, cpu, perf); }

/* scx_bpf_error / scx_bpf_exit: the format and its (u64) arguments. */
#define scx_bpf_error(fmt, args...)                                                        \
	({                                                                                 \
		unsigned long long ___param[] = {0, ##args};                               \
		SCX_HOST(error, 0, 0, fmt, ___param + 1,                                   \
			 sizeof(___param) / sizeof(___param[0]) - 1);                      \
	})
#define scx_bpf_exit(code, fmt, args...)                                                   \
	({                                                                                 \
		unsigned long long ___param[] = {0, ##args};                               \
		SCX_HOST(error, 1, code, fmt, ___param + 1,                                \
			 sizeof(___param) / sizeof(___param[0]) - 1);                      \
	})


/* ==== Added for scx_bpfland 1.1.4 ==========================================
 * What scx_bpfland 1.1.4's src/bpf/main.bpf.c uses with its default options,
 * beyond the above. Each kfunc with the kernel version whose semantics it
 * has; the host's side is in src/kernel.rs (the same names).
 */

/* The shim an object was built against (src/native_build.rs passes it):
 * the host refuses a plug-in built against another. */
#ifdef SCX_HOST_SHIM_HASH
const unsigned long long scx_host_shim_hash = SCX_HOST_SHIM_HASH;
#endif

/* libbpf writes ops.flags between open and load (a loader's
 * `struct_ops.<name>.flags = ...`): the host does it through this. */
extern struct sched_ext_ops *scx_host_ops;
void scx_host_set_ops_flags(u64 flags)
{
	scx_host_ops->flags = flags;
}

/* ---- the scx headers' small helpers (common.bpf.h of scx 1.1.x) -------- */
/* A global in its own data section (`private(NAME) struct ... x;`): an
 * ordinary global here. */
#define private(name) __attribute__((aligned(8)))
#define MEMBER_VPTR(base, member) (&(base)member)
/* The read-only view of a bpf_cpumask. */
static inline const struct cpumask *cast_mask(struct bpf_cpumask *mask)
{
	return (const struct cpumask *)mask;
}
/* No task has migration disabled in a simulation, and the host's BPF entry
 * disables nobody's (`__scx_prolog_disables_migration` is false): the
 * count is the truth. */
static inline bool is_migration_disabled(const struct task_struct *p)
{
	return p->migration_disabled != 0;
}
/* Wrap-safe comparisons of u64 clocks (include/linux/jiffies.h's rule). */
static inline bool time_after(u64 a, u64 b) { return (s64)(b - a) < 0; }
static inline bool time_before(u64 a, u64 b) { return (s64)(a - b) < 0; }
static inline bool time_after_eq(u64 a, u64 b) { return (s64)(a - b) >= 0; }
static inline bool time_before_eq(u64 a, u64 b) { return (s64)(b - a) >= 0; }
/* A value in proportion to the task's weight (100 at nice 0), and its inverse. */
static inline u64 scale_by_task_weight(const struct task_struct *p, u64 value)
{
	return value * p->scx.weight / 100;
}
static inline u64 scale_by_task_weight_inverse(const struct task_struct *p, u64 value)
{
	return value * 100 / p->scx.weight;
}

/* ---- helpers ------------------------------------------------------------ */
/* bpf_kptr_xchg (helper since 5.19): stores @new in the kptr at @kptr and
 * returns what was there; the caller owns the reference returned. */
static inline void *bpf_kptr_xchg(void *kptr, void *new_ptr)
{
	void *old = *(void **)kptr;

	*(void **)kptr = new_ptr;
	return old;
}
/* bpf_map_lookup_percpu_elem (helper since 5.19): @cpu's copy of a per-CPU
 * map's value; NULL for a CPU >= nr_cpu_ids, a missing key, or a map that is
 * not per-CPU. */
static inline void *bpf_map_lookup_percpu_elem(void *map, const void *key, u32 cpu)
{
	return SCX_HOST(map_lookup_percpu, map, key, cpu);
}

/* BPF timers: no timer fires in a simulation. Initialising one and setting
 * its callback succeed (they have no effect until it starts), as do
 * cancelling a timer that never started; starting one ends the run with
 * "bpf_timer is not simulated" and returns -EOPNOTSUPP. */
struct bpf_timer {
	u64 __opaque[2];
} __attribute__((aligned(8)));
static inline long bpf_timer_init(struct bpf_timer *timer, void *map, u64 flags)
{
	(void)timer;
	(void)map;
	(void)flags;
	return 0;
}
static inline long bpf_timer_set_callback(struct bpf_timer *timer, void *callback_fn)
{
	(void)timer;
	(void)callback_fn;
	return 0;
}
static inline long bpf_timer_start(struct bpf_timer *timer, u64 nsecs, u64 flags)
{
	(void)timer;
	(void)nsecs;
	(void)flags;
	SCX_HOST(unsupported, "bpf_timer_start: bpf_timer is not simulated");
	return -EOPNOTSUPP;
}
static inline long bpf_timer_cancel(struct bpf_timer *timer)
{
	(void)timer;
	return 0;
}

/* ---- bpf_cpumask kfuncs (kernel/bpf/cpumask.c, 6.3 and later) ----------- */
/* A new, empty mask holding one reference (NULL when out of memory, never
 * here); acquire takes another, release drops one (freed at none). */
static inline struct bpf_cpumask *bpf_cpumask_create(void) { return SCX_HOST(cpumask_create); }
static inline struct bpf_cpumask *bpf_cpumask_acquire(struct bpf_cpumask *cpumask)
{
	SCX_HOST(cpumask_acquire, cpumask);
	return cpumask;
}
static inline void bpf_cpumask_release(struct bpf_cpumask *cpumask)
{
	SCX_HOST(cpumask_release, cpumask);
}
/* Set / clear one CPU; a CPU >= nr_cpu_ids is ignored (`cpu_valid`). */
static inline void bpf_cpumask_set_cpu(u32 cpu, struct bpf_cpumask *cpumask)
{
	if (cpu < SCX_HOST(nr_cpu_ids))
		cpumask->cpumask.bits[cpu / 64] |= 1ULL << (cpu % 64);
}
static inline void bpf_cpumask_clear_cpu(u32 cpu, struct bpf_cpumask *cpumask)
{
	if (cpu < SCX_HOST(nr_cpu_ids))
		cpumask->cpumask.bits[cpu / 64] &= ~(1ULL << (cpu % 64));
}
/* Every CPU off. */
static inline void bpf_cpumask_clear(struct bpf_cpumask *cpumask)
{
	__builtin_memset(&cpumask->cpumask, 0, sizeof(cpumask->cpumask));
}
/* dst = src1 & src2; true when the result is not empty. */
static inline bool bpf_cpumask_and(struct bpf_cpumask *dst, const struct cpumask *src1,
				   const struct cpumask *src2)
{
	unsigned long long any = 0;

	for (u32 i = 0; i < SCX_HOST_MAX_CPUS / 64; i++) {
		dst->cpumask.bits[i] = src1->bits[i] & src2->bits[i];
		any |= dst->cpumask.bits[i];
	}
	return any != 0;
}
/* dst = src1 | src2. */
static inline void bpf_cpumask_or(struct bpf_cpumask *dst, const struct cpumask *src1,
				  const struct cpumask *src2)
{
	for (u32 i = 0; i < SCX_HOST_MAX_CPUS / 64; i++)
		dst->cpumask.bits[i] = src1->bits[i] | src2->bits[i];
}
/* dst = src. */
static inline void bpf_cpumask_copy(struct bpf_cpumask *dst, const struct cpumask *src)
{
	dst->cpumask = *src;
}

/* ---- sched_ext kfuncs of later kernels ----------------------------------- */
/* scx_bpf_get_online_cpumask (6.10 and later) and scx_bpf_put_cpumask:
 * every CPU of the machine is online, the whole run. */
static inline const struct cpumask *scx_bpf_get_online_cpumask(void)
{
	return SCX_HOST(online_cpumask);
}
static inline void scx_bpf_put_cpumask(const struct cpumask *mask) { (void)mask; }

/* scx_bpf_task_running (6.12): @p is the current task of its CPU. */
static inline bool scx_bpf_task_running(const struct task_struct *p)
{
	return SCX_HOST(task_running, p);
}

/* scx_bpf_task_set_slice / scx_bpf_task_set_dsq_vtime (6.19; before it the
 * scx headers write the fields directly, which is the same here): set @p's
 * slice or vtime; true (the scheduler has authority over every task). */
static inline bool scx_bpf_task_set_slice(struct task_struct *p, u64 slice)
{
	p->scx.slice = slice;
	return true;
}
static inline bool scx_bpf_task_set_dsq_vtime(struct task_struct *p, u64 vtime)
{
	p->scx.dsq_vtime = vtime;
	return true;
}

/* scx_bpf_select_cpu_and (6.17, kernel/sched/ext_idle.c
 * `select_cpu_from_kfunc` + `scx_select_cpu_dfl`): the built-in idle CPU
 * selection restricted to @cpus_allowed (and to @p's own CPUs); the idle CPU
 * it claims, or -EBUSY. */
static inline s32 scx_bpf_select_cpu_and(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
					 const struct cpumask *cpus_allowed, u64 flags)
{
	return SCX_HOST(select_cpu_and, p, prev_cpu, wake_flags, cpus_allowed, flags);
}
#define __COMPAT_HAS_scx_bpf_select_cpu_and 1
#define SCX_PICK_IDLE_IN_NODE (1ULL << 1)

/* The scx headers' compat helpers, as on a kernel with one NUMA node. */
#define __COMPAT_scx_bpf_nr_node_ids() 1U
#define __COMPAT_scx_bpf_cpu_node(cpu) 0
#define __COMPAT_scx_bpf_get_idle_cpumask_node(node) scx_bpf_get_idle_cpumask()
#define __COMPAT_scx_bpf_get_idle_smtmask_node(node) scx_bpf_get_idle_smtmask()
/* SCX_ENQ_CPU_SELECTED exists (6.12): ops.select_cpu ran for the enqueue. */
static inline bool __COMPAT_is_enq_cpu_selected(u64 enq_flags)
{
	return enq_flags & SCX_ENQ_CPU_SELECTED;
}
/* The first task of a DSQ in dispatch order, or NULL (the scx headers'
 * path for kernels before scx_bpf_dsq_peek: an iterator's first step). */
static inline struct task_struct *__COMPAT_scx_bpf_dsq_peek(u64 dsq_id)
{
	struct bpf_iter_scx_dsq it;
	struct task_struct *p = NULL;

	if (!bpf_iter_scx_dsq_new(&it, dsq_id, 0))
		p = bpf_iter_scx_dsq_next(&it);
	bpf_iter_scx_dsq_destroy(&it);
	return p;
}

#endif /* SCX_HOST_COMMON_BPF_H */
