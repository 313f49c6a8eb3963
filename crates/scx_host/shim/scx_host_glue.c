/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host's side of a hosted scheduler, compiled in the same translation
 * unit right after the scheduler's own .bpf.c (build.rs writes the wrapper):
 * the table the simulator fills, the description it reads at load (the
 * task_struct's layout, the maps and programs build.rs found, the ops), and
 * one entry point per struct_ops callback.
 */
#include <stdint.h>

struct scx_host_vtable scx_host;

struct scx_host_map_def {
	const char *name;
	void *addr;
	u32 type;
	u32 key_size;
	u32 value_size;
	u32 max_entries;
	u32 map_flags;
};

struct scx_host_prog_def {
	const char *sec;
	const char *name;
	void *fn;
};

#define SCX_HOST_MAP(n, t, k, v, m, f) {#n, (void *)&n, (t), (k), (v), (m), (f)},
#define SCX_HOST_PROG(s, n) {s, #n, (void *)n},
static struct scx_host_map_def scx_host_maps[] = {
#define SCX_HOST_MAPS
#include SCX_HOST_TABLES
#undef SCX_HOST_MAPS
	{0, 0, 0, 0, 0, 0, 0},
};
static struct scx_host_prog_def scx_host_progs[] = {
#define SCX_HOST_PROGS
#include SCX_HOST_TABLES
#undef SCX_HOST_PROGS
	{0, 0, 0},
};

/* Offsets the simulator reads and writes task_structs by. */
struct scx_host_desc {
	u64 task_size;
	u64 off_pid, off_tgid, off_flags, off_prio, off_static_prio, off_normal_prio;
	u64 off_nr_cpus_allowed, off_cpus_ptr, off_comm, off_real_parent, off_group_leader;
	u64 off_scx_flags, off_weight, off_slice, off_dsq_vtime, off_idx;
	struct scx_host_map_def *maps;
	struct scx_host_prog_def *progs;
	/* Bit i: the i-th callback of struct sched_ext_ops is defined (its order). */
	u64 ops_mask;
	u64 ops_flags;
	u32 timeout_ms;
	u32 dispatch_max_batch;
	const char *name;
};

#define OPS_BIT(i, f) (scx_host_ops->f ? (1ULL << (i)) : 0)

void scx_host_describe(struct scx_host_desc *d)
{
	d->task_size = sizeof(struct task_struct);
	d->off_pid = offsetof(struct task_struct, pid);
	d->off_tgid = offsetof(struct task_struct, tgid);
	d->off_flags = offsetof(struct task_struct, flags);
	d->off_prio = offsetof(struct task_struct, prio);
	d->off_static_prio = offsetof(struct task_struct, static_prio);
	d->off_normal_prio = offsetof(struct task_struct, normal_prio);
	d->off_nr_cpus_allowed = offsetof(struct task_struct, nr_cpus_allowed);
	d->off_cpus_ptr = offsetof(struct task_struct, cpus_ptr);
	d->off_comm = offsetof(struct task_struct, comm);
	d->off_real_parent = offsetof(struct task_struct, real_parent);
	d->off_group_leader = offsetof(struct task_struct, group_leader);
	d->off_scx_flags = offsetof(struct task_struct, scx.flags);
	d->off_weight = offsetof(struct task_struct, scx.weight);
	d->off_slice = offsetof(struct task_struct, scx.slice);
	d->off_dsq_vtime = offsetof(struct task_struct, scx.dsq_vtime);
	d->off_idx = offsetof(struct task_struct, scx_host_idx);
	d->maps = scx_host_maps;
	d->progs = scx_host_progs;
	d->ops_mask = OPS_BIT(0, select_cpu) | OPS_BIT(1, enqueue) | OPS_BIT(2, dequeue) |
		      OPS_BIT(3, dispatch) | OPS_BIT(4, tick) | OPS_BIT(5, runnable) |
		      OPS_BIT(6, running) | OPS_BIT(7, stopping) | OPS_BIT(8, quiescent) |
		      OPS_BIT(9, yield) | OPS_BIT(10, core_sched_before) | OPS_BIT(11, set_weight) |
		      OPS_BIT(12, set_cpumask) | OPS_BIT(13, update_idle) |
		      OPS_BIT(14, cpu_acquire) | OPS_BIT(15, cpu_release) | OPS_BIT(16, init_task) |
		      OPS_BIT(17, exit_task) | OPS_BIT(18, enable) | OPS_BIT(19, disable) |
		      OPS_BIT(20, dump) | OPS_BIT(21, dump_cpu) | OPS_BIT(22, dump_task) |
		      OPS_BIT(23, cgroup_init) | OPS_BIT(24, cgroup_exit) |
		      OPS_BIT(25, cgroup_prep_move) | OPS_BIT(26, cgroup_move) |
		      OPS_BIT(27, cgroup_cancel_move) | OPS_BIT(28, cgroup_set_weight) |
		      OPS_BIT(29, cpu_online) | OPS_BIT(30, cpu_offline) | OPS_BIT(31, init) |
		      OPS_BIT(32, exit);
	d->ops_flags = scx_host_ops->flags;
	d->timeout_ms = scx_host_ops->timeout_ms;
	d->dispatch_max_batch = scx_host_ops->dispatch_max_batch;
	d->name = scx_host_ops->name;
}

/* One entry point per callback the simulator drives (callers check the mask). */
s32 scx_host_select_cpu(struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	return scx_host_ops->select_cpu(p, prev_cpu, wake_flags);
}
void scx_host_enqueue(struct task_struct *p, u64 f) { scx_host_ops->enqueue(p, f); }
void scx_host_dequeue(struct task_struct *p, u64 f) { scx_host_ops->dequeue(p, f); }
void scx_host_dispatch(s32 cpu, struct task_struct *prev) { scx_host_ops->dispatch(cpu, prev); }
void scx_host_tick(struct task_struct *p) { scx_host_ops->tick(p); }
void scx_host_runnable(struct task_struct *p, u64 f) { scx_host_ops->runnable(p, f); }
void scx_host_running(struct task_struct *p) { scx_host_ops->running(p); }
void scx_host_stopping(struct task_struct *p, bool runnable) { scx_host_ops->stopping(p, runnable); }
void scx_host_quiescent(struct task_struct *p, u64 f) { scx_host_ops->quiescent(p, f); }
void scx_host_update_idle(s32 cpu, bool idle) { scx_host_ops->update_idle(cpu, idle); }
s32 scx_host_init_task(struct task_struct *p, bool fork)
{
	struct scx_init_task_args args = {.fork = fork};

	return scx_host_ops->init_task(p, &args);
}
void scx_host_exit_task(struct task_struct *p)
{
	struct scx_exit_task_args args = {.cancelled = false};

	scx_host_ops->exit_task(p, &args);
}
void scx_host_enable(struct task_struct *p) { scx_host_ops->enable(p); }
void scx_host_disable(struct task_struct *p) { scx_host_ops->disable(p); }
s32 scx_host_init(void) { return scx_host_ops->init(); }
void scx_host_exit(int kind, s64 code, const char *reason)
{
	struct scx_exit_info ei = {.kind = kind, .exit_code = code, .reason = reason};

	scx_host_ops->exit(&ei);
}
/* A tracing program (fentry, fexit, tp_btf): integer and pointer arguments
 * only, each passed as 64 bits (the C calling conventions of x86-64 and
 * aarch64 pass up to six such arguments in registers either way). */
int scx_host_call_prog(void *fn, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return ((int (*)(u64, u64, u64, u64, u64, u64))fn)(a0, a1, a2, a3, a4, a5);
}
