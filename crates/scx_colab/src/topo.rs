//! The online CPUs and their core types, read from this machine's sysfs by
//! scx_colab_user::detect (tested on fixture trees of real parts); the
//! big/little split made of them is scx_colab_user::topo's (pure).

use std::path::Path;

use anyhow::{Context, Result};
use scx_colab_user::detect::core_types;
use scx_colab_user::topo::CpuCap;

/// The online CPUs, each with its core, capacity and cluster (big unless of
/// the slowest core type); prints the core types found and logs what was
/// odd in sysfs.
pub fn online_cpus() -> Result<Vec<CpuCap>> {
    let m = core_types(Path::new("/")).context("reading the CPUs' core types from /sys")?;
    for w in &m.warnings {
        log::warn!("{w}");
    }
    println!("scx_colab: {}", m.describe());
    Ok(m.cpu_caps())
}
