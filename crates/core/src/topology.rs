//! Machine description: core types, clusters and the order of cores.
//!
//! A core type's performance model has two rates: how fast it retires
//! core-bound work (`compute_rate`) and how fast it gets through memory-bound
//! work (`memory_rate`), both relative to the reference big core (1.0). A
//! phase with memory fraction `m` runs on core type `k` at
//! `1 / ((1 - m) / compute_rate_k + m / memory_rate_k)` work units per ns.
//! Two numbers per core type are enough to give every phase a plausible speed
//! on any number of core types (tri-cluster phones, Intel P/E parts), while a
//! benchmark only states its big-vs-little speedup.

use crate::CoreId;
use serde::{Deserialize, Serialize};

pub use crate::core_mask::{CoreMask, CoreMaskIter, MAX_CORES};
pub use crate::costs::{Costs, IdleExit};

/// The machine files of `topologies/`, by file stem, usable as names
/// (`camp-amd-2fc-2sc`, `hikey970`, ...) wherever an `xBys` name is.
pub const BUILTIN_MACHINES: &[(&str, &str)] = &[
    (
        "amd-epyc-9965",
        include_str!("../../../topologies/amd-epyc-9965.toml"),
    ),
    (
        "camp-amd-1fc-12sc",
        include_str!("../../../topologies/camp-amd-1fc-12sc.toml"),
    ),
    (
        "camp-amd-2fc-2sc",
        include_str!("../../../topologies/camp-amd-2fc-2sc.toml"),
    ),
    (
        "camp-amd-4fc-12sc",
        include_str!("../../../topologies/camp-amd-4fc-12sc.toml"),
    ),
    (
        "camp-intel8-2fc-2sc",
        include_str!("../../../topologies/camp-intel8-2fc-2sc.toml"),
    ),
    (
        "hikey970",
        include_str!("../../../topologies/hikey970.toml"),
    ),
    (
        "intel-8p8e",
        include_str!("../../../topologies/intel-8p8e.toml"),
    ),
    (
        "intel-core-ultra-7-155h",
        include_str!("../../../topologies/intel-core-ultra-7-155h.toml"),
    ),
    (
        "intel-xeon6-6780e",
        include_str!("../../../topologies/intel-xeon6-6780e.toml"),
    ),
    (
        "lunar-lake-258v",
        include_str!("../../../topologies/lunar-lake-258v.toml"),
    ),
    (
        "propsp-2fc-10sc",
        include_str!("../../../topologies/propsp-2fc-10sc.toml"),
    ),
    (
        "propsp-2fc-2sc",
        include_str!("../../../topologies/propsp-2fc-2sc.toml"),
    ),
    (
        "tensor-g1",
        include_str!("../../../topologies/tensor-g1.toml"),
    ),
    (
        "tri-cluster",
        include_str!("../../../topologies/tri-cluster.toml"),
    ),
];

/// A kind of core: its performance model and power.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreType {
    pub name: String,
    /// Core-bound throughput relative to the reference big core (1.0).
    pub compute_rate: f64,
    /// Memory-bound throughput relative to the reference big core (1.0).
    pub memory_rate: f64,
    /// Power while running a thread, watts.
    pub active_power_w: f64,
    /// Power while idle, watts.
    pub idle_power_w: f64,
    /// Power while running a thread that is stalled on memory, watts. Absent:
    /// [`DEFAULT_STALL_POWER_FRAC`] of `active_power_w`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_power_w: Option<f64>,
    /// Clock frequency, MHz: turns time on the core into CPU_CYCLES for the
    /// counter model. Absent: [`CoreType::freq_mhz`] derives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freq_mhz: Option<f64>,
    /// Size of the L2 cache a core of this type sees, KiB: scales the
    /// counter model's L2 misses. Absent: the reference big core's 2048.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_kb: Option<f64>,
    /// How many PMU events a core of this type counts at once (cycles
    /// included). Absent: [`DEFAULT_MAX_COUNTERS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_counters: Option<u32>,
}

/// Events a core type counts at once unless its file says otherwise: the
/// paper's ARM cores ("we only have access to seven PMUs at any given
/// moment", colab-tpds 5.1; Cortex-A57 and A53 have six event counters and
/// the cycle counter).
pub const DEFAULT_MAX_COUNTERS: u32 = 7;

/// Clock of the reference big core, MHz (colab-tpds 6.1): one work unit is
/// one nanosecond there, i.e. 2 cycles.
pub const REFERENCE_FREQ_MHZ: f64 = 2000.0;

/// L2 size of the reference big core, KiB (colab-tpds 6.1: 2 MB).
pub const REFERENCE_L2_KB: f64 = 2048.0;

/// Power of a core stalled on memory as a fraction of its active power, for
/// core types that do not give `stall_power_w`. Assumption: a stalled core
/// still pays leakage and clock distribution but its execution units are
/// mostly idle, so dynamic power roughly follows activity (IPC); we take one
/// half, the same for every core type so that the choice favours none. It is
/// what makes energy depend on a phase's memory-boundedness: with a flat
/// active power, a thread's big/little energy ratio would be a fixed multiple
/// of 1/speedup and carry no information of its own.
pub const DEFAULT_STALL_POWER_FRAC: f64 = 0.5;

impl CoreType {
    /// Work units per nanosecond for a phase with memory fraction `m`.
    #[inline]
    pub fn rate(&self, mem_frac: f64) -> f64 {
        1.0 / ((1.0 - mem_frac) / self.compute_rate + mem_frac / self.memory_rate)
    }

    /// Power while stalled on memory, watts.
    #[inline]
    pub fn stall_power(&self) -> f64 {
        self.stall_power_w
            .unwrap_or(DEFAULT_STALL_POWER_FRAC * self.active_power_w)
    }

    /// Fraction of its running time this core spends stalled on memory in a
    /// phase with memory fraction `m` (the memory term of [`CoreType::rate`]).
    #[inline]
    pub fn stall_share(&self, mem_frac: f64) -> f64 {
        mem_frac / self.memory_rate * self.rate(mem_frac)
    }

    /// Energy per work unit (joules x 1e9) of a phase with memory fraction
    /// `m`: compute time at active power plus stall time at stall power.
    #[inline]
    pub fn energy_per_work(&self, mem_frac: f64) -> f64 {
        self.active_power_w * (1.0 - mem_frac) / self.compute_rate
            + self.stall_power() * mem_frac / self.memory_rate
    }

    /// Clock in MHz: the file's `freq_mhz`, else derived as the reference
    /// clock times `compute_rate`, i.e. assuming the reference big core's
    /// per-clock performance (an assumption: give `freq_mhz` for other cores).
    pub fn freq_mhz(&self) -> f64 {
        self.freq_mhz
            .unwrap_or(REFERENCE_FREQ_MHZ * self.compute_rate)
    }

    /// L2 size in KiB: the file's `l2_kb`, else the reference big core's.
    pub fn l2_kb(&self) -> f64 {
        self.l2_kb.unwrap_or(REFERENCE_L2_KB)
    }

    /// Events counted at once: the file's `max_counters`, else 7.
    pub fn max_counters(&self) -> u32 {
        self.max_counters.unwrap_or(DEFAULT_MAX_COUNTERS)
    }

    /// Reference big core: an out-of-order 2 GHz Cortex-A57-like core, the big
    /// core of the papers' gem5 setup (colab-tpds 6.1). All rates are relative
    /// to it, so both are 1.0 by definition.
    pub fn reference_big() -> CoreType {
        CoreType {
            name: "big".into(),
            compute_rate: 1.0,
            memory_rate: 1.0,
            // published characterization: ~1.5 W per A57 core at ~1.9-2 GHz,
            // Exynos 5433 per-core measurements (AnandTech, 2015), leakage
            // included. Cross-check: the kernel energy model's C*f*V^2 with
            // the Juno device tree's A57 coefficient (530 uW/MHz/V^2) at
            // 2000 MHz and an assumed 1.1 V gives 1.28 W of dynamic power.
            active_power_w: 1.5,
            // assumption: clock-gated idle core, small leakage.
            idle_power_w: 0.05,
            stall_power_w: None,
            // 2 GHz, 2 MB L2 (colab-tpds 6.1).
            freq_mhz: Some(REFERENCE_FREQ_MHZ),
            l2_kb: Some(REFERENCE_L2_KB),
            max_counters: None,
        }
    }

    /// Reference little core: an in-order 1.2 GHz Cortex-A53-like core
    /// (colab-tpds 6.1).
    pub fn reference_little() -> CoreType {
        CoreType {
            name: "little".into(),
            // 0.6 frequency ratio (1.2 / 2.0 GHz, colab-tpds 6.1) times an
            // assumed A53/A57 per-clock ratio of ~0.53 on core-bound code
            // (published SPEC per-clock comparisons put A57 at 1.6-2.0x A53).
            // Gives a maximum big/little speedup of ~3.2.
            compute_rate: 0.6 * 0.53,
            // assumption: memory-bound work is bounded by DRAM latency, equal
            // in ns on both cores; the A57's out-of-order window overlaps more
            // misses, worth ~1.2x. Gives a minimum big/little speedup of 1.2.
            memory_rate: 1.0 / 1.2,
            // published characterization: ~0.25 W per A53 core at 1.2-1.3 GHz
            // (same source). Cross-check: Juno's A53 coefficient (140) at
            // 1200 MHz and an assumed 0.9 V gives 0.14 W dynamic.
            active_power_w: 0.25,
            idle_power_w: 0.02,
            stall_power_w: None,
            // 1.2 GHz, 512 KB L2 (colab-tpds 6.1).
            freq_mhz: Some(1200.0),
            l2_kb: Some(512.0),
            max_counters: None,
        }
    }
}

/// A group of cores of one type sharing a last-level cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    pub name: String,
    pub core_type: usize,
    pub cores: Vec<CoreId>,
}

/// Core order: which cluster gets the low core numbers. The papers average
/// every result over both orders (colab-cgo20-evaluation, "Workloads").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum CoreOrder {
    BigFirst,
    LittleFirst,
}

impl CoreOrder {
    pub const BOTH: [CoreOrder; 2] = [CoreOrder::BigFirst, CoreOrder::LittleFirst];
    pub fn label(self) -> &'static str {
        match self {
            CoreOrder::BigFirst => "big-first",
            CoreOrder::LittleFirst => "little-first",
        }
    }
}

/// A whole machine. Built only through `build` (or the constructors on top of
/// it), which validates it and derives the masks; read it from TOML with
/// `from_toml`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Topology {
    pub name: String,
    pub core_types: Vec<CoreType>,
    pub clusters: Vec<Cluster>,
    /// For every core: its cluster index.
    pub core_cluster: Vec<usize>,
    /// For every core: its core type index.
    pub core_type_of: Vec<usize>,
    pub costs: Costs,
    /// Index of the fastest and the slowest core type (by compute rate).
    pub fastest_type: usize,
    pub slowest_type: usize,
    /// Derived masks, computed once in `build` (policies ask on every decision).
    masks: Masks,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
struct Masks {
    clusters: Vec<CoreMask>,
    big: CoreMask,
    little: CoreMask,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TopologyError {
    #[error("unknown topology name '{0}'{hint}: expected a file path, a named machine (`colab list`) or a name like 2B2S, 4B4S, 1B3S (B = big cores, S = small cores)", hint = crate::did_you_mean(.0, BUILTIN_MACHINES.iter().map(|(n, _)| *n)))]
    UnknownName(String),
    #[error("cluster '{0}' has cores = 0: a cluster needs at least one core (leave it out)")]
    EmptyCluster(String),
    #[error("topology has no cores")]
    NoCores,
    #[error("topology has {0} cores; at most 1024 are supported")]
    TooManyCores(usize),
    #[error("cluster '{cluster}' names core type '{core_type}', which is not defined")]
    UnknownCoreType { cluster: String, core_type: String },
    #[error("core type '{name}': {problem}")]
    BadCoreType { name: String, problem: String },
    #[error("[costs] {field} = {value}: {problem}")]
    BadCost {
        field: &'static str,
        value: u64,
        problem: String,
    },
    #[error("{0}")]
    Parse(String),
}

/// Custom topology file (TOML). Example:
///
/// ```toml
/// name = "tri"
/// [[core_types]]
/// name = "prime"
/// compute_rate = 1.2
/// memory_rate = 1.05
/// active_power_w = 2.5
/// idle_power_w = 0.06
/// [[clusters]]
/// core_type = "prime"
/// cores = 1
/// ```
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    pub name: Option<String>,
    pub core_types: Vec<CoreType>,
    pub clusters: Vec<ClusterSpec>,
    #[serde(default)]
    pub costs: Costs,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    pub name: Option<String>,
    pub core_type: String,
    pub cores: usize,
}

impl Topology {
    /// The slowest and fastest core-type rates accepted, relative to the
    /// reference big core (assumption: real core types of one machine
    /// differ by well under 100x; a rate of 1e-300 only made every run
    /// time out after an hour of simulated time).
    pub const MIN_RATE: f64 = 0.01;
    pub const MAX_RATE: f64 = 100.0;

    /// Builds a topology from clusters given in core order.
    pub fn build(
        name: impl Into<String>,
        core_types: Vec<CoreType>,
        clusters: &[(String, usize, usize)],
        costs: Costs,
    ) -> Result<Topology, TopologyError> {
        for ct in &core_types {
            let ok = |v: f64| v.is_finite() && (Self::MIN_RATE..=Self::MAX_RATE).contains(&v);
            if !ok(ct.compute_rate) || !ok(ct.memory_rate) {
                return Err(TopologyError::BadCoreType {
                    name: ct.name.clone(),
                    problem: format!(
                        "compute_rate and memory_rate must be numbers from {} to {} (times the reference big core's)",
                        Self::MIN_RATE,
                        Self::MAX_RATE
                    ),
                });
            }
            let power_ok = |v: f64| v.is_finite() && v >= 0.0;
            if !(power_ok(ct.active_power_w)
                && power_ok(ct.idle_power_w)
                && ct.stall_power_w.is_none_or(power_ok))
            {
                return Err(TopologyError::BadCoreType {
                    name: ct.name.clone(),
                    problem: "power must be zero or positive".into(),
                });
            }
            let size_ok = |v: Option<f64>| v.is_none_or(|v| v.is_finite() && v > 0.0);
            if !(size_ok(ct.freq_mhz) && size_ok(ct.l2_kb)) {
                return Err(TopologyError::BadCoreType {
                    name: ct.name.clone(),
                    problem: "freq_mhz and l2_kb must be positive numbers".into(),
                });
            }
            if ct.max_counters == Some(0) {
                return Err(TopologyError::BadCoreType {
                    name: ct.name.clone(),
                    problem: "max_counters must be at least 1".into(),
                });
            }
        }
        costs.check()?;
        // Sized before anything is allocated: a file asking for 2^32 cores
        // gets this error, not an out-of-memory abort.
        let total = clusters
            .iter()
            .fold(0usize, |acc, (_, _, n)| acc.saturating_add(*n));
        if total > MAX_CORES {
            return Err(TopologyError::TooManyCores(total));
        }
        let mut out_clusters = Vec::new();
        let mut core_cluster = Vec::new();
        let mut core_type_of = Vec::new();
        for (cname, ty, n) in clusters {
            if *n == 0 {
                continue;
            }
            let ci = out_clusters.len();
            let cores: Vec<CoreId> = (0..*n)
                .map(|i| CoreId((core_cluster.len() + i) as u16))
                .collect();
            for _ in 0..*n {
                core_cluster.push(ci);
                core_type_of.push(*ty);
            }
            out_clusters.push(Cluster {
                name: cname.clone(),
                core_type: *ty,
                cores,
            });
        }
        if core_cluster.is_empty() {
            return Err(TopologyError::NoCores);
        }
        if core_cluster.len() > MAX_CORES {
            return Err(TopologyError::TooManyCores(core_cluster.len()));
        }
        let used: Vec<usize> = out_clusters.iter().map(|c| c.core_type).collect();
        let by = |f: &dyn Fn(f64, f64) -> bool| {
            let mut best = used[0];
            for &t in &used {
                if f(core_types[t].compute_rate, core_types[best].compute_rate) {
                    best = t;
                }
            }
            best
        };
        let fastest_type = by(&|a, b| a > b);
        let slowest_type = by(&|a, b| a < b);
        let mut masks = Masks::default();
        for cl in &out_clusters {
            let mut m = CoreMask::EMPTY;
            for &c in &cl.cores {
                m.insert(c);
                if cl.core_type == fastest_type {
                    masks.big.insert(c);
                }
                if cl.core_type == slowest_type {
                    masks.little.insert(c);
                }
            }
            masks.clusters.push(m);
        }
        Ok(Topology {
            name: name.into(),
            core_types,
            clusters: out_clusters,
            core_cluster,
            core_type_of,
            costs,
            fastest_type,
            slowest_type,
            masks,
        })
    }

    /// A big.LITTLE machine with the papers' reference cores.
    pub fn big_little(
        big: usize,
        little: usize,
        order: CoreOrder,
    ) -> Result<Topology, TopologyError> {
        let types = vec![CoreType::reference_big(), CoreType::reference_little()];
        let b = ("big".to_string(), 0, big);
        let s = ("little".to_string(), 1, little);
        let clusters = match order {
            CoreOrder::BigFirst => vec![b, s],
            CoreOrder::LittleFirst => vec![s, b],
        };
        Topology::build(
            format!("{big}B{little}S"),
            types,
            &clusters,
            Costs::default(),
        )
    }

    /// Parses names like `2B2S`, `4B`, `1B3S`, `0B4S`.
    pub fn named(name: &str, order: CoreOrder) -> Result<Topology, TopologyError> {
        if let Some((_, text)) = BUILTIN_MACHINES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.trim()))
        {
            return Topology::from_toml(text, order);
        }
        let up = name.trim().to_ascii_uppercase();
        let bad = || TopologyError::UnknownName(name.to_string());
        let (b, rest) = up.split_once('B').ok_or_else(bad)?;
        let big: usize = b.parse().map_err(|_| bad())?;
        let little: usize = if rest.is_empty() {
            0
        } else {
            rest.strip_suffix('S')
                .ok_or_else(bad)?
                .parse()
                .map_err(|_| bad())?
        };
        Topology::big_little(big, little, order)
    }

    /// Parses a topology file; `order` reverses cluster order when little-first.
    pub fn from_toml(text: &str, order: CoreOrder) -> Result<Topology, TopologyError> {
        let f: TopologyFile = toml::from_str(text)
            .map_err(|e| TopologyError::Parse(crate::toml_error::describe(text, &e)))?;
        let mut clusters = Vec::new();
        for (i, c) in f.clusters.iter().enumerate() {
            let ty = f
                .core_types
                .iter()
                .position(|t| t.name == c.core_type)
                .ok_or_else(|| TopologyError::UnknownCoreType {
                    cluster: c.name.clone().unwrap_or_else(|| format!("#{i}")),
                    core_type: c.core_type.clone(),
                })?;
            let name = c
                .name
                .clone()
                .unwrap_or_else(|| format!("{}{i}", c.core_type));
            // A machine of no cores at all says so; one empty cluster
            // beside others is a mistake to name.
            if c.cores == 0 && f.clusters.iter().any(|o| o.cores > 0) {
                return Err(TopologyError::EmptyCluster(name));
            }
            clusters.push((name, ty, c.cores));
        }
        // "little-first" puts the slowest clusters first, whatever the file's order.
        if order == CoreOrder::LittleFirst {
            clusters.sort_by(|a, b| {
                f.core_types[a.1]
                    .compute_rate
                    .partial_cmp(&f.core_types[b.1].compute_rate)
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        } else {
            clusters.sort_by(|a, b| {
                f.core_types[b.1]
                    .compute_rate
                    .partial_cmp(&f.core_types[a.1].compute_rate)
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        Topology::build(
            f.name.unwrap_or_else(|| "custom".into()),
            f.core_types,
            &clusters,
            f.costs,
        )
    }

    /// The same machine with every core replaced by the fastest core type
    /// (the T_SB baseline of H_ANTT / H_STP: "alone on a system where there are
    /// only big cores", same core count).
    pub fn all_fastest(&self) -> Topology {
        let n = self.num_cores();
        let ty = self.core_types[self.fastest_type].clone();
        let mut t = Topology::build(
            format!("{}B", n),
            vec![ty],
            &[("big".to_string(), 0, n)],
            self.costs.clone(),
        )
        .expect("non-empty topology");
        t.costs = self.costs.clone();
        t
    }

    /// The machine's slowest cores alone: as many cores of the slowest type
    /// as this machine has, in one cluster. The baseline of the aggregate
    /// speedup (propsp eq. 1: a program "alone ... using slow cores only").
    pub fn slowest_only(&self) -> Topology {
        let n = self
            .core_type_of
            .iter()
            .filter(|&&t| t == self.slowest_type)
            .count();
        let ty = self.core_types[self.slowest_type].clone();
        Topology::build(
            format!("{n}S"),
            vec![ty],
            &[("little".to_string(), 0, n)],
            self.costs.clone(),
        )
        .expect("a machine has at least one core of its slowest type")
    }

    pub fn num_cores(&self) -> usize {
        self.core_cluster.len()
    }
    pub fn cores(&self) -> impl Iterator<Item = CoreId> {
        (0..self.num_cores()).map(|i| CoreId(i as u16))
    }
    pub fn all_mask(&self) -> CoreMask {
        CoreMask::all(self.num_cores())
    }
    pub fn core_type(&self, c: CoreId) -> &CoreType {
        &self.core_types[self.core_type_of[c.idx()]]
    }
    pub fn cluster_of(&self, c: CoreId) -> usize {
        self.core_cluster[c.idx()]
    }
    pub fn same_cluster(&self, a: CoreId, b: CoreId) -> bool {
        self.core_cluster[a.idx()] == self.core_cluster[b.idx()]
    }
    #[inline]
    pub fn cluster_mask(&self, cluster: usize) -> CoreMask {
        self.masks.clusters[cluster]
    }
    /// Is this machine heterogeneous at all?
    pub fn is_asymmetric(&self) -> bool {
        self.fastest_type != self.slowest_type
    }
    /// Cores of the fastest type ("big" in the papers' vocabulary).
    pub fn is_big(&self, c: CoreId) -> bool {
        self.core_type_of[c.idx()] == self.fastest_type
    }
    /// Cores of the slowest type ("little"). On a symmetric machine every core
    /// is both big and little.
    pub fn is_little(&self, c: CoreId) -> bool {
        self.core_type_of[c.idx()] == self.slowest_type
    }
    #[inline]
    pub fn big_mask(&self) -> CoreMask {
        self.masks.big
    }
    #[inline]
    pub fn little_mask(&self) -> CoreMask {
        self.masks.little
    }
    /// Compute capacity of a core relative to the fastest type (the kernel's
    /// `arch_scale_cpu_capacity` / 1024).
    pub fn capacity(&self, c: CoreId) -> f64 {
        self.core_type(c).compute_rate / self.core_types[self.fastest_type].compute_rate
    }
    /// Short description, e.g. "2B2S big-first (4 cores)".
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .clusters
            .iter()
            .map(|c| format!("{}x{}", c.cores.len(), self.core_types[c.core_type].name))
            .collect();
        format!("{} [{}]", self.name, parts.join(" + "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_configs_and_order() {
        let t = Topology::named("2B4S", CoreOrder::BigFirst).unwrap();
        assert_eq!(t.num_cores(), 6);
        assert!(t.is_big(CoreId(0)) && t.is_big(CoreId(1)) && t.is_little(CoreId(2)));
        let t = Topology::named("2b4s", CoreOrder::LittleFirst).unwrap();
        assert!(t.is_little(CoreId(0)) && t.is_big(CoreId(4)) && t.is_big(CoreId(5)));
        assert_eq!(t.big_mask().count(), 2);
        assert_eq!(t.little_mask().count(), 4);
        assert!(!t.same_cluster(CoreId(0), CoreId(5)));
        let four_big = Topology::named("4B", CoreOrder::BigFirst).unwrap();
        assert!(!four_big.is_asymmetric());
        assert_eq!(t.all_fastest().num_cores(), 6);
        assert!(!t.all_fastest().is_asymmetric());
        let slow = t.slowest_only();
        assert_eq!(slow.num_cores(), 4);
        assert!(!slow.is_asymmetric());
        assert_eq!(slow.core_type(CoreId(0)), t.core_type(CoreId(0)));
        assert_eq!(slow.costs, t.costs);
    }

    #[test]
    fn bad_names_and_empty_machines() {
        assert!(matches!(
            Topology::named("2X2S", CoreOrder::BigFirst),
            Err(TopologyError::UnknownName(_))
        ));
        assert_eq!(
            Topology::named("0B0S", CoreOrder::BigFirst),
            Err(TopologyError::NoCores)
        );
        assert!(matches!(
            Topology::named("600B600S", CoreOrder::BigFirst),
            Err(TopologyError::TooManyCores(1200))
        ));
        // The largest machine there may be: every mask holds all its cores.
        let t = Topology::named("512B512S", CoreOrder::LittleFirst).unwrap();
        assert_eq!(t.num_cores(), MAX_CORES);
        assert_eq!(t.big_mask().count(), 512);
        assert_eq!(t.all_mask().count(), 1024);
        assert!(t.big_mask().contains(CoreId(1023)) && !t.big_mask().contains(CoreId(511)));
        assert_eq!(t.little_mask().iter().last(), Some(CoreId(511)));
        assert_eq!(t.big_mask().union(t.little_mask()), t.all_mask());
        // A wrapping scan from core 1000: 1000..1023, then 0..999.
        let order: Vec<u16> = t.all_mask().iter_from(CoreId(1000)).map(|c| c.0).collect();
        let want: Vec<u16> = (1000..1024).chain(0..1000).collect();
        assert_eq!(order, want);
        let m = CoreMask::single(CoreId(3)).union(CoreMask::single(CoreId(700)));
        let order: Vec<CoreId> = m.iter_from(CoreId(500)).collect();
        assert_eq!(order, vec![CoreId(700), CoreId(3)]);
    }

    #[test]
    fn costs_out_of_bounds_are_refused() {
        let b = CoreType::reference_big();
        let one = [("a".to_string(), 0, 1)];
        let with = |c: Costs| Topology::build("t", vec![b.clone()], &one, c).err();
        for (costs, field) in [
            (
                Costs {
                    tick_ns: 0,
                    ..Costs::default()
                },
                "tick_ns",
            ),
            (
                Costs {
                    tick_ns: 99_999,
                    ..Costs::default()
                },
                "tick_ns",
            ),
            (
                Costs {
                    tick_ns: 1_000_000_001,
                    ..Costs::default()
                },
                "tick_ns",
            ),
            (
                Costs {
                    context_switch_ns: u64::MAX,
                    ..Costs::default()
                },
                "context_switch_ns",
            ),
            (
                Costs {
                    wakeup_latency_ns: 2_000_000_000,
                    ..Costs::default()
                },
                "wakeup_latency_ns",
            ),
        ] {
            match with(costs) {
                Some(TopologyError::BadCost { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        // The bounds themselves are accepted.
        for costs in [
            Costs {
                tick_ns: Costs::MIN_TICK_NS,
                ..Costs::default()
            },
            Costs {
                migration_cross_ns: Costs::MAX_NS,
                ..Costs::default()
            },
        ] {
            assert_eq!(with(costs), None);
        }
    }

    #[test]
    fn huge_core_counts_are_refused_before_anything_is_allocated() {
        // These once allocated per-core data first (gigabytes, or a
        // "capacity overflow" panic); now they are refused at once.
        assert_eq!(
            Topology::named("99999999999B1S", CoreOrder::BigFirst),
            Err(TopologyError::TooManyCores(100_000_000_000))
        );
        let b = CoreType::reference_big();
        let sizes = [("a".to_string(), 0, usize::MAX), ("b".to_string(), 0, 2)];
        assert_eq!(
            Topology::build("huge", vec![b], &sizes, Costs::default()).err(),
            Some(TopologyError::TooManyCores(usize::MAX))
        );
        let file = "[[core_types]]\nname = \"big\"\ncompute_rate = 1.0\nmemory_rate = 1.0\n\
                    active_power_w = 1.0\nidle_power_w = 0.1\n\
                    [[clusters]]\ncore_type = \"big\"\ncores = 4294967296\n";
        let err = Topology::from_toml(file, CoreOrder::BigFirst).unwrap_err();
        assert!(err.to_string().contains("4294967296"), "{err}");
    }

    #[test]
    fn rate_model_spans_published_speedup_range() {
        let b = CoreType::reference_big();
        let l = CoreType::reference_little();
        let s0 = b.rate(0.0) / l.rate(0.0);
        let s1 = b.rate(1.0) / l.rate(1.0);
        assert!((s0 - 1.0 / (0.6 * 0.53)).abs() < 1e-9);
        assert!((s1 - 1.2).abs() < 1e-9);
        // Monotone in between.
        assert!(b.rate(0.5) / l.rate(0.5) < s0 && b.rate(0.5) / l.rate(0.5) > s1);
    }

    #[test]
    fn custom_file_tri_cluster() {
        let text = r#"
name = "phone"
[[core_types]]
name = "little"
compute_rate = 0.3
memory_rate = 0.8
active_power_w = 0.2
idle_power_w = 0.01
[[core_types]]
name = "prime"
compute_rate = 1.2
memory_rate = 1.1
active_power_w = 3.0
idle_power_w = 0.05
[[core_types]]
name = "mid"
compute_rate = 0.8
memory_rate = 0.95
active_power_w = 1.0
idle_power_w = 0.03
[[clusters]]
core_type = "little"
cores = 4
[[clusters]]
core_type = "mid"
cores = 3
[[clusters]]
core_type = "prime"
cores = 1
[costs]
tick_ns = 1000000
"#;
        let t = Topology::from_toml(text, CoreOrder::BigFirst).unwrap();
        assert_eq!(t.num_cores(), 8);
        assert_eq!(t.core_type(CoreId(0)).name, "prime");
        assert_eq!(t.core_type(CoreId(7)).name, "little");
        assert_eq!(t.costs.tick_ns, 1_000_000);
        assert_eq!(t.big_mask().count(), 1);
        assert_eq!(t.little_mask().count(), 4);
        let lf = Topology::from_toml(text, CoreOrder::LittleFirst).unwrap();
        assert_eq!(lf.core_type(CoreId(0)).name, "little");
        let bad = text.replace("core_type = \"mid\"", "core_type = \"medium\"");
        assert!(matches!(
            Topology::from_toml(&bad, CoreOrder::BigFirst),
            Err(TopologyError::UnknownCoreType { .. })
        ));
        let err = Topology::from_toml("name = 3", CoreOrder::BigFirst).unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }

    #[test]
    fn core_type_rates_outside_the_documented_range_are_refused() {
        let file = |rate: &str| {
            format!(
                "[[core_types]]\nname = \"x\"\ncompute_rate = {rate}\nmemory_rate = 0.9\nactive_power_w = 1.0\nidle_power_w = 0.1\n[[clusters]]\ncore_type = \"x\"\ncores = 1\n"
            )
        };
        for ok in ["0.01", "1", "100"] {
            assert!(
                Topology::from_toml(&file(ok), CoreOrder::BigFirst).is_ok(),
                "{ok}"
            );
        }
        // 1e-300 made every run time out after an hour of simulated time.
        for bad in ["0", "-1", "1e-300", "0.0099", "100.5", "nan", "inf"] {
            let e = Topology::from_toml(&file(bad), CoreOrder::BigFirst)
                .unwrap_err()
                .to_string();
            assert!(e.contains("from 0.01 to 100"), "{bad}: {e}");
        }
    }

    #[test]
    fn counter_fields_default_and_validate() {
        let (b, l) = (CoreType::reference_big(), CoreType::reference_little());
        assert_eq!((b.freq_mhz(), l.freq_mhz()), (2000.0, 1200.0));
        assert_eq!((b.l2_kb(), l.l2_kb()), (2048.0, 512.0));
        assert_eq!((b.max_counters(), l.max_counters()), (7, 7));
        let file = |extra: &str| {
            format!(
                "[[core_types]]\nname = \"x\"\ncompute_rate = 0.5\nmemory_rate = 0.9\nactive_power_w = 1.0\nidle_power_w = 0.1\n{extra}\n[[clusters]]\ncore_type = \"x\"\ncores = 1\n"
            )
        };
        let t = Topology::from_toml(&file(""), CoreOrder::BigFirst).unwrap();
        let ct = &t.core_types[0];
        // Derived clock: the reference's per-clock performance.
        assert_eq!(ct.freq_mhz(), 1000.0);
        assert_eq!(ct.l2_kb(), 2048.0);
        assert_eq!(ct.max_counters(), 7);
        // Absent fields stay absent when written back (calibrate's files).
        assert!(!toml::to_string(ct).unwrap().contains("freq_mhz"));
        let t = Topology::from_toml(
            &file("freq_mhz = 1800\nl2_kb = 1024\nmax_counters = 4"),
            CoreOrder::BigFirst,
        )
        .unwrap();
        let ct = &t.core_types[0];
        assert_eq!(
            (ct.freq_mhz(), ct.l2_kb(), ct.max_counters()),
            (1800.0, 1024.0, 4)
        );
        for bad in ["freq_mhz = 0", "l2_kb = -1", "max_counters = 0"] {
            let err = Topology::from_toml(&file(bad), CoreOrder::BigFirst).unwrap_err();
            assert!(
                matches!(err, TopologyError::BadCoreType { .. }),
                "{bad}: {err}"
            );
        }
        let hikey = Topology::named("hikey970", CoreOrder::BigFirst).unwrap();
        assert_eq!(hikey.core_types[0].freq_mhz(), 2362.0);
    }

    #[test]
    fn large_builtin_machines_load_with_their_cores_and_clusters() {
        // (name, cores, clusters): 12 CCDs x 16, 36 modules x 4, P + 2 E modules + LP-E.
        for (name, cores, clusters) in [
            ("amd-epyc-9965", 192, 12),
            ("intel-xeon6-6780e", 144, 36),
            ("intel-core-ultra-7-155h", 16, 4),
            ("lunar-lake-258v", 8, 2),
            ("tensor-g1", 8, 3),
        ] {
            let t = Topology::named(name, CoreOrder::BigFirst).unwrap();
            assert_eq!(t.num_cores(), cores, "{name}");
            assert_eq!(t.clusters.len(), clusters, "{name}");
        }
        for name in ["amd-epyc-9965", "intel-xeon6-6780e"] {
            let t = Topology::named(name, CoreOrder::BigFirst).unwrap();
            assert!(!t.is_asymmetric(), "{name} has one core type");
        }
        let mtl = Topology::named("intel-core-ultra-7-155h", CoreOrder::BigFirst).unwrap();
        assert_eq!(mtl.core_types.len(), 3);
        assert_eq!(mtl.core_types[mtl.fastest_type].name, "P");
        assert_eq!(mtl.core_types[mtl.slowest_type].name, "LP-E");
        assert_eq!(mtl.big_mask().count(), 6);
        assert_eq!(mtl.little_mask().count(), 2);
        // The heavy-thread scenario's machines: the fastest type is the one
        // whose time counts as fast-core time.
        let lnl = Topology::named("lunar-lake-258v", CoreOrder::BigFirst).unwrap();
        assert_eq!(lnl.core_types[lnl.fastest_type].name, "P");
        assert_eq!(lnl.big_mask().count(), 4);
        let tensor = Topology::named("tensor-g1", CoreOrder::BigFirst).unwrap();
        assert_eq!(tensor.core_types.len(), 3);
        assert_eq!(tensor.core_types[tensor.fastest_type].name, "X1");
        assert_eq!(tensor.core_types[tensor.slowest_type].name, "A55");
        assert_eq!(tensor.big_mask().count(), 2);
        assert_eq!(tensor.little_mask().count(), 4);
    }

    #[test]
    fn deeper_idle_states_cost_more_to_leave_and_must_be_ordered() {
        let machine = |states: &str| {
            format!(
                "name = \"m\"\n[[core_types]]\nname = \"h\"\ncompute_rate = 1.0\nmemory_rate = 1.0\nactive_power_w = 0.0\nidle_power_w = 0.0\n[[clusters]]\ncore_type = \"h\"\ncores = 2\n[costs]\nwakeup_latency_ns = 5000\nidle_exit = [{states}]\n"
            )
        };
        let t = Topology::from_toml(
            &machine(
                "{ after_ns = 200000, extra_ns = 9000 }, { after_ns = 1000000, extra_ns = 22000 }",
            ),
            CoreOrder::BigFirst,
        )
        .unwrap();
        // The deepest state reached counts; before the first, the base.
        assert_eq!(t.costs.wakeup_ns(0), 5_000);
        assert_eq!(t.costs.wakeup_ns(199_999), 5_000);
        assert_eq!(t.costs.wakeup_ns(200_000), 14_000);
        assert_eq!(t.costs.wakeup_ns(999_999), 14_000);
        assert_eq!(t.costs.wakeup_ns(50_000_000), 27_000);
        // Out of order, or the same state twice: refused, naming the field.
        for states in [
            "{ after_ns = 1000000, extra_ns = 1 }, { after_ns = 200000, extra_ns = 2 }",
            "{ after_ns = 1000, extra_ns = 1 }, { after_ns = 1000, extra_ns = 2 }",
        ] {
            let e = Topology::from_toml(&machine(states), CoreOrder::BigFirst).unwrap_err();
            assert!(
                matches!(
                    e,
                    TopologyError::BadCost {
                        field: "idle_exit.after_ns",
                        ..
                    }
                ),
                "{e}"
            );
            assert!(e.to_string().contains("shallowest"), "{e}");
        }
        let e = Topology::from_toml(
            &machine("{ after_ns = 1000, extra_ns = 2000000000 }"),
            CoreOrder::BigFirst,
        )
        .unwrap_err();
        assert!(e.to_string().contains("idle_exit.extra_ns"), "{e}");
        // A misspelt field is an error, not a silent default.
        assert!(
            Topology::from_toml(&machine("{ after = 1, extra_ns = 2 }"), CoreOrder::BigFirst)
                .is_err()
        );
    }
}
