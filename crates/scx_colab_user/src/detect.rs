//! The machine's core types, read from a sysfs tree: scx_colab passes "/",
//! the tests a fixture directory written from a real part's documented
//! values (tests/fixtures/sysfs/, where a README says where each value
//! comes from). No other I/O: everything is read under `root`.
//!
//! What is read, in order of trust:
//!
//! 1. `/sys/devices/system/cpu/online`: the CPUs considered (required).
//! 2. Each online CPU's capacity, from the first of these files that every
//!    online CPU has (non-zero) and that tells some CPUs apart; when none
//!    does, from the first that every CPU has (the CPUs look alike):
//!    - `cpuN/cpu_capacity`: the kernel scheduler's own capacity (arm64 and
//!      RISC-V from the device tree's `capacity-dmips-mhz` times each
//!      cluster's top frequency; recent x86 kernels export it too, 1024 on
//!      every CPU of an i5-14600K in ublue-os/bazzite#5122, hence "tells
//!      some CPUs apart");
//!    - `cpuN/acpi_cppc/highest_perf`, then `nominal_perf` (ACPI CPPC: on
//!      Intel hybrid parts intel_pstate's HWP performance units, which are
//!      not MHz on P-cores, so they already weigh a P-core above an E-core
//!      at the same clock; Turbo Boost Max's favoured cores report a few
//!      units more than the other P-cores);
//!    - `cpuN/cpufreq/cpuinfo_max_freq`, then `cpufreq/base_frequency`
//!      (clocks only: blind to a core type's work per clock, and wrong on
//!      some parts, see the Arrow Lake fixture).
//! 3. Intel's hybrid PMU device lists, `/sys/devices/cpu_core/cpus`
//!    (P-cores), `/sys/devices/cpu_atom/cpus` (E-cores) and
//!    `/sys/devices/cpu_lowpower/cpus` (Arrow Lake-H's low-power E-cores):
//!    the kernel's perf driver fills them from CPUID's core type, so they
//!    tell P from E when every CPU reports the same CPPC value and
//!    frequency (sched-ext/scx#1893, an i7-13650HX) and whatever favoured
//!    cores report. When present they partition the CPUs first and order
//!    the kinds (cpu_core above cpu_atom above cpu_lowpower); capacities
//!    then split a kind further (Meteor Lake's LP E-cores are cpu_atom CPUs
//!    with a third lower clock) and order the classes within a kind.
//! 4. SMT and clusters: `topology/core_cpus_list` (else the older name
//!    `thread_siblings_list`; else CPUs sharing `physical_package_id`, a
//!    cluster and `core_id`), `topology/cluster_cpus_list`,
//!    `topology/package_cpus_list` (else `physical_package_id`). A core's
//!    hardware threads always share a core type.
//!
//! Core types: within one PMU kind (or among all CPUs without the lists)
//! the cores sorted by capacity are cut wherever the next core's value is
//! more than `TYPE_GAP` (10%) above the previous one's. Why 10%: a
//! favoured-core boost or a binning difference within one core type is a
//! few percent (63 against 61 CPPC units, 3%, on the Core Ultra 9 275HX in
//! tests/fixtures/sysfs/arrowlake-ultra9-275hx; 4.8 against 4.6 GHz, 4%,
//! between Turbo Boost Max cores of an i9-10920X, differences hwloc's
//! authors plan to fold into one kind when "small (<10%)":
//! open-mpi/hwloc#502; 2% between two RK3588 A76 clusters), while two core
//! types differ by 32% or more in every fixture (P against E of the
//! i5-14600K by max frequency) and by 17% in the closest pair known to us
//! (the 275HX's specified P and E turbo clocks, 5.4 against 4.6 GHz, which
//! its PMU lists separate anyway). Cutting at gaps, not at a spread, keeps
//! a run of small steps together, such as AMD's preferred-core rankings a
//! few percent apart.
//!
//! Types are sorted slowest first. scx_colab's BPF has two clusters:
//! little is the slowest type and big every faster one, as the simulator's
//! ROTA takes its fast cores (`all_mask().minus(little_mask())`,
//! crates/policies/src/rota/mod.rs); see `Machine::cpu_caps`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::topo::{parse_cpu_list, CpuCap};

/// The largest step between two consecutive cores' capacities, relative to
/// the lower one, that keeps them in one core type (see the module doc).
pub const TYPE_GAP: f64 = 0.10;

/// Intel's hybrid PMU kinds, slowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pmu {
    /// `cpu_lowpower`: Arrow Lake-H's low-power E-cores (Crestmont).
    LowPower,
    /// `cpu_atom`: E-cores (and Meteor Lake's LP E-cores).
    Atom,
    /// `cpu_core`: P-cores.
    Core,
}

impl Pmu {
    pub const ALL: [Pmu; 3] = [Pmu::LowPower, Pmu::Atom, Pmu::Core];

    /// The PMU's device name under /sys/devices.
    pub fn sysfs_name(self) -> &'static str {
        match self {
            Pmu::LowPower => "cpu_lowpower",
            Pmu::Atom => "cpu_atom",
            Pmu::Core => "cpu_core",
        }
    }
}

/// Where the capacities came from, most trusted first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    CpuCapacity,
    CppcHighestPerf,
    CppcNominalPerf,
    MaxFreq,
    BaseFreq,
}

impl Source {
    pub const TRUST_ORDER: [Source; 5] = [
        Source::CpuCapacity,
        Source::CppcHighestPerf,
        Source::CppcNominalPerf,
        Source::MaxFreq,
        Source::BaseFreq,
    ];

    /// The file under /sys/devices/system/cpu/cpuN.
    pub fn file(self) -> &'static str {
        match self {
            Source::CpuCapacity => "cpu_capacity",
            Source::CppcHighestPerf => "acpi_cppc/highest_perf",
            Source::CppcNominalPerf => "acpi_cppc/nominal_perf",
            Source::MaxFreq => "cpufreq/cpuinfo_max_freq",
            Source::BaseFreq => "cpufreq/base_frequency",
        }
    }
}

/// One online CPU (a hardware thread).
#[derive(Clone, Debug, PartialEq)]
pub struct CpuInfo {
    pub id: usize,
    /// The online hardware threads of its core, itself included, sorted.
    pub siblings: Vec<usize>,
    /// Its core: the lowest id among `siblings` (unique over the machine).
    pub core: usize,
    /// Its cluster (`cluster_cpus_list`: an arm64 cluster, an Intel E-core
    /// module sharing an L2): the lowest online CPU of it, when exported.
    pub cluster: Option<usize>,
    /// Its package: the lowest online CPU of it (0 when not exported).
    pub package: usize,
    /// Its Intel hybrid PMU kind, when the lists exist.
    pub pmu: Option<Pmu>,
    /// The capacity source's value for this CPU (None without a source).
    pub raw: Option<u64>,
    /// `raw` on the kernel's 1024 scale, 1024 for the largest (1024 for
    /// every CPU without a source).
    pub capacity: usize,
    /// Its core type: an index into `Machine::types`, 0 the slowest.
    pub tier: usize,
}

/// One core type: CPUs alike in PMU kind and (within TYPE_GAP) capacity.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreType {
    pub cpus: Vec<usize>,
    pub pmu: Option<Pmu>,
    /// The smallest and largest capacity (1024 scale) of its CPUs.
    pub capacity: (usize, usize),
}

/// The machine as read from sysfs.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// The online CPUs, by id.
    pub cpus: Vec<CpuInfo>,
    /// The core types, slowest first (at least one).
    pub types: Vec<CoreType>,
    /// Where the capacities came from (None: no file had them).
    pub source: Option<Source>,
    /// The Intel hybrid PMU lists were read and used.
    pub pmu_lists: bool,
    /// What was odd and how it was handled (scx_colab logs them).
    pub warnings: Vec<String>,
}

/// Formats CPU ids as a kernel CPU list: `0-3,8,10-11`.
pub fn format_cpu_list(ids: &[usize]) -> String {
    let mut v = ids.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if j == i {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(",")
}

impl Machine {
    /// How many core types.
    pub fn tiers(&self) -> usize {
        self.types.len()
    }

    /// The CPUs of the slowest type when there are two types or more.
    pub fn little(&self) -> Vec<usize> {
        if self.tiers() < 2 {
            return Vec::new();
        }
        self.types[0].cpus.clone()
    }

    /// The CPUs of every faster type (none on a one-type machine).
    pub fn big(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .types
            .iter()
            .skip(1)
            .flat_map(|t| t.cpus.clone())
            .collect();
        v.sort_unstable();
        v
    }

    /// The CPUs as topo::split takes them: big for every type but the
    /// slowest (every CPU on a one-type machine, topo::classify's
    /// convention, which split turns into one cluster).
    pub fn cpu_caps(&self) -> Vec<CpuCap> {
        let one = self.tiers() < 2;
        self.cpus
            .iter()
            .map(|c| CpuCap {
                id: c.id,
                core: c.core,
                capacity: c.capacity,
                big: one || c.tier > 0,
                tier: c.tier,
            })
            .collect()
    }

    /// One line: the types, slowest first, and what told them apart.
    pub fn describe(&self) -> String {
        let by = match (self.pmu_lists, self.source) {
            (true, Some(s)) => format!("Intel's PMU lists and {}", s.file()),
            (true, None) => "Intel's PMU lists".to_string(),
            (false, Some(s)) => s.file().to_string(),
            (false, None) => "no capacity file (all alike)".to_string(),
        };
        let types: Vec<String> = self
            .types
            .iter()
            .map(|t| {
                let pmu = t
                    .pmu
                    .map(|p| format!("{} ", p.sysfs_name()))
                    .unwrap_or_default();
                let cap = if t.capacity.0 == t.capacity.1 {
                    t.capacity.0.to_string()
                } else {
                    format!("{}-{}", t.capacity.0, t.capacity.1)
                };
                format!("{pmu}{} (capacity {cap})", format_cpu_list(&t.cpus))
            })
            .collect();
        let n = self.tiers();
        format!(
            "{n} core type{} by {by}, slowest first: {}",
            if n == 1 { "" } else { "s" },
            types.join(" < ")
        )
    }
}

/// Reads files under a root, relative to it.
struct Tree<'a> {
    root: &'a Path,
    warnings: Vec<String>,
}

impl Tree<'_> {
    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// The file's trimmed text; None when it does not exist, or cannot be
    /// read (with a warning: sysfs files of broken firmware fail to read).
    fn text(&mut self, rel: &str) -> Option<String> {
        let p = self.path(rel);
        match std::fs::read_to_string(&p) {
            Ok(s) => Some(s.trim().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                self.warnings.push(format!("{}: {e}; ignored", p.display()));
                None
            }
        }
    }

    /// A number file; an error names the file when it is not a number.
    fn number(&mut self, rel: &str) -> Result<Option<u64>> {
        let Some(s) = self.text(rel) else {
            return Ok(None);
        };
        s.parse::<u64>()
            .map(Some)
            .with_context(|| format!("{}: {s:?} is not a number", self.path(rel).display()))
    }

    /// A CPU list file (empty text: an empty list).
    fn list(&mut self, rel: &str) -> Result<Option<Vec<usize>>> {
        let Some(s) = self.text(rel) else {
            return Ok(None);
        };
        if s.is_empty() {
            return Ok(Some(Vec::new()));
        }
        parse_cpu_list(&s)
            .map(Some)
            .with_context(|| format!("{}: not a CPU list", self.path(rel).display()))
    }
}

fn cpu_file(id: usize, file: &str) -> String {
    format!("sys/devices/system/cpu/cpu{id}/{file}")
}

/// Union-find over CPU ids (the cores: CPUs named each other's siblings).
fn find(parent: &mut BTreeMap<usize, usize>, x: usize) -> usize {
    let mut r = x;
    while parent[&r] != r {
        r = parent[&r];
    }
    let mut y = x;
    while parent[&y] != r {
        let next = parent[&y];
        parent.insert(y, r);
        y = next;
    }
    r
}

fn union(parent: &mut BTreeMap<usize, usize>, a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        let (lo, hi) = (ra.min(rb), ra.max(rb));
        parent.insert(hi, lo);
    }
}

/// Reads the core types of the machine whose sysfs is under `root` ("/"
/// for this one). Errors name the file: a missing or unreadable
/// `online` list, a number or CPU list that does not parse.
pub fn core_types(root: &Path) -> Result<Machine> {
    let mut t = Tree {
        root,
        warnings: Vec::new(),
    };
    let online_rel = "sys/devices/system/cpu/online";
    let online = match t.list(online_rel)? {
        Some(v) if !v.is_empty() => v,
        Some(_) => bail!("{}: no CPU is online", t.path(online_rel).display()),
        None => {
            let p = t.path(online_rel);
            let e = std::fs::read_to_string(&p).err();
            bail!(
                "reading {}: {}",
                p.display(),
                e.map(|e| e.to_string())
                    .unwrap_or_else(|| "unreadable".into())
            )
        }
    };
    let is_online = |c: &usize| online.binary_search(c).is_ok();

    // Intel's hybrid PMU lists.
    let mut pmu_of: BTreeMap<usize, Vec<Pmu>> = BTreeMap::new();
    let mut any_list = false;
    for p in Pmu::ALL {
        if let Some(l) = t.list(&format!("sys/devices/{}/cpus", p.sysfs_name()))? {
            any_list = true;
            for c in l.into_iter().filter(is_online) {
                pmu_of.entry(c).or_default().push(p);
            }
        }
    }
    let mut pmu_lists = false;
    if any_list {
        let unlisted: Vec<usize> = online
            .iter()
            .copied()
            .filter(|c| !pmu_of.contains_key(c))
            .collect();
        let twice: Vec<usize> = pmu_of
            .iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|(&c, _)| c)
            .collect();
        if !unlisted.is_empty() {
            t.warnings.push(format!(
                "CPUs {} are online but in none of /sys/devices/cpu_{{core,atom,lowpower}}/cpus; \
                 the PMU lists are ignored",
                format_cpu_list(&unlisted)
            ));
        } else if !twice.is_empty() {
            t.warnings.push(format!(
                "CPUs {} are in two PMU lists; the PMU lists are ignored",
                format_cpu_list(&twice)
            ));
        } else {
            pmu_lists = true;
        }
    }
    let pmu = |c: usize| -> Option<Pmu> {
        if pmu_lists {
            pmu_of.get(&c).and_then(|v| v.first().copied())
        } else {
            None
        }
    };

    // Capacities: every source's values, then the most trusted usable one.
    let mut source = None;
    let mut raw: BTreeMap<usize, u64> = BTreeMap::new();
    let mut first_usable: Option<(Source, BTreeMap<usize, u64>)> = None;
    for s in Source::TRUST_ORDER {
        let mut vals = BTreeMap::new();
        for &c in &online {
            match t.number(&cpu_file(c, s.file()))? {
                Some(v) if v > 0 => {
                    vals.insert(c, v);
                }
                _ => break,
            }
        }
        if vals.len() != online.len() {
            continue; // some CPU lacks it (or reports 0)
        }
        let first = vals.values().next().copied();
        if vals.values().any(|&v| Some(v) != first) {
            source = Some(s);
            raw = vals;
            first_usable = None;
            break;
        }
        if first_usable.is_none() {
            first_usable = Some((s, vals));
        }
    }
    if let Some((s, vals)) = first_usable {
        source = Some(s);
        raw = vals;
    }
    let max_raw = raw.values().copied().max().unwrap_or(0);
    let capacity_of = |c: usize| -> usize {
        match raw.get(&c) {
            Some(&v) if max_raw > 0 => {
                (((v as u128) * 1024 + (max_raw as u128) / 2) / (max_raw as u128)).max(1) as usize
            }
            _ => 1024,
        }
    };

    // SMT siblings, clusters and packages.
    let mut parent: BTreeMap<usize, usize> = online.iter().map(|&c| (c, c)).collect();
    let mut listed_siblings = true;
    let mut cluster: BTreeMap<usize, Option<usize>> = BTreeMap::new();
    let mut package: BTreeMap<usize, usize> = BTreeMap::new();
    let mut pkg_id: BTreeMap<usize, Option<u64>> = BTreeMap::new();
    let mut core_id: BTreeMap<usize, Option<u64>> = BTreeMap::new();
    for &c in &online {
        let sib = match t.list(&cpu_file(c, "topology/core_cpus_list"))? {
            Some(l) => Some(l),
            None => t.list(&cpu_file(c, "topology/thread_siblings_list"))?,
        };
        match sib {
            Some(l) => {
                for s in l.into_iter().filter(is_online) {
                    union(&mut parent, c, s);
                }
            }
            None => listed_siblings = false,
        }
        let cl = t
            .list(&cpu_file(c, "topology/cluster_cpus_list"))?
            .and_then(|l| l.into_iter().filter(is_online).min());
        cluster.insert(c, cl);
        let pk = t
            .list(&cpu_file(c, "topology/package_cpus_list"))?
            .and_then(|l| l.into_iter().filter(is_online).min());
        if let Some(p) = pk {
            package.insert(c, p);
        }
        pkg_id.insert(c, t.number(&cpu_file(c, "topology/physical_package_id"))?);
        core_id.insert(c, t.number(&cpu_file(c, "topology/core_id"))?);
    }
    // Packages not listed: the lowest CPU with the same physical_package_id.
    for &c in &online {
        package.entry(c).or_insert_with(|| match pkg_id[&c] {
            Some(id) => online
                .iter()
                .copied()
                .find(|o| pkg_id[o] == Some(id))
                .unwrap_or(c),
            None => 0,
        });
    }
    if !listed_siblings {
        // No sibling lists: threads sharing a package, a cluster and a
        // core_id (core_id alone repeats across arm64 clusters).
        let key = |c: usize| core_id[&c].map(|k| (package[&c], cluster[&c], k));
        for &a in &online {
            for &b in &online {
                if a < b && key(a).is_some() && key(a) == key(b) {
                    union(&mut parent, a, b);
                }
            }
        }
    }
    let mut core_of: BTreeMap<usize, usize> = BTreeMap::new();
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &c in &online {
        let r = find(&mut parent, c);
        core_of.insert(c, r);
        members.entry(r).or_default().push(c);
    }

    // Cores (a core's threads share a type): their PMU kind and value.
    struct Core {
        id: usize,
        pmu: Option<Pmu>,
        raw: Option<u64>,
    }
    let mut cores: Vec<Core> = Vec::new();
    for (&root_id, threads) in &members {
        let kinds: Vec<Option<Pmu>> = threads.iter().map(|&c| pmu(c)).collect();
        let kind = kinds.iter().copied().max().flatten();
        if kinds.iter().any(|k| *k != kinds[0]) {
            t.warnings.push(format!(
                "SMT siblings {} are in different PMU lists; taken as {}",
                format_cpu_list(threads),
                kind.map(|k| k.sysfs_name()).unwrap_or("none")
            ));
        }
        let vals: Vec<u64> = threads.iter().filter_map(|c| raw.get(c).copied()).collect();
        cores.push(Core {
            id: root_id,
            pmu: kind,
            raw: vals.iter().copied().max(),
        });
    }

    // Types: by PMU kind, then cut at gaps of capacity.
    let mut by_kind: BTreeMap<Option<Pmu>, Vec<&Core>> = BTreeMap::new();
    for core in &cores {
        by_kind.entry(core.pmu).or_default().push(core);
    }
    // (kind, cores) per type, slowest first: kinds ascend (None sorts
    // first and is alone when the lists are not used), values ascend.
    let mut type_cores: Vec<(Option<Pmu>, Vec<usize>)> = Vec::new();
    for (kind, mut list) in by_kind {
        list.sort_by_key(|c| (c.raw.unwrap_or(0), c.id));
        let mut prev: Option<u64> = None;
        for core in list {
            let v = core.raw.unwrap_or(0);
            let cut = match prev {
                None => true,
                Some(p) => (v as f64) > (p as f64) * (1.0 + TYPE_GAP),
            };
            if cut {
                type_cores.push((kind, Vec::new()));
            }
            type_cores.last_mut().expect("pushed above").1.push(core.id);
            prev = Some(v);
        }
    }

    let mut tier_of: BTreeMap<usize, usize> = BTreeMap::new();
    let mut types: Vec<CoreType> = Vec::new();
    for (i, (kind, roots)) in type_cores.iter().enumerate() {
        let mut cpus: Vec<usize> = roots.iter().flat_map(|r| members[r].clone()).collect();
        cpus.sort_unstable();
        for &c in &cpus {
            tier_of.insert(c, i);
        }
        let caps: Vec<usize> = cpus.iter().map(|&c| capacity_of(c)).collect();
        types.push(CoreType {
            capacity: (
                caps.iter().copied().min().unwrap_or(1024),
                caps.iter().copied().max().unwrap_or(1024),
            ),
            cpus,
            pmu: *kind,
        });
    }

    // The PMU kinds win over capacities that order them the other way.
    if pmu_lists {
        if let Some(s) = source {
            for w in types.windows(2) {
                if w[0].pmu != w[1].pmu && w[1].capacity.1 < w[0].capacity.0 {
                    t.warnings.push(format!(
                        "{} puts {} CPUs {} above {} CPUs {}; the PMU lists order them the \
                         other way and win (the speedup falls back to --speedup or 2.0)",
                        s.file(),
                        w[0].pmu.map(|p| p.sysfs_name()).unwrap_or("unlisted"),
                        format_cpu_list(&w[0].cpus),
                        w[1].pmu.map(|p| p.sysfs_name()).unwrap_or("unlisted"),
                        format_cpu_list(&w[1].cpus),
                    ));
                }
            }
        }
    }

    let mut cpus = Vec::new();
    for &c in &online {
        let core = core_of[&c];
        cpus.push(CpuInfo {
            id: c,
            siblings: members[&core].clone(),
            core,
            cluster: cluster[&c],
            package: package[&c],
            pmu: pmu(c),
            raw: raw.get(&c).copied(),
            capacity: capacity_of(c),
            tier: tier_of[&c],
        });
    }
    Ok(Machine {
        cpus,
        types,
        source,
        pmu_lists,
        warnings: t.warnings,
    })
}
