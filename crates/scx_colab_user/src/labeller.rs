//! The labeller glue (colab-tpds 5.4): every period, the futex wait time each
//! task caused others (the BPF map `block_stats`, a counter per pid that
//! only grows) goes through colab-labels' BlockTracker, and every task gets
//! its speedup label from SpeedupRange; what changed is written back to the
//! BPF map `labels`. Pure: the BPF I/O is in sched.rs.

use std::collections::HashMap;

use colab_labels::{BlockTracker, LabelParams, SpeedupLabel, SpeedupRange};

/// Fixed point shared with the BPF side (COLAB_FP_ONE).
pub const FP_ONE: f64 = 1024.0;

/// Below this blocking level a task that is not high-blocking has nothing
/// worth telling the BPF side: its label entry is removed.
const NEGLIGIBLE_LEVEL: f64 = 1e-4;

/// One task's counter at the end of a period.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub pid: u32,
    pub blocked_others_ns: u64,
    pub comm: String,
    /// The task's predicted big/little speedup; None without counters (the
    /// labeller's default prediction applies).
    pub predicted_speedup: Option<f64>,
    /// Its CPU time so far (a total that only grows; 0 without counters).
    pub run_ns: u64,
}

/// What the BPF side reads (struct colab_label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label {
    pub speedup_label: u32,
    pub high_block: bool,
    pub block_level_fp: u32,
    pub speedup_fp: u32,
}

/// A change to the BPF `labels` map.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    Set(u32, Label),
    Delete(u32),
}

impl Label {
    /// The bytes of `struct colab_label` (src/bpf/intf.h: four u32s).
    pub fn to_bytes(&self) -> Vec<u8> {
        [
            self.speedup_label,
            self.high_block as u32,
            self.block_level_fp,
            self.speedup_fp,
        ]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect()
    }
}

/// A `struct colab_block_stat` value of the BPF map `block_stats`: the
/// futex wait time the task caused others and its name (src/bpf/intf.h:
/// u64 blocked_others_ns, u64 charges, char comm[16]).
pub fn block_stat(value: &[u8]) -> Option<(u64, String)> {
    let ns = u64::from_ne_bytes(value.get(..8)?.try_into().ok()?);
    let comm = value.get(16..32)?;
    let end = comm.iter().position(|&b| b == 0).unwrap_or(comm.len());
    Some((ns, String::from_utf8_lossy(&comm[..end]).into_owned()))
}

pub fn speedup_label_code(l: SpeedupLabel) -> u32 {
    match l {
        SpeedupLabel::Medium => 0,
        SpeedupLabel::High => 1,
        SpeedupLabel::Low => 2,
    }
}

pub fn to_fp(x: f64) -> u32 {
    (x * FP_ONE).round().clamp(0.0, u32::MAX as f64) as u32
}

#[derive(Clone, Debug, Default)]
pub struct TaskLabels {
    pub comm: String,
    pub block: BlockTracker,
    pub high_block: bool,
    pub speedup: SpeedupLabel,
    /// The predicted speedup the label came from.
    pub predicted: f64,
    /// CPU time per period, halved every period (who is busy lately).
    pub busy_ns: f64,
    run_total: u64,
    written: Option<Label>,
}

/// The tasks of one name among the busiest (the `--stats` line).
#[derive(Clone, Debug, PartialEq)]
pub struct NameSummary {
    pub name: String,
    pub tasks: usize,
    pub mean_speedup: f64,
    /// Tasks labelled high, medium, low.
    pub labels: [usize; 3],
    busy_ns: f64,
}

/// A task among the most blocking.
#[derive(Clone, Debug, PartialEq)]
pub struct Leader {
    pub name: String,
    pub pid: u32,
    pub level: f64,
    pub high: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LabelCounts {
    pub tracked: usize,
    pub high_block: usize,
    pub speedup_high: usize,
    pub speedup_medium: usize,
    pub speedup_low: usize,
}

pub struct Labeller {
    pub params: LabelParams,
    range: SpeedupRange,
    /// Predicted speedup of a task without a prediction of its own (the
    /// capacity ratio or --speedup; with counters, before its first reading).
    default_speedup: f64,
    tasks: HashMap<u32, TaskLabels>,
}

impl Labeller {
    /// Without counters every task has the same prediction, so the
    /// machine's speedup range is that one value and every task is labelled
    /// medium (colab-labels: no range, no distinction).
    pub fn new(params: LabelParams, default_speedup: f64) -> Labeller {
        let flat = SpeedupRange {
            min: default_speedup,
            max: default_speedup,
        };
        Labeller::with_range(params, flat, default_speedup)
    }

    /// With the machine's speedup range (per-task predictions).
    pub fn with_range(params: LabelParams, range: SpeedupRange, default_speedup: f64) -> Labeller {
        Labeller {
            params,
            range,
            default_speedup,
            tasks: HashMap::new(),
        }
    }

    /// Labels from now on are relative to `range` (counters: see
    /// counters.rs for where it comes from).
    pub fn set_range(&mut self, range: SpeedupRange) {
        self.range = range;
    }

    /// One labelling period: `samples` holds every task with a counter (the
    /// others never kept anyone waiting). Returns the label changes.
    pub fn period(&mut self, samples: &[Sample]) -> Vec<Write> {
        let mut writes = Vec::new();
        let mut seen = std::collections::HashSet::with_capacity(samples.len());
        for s in samples {
            seen.insert(s.pid);
            let speedup = s.predicted_speedup.unwrap_or(self.default_speedup);
            let label = self.range.label(speedup, &self.params);
            let t = self.tasks.entry(s.pid).or_default();
            if !s.comm.is_empty() {
                t.comm.clone_from(&s.comm);
            }
            t.high_block = t.block.update(s.blocked_others_ns, &self.params);
            t.speedup = label;
            t.predicted = speedup;
            let ran = s.run_ns.saturating_sub(t.run_total);
            t.run_total = s.run_ns;
            t.busy_ns = t.busy_ns / 2.0 + ran as f64;
            let new = Label {
                speedup_label: speedup_label_code(label),
                high_block: t.high_block,
                block_level_fp: to_fp(t.block.level),
                speedup_fp: to_fp(speedup),
            };
            let negligible =
                !t.high_block && t.block.level < NEGLIGIBLE_LEVEL && label == SpeedupLabel::Medium;
            if negligible {
                if t.written.take().is_some() {
                    writes.push(Write::Delete(s.pid));
                }
            } else if t.written != Some(new) {
                t.written = Some(new);
                writes.push(Write::Set(s.pid, new));
            }
        }
        // Tasks gone from the counters exited (their entries went with them).
        self.tasks.retain(|pid, t| {
            let keep = seen.contains(pid);
            if !keep && t.written.is_some() {
                writes.push(Write::Delete(*pid));
            }
            keep
        });
        writes.sort_by_key(|w| match w {
            Write::Set(p, _) | Write::Delete(p) => *p,
        });
        writes
    }

    #[cfg(test)]
    pub fn task(&self, pid: u32) -> Option<&TaskLabels> {
        self.tasks.get(&pid)
    }

    /// The `n` most blocking tasks (level > 0), most blocking first.
    pub fn leaders(&self, n: usize) -> Vec<Leader> {
        let mut v: Vec<Leader> = self
            .tasks
            .iter()
            .filter(|(_, t)| t.block.level > 0.0)
            .map(|(&pid, t)| Leader {
                name: t.comm.clone(),
                pid,
                level: t.block.level,
                high: t.high_block,
            })
            .collect();
        v.sort_by(|a, b| b.level.total_cmp(&a.level).then(a.pid.cmp(&b.pid)));
        v.truncate(n);
        v
    }

    /// The `n` names whose tasks ran most lately, busiest first, with
    /// their mean predicted speedup and labels.
    pub fn busiest_names(&self, n: usize) -> Vec<NameSummary> {
        let mut by_name: HashMap<&str, NameSummary> = HashMap::new();
        for t in self.tasks.values() {
            let e = by_name.entry(&t.comm).or_insert_with(|| NameSummary {
                name: t.comm.clone(),
                tasks: 0,
                mean_speedup: 0.0,
                labels: [0; 3],
                busy_ns: 0.0,
            });
            e.tasks += 1;
            e.mean_speedup += t.predicted;
            e.busy_ns += t.busy_ns;
            e.labels[match t.speedup {
                SpeedupLabel::High => 0,
                SpeedupLabel::Medium => 1,
                SpeedupLabel::Low => 2,
            }] += 1;
        }
        let mut v: Vec<NameSummary> = by_name
            .into_values()
            .filter(|s| s.busy_ns > 0.0)
            .map(|mut s| {
                s.mean_speedup /= s.tasks as f64;
                s
            })
            .collect();
        v.sort_by(|a, b| b.busy_ns.total_cmp(&a.busy_ns).then(a.name.cmp(&b.name)));
        v.truncate(n);
        v
    }

    pub fn counts(&self) -> LabelCounts {
        let mut c = LabelCounts {
            tracked: self.tasks.len(),
            ..LabelCounts::default()
        };
        for t in self.tasks.values() {
            c.high_block += t.high_block as usize;
            match t.speedup {
                SpeedupLabel::High => c.speedup_high += 1,
                SpeedupLabel::Medium => c.speedup_medium += 1,
                SpeedupLabel::Low => c.speedup_low += 1,
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pid: u32, ns: u64, comm: &str) -> Sample {
        Sample {
            pid,
            blocked_others_ns: ns,
            comm: comm.into(),
            predicted_speedup: None,
            run_ns: 0,
        }
    }

    fn set_of(writes: &[Write], pid: u32) -> Label {
        writes
            .iter()
            .find_map(|w| match *w {
                Write::Set(p, l) if p == pid => Some(l),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no label written for {pid}"))
    }

    /// crates/policies' colab_selector_runs_the_most_blocking_thread_first:
    /// 1 ms and 8 ms of others' waiting in a 10 ms period. The BPF side
    /// ranks by block_level_fp (big-core pulls) and queues both as
    /// high-blocking (1 ms gives 0.05, at the threshold).
    #[test]
    fn most_blocking_ranks_first_as_in_the_simulator() {
        let mut l = Labeller::new(LabelParams::default(), 2.0);
        let w = l.period(&[sample(1, 1_000_000, "a"), sample(2, 8_000_000, "b")]);
        let top = l.leaders(5);
        assert_eq!(top.iter().map(|x| x.pid).collect::<Vec<_>>(), vec![2, 1]);
        assert!((top[0].level - 0.4).abs() < 1e-12 && (top[1].level - 0.05).abs() < 1e-12);
        let (a, b) = (set_of(&w, 1), set_of(&w, 2));
        assert!(b.block_level_fp > a.block_level_fp);
        assert!(a.high_block && b.high_block);
    }

    /// crates/policies' colab_allocator_follows_labels: the reference
    /// machine's range 1.2 .. ~3.14; 3.0 is high, 1.3 low; a low-speedup
    /// thread that blocks others (9 ms) is low but high-blocking, which the
    /// BPF allocator sends to any cluster.
    #[test]
    fn speedup_labels_with_a_range_as_in_the_simulator() {
        let range = SpeedupRange {
            min: 1.2,
            max: 3.15, // the simulator's ~3.14 (clippy takes 3.14 for pi)
        };
        let mut l = Labeller::with_range(LabelParams::default(), range, 2.0);
        let with = |pid, ns, s| Sample {
            predicted_speedup: Some(s),
            ..sample(pid, ns, "t")
        };
        let w = l.period(&[with(0, 0, 3.0), with(1, 0, 1.3), with(2, 9_000_000, 1.3)]);
        assert_eq!(l.task(0).unwrap().speedup, SpeedupLabel::High);
        assert_eq!(l.task(1).unwrap().speedup, SpeedupLabel::Low);
        let t2 = set_of(&w, 2);
        assert_eq!((t2.speedup_label, t2.high_block), (2, true));
        assert_eq!(set_of(&w, 0).speedup_label, 1);
        assert_eq!(
            set_of(&w, 1),
            Label {
                speedup_label: 2,
                high_block: false,
                block_level_fp: 0,
                speedup_fp: 1331
            }
        );
    }

    /// crates/policies' colab_blocking_level_decays: 4 ms gives 0.2 (high);
    /// five quiet periods later 0.2 / 32 < 0.05 (low again).
    #[test]
    fn blocking_level_decays_as_in_the_simulator() {
        let mut l = Labeller::new(LabelParams::default(), 2.0);
        l.period(&[sample(0, 4_000_000, "t")]);
        assert!(l.task(0).unwrap().high_block);
        assert!((l.task(0).unwrap().block.level - 0.2).abs() < 1e-12);
        for _ in 0..5 {
            l.period(&[sample(0, 4_000_000, "t")]);
        }
        assert!(!l.task(0).unwrap().high_block);
        assert!((l.task(0).unwrap().block.level - 0.2 / 32.0).abs() < 1e-12);
    }

    /// colab-labels' hand-built case: 2 ms of others' waiting in the first
    /// 10 ms period, then nothing: levels 0.1, 0.05 (high at the threshold),
    /// 0.025 (no longer high).
    #[test]
    fn blocking_labels_follow_the_counters_across_periods() {
        let mut l = Labeller::new(LabelParams::default(), 2.0);
        let w = l.period(&[sample(7, 2_000_000, "lockholder")]);
        let t = l.task(7).unwrap();
        assert!(t.high_block);
        assert!((t.block.level - 0.1).abs() < 1e-12);
        assert_eq!(
            w,
            vec![Write::Set(
                7,
                Label {
                    speedup_label: 0,
                    high_block: true,
                    block_level_fp: 102,
                    speedup_fp: 2048
                }
            )]
        );
        let w = l.period(&[sample(7, 2_000_000, "lockholder")]);
        assert!(l.task(7).unwrap().high_block);
        assert!((l.task(7).unwrap().block.level - 0.05).abs() < 1e-12);
        assert!(matches!(
            w[..],
            [Write::Set(
                7,
                Label {
                    high_block: true,
                    block_level_fp: 51,
                    ..
                }
            )]
        ));
        let w = l.period(&[sample(7, 2_000_000, "lockholder")]);
        assert!(!l.task(7).unwrap().high_block);
        assert!(matches!(
            w[..],
            [Write::Set(
                7,
                Label {
                    high_block: false,
                    ..
                }
            )]
        ));
        // A counter that went backwards (a reused pid) counts as nothing.
        l.period(&[sample(7, 1_000, "lockholder")]);
        assert!(!l.task(7).unwrap().high_block);
    }

    #[test]
    fn negligible_tasks_are_removed_and_exited_ones_forgotten() {
        let mut l = Labeller::new(LabelParams::default(), 2.0);
        // 1 us of waiting: level 5e-5, negligible, nothing written.
        assert!(l.period(&[sample(3, 1_000, "w")]).is_empty());
        // Blocking, then decaying to nothing: a Set, then a Delete.
        let mut writes = Vec::new();
        let total = 1_000 + 5_000_000;
        writes.extend(l.period(&[sample(3, total, "w")]));
        assert!(l.task(3).unwrap().high_block);
        for _ in 0..20 {
            writes.extend(l.period(&[sample(3, total, "w")]));
        }
        assert!(matches!(writes.first(), Some(Write::Set(3, _))));
        assert_eq!(writes.last(), Some(&Write::Delete(3)));
        // A task that is labelled and then exits is deleted and forgotten.
        l.period(&[sample(4, 9_000_000, "x")]);
        let w = l.period(&[]);
        assert_eq!(w, vec![Write::Delete(4)]);
        assert!(l.task(4).is_none());
    }

    /// The bottleneck is the leader, HIGH; the rest follow by level.
    #[test]
    fn leaders_rank_by_level() {
        let mut l = Labeller::new(LabelParams::default(), 2.0);
        l.period(&[
            sample(10, 8_000_000, "lockholder"),
            sample(11, 200_000, "lockwaiter"),
            sample(12, 600_000, "lockwaiter"),
            sample(13, 0, "idle"),
        ]);
        let top = l.leaders(5);
        let names: Vec<(u32, bool)> = top.iter().map(|x| (x.pid, x.high)).collect();
        assert_eq!(names, vec![(10, true), (12, false), (11, false)]);
        assert_eq!(l.leaders(1).len(), 1);
        let c = l.counts();
        assert_eq!((c.tracked, c.high_block, c.speedup_medium), (4, 1, 4));
    }

    /// Without counters every task has one prediction: no range, all medium
    /// (colab-labels' flat-range case), whatever the speedup.
    #[test]
    fn capacity_fallback_labels_everyone_medium() {
        for s in [1.0, 2.0, 3.5] {
            let mut l = Labeller::new(LabelParams::default(), s);
            l.period(&[sample(1, 5_000_000, "a")]);
            assert_eq!(l.task(1).unwrap().speedup, SpeedupLabel::Medium);
        }
        assert_eq!(speedup_label_code(SpeedupLabel::High), 1);
        assert_eq!(speedup_label_code(SpeedupLabel::Low), 2);
        assert_eq!(to_fp(1.5), 1536);
    }

    /// The busiest names come first, their threads summed, labels counted.
    #[test]
    fn busiest_names_rank_by_recent_cpu_time() {
        let range = SpeedupRange { min: 1.0, max: 2.0 };
        let mut l = Labeller::with_range(LabelParams::default(), range, 1.5);
        let s = |pid, comm: &str, speedup, run_ns| Sample {
            predicted_speedup: Some(speedup),
            run_ns,
            ..sample(pid, 0, comm)
        };
        l.period(&[
            s(1, "faulter", 2.5, 4_000_000),
            s(2, "faulter", 2.0, 4_000_000),
            s(3, "hog", 1.0, 5_000_000),
            s(4, "sh", 3.0, 100_000),
            s(5, "idle", 1.0, 0),
        ]);
        // Next period: the hog ran 5 ms more, the faulters 4 ms each.
        l.period(&[
            s(1, "faulter", 2.5, 8_000_000),
            s(2, "faulter", 2.0, 8_000_000),
            s(3, "hog", 1.0, 10_000_000),
            s(4, "sh", 3.0, 100_000),
            s(5, "idle", 1.0, 0),
        ]);
        let b = l.busiest_names(5);
        let names: Vec<&str> = b.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["faulter", "hog", "sh"]); // idle never ran
        assert_eq!(
            (b[0].tasks, b[0].mean_speedup, b[0].labels),
            (2, 2.25, [2, 0, 0])
        );
        assert_eq!((b[1].tasks, b[1].labels), (1, [0, 0, 1]));
        assert_eq!(l.busiest_names(1).len(), 1);
    }
}
