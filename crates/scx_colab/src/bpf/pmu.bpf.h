/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Performance counters (colab-tpds 5.1), included by main.bpf.c, when user
 * space runs a model: it opens the model's events on every CPU
 * (perf_event_open, pid -1) and puts them in the perf event array
 * pmu_events. At every context switch the tracepoint program reads the
 * CPU's counters once: the task switched out is charged what they advanced
 * since it was switched in (map task_pmu, per cluster), and the task
 * switched in records where they stand. Struct_ops programs cannot read
 * perf counters (bpf_scx_get_func_proto), hence a tracing program.
 */

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
