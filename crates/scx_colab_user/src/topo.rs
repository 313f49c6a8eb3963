//! The machine as COLAB sees it: a big and a little cluster, and the
//! predicted speedup of the big cores when no counters are available.
//! Pure: the CPUs and their core types come from `detect` (a sysfs tree).

use anyhow::{bail, Context, Result};

/// CPU ids at or above this are refused (the kernel's NR_CPUS is at most
/// 8192): a CPU list naming them is corrupt, and expanding a range as
/// `0-4294967295` would exhaust memory.
pub const MAX_CPU_ID: usize = 1 << 16;

/// The big/little speedup when nothing measures it: `--big-cpus` without
/// `--speedup`, and core types told apart with no capacity difference.
pub const DEFAULT_SPEEDUP: f64 = 2.0;

/// Parses a CPU list like `0,1`, `0-3` or `0-1,4,6-7` (sorted, deduplicated).
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim) {
        if part.is_empty() {
            bail!("empty item in CPU list {s:?}");
        }
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let lo: usize = lo
            .parse()
            .with_context(|| format!("bad CPU number {lo:?} in {s:?}"))?;
        let hi: usize = hi
            .parse()
            .with_context(|| format!("bad CPU number {hi:?} in {s:?}"))?;
        if hi < lo {
            bail!("descending CPU range {part:?} in {s:?}");
        }
        if hi >= MAX_CPU_ID {
            bail!(
                "CPU {hi} in {s:?} is beyond the largest CPU id ({})",
                MAX_CPU_ID - 1
            );
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// One online CPU (a hardware thread), its core, its capacity (1024 for the
/// fastest) and whether its core is a big one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuCap {
    pub id: usize,
    /// The physical core: SMT siblings share it (unique over packages).
    pub core: usize,
    pub capacity: usize,
    /// Not of the slowest core type (`detect::Machine::cpu_caps`), or
    /// every CPU of a machine with one core type.
    pub big: bool,
    /// Its core type's rank, 0 the slowest (three or more core types make
    /// big CPUs of more than one tier).
    pub tier: usize,
}

/// For CPUs whose capacities are exact per core type (the simulator's
/// machines, hosted in crates/scx_host): little is the slowest type, the
/// CPUs at the lowest capacity, and big every faster one, as the
/// simulator's ROTA takes its fast cores; all big when the capacities are
/// equal. (Real machines go through `detect`, which reads core types from
/// sysfs and tolerates favoured-core differences within a type.)
pub fn classify(cpus: &mut [CpuCap]) {
    let min = cpus.iter().map(|c| c.capacity).min().unwrap_or(0);
    let differ = cpus.iter().any(|c| c.capacity != min);
    // Tiers: a capacity more than TYPE_GAP above the previous tier's
    // lowest starts a new one, as `detect` groups core types (favoured
    // cores of one type stay in its tier).
    let mut caps: Vec<usize> = cpus.iter().map(|c| c.capacity).collect();
    caps.sort_unstable();
    let mut starts: Vec<usize> = Vec::new();
    for c in caps {
        if starts
            .last()
            .is_none_or(|&s| c as f64 > s as f64 * (1.0 + crate::detect::TYPE_GAP))
        {
            starts.push(c);
        }
    }
    for c in cpus.iter_mut() {
        c.big = !differ || c.capacity > min;
        c.tier = starts.iter().rposition(|&s| s <= c.capacity).unwrap_or(0);
    }
}

/// Where the big/little split came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitMode {
    /// `--big-cpus` on any hardware.
    Declared,
    /// Core types read from the machine (a real AMP), the speedup from
    /// their capacities.
    Hardware,
    /// Core types read from the machine with no capacity difference
    /// between the clusters (Intel's PMU lists alone, sched-ext/scx#1893):
    /// the speedup is `--speedup` or DEFAULT_SPEEDUP.
    TypesOnly,
    /// One core type: a single cluster.
    Homogeneous,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    pub big: Vec<usize>,
    pub little: Vec<usize>,
    /// Predicted big/little speedup used for every task (capacity fallback).
    pub speedup: f64,
    pub mode: SplitMode,
    /// Each CPU whose core has other online hardware threads (SMT), with
    /// its first sibling (the lowest other id); empty without SMT.
    pub siblings: Vec<(usize, usize)>,
    /// With three or more core types, each big CPU and the rank of its
    /// type among the big ones (0 the slowest big type): ROTA's `tiers`
    /// rule takes a task from a slower big CPU to an idle faster one.
    /// Empty with two types or `--big-cpus`.
    pub big_tiers: Vec<(usize, u8)>,
}

impl Split {
    /// Some core has two or more online hardware threads.
    pub fn smt(&self) -> bool {
        !self.siblings.is_empty()
    }

    pub fn is_asymmetric(&self) -> bool {
        !self.big.is_empty() && !self.little.is_empty()
    }

    /// The big CPUs are of more than one core type.
    pub fn tiered(&self) -> bool {
        self.big_tiers.iter().any(|&(_, t)| t > 0)
    }

    pub fn describe(&self) -> String {
        fn list(v: &[usize]) -> String {
            v.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        }
        let smt = if self.smt() {
            "; SMT: idle whole cores first"
        } else {
            ""
        };
        let split = match self.mode {
            SplitMode::Homogeneous => format!(
                "homogeneous machine and no --big-cpus: all {} CPUs in one cluster ({})",
                self.little.len(),
                list(&self.little)
            ),
            SplitMode::Declared => format!(
                "AMP declared by --big-cpus: big {} / little {}, speedup {:.2} (--speedup)",
                list(&self.big),
                list(&self.little),
                self.speedup
            ),
            SplitMode::Hardware => format!(
                "AMP from the CPUs' core types: big {} / little {}, speedup {:.2} (capacity ratio)",
                list(&self.big),
                list(&self.little),
                self.speedup
            ),
            SplitMode::TypesOnly => format!(
                "AMP from the CPUs' core types: big {} / little {}, speedup {:.2} (no capacity \
                 difference to measure it from; --speedup sets it)",
                list(&self.big),
                list(&self.little),
                self.speedup
            ),
        };
        let tiers = if self.tiered() {
            let top = self.big_tiers.iter().map(|&(_, t)| t).max().unwrap_or(0);
            let of = |t: u8| {
                let v: Vec<usize> = self
                    .big_tiers
                    .iter()
                    .filter(|&&(_, x)| x == t)
                    .map(|&(c, _)| c)
                    .collect();
                list(&v)
            };
            let ranks: Vec<String> = (0..=top).map(of).collect();
            format!("; big tiers, slowest first: {}", ranks.join(" < "))
        } else {
            String::new()
        };
        split + &tiers + smt
    }
}

/// Each CPU that shares its core with another online CPU, and the lowest
/// such sibling.
fn siblings(cpus: &[CpuCap]) -> Vec<(usize, usize)> {
    cpus.iter()
        .filter_map(|a| {
            cpus.iter()
                .filter(|b| b.id != a.id && b.core == a.core)
                .map(|b| b.id)
                .min()
                .map(|s| (a.id, s))
        })
        .collect()
}

/// The first CPU of `big` whose SMT sibling is online but not in `big`, with
/// that sibling: a core's hardware threads share the core and its speed, so
/// they belong to one cluster.
fn split_sibling(cpus: &[CpuCap], big: &[usize]) -> Option<(usize, usize)> {
    cpus.iter().filter(|c| big.contains(&c.id)).find_map(|c| {
        cpus.iter()
            .find(|s| s.core == c.core && !big.contains(&s.id))
            .map(|s| (c.id, s.id))
    })
}

/// The CPUs of `list` that are online, with a warning naming the others
/// (after a hotplug restart, `--big-cpus` may name a CPU gone offline).
pub fn online_only(list: &[usize], cpus: &[CpuCap]) -> Vec<usize> {
    let (on, off): (Vec<usize>, Vec<usize>) =
        list.iter().partition(|&&c| cpus.iter().any(|x| x.id == c));
    if !off.is_empty() {
        log::warn!("--big-cpus: CPUs {off:?} are offline; using {on:?}");
    }
    on
}

/// Splits the online CPUs into clusters. `--big-cpus` wins; otherwise the
/// CPUs of big cores (every core type but the slowest) are big when there
/// are little ones too, and the speedup is the ratio of the clusters' mean
/// capacities (or `speedup`, when given; DEFAULT_SPEEDUP when the
/// capacities do not tell the clusters apart); otherwise one cluster.
pub fn split(cpus: &[CpuCap], big_flag: Option<&[usize]>, speedup: Option<f64>) -> Result<Split> {
    if cpus.is_empty() {
        bail!("no online CPUs found");
    }
    if let Some(s) = speedup {
        if !(s.is_finite() && s >= 1.0) {
            bail!("--speedup must be a number >= 1, got {s}");
        }
    }
    let ids: Vec<usize> = cpus.iter().map(|c| c.id).collect();
    if let Some(big) = big_flag {
        if let Some(bad) = big.iter().find(|c| !ids.contains(c)) {
            bail!("--big-cpus: CPU {bad} is not online (online: {ids:?})");
        }
        let little: Vec<usize> = ids.iter().copied().filter(|c| !big.contains(c)).collect();
        if big.is_empty() || little.is_empty() {
            bail!("--big-cpus must leave at least one big and one little CPU (online: {ids:?})");
        }
        if let Some((c, s)) = split_sibling(cpus, big) {
            bail!(
                "--big-cpus: CPU {c} is big but its SMT sibling {s} is not; a core's \
                 hardware threads share its speed, so name both or neither"
            );
        }
        return Ok(Split {
            big: big.to_vec(),
            little,
            speedup: speedup.unwrap_or(DEFAULT_SPEEDUP),
            mode: SplitMode::Declared,
            siblings: siblings(cpus),
            big_tiers: Vec::new(),
        });
    }
    let big: Vec<usize> = cpus.iter().filter(|c| c.big).map(|c| c.id).collect();
    let little: Vec<usize> = cpus.iter().filter(|c| !c.big).map(|c| c.id).collect();
    if !big.is_empty() && !little.is_empty() {
        // The speedup fallback: the clusters' mean capacities.
        let mean = |big: bool| {
            let caps = cpus
                .iter()
                .filter(|c| c.big == big)
                .map(|c| c.capacity.max(1));
            caps.clone().sum::<usize>() as f64 / caps.count() as f64
        };
        let ratio = mean(true) / mean(false);
        // Capacities that do not put big above little (all alike, or
        // contradicting Intel's PMU lists) say nothing about the speedup.
        let measured = ratio > 1.0 + 1e-9;
        return Ok(Split {
            big,
            little,
            speedup: speedup.unwrap_or(if measured { ratio } else { DEFAULT_SPEEDUP }),
            mode: if measured {
                SplitMode::Hardware
            } else {
                SplitMode::TypesOnly
            },
            siblings: siblings(cpus),
            big_tiers: big_tiers(cpus),
        });
    }
    Ok(Split {
        big: Vec::new(),
        little: ids,
        speedup: 1.0,
        mode: SplitMode::Homogeneous,
        siblings: siblings(cpus),
        big_tiers: Vec::new(),
    })
}

/// Each big CPU with its type's rank among the big types, when the big
/// CPUs are of more than one type (else none).
fn big_tiers(cpus: &[CpuCap]) -> Vec<(usize, u8)> {
    let big = || cpus.iter().filter(|c| c.big);
    let Some(lowest) = big().map(|c| c.tier).min() else {
        return Vec::new();
    };
    if big().all(|c| c.tier == lowest) {
        return Vec::new();
    }
    big()
        .map(|c| (c.id, (c.tier - lowest).min(u8::MAX as usize) as u8))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Classified CPUs from (id, core, capacity).
    fn cpus_of(layout: &[(usize, usize, usize)]) -> Vec<CpuCap> {
        let mut cpus: Vec<CpuCap> = layout
            .iter()
            .map(|&(id, core, capacity)| CpuCap {
                id,
                core,
                capacity,
                big: true,
                tier: 0,
            })
            .collect();
        classify(&mut cpus);
        cpus
    }

    /// One CPU a core, with these capacities.
    fn caps(v: &[usize]) -> Vec<CpuCap> {
        let layout: Vec<_> = v.iter().enumerate().map(|(id, &c)| (id, id, c)).collect();
        cpus_of(&layout)
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0,1").unwrap(), vec![0, 1]);
        assert_eq!(parse_cpu_list("0-3").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(parse_cpu_list("6-7, 0-1,4,1").unwrap(), vec![0, 1, 4, 6, 7]);
        assert_eq!(parse_cpu_list("5").unwrap(), vec![5]);
        assert!(parse_cpu_list("").is_err());
        assert!(parse_cpu_list("0,,1").is_err());
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
        assert!(parse_cpu_list("0-").is_err());
        assert_eq!(parse_cpu_list("65535").unwrap(), vec![65535]);
        assert!(parse_cpu_list("0-65536").is_err());
        assert!(parse_cpu_list("0-18446744073709551615").is_err());
    }

    #[test]
    fn declared_split_on_homogeneous_hardware() {
        let s = split(&caps(&[1024; 4]), Some(&[0, 1]), None).unwrap();
        assert_eq!(s.big, vec![0, 1]);
        assert_eq!(s.little, vec![2, 3]);
        assert_eq!(s.speedup, 2.0);
        assert_eq!(s.mode, SplitMode::Declared);
        assert!(s.is_asymmetric());
        let s = split(&caps(&[1024; 4]), Some(&[3]), Some(1.5)).unwrap();
        assert_eq!((s.big, s.little, s.speedup), (vec![3], vec![0, 1, 2], 1.5));
        // All big, none, or offline CPUs are refused.
        assert!(split(&caps(&[1024; 2]), Some(&[0, 1]), None).is_err());
        assert!(split(&caps(&[1024; 2]), Some(&[]), None).is_err());
        assert!(split(&caps(&[1024; 2]), Some(&[5]), None).is_err());
        assert!(split(&caps(&[1024; 2]), Some(&[0]), Some(0.5)).is_err());
    }

    #[test]
    fn hardware_split_from_capacities() {
        let s = split(&caps(&[512, 1024, 512, 1024]), None, None).unwrap();
        assert_eq!(s.big, vec![1, 3]);
        assert_eq!(s.little, vec![0, 2]);
        assert_eq!(s.speedup, 2.0);
        assert_eq!(s.mode, SplitMode::Hardware);
        // --speedup overrides the capacity ratio; --big-cpus overrides capacities.
        assert_eq!(
            split(&caps(&[512, 1024]), None, Some(3.0)).unwrap().speedup,
            3.0
        );
        let s = split(&caps(&[512, 1024]), Some(&[0]), None).unwrap();
        assert_eq!((s.big, s.little), (vec![0], vec![1]));
    }

    #[test]
    fn intel_hybrid_p_cores_are_all_big_though_favoured_ones_boost_higher() {
        // Turbo Boost Max: two favoured P-cores report 1024, the other P-cores
        // a little less; the E-cores about 60%. (Capacities as the kernel's
        // hybrid scaling or CPPC highest_perf give them; shape, not a part.)
        let s = split(
            &caps(&[1024, 1024, 990, 990, 990, 990, 610, 610, 610, 610]),
            None,
            None,
        )
        .unwrap();
        assert_eq!(s.big, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(s.little, vec![6, 7, 8, 9]);
        assert_eq!(s.mode, SplitMode::Hardware);
        let want = (2.0 * 1024.0 + 4.0 * 990.0) / 6.0 / 610.0;
        assert!((s.speedup - want).abs() < 1e-9, "{}", s.speedup);
        // The VM's colab_test_capacity=1024,1024,326,326.
        let s = split(&caps(&[1024, 1024, 326, 326]), None, None).unwrap();
        assert_eq!((&s.big[..], &s.little[..]), (&[0, 1][..], &[2, 3][..]));
        assert!(!s.tiered());
    }

    /// Three core types: little is the slowest alone, big every faster
    /// one, as the simulator's ROTA takes its fast cores. (The average rule
    /// scx_utils' CoreType used would put the 155H's E-cores with the LP
    /// E-cores: (6 x 1024 + 8 x 584 + 2 x 384) / 16 = 724.)
    #[test]
    fn three_tiers_split_slowest_against_the_rest() {
        // topologies/intel-core-ultra-7-155h.toml: P 6.0, E 3.42, LP-E 2.25.
        let mut v = vec![1024; 6];
        v.extend([584; 8]);
        v.extend([384; 2]);
        let s = split(&caps(&v), None, None).unwrap();
        assert_eq!(s.big, (0..14).collect::<Vec<_>>());
        assert_eq!(s.little, vec![14, 15]);
        let want = (6.0 * 1024.0 + 8.0 * 584.0) / 14.0 / 384.0;
        assert!((s.speedup - want).abs() < 1e-9, "{}", s.speedup);
        // The big CPUs in two tiers (ROTA's tiers): E-cores 0, P-cores 1.
        let want: Vec<(usize, u8)> = (0..14).map(|c| (c, u8::from(c < 6))).collect();
        assert_eq!(s.big_tiers, want);
        assert!(
            s.describe()
                .contains("big tiers, slowest first: 6,7,8,9,10,11,12,13 < 0,1,2,3,4,5"),
            "{}",
            s.describe()
        );
        // topologies/tri-cluster.toml: prime 1.3, mid 0.9, efficiency 0.35.
        let s = split(
            &caps(&[1024, 709, 709, 709, 276, 276, 276, 276]),
            None,
            None,
        )
        .unwrap();
        assert_eq!((&s.big, &s.little), (&vec![0, 1, 2, 3], &vec![4, 5, 6, 7]));
        assert_eq!(s.big_tiers, vec![(0, 1), (1, 0), (2, 0), (3, 0)]);
        // --big-cpus declares two clusters: no tiers.
        let s = split(&caps(&[1024, 709, 276]), Some(&[0, 1]), None).unwrap();
        assert!(s.big_tiers.is_empty());
    }

    /// Core types told apart without a capacity difference (Intel's PMU
    /// lists when every CPU reports the same CPPC value, scx#1893): an AMP
    /// whose speedup is --speedup or the default, and says so.
    #[test]
    fn types_without_a_capacity_difference() {
        let mut cpus = caps(&[1024; 4]);
        cpus[2].big = false;
        cpus[3].big = false;
        let s = split(&cpus, None, None).unwrap();
        assert_eq!((s.mode, s.speedup), (SplitMode::TypesOnly, DEFAULT_SPEEDUP));
        assert!(s.is_asymmetric());
        assert!(s.describe().contains("AMP from") && s.describe().contains("--speedup"));
        assert_eq!(split(&cpus, None, Some(1.7)).unwrap().speedup, 1.7);
        // Capacities inverted against the types: not a speedup either.
        cpus[0].capacity = 600;
        cpus[1].capacity = 600;
        assert_eq!(split(&cpus, None, None).unwrap().mode, SplitMode::TypesOnly);
    }

    /// CPUs numbered as Linux numbers an Intel hybrid part: the P-cores'
    /// first threads, their second threads, then the E-cores.
    fn hybrid() -> Vec<CpuCap> {
        // (id, core, capacity): 2 P-cores x 2 threads, 2 E-cores.
        cpus_of(&[
            (0, 0, 1024),
            (1, 1, 1024),
            (2, 0, 1024),
            (3, 1, 1024),
            (4, 2, 600),
            (5, 3, 600),
        ])
    }

    #[test]
    fn smt_siblings_stay_in_one_cluster() {
        let s = split(&hybrid(), None, None).unwrap();
        assert_eq!((&s.big, &s.little), (&vec![0, 1, 2, 3], &vec![4, 5]));
        assert!(s.smt());
        assert_eq!(s.siblings, vec![(0, 2), (1, 3), (2, 0), (3, 1)]);
        assert!(s.describe().contains("SMT"), "{}", s.describe());
        // Declaring a P-core's first thread big and not its second is refused,
        // naming both; whole cores are accepted.
        let e = split(&hybrid(), Some(&[0, 1]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("CPU 0") && e.contains("sibling 2"), "{e}");
        let s = split(&hybrid(), Some(&[0, 2]), None).unwrap();
        assert_eq!((s.big, s.little), (vec![0, 2], vec![1, 3, 4, 5]));
        // One thread per core: no SMT.
        assert!(!split(&caps(&[1024, 512]), None, None).unwrap().smt());
        assert_eq!(split_sibling(&caps(&[1024, 512]), &[0]), None);
    }

    #[test]
    fn big_cpus_gone_offline_are_dropped() {
        let online = caps(&[1024, 1024, 1024]); // CPU 3 went offline
        assert_eq!(online_only(&[0, 3], &online), vec![0]);
        assert_eq!(online_only(&[0, 1], &online), vec![0, 1]);
        // With none of them left, the split says what is wrong.
        let none = online_only(&[3], &online);
        assert!(split(&online, Some(&none), None).is_err());
    }

    #[test]
    fn homogeneous_is_one_cluster() {
        let s = split(&caps(&[1024; 3]), None, None).unwrap();
        assert!(s.big.is_empty());
        assert_eq!(s.little, vec![0, 1, 2]);
        assert_eq!(s.mode, SplitMode::Homogeneous);
        assert!(!s.is_asymmetric());
        assert!(s.describe().contains("one cluster"));
        assert!(split(&[], None, None).is_err());
    }
}
