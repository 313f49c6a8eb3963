//! Training data for counter-based speedup and energy models, from the
//! simulator, the way colab-tpds 5.1 collected it on hardware: each training
//! program runs alone on each core type; since a core reads only a few
//! events at once ("we only have access to seven PMUs at any given moment,
//! we repeatedly execute each application while collecting different
//! PMUs"), every event is read in runs of at most `max_counters` events,
//! CPU_CYCLES in each.
//!
//! Choices made here:
//! - "Alone on a core type" is one core of that type (the machine's type,
//!   with its costs). All of a program's threads then share that core, so
//!   its time there is its work at that type's speed plus switching costs,
//!   and every count comes from that type only; a whole cluster would mix in
//!   parallel speedup (2 big against 4 little cores, say).
//! - Programs run with n = 1 thread where their model allows it (fewest
//!   switches), else at their default n (see [`training_programs`]).
//! - Rows carry the program's speedup `T_slowest / T_fastest` and energy
//!   ratio `E_fastest / E_slowest` of those runs on every row of the
//!   program, whatever the row's core type.
//! - Every run of a (program, core type) uses the same seed, so it is the
//!   same schedule whatever events it counts (counting never changes a
//!   run); CPU_CYCLES comes from the first.

use crate::CampaignError;
use colab_core::Topology;
use colab_sim::counters::Event;
use colab_sim::{simulate, CounterModelPredictor, CounterPredictorRef, PredictorKind, SimConfig};
use colab_workload::{Library, Program, Workload};
use rayon::prelude::*;
use std::io::{self, Write};
use std::sync::Arc;

/// One program on one core type.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingRow {
    pub program: String,
    pub core_type: String,
    /// Whole-run counts, in the order of [`TrainingTable::events`].
    pub counts: Vec<f64>,
    /// Time alone on the slowest core type over time on the fastest.
    pub speedup: f64,
    /// Energy alone on the fastest core type over energy on the slowest.
    pub energy_ratio: f64,
    /// Run time alone on this core type, ns.
    pub time_ns: u64,
    /// Energy of that run, J.
    pub energy_j: f64,
}

/// Rows per (program, core type) in program order, then core-type order.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingTable {
    /// Event names (every event of the counter model, in ARMv8 number order).
    pub events: Vec<String>,
    pub rows: Vec<TrainingRow>,
}

/// Reads fixed events on every core type and predicts nothing.
struct EventReader(Vec<String>);

impl CounterModelPredictor for EventReader {
    fn events(&self, _: &str) -> Vec<String> {
        self.0.clone()
    }
    fn predict(&self, _: &str, _: &dyn Fn(&str) -> Option<f64>) -> Option<(f64, f64)> {
        None
    }
    // Called at every reading: skip the default's copy of the event names.
    fn predict_in_order(&self, _: &str, _: &[f64]) -> Option<(f64, f64)> {
        None
    }
}

/// The built-in programs called `names`, each at n = 1 if its model accepts
/// it, else at its default n.
pub fn training_programs(
    lib: &Library,
    names: &[&str],
) -> Result<Vec<Program>, colab_workload::WorkloadError> {
    names
        .iter()
        .map(|n| lib.program(n, Some(1)).or_else(|_| lib.program(n, None)))
        .collect()
}

/// Event groups one core of this type can read at once: the other events in
/// chunks of `max_counters - 1`, each with CPU_CYCLES.
fn event_groups(max_counters: u32) -> Vec<Vec<String>> {
    let others: Vec<Event> = Event::ALL
        .into_iter()
        .filter(|e| *e != Event::CpuCycles)
        .collect();
    others
        .chunks(max_counters as usize - 1)
        .map(|c| {
            let mut g = vec![Event::CpuCycles.name().to_string()];
            g.extend(c.iter().map(|e| e.name().to_string()));
            g
        })
        .collect()
}

/// Runs every program alone on one core of each core type of `topo`,
/// reading every event, and returns the training table.
pub fn table_from_sim(
    programs: &[Program],
    topo: &Topology,
    seed: u64,
) -> Result<TrainingTable, CampaignError> {
    let types: Vec<usize> = (0..topo.core_types.len())
        .filter(|t| topo.core_type_of.contains(t))
        .collect();
    let mut jobs = Vec::new();
    for (pi, _) in programs.iter().enumerate() {
        for &ty in &types {
            let ct = &topo.core_types[ty];
            if ct.max_counters() < 2 {
                return Err(CampaignError::Training(format!(
                    "core type '{}' counts {} event at once: no room for CPU_CYCLES and another",
                    ct.name,
                    ct.max_counters()
                )));
            }
            for (gi, g) in event_groups(ct.max_counters()).into_iter().enumerate() {
                jobs.push((pi, ty, gi, g));
            }
        }
    }
    let results: Vec<_> = jobs
        .par_iter()
        .map(|(pi, ty, _, group)| {
            let p = &programs[*pi];
            let ct = topo.core_types[*ty].clone();
            let one = Topology::build(
                format!("1x{}", ct.name),
                vec![ct.clone()],
                &[(ct.name.clone(), 0, 1)],
                topo.costs.clone(),
            )?;
            let w = Workload::alone(p);
            let cfg = SimConfig {
                seed,
                predictor: PredictorKind::Counters(CounterPredictorRef(Arc::new(EventReader(
                    group.clone(),
                )))),
                ..SimConfig::default()
            };
            let mut pol = colab_policies::by_name("cfs")?;
            let r = simulate(&w, &one, pol.as_mut(), &cfg).map_err(|e| CampaignError::Sim {
                what: format!("{} alone on one '{}' core", p.name, ct.name),
                source: e,
            })?;
            Ok::<_, CampaignError>(r)
        })
        .collect::<Result<_, _>>()?;
    let events: Vec<String> = Event::ALL.iter().map(|e| e.name().to_string()).collect();
    // (time, energy, counts) per (program, type).
    let mut cells: Vec<Vec<(u64, f64, Vec<f64>)>> =
        vec![vec![(0, 0.0, vec![f64::NAN; events.len()]); topo.core_types.len()]; programs.len()];
    for ((pi, ty, gi, _), r) in jobs.iter().zip(&results) {
        let cell = &mut cells[*pi][*ty];
        if *gi == 0 {
            cell.0 = r.makespan_ns;
            cell.1 = r.energy_j;
        }
        for (name, v) in &r.counters[0].counts {
            let i = events
                .iter()
                .position(|e| e == name)
                .expect("a known event");
            if cell.2[i].is_nan() {
                cell.2[i] = *v;
            }
        }
    }
    let mut rows = Vec::new();
    for (pi, p) in programs.iter().enumerate() {
        let (fast, slow) = (&cells[pi][topo.fastest_type], &cells[pi][topo.slowest_type]);
        let speedup = slow.0 as f64 / fast.0 as f64;
        let energy_ratio = fast.1 / slow.1;
        for &ty in &types {
            let (time_ns, energy_j, counts) = cells[pi][ty].clone();
            rows.push(TrainingRow {
                program: p.name.clone(),
                core_type: topo.core_types[ty].name.clone(),
                counts,
                speedup,
                energy_ratio,
                time_ns,
                energy_j,
            });
        }
    }
    Ok(TrainingTable { events, rows })
}

/// The simulator's training table for `topo` in colab-model's form (the
/// programs of the COLAB study, each alone on each core type), and a line
/// saying where it came from.
pub fn sim_training_table(
    topo: &Topology,
) -> Result<(colab_model::TrainingTable, String), CampaignError> {
    let lib = Library::builtin();
    let programs = training_programs(&lib, &crate::COLAB_BENCHMARKS)
        .map_err(|e| CampaignError::Training(e.to_string()))?;
    let sim_table = table_from_sim(&programs, topo, 1)?;
    // The CSV format is the interface between the two crates.
    let mut csv = Vec::new();
    sim_table
        .write_csv(&mut csv)
        .map_err(|e| CampaignError::Training(e.to_string()))?;
    let text = String::from_utf8(csv).expect("the table is written as UTF-8");
    let table = colab_model::TrainingTable::from_csv_str(&text)
        .map_err(|e| CampaignError::Training(format!("the simulator's training table: {e}")))?;
    let source = format!("simulator ({}, {} programs)", topo.name, programs.len());
    Ok((table, source))
}

/// The name `colab train --from-sim` gives the model of machine `topo`.
pub fn sim_model_name(topo: &Topology) -> String {
    format!("sim-{}", topo.name.to_ascii_lowercase())
}

/// The model of `colab train --from-sim` for `topo`, with default options:
/// what the `model` predictor reads on that machine.
pub fn train_for_machine(topo: &Topology) -> Result<colab_model::Model, CampaignError> {
    let (table, source) = sim_training_table(topo)?;
    let opts = colab_model::TrainOptions {
        name: sim_model_name(topo),
        source,
        ..Default::default()
    };
    colab_model::train(&table, &opts)
        .map_err(|e| CampaignError::Training(format!("{}: {e}", topo.name)))
}

/// A CSV field, quoted if it needs to be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl TrainingTable {
    /// Writes `program,core_type,<EVENT>...,speedup,energy_ratio`, one line
    /// per row; counts as whole numbers (a PMU counts events), ratios with
    /// every digit needed to read them back exactly.
    pub fn write_csv(&self, mut out: impl Write) -> io::Result<()> {
        writeln!(
            out,
            "program,core_type,{},speedup,energy_ratio",
            self.events.join(",")
        )?;
        for r in &self.rows {
            let counts: Vec<String> = r.counts.iter().map(|c| format!("{c:.0}")).collect();
            writeln!(
                out,
                "{},{},{},{},{}",
                field(&r.program),
                field(&r.core_type),
                counts.join(","),
                r.speedup,
                r.energy_ratio
            )?;
        }
        Ok(())
    }

    /// The count of `event` in `row`.
    pub fn count(&self, row: &TrainingRow, event: &str) -> Option<f64> {
        let i = self.events.iter().position(|e| e == event)?;
        row.counts.get(i).copied()
    }
}
