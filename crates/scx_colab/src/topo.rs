//! The online CPUs as scx_utils (or sysfs) reports them; the big/little
//! split made of them is scx_colab_user::topo's (pure).

use anyhow::{Context, Result};
use scx_colab_user::topo::{classify, parse_cpu_list, CpuCap};

/// The online CPUs and their capacities, from scx_utils' topology (sysfs
/// cpu_capacity, else cpufreq); from /sys directly if that fails.
pub fn online_cpus() -> Result<Vec<CpuCap>> {
    match scx_utils::Topology::new() {
        Ok(topo) => Ok(topo
            .all_cpus
            .values()
            .map(|c| CpuCap {
                id: c.id,
                core: c.core_id,
                capacity: c.cpu_capacity.max(1),
                big: c.core_type != scx_utils::CoreType::Little,
            })
            .collect()),
        Err(e) => {
            log::warn!("scx_utils topology unavailable ({e:#}); reading /sys directly");
            let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
                .context("reading /sys/devices/system/cpu/online")?;
            let ids = parse_cpu_list(online.trim())?;
            let mut cpus: Vec<CpuCap> = ids
                .into_iter()
                .map(|id| {
                    let read = |file: &str| {
                        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{id}/{file}"))
                            .ok()
                            .and_then(|s| s.trim().parse::<usize>().ok())
                    };
                    // A core is (package, core_id); without them, its own core.
                    let core = match (
                        read("topology/physical_package_id"),
                        read("topology/core_id"),
                    ) {
                        (Some(pkg), Some(core)) => (pkg << 16) | core,
                        _ => (1 << 32) | id,
                    };
                    CpuCap {
                        id,
                        core,
                        capacity: read("cpu_capacity").unwrap_or(1024),
                        big: true,
                    }
                })
                .collect();
            classify(&mut cpus);
            Ok(cpus)
        }
    }
}
