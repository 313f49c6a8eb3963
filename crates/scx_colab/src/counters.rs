//! Per-task speedup predictions from performance counters (colab-tpds 5.1)
//! with a colab-model model: what each cluster's CPUs count, and every
//! labelling period, from each task's counts since the last period, its
//! predicted big/little speedup. Pure: the counts come from the BPF map
//! `task_pmu` (sched.rs), the perf events from pmu.rs.

use std::collections::{HashMap, HashSet};

use anyhow::{bail, Result};
use colab_labels::SpeedupRange;
use colab_model::Model;

use crate::bpf_intf;

/// Counters per CPU the BPF side handles (COLAB_MAX_EVENTS).
pub const MAX_EVENTS: usize = bpf_intf::colab_consts_COLAB_MAX_EVENTS as usize;
/// Cluster indices of struct colab_task_pmu.
pub const BIG: usize = 0;
pub const LITTLE: usize = 1;

/// A reading shorter than this is not used: it goes on counting. The
/// simulator's threshold (colab-sim counters::MIN_READING_NS, 20 us), so
/// both read the same way.
pub const MIN_READING_NS: u64 = 20_000;

/// A task's totals as the BPF side keeps them (struct colab_task_pmu).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskTotals {
    pub counts: [[u64; MAX_EVENTS]; 2],
    pub run_ns: [u64; 2],
    /// The task's name when it last stopped running.
    pub comm: String,
}

impl TaskTotals {
    /// From the raw map value (struct colab_task_pmu, native endian u64s).
    pub fn from_bytes(b: &[u8]) -> Option<TaskTotals> {
        if b.len() < std::mem::size_of::<bpf_intf::colab_task_pmu>() {
            return None;
        }
        let word = |i: usize| u64::from_ne_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
        let mut t = TaskTotals::default();
        for c in 0..2 {
            for e in 0..MAX_EVENTS {
                t.counts[c][e] = word(c * MAX_EVENTS + e);
            }
            t.run_ns[c] = word(2 * MAX_EVENTS + c);
        }
        let comm = &b[(2 * MAX_EVENTS + 2) * 8..][..bpf_intf::colab_consts_COLAB_COMM_LEN as usize];
        let end = comm.iter().position(|&c| c == 0).unwrap_or(comm.len());
        t.comm = String::from_utf8_lossy(&comm[..end]).into_owned();
        Some(t)
    }
}

struct TaskState {
    last: TaskTotals,
    prediction: Option<f64>,
}

/// The model, the core type each cluster stands for, and what each task
/// was last predicted.
pub struct CounterModel {
    model: Model,
    /// Core type of the big and the little cluster, as the model names them.
    types: [String; 2],
    tasks: HashMap<u32, TaskState>,
}

impl CounterModel {
    /// `big_type` and `little_type` name the model's entries for the two
    /// clusters (the `"*"` entry serves both if they have none).
    pub fn new(model: Model, big_type: &str, little_type: &str) -> Result<CounterModel> {
        for t in [big_type, little_type] {
            if model.entry(t).is_none() {
                let known: Vec<&str> = model.core_types().map(|(k, _)| k).collect();
                bail!(
                    "model `{}` has no core type `{t}` (it has: {}); name the clusters' core \
                     types with --big-type and --little-type",
                    model.name(),
                    known.join(", ")
                );
            }
            let n = model.events(t).len();
            if n > MAX_EVENTS {
                bail!(
                    "model `{}` reads {n} counters on `{t}` (CPU_CYCLES included); scx_colab \
                     programs at most {MAX_EVENTS} per CPU",
                    model.name()
                );
            }
        }
        Ok(CounterModel {
            model,
            types: [big_type.to_string(), little_type.to_string()],
            tasks: HashMap::new(),
        })
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The events the CPUs of `cluster` count, CPU_CYCLES last.
    pub fn events(&self, cluster: usize) -> &[String] {
        self.model.events(&self.types[cluster])
    }

    /// The speedup range labels are relative to: the range of the speedups
    /// the model was trained on (the measured ones of its training
    /// programs), when the model file says.
    pub fn trained_range(&self) -> Option<SpeedupRange> {
        let t = self.model.training()?;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for s in t.core_types.values() {
            for p in &s.programs {
                lo = lo.min(p.speedup.actual);
                hi = hi.max(p.speedup.actual);
            }
        }
        (lo.is_finite() && hi.is_finite() && hi > lo).then_some(SpeedupRange { min: lo, max: hi })
    }

    /// A task's prediction after this period's totals: from what it did
    /// since the last period on the cluster where it ran longest, if that
    /// is a reading of at least MIN_READING_NS the model accepts; else
    /// the previous prediction (None before the first).
    pub fn update(&mut self, pid: u32, now: &TaskTotals) -> Option<f64> {
        let st = self.tasks.entry(pid).or_insert(TaskState {
            last: TaskTotals::default(),
            prediction: None,
        });
        if now.run_ns[0] < st.last.run_ns[0] || now.run_ns[1] < st.last.run_ns[1] {
            // A reused pid: totals started again.
            st.last = TaskTotals::default();
            st.prediction = None;
        }
        let ran = [
            now.run_ns[0] - st.last.run_ns[0],
            now.run_ns[1] - st.last.run_ns[1],
        ];
        let c = if ran[BIG] >= ran[LITTLE] { BIG } else { LITTLE };
        if ran[c] >= MIN_READING_NS {
            let n = self.model.events(&self.types[c]).len();
            let values: Vec<f64> = (0..n)
                .map(|e| now.counts[c][e].wrapping_sub(st.last.counts[c][e]) as f64)
                .collect();
            if let Ok(p) = self.model.predict_in_order(&self.types[c], &values) {
                if p.speedup.is_finite() {
                    st.prediction = Some(p.speedup);
                }
            }
            st.last = now.clone();
        }
        st.prediction
    }

    /// Forgets the tasks not in `alive` (they exited).
    pub fn retain(&mut self, alive: &HashSet<u32>) {
        self.tasks.retain(|pid, _| alive.contains(pid));
    }
}

/// The range of this period's predictions, for models that do not say
/// what they were trained on: None with fewer than two distinct values.
pub fn observed_range(predictions: impl IntoIterator<Item = f64>) -> Option<SpeedupRange> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for p in predictions {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    (lo.is_finite() && hi > lo).then_some(SpeedupRange { min: lo, max: hi })
}

#[cfg(test)]
mod tests {
    use super::*;
    use colab_model::{CoreModel, Linear, Source};
    use std::collections::BTreeMap;

    /// speedup = 1 + 2000 * PAGE_FAULTS / CPU_CYCLES on both clusters.
    fn model() -> Model {
        let lin = |i: f64, c: f64| Linear {
            intercept: i,
            coefficients: BTreeMap::from([("PAGE_FAULTS".to_string(), c)]),
        };
        let cm = CoreModel::new(vec!["PAGE_FAULTS".into()], lin(1.0, 2000.0), lin(1.0, 0.0));
        Model::new(
            "test",
            Source::Trained {
                table: "none".into(),
            },
            true,
            BTreeMap::from([("*".to_string(), cm)]),
            None,
        )
        .unwrap()
    }

    fn totals(cluster: usize, faults: u64, cycles: u64, ns: u64) -> TaskTotals {
        let mut t = TaskTotals::default();
        t.counts[cluster][0] = faults;
        t.counts[cluster][1] = cycles;
        t.run_ns[cluster] = ns;
        t
    }

    #[test]
    fn predictions_come_from_the_period_deltas() {
        let mut m = CounterModel::new(model(), "big", "little").unwrap();
        assert_eq!(m.events(BIG), ["PAGE_FAULTS", "CPU_CYCLES"]);
        // 1 fault per 1000 cycles: 1 + 2000 / 1000 = 3.
        let t1 = totals(LITTLE, 10, 10_000, 50_000);
        assert_eq!(m.update(7, &t1), Some(3.0));
        // Next period: 0 faults in 20000 more cycles: 1.0.
        let t2 = totals(LITTLE, 10, 30_000, 100_000);
        assert_eq!(m.update(7, &t2), Some(1.0));
        // Too short a reading keeps the prediction and goes on counting.
        let t3 = totals(LITTLE, 30, 31_000, 110_000);
        assert_eq!(m.update(7, &t3), Some(1.0));
        // ... which the next reading then includes: 20 faults / 2000 cycles.
        let t4 = totals(LITTLE, 30, 32_000, 130_000);
        assert_eq!(m.update(7, &t4), Some(21.0));
        // A task that never ran long enough has no prediction.
        assert_eq!(m.update(8, &totals(BIG, 1, 100, 1_000)), None);
    }

    #[test]
    fn the_longer_cluster_counts_and_reused_pids_start_over() {
        let mut m = CounterModel::new(model(), "big", "little").unwrap();
        let mut t = totals(BIG, 0, 10_000, 30_000); // 0 faults on big
        t.counts[LITTLE][0] = 5;
        t.counts[LITTLE][1] = 1_000;
        t.run_ns[LITTLE] = 25_000; // shorter: ignored
        assert_eq!(m.update(1, &t), Some(1.0));
        // Totals that went backwards: a new task with the same pid.
        assert_eq!(m.update(1, &totals(LITTLE, 1, 1_000, 30_000)), Some(3.0));
        // Zero cycles: the model declines, no prediction yet.
        assert_eq!(m.update(2, &totals(BIG, 1, 0, 30_000)), None);
        m.retain(&HashSet::from([2]));
        assert_eq!(m.update(1, &totals(BIG, 0, 0, 0)), None);
    }

    #[test]
    fn bad_core_types_and_too_many_events_are_refused() {
        let mut ct = BTreeMap::new();
        let lin = Linear {
            intercept: 1.0,
            coefficients: BTreeMap::new(),
        };
        ct.insert(
            "a76".to_string(),
            CoreModel::new(vec![], lin.clone(), lin.clone()),
        );
        let m = Model::new("m", Source::Trained { table: "t".into() }, true, ct, None).unwrap();
        let e = CounterModel::new(m, "big", "little")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no core type `big`") && e.contains("a76"), "{e}");

        let events: Vec<String> = (0..MAX_EVENTS).map(|i| format!("E{i}")).collect();
        let coef: BTreeMap<String, f64> = events.iter().map(|e| (e.clone(), 0.0)).collect();
        let lin = Linear {
            intercept: 1.0,
            coefficients: coef,
        };
        let cm = CoreModel::new(events, lin.clone(), lin);
        let m = Model::new(
            "wide",
            Source::Trained { table: "t".into() },
            true,
            BTreeMap::from([("*".to_string(), cm)]),
            None,
        )
        .unwrap();
        let e = CounterModel::new(m, "big", "little")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("reads 9 counters"), "{e}");
    }

    #[test]
    fn ranges() {
        let m =
            CounterModel::new(Model::builtin("sim-reference").unwrap(), "big", "little").unwrap();
        let r = m.trained_range().unwrap();
        assert!(r.min > 1.0 && r.max > r.min && r.max < 5.0, "{r:?}");
        assert!(CounterModel::new(model(), "b", "l")
            .unwrap()
            .trained_range()
            .is_none());
        let r = observed_range([2.0, 1.5, 3.0]).unwrap();
        assert_eq!((r.min, r.max), (1.5, 3.0));
        assert!(observed_range([2.0, 2.0]).is_none());
        assert!(observed_range([]).is_none());
    }

    /// The VM test's software-event model (scripts/vm/guest): a faulting
    /// thread and a hog land at the two ends of --speedup-range 1,2.
    #[test]
    fn the_vm_test_model_separates_faulters_from_hogs() {
        let text = include_str!("../../../scripts/vm/guest/counters-model.json");
        let m = Model::from_json(text).unwrap();
        let mut cm = CounterModel::new(m, "big", "little").unwrap();
        assert_eq!(cm.events(LITTLE), ["PAGE_FAULTS", "CPU_CYCLES"]);
        // cpu-clock as CPU_CYCLES: 1 ms of CPU, a fault every 100 us.
        assert_eq!(
            cm.update(1, &totals(BIG, 10, 1_000_000, 1_000_000)),
            Some(3.0)
        );
        assert_eq!(
            cm.update(2, &totals(LITTLE, 0, 1_000_000, 1_000_000)),
            Some(1.0)
        );
    }

    #[test]
    fn task_pmu_layout_matches_intf_h() {
        let mut b = Vec::new();
        for i in 0..(2 * MAX_EVENTS + 2) as u64 {
            b.extend_from_slice(&(i * 10).to_ne_bytes());
        }
        b.extend_from_slice(b"hog\0\0\0\0\0\0\0\0\0\0\0\0\0");
        assert_eq!(b.len(), std::mem::size_of::<bpf_intf::colab_task_pmu>());
        let t = TaskTotals::from_bytes(&b).unwrap();
        assert_eq!(t.counts[BIG][1], 10);
        assert_eq!(t.counts[LITTLE][0], 10 * MAX_EVENTS as u64);
        assert_eq!(t.run_ns, [160, 170]);
        assert_eq!(t.comm, "hog");
        assert!(TaskTotals::from_bytes(&b[..8]).is_none());
    }
}
