//! The per-CPU performance counters (perf_event_open, pid -1) whose file
//! descriptors the BPF side reads at every context switch. Which event
//! counts each model event (`--event`, the generic names) is
//! scx_colab_user::pmu's (pure).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

use perf_event_open_sys::bindings as sys;
pub use scx_colab_user::pmu::{resolve, PerfEvent};

/// Opens `ev` counting everything that runs on `cpu` (user and kernel).
pub fn open_on_cpu(ev: PerfEvent, cpu: usize) -> io::Result<OwnedFd> {
    // SAFETY: perf_event_attr is plain data; all-zero is its documented default.
    let mut attr: sys::perf_event_attr = unsafe { std::mem::zeroed() };
    attr.type_ = ev.type_;
    attr.size = std::mem::size_of::<sys::perf_event_attr>() as u32;
    attr.config = ev.config;
    attr.set_exclude_hv(1);
    let cpu = i32::try_from(cpu).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: attr is initialised and outlives the call.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(&mut attr, -1, cpu, -1, sys::PERF_FLAG_FD_CLOEXEC as _)
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Every CPU's counters: the CPUs of cluster c (0 big, 1 little) count
/// `events[c]`. Returns (index in the BPF map pmu_events, descriptor)
/// pairs, or what failed first, explained.
pub fn open_all(
    cpus: [&[usize]; 2],
    events: [&[(String, PerfEvent)]; 2],
    max_events: usize,
) -> Result<Vec<(u32, OwnedFd)>, String> {
    let mut out = Vec::new();
    for (c, cluster) in cpus.iter().enumerate() {
        for &cpu in *cluster {
            for (e, (name, ev)) in events[c].iter().enumerate() {
                let fd = open_on_cpu(*ev, cpu)
                    .map_err(|err| format!("{name} on CPU {cpu}: {}", explain(*ev, &err)))?;
                out.push(((cpu * max_events + e) as u32, fd));
            }
        }
    }
    Ok(out)
}

/// What an error of perf_event_open means for a user.
pub fn explain(ev: PerfEvent, e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) if ev.is_hardware() => {
            format!("{e}: this machine (or VM) has no PMU that counts it")
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            format!("{e}: not allowed (root, CAP_PERFMON, or kernel.perf_event_paranoid)")
        }
        Some(libc::EMFILE) => format!("{e}: too many open files (raise `ulimit -n`)"),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scx_colab_user::pmu::parse_spec;

    /// Opening needs root or a permissive perf_event_paranoid; the software
    /// clock is there on every kernel with perf events (this host, the VM).
    #[test]
    fn a_software_counter_opens_or_says_why_not() {
        let ev = parse_spec("cpu-clock").unwrap();
        match open_on_cpu(ev, 0) {
            Ok(_) => {}
            Err(e) => {
                let msg = explain(ev, &e);
                assert!(msg.contains("not allowed"), "unexpected error: {msg}");
            }
        }
        let hw = PerfEvent::hw(0);
        let msg = explain(hw, &io::Error::from_raw_os_error(libc::ENOENT));
        assert!(msg.contains("no PMU"), "{msg}");
    }

    /// scx_colab_user keeps its own copy of perf's ABI numbers (it has no
    /// system bindings): every one is the kernel's.
    #[test]
    fn the_shared_perf_constants_are_the_kernels() {
        use scx_colab_user::pmu::sys as ours;
        macro_rules! same {
            ($($c:ident),* $(,)?) => {
                $(assert_eq!(ours::$c, sys::$c as u32, stringify!($c));)*
            };
        }
        same!(
            PERF_TYPE_HARDWARE,
            PERF_TYPE_SOFTWARE,
            PERF_TYPE_HW_CACHE,
            PERF_TYPE_RAW,
            PERF_COUNT_HW_CPU_CYCLES,
            PERF_COUNT_HW_INSTRUCTIONS,
            PERF_COUNT_HW_CACHE_REFERENCES,
            PERF_COUNT_HW_CACHE_MISSES,
            PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
            PERF_COUNT_HW_BRANCH_MISSES,
            PERF_COUNT_HW_BUS_CYCLES,
            PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
            PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
            PERF_COUNT_HW_REF_CPU_CYCLES,
            PERF_COUNT_HW_CACHE_L1D,
            PERF_COUNT_HW_CACHE_L1I,
            PERF_COUNT_HW_CACHE_LL,
            PERF_COUNT_HW_CACHE_DTLB,
            PERF_COUNT_HW_CACHE_ITLB,
            PERF_COUNT_HW_CACHE_BPU,
            PERF_COUNT_HW_CACHE_OP_READ,
            PERF_COUNT_HW_CACHE_OP_WRITE,
            PERF_COUNT_HW_CACHE_RESULT_ACCESS,
            PERF_COUNT_HW_CACHE_RESULT_MISS,
            PERF_COUNT_SW_CPU_CLOCK,
            PERF_COUNT_SW_TASK_CLOCK,
            PERF_COUNT_SW_PAGE_FAULTS,
            PERF_COUNT_SW_CONTEXT_SWITCHES,
            PERF_COUNT_SW_CPU_MIGRATIONS,
            PERF_COUNT_SW_PAGE_FAULTS_MIN,
            PERF_COUNT_SW_PAGE_FAULTS_MAJ,
        );
    }
}
