/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched_ext host's shim of <scx/percpu.bpf.h> (the scx headers' readers
 * of the kernel's per-CPU variables): the ones a hosted scheduler uses, each
 * answered by the simulator. A reader not declared here fails the build
 * naming it.
 */
#ifndef SCX_HOST_PERCPU_BPF_H
#define SCX_HOST_PERCPU_BPF_H

#include <scx/common.bpf.h>

/* per_cpu(sd_llc_id, cpu): the first CPU of @cpu's last-level cache domain
 * (the host's machines have one LLC: 0 for every CPU); -EINVAL for a CPU
 * >= nr_cpu_ids, as when bpf_per_cpu_ptr() finds none. */
static inline int cpu_llc_id(s32 cpu) { return SCX_HOST(llc_id, cpu); }
static inline int this_cpu_llc_id(void) { return cpu_llc_id(bpf_get_smp_processor_id()); }

#endif /* SCX_HOST_PERCPU_BPF_H */
