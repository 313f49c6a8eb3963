//! `colab model-check`: each benchmark model against recordings of the real
//! program it models (a trace library), kind of wait by kind of wait.
//!
//! Both sides are put through the same measurement: the program alone on
//! `n` reference big cores under CFS for its run time, alone on one big core
//! for its CPU time. The model's waits come from the simulator (barrier and
//! condition waits are broadcasts; mutex and queue waits hand-offs); the
//! recording's from `colab_trace::sync` (a futex word whose waiters were
//! released together is a broadcast, other words hand-offs), the median over
//! the recordings. A kind agrees when its rate per second of run time is
//! within [`RATE_BAND`] of the recording's, or when both sides wait fewer
//! than [`NEGLIGIBLE_WAITS`] times per run.

use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, SimConfig, SimResult};
use colab_trace::library::{read_trace_text, Manifest};
use colab_trace::{sync::sync_stats, to_program, ReplayOptions, Trace};
use colab_workload::{Library, Program, Workload};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// A model's rate of a kind of wait agrees with the real program's when
/// the two are within this factor (the quality bar the models are held to;
/// assumption, chosen once for every program and kind).
pub const RATE_BAND: f64 = 1.5;

/// Fewer waits of a kind per run than this, on both sides, is no wait of
/// that kind worth modelling (assumption: below one wait per worker per
/// run at 8 workers).
pub const NEGLIGIBLE_WAITS: f64 = 8.0;

#[derive(Debug, thiserror::Error)]
pub enum ModelCheckError {
    #[error("{0}")]
    Library(#[from] colab_trace::library::LibraryError),
    #[error("{0}")]
    Workload(#[from] colab_workload::WorkloadError),
    #[error("{0}")]
    Policy(#[from] colab_policies::PolicyError),
    #[error("{what}: {message}")]
    Other { what: String, message: String },
}

fn other(what: impl Into<String>, message: impl ToString) -> ModelCheckError {
    ModelCheckError::Other {
        what: what.into(),
        message: message.to_string(),
    }
}

/// How one program runs and waits, per run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Profile {
    pub threads: u32,
    /// Alone on one reference big core.
    pub cpu_ms: f64,
    /// Alone on `n` reference big cores (CFS).
    pub run_ms: f64,
    pub broadcast: f64,
    pub handoff: f64,
    pub join: f64,
    pub sleep: f64,
}

impl Profile {
    pub fn per_s(&self, count: f64) -> f64 {
        if self.run_ms > 0.0 {
            count * 1000.0 / self.run_ms
        } else {
            0.0
        }
    }
}

/// One kind of wait, model against recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agreement {
    /// Within [`RATE_BAND`].
    Within,
    /// Fewer than [`NEGLIGIBLE_WAITS`] per run on both sides.
    Negligible,
    /// Outside the band (or one side has none).
    Outside,
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub program: String,
    /// Worker threads asked of the real program and of the model.
    pub n: u32,
    pub recordings: usize,
    pub model: Profile,
    pub trace: Profile,
    pub broadcast: Agreement,
    pub handoff: Agreement,
}

impl Comparison {
    pub fn agrees(&self) -> bool {
        self.broadcast != Agreement::Outside && self.handoff != Agreement::Outside
    }
}

/// Rate of the recording over the model's (`None` when the model has none).
pub fn rate_ratio(model: &Profile, trace: &Profile, m: f64, t: f64) -> Option<f64> {
    let (rm, rt) = (model.per_s(m), trace.per_s(t));
    (rm > 0.0).then(|| rt / rm)
}

fn agreement(model: &Profile, trace: &Profile, m: f64, t: f64) -> Agreement {
    if m < NEGLIGIBLE_WAITS && t < NEGLIGIBLE_WAITS {
        return Agreement::Negligible;
    }
    match rate_ratio(model, trace, m, t) {
        Some(r) if (1.0 / RATE_BAND..=RATE_BAND).contains(&r) => Agreement::Within,
        _ => Agreement::Outside,
    }
}

fn run_alone(p: &Program, topo: &Topology) -> Result<SimResult, ModelCheckError> {
    let w = Workload::alone(p);
    let mut cfs = colab_policies::by_name("cfs")?;
    simulate(&w, topo, cfs.as_mut(), &SimConfig::default()).map_err(|e| other(&p.name, e))
}

fn machines(n: u32) -> Result<(Topology, Topology), ModelCheckError> {
    let named = |s: String| Topology::named(&s, CoreOrder::BigFirst).map_err(|e| other(&s, e));
    Ok((named(format!("{n}B"))?, named("1B".into())?))
}

/// The model of `program` with `n` workers.
pub fn model_profile(lib: &Library, program: &str, n: u32) -> Result<Profile, ModelCheckError> {
    let p = lib.program(program, Some(n as i64))?;
    let (many, one) = machines(n)?;
    let r = run_alone(&p, &many)?;
    let w = &r.stats.waits;
    Ok(Profile {
        threads: p.total_threads,
        cpu_ms: run_alone(&p, &one)?.makespan_ns as f64 / 1e6,
        run_ms: r.makespan_ns as f64 / 1e6,
        broadcast: (w.barrier + w.condvar) as f64,
        handoff: (w.mutex + w.queue) as f64,
        join: w.join as f64,
        sleep: w.sleep as f64,
    })
}

/// One recording, replayed as the library says.
pub fn trace_profile(
    trace: &Trace,
    opts: &ReplayOptions,
    n: u32,
) -> Result<Profile, ModelCheckError> {
    let p = to_program(trace, opts).map_err(|e| other(&opts.name, e))?;
    let (many, one) = machines(n)?;
    let s = sync_stats(trace);
    Ok(Profile {
        threads: p.total_threads,
        cpu_ms: run_alone(&p, &one)?.makespan_ns as f64 / 1e6,
        run_ms: run_alone(&p, &many)?.makespan_ns as f64 / 1e6,
        broadcast: s.broadcast_waits as f64,
        handoff: s.handoff_waits as f64,
        join: s.join_waits as f64,
        sleep: s.sleeps as f64,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        k if k % 2 == 1 => v[k / 2],
        k => (v[k / 2 - 1] + v[k / 2]) / 2.0,
    }
}

/// Field by field median of several recordings' profiles.
pub fn median_profile(ps: &[Profile]) -> Profile {
    let m = |f: fn(&Profile) -> f64| median(ps.iter().map(f).collect());
    Profile {
        threads: median(ps.iter().map(|p| p.threads as f64).collect()).round() as u32,
        cpu_ms: m(|p| p.cpu_ms),
        run_ms: m(|p| p.run_ms),
        broadcast: m(|p| p.broadcast),
        handoff: m(|p| p.handoff),
        join: m(|p| p.join),
        sleep: m(|p| p.sleep),
    }
}

/// Every program of the library recorded with `n` workers that has a
/// model of the same name in `lib` (or only `only`, when given: an unknown
/// name there is an error), model against recordings.
pub fn compare_library(
    lib: &Library,
    dir: &Path,
    n: u32,
    only: &[String],
    sleep_unnamed_wakes: bool,
) -> Result<Vec<Comparison>, ModelCheckError> {
    let m = Manifest::load(dir)?;
    let mut programs: Vec<String> = m
        .trace
        .iter()
        .filter(|e| e.threads == Some(n))
        .map(|e| e.program.clone())
        .collect();
    programs.sort();
    programs.dedup();
    for o in only {
        if !programs.contains(o) {
            return Err(other(
                format!("{}", dir.display()),
                format!(
                    "no recording of {o} with {n} workers (recorded: {})",
                    programs.join(", ")
                ),
            ));
        }
    }
    let mut out = Vec::new();
    for prog in programs {
        if !only.is_empty() && !only.contains(&prog) {
            continue;
        }
        if lib.program(&prog, Some(n as i64)).is_err() {
            continue;
        }
        let mut ps = Vec::new();
        for e in m
            .trace
            .iter()
            .filter(|e| e.program == prog && e.threads == Some(n))
        {
            let path = dir.join(&e.file);
            let text =
                read_trace_text(&path).map_err(|err| other(path.display().to_string(), err))?;
            let trace = Trace::parse(&path.to_string_lossy(), &text)
                .map_err(|err| other(path.display().to_string(), err))?;
            let opts = ReplayOptions {
                name: e.name.clone(),
                speedup: e.speedup,
                thread_speedup: e.thread_speedup.clone(),
                keep_tracing_overhead: false,
                sleep_unnamed_wakes,
            };
            ps.push(trace_profile(&trace, &opts, n)?);
        }
        let trace = median_profile(&ps);
        let model = model_profile(lib, &prog, n)?;
        out.push(Comparison {
            broadcast: agreement(&model, &trace, model.broadcast, trace.broadcast),
            handoff: agreement(&model, &trace, model.handoff, trace.handoff),
            program: prog,
            n,
            recordings: ps.len(),
            model,
            trace,
        });
    }
    Ok(out)
}

fn ratio_cell(r: Option<f64>, a: Agreement) -> String {
    let mark = match a {
        Agreement::Within => "",
        Agreement::Negligible => "",
        Agreement::Outside => " **outside**",
    };
    match r {
        _ if a == Agreement::Negligible => "-".into(),
        Some(r) => format!("{r:.2}{mark}"),
        None => format!("model 0{mark}"),
    }
}

/// The comparison as a Markdown table.
pub fn table(cs: &[Comparison]) -> String {
    let mut s = String::from(
        "| program | threads model / real | CPU ms model / real | run ms model / real | \
         broadcast waits per run model / real | real / model per s | \
         hand-off waits per run model / real | real / model per s | joins model / real |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for c in cs {
        let (m, t) = (&c.model, &c.trace);
        let _ = writeln!(
            s,
            "| {} | {} / {} | {:.1} / {:.1} | {:.1} / {:.1} | {:.0} / {:.0} | {} | {:.0} / {:.0} | {} | {:.0} / {:.0} |",
            c.program,
            m.threads,
            t.threads,
            m.cpu_ms,
            t.cpu_ms,
            m.run_ms,
            t.run_ms,
            m.broadcast,
            t.broadcast,
            ratio_cell(rate_ratio(m, t, m.broadcast, t.broadcast), c.broadcast),
            m.handoff,
            t.handoff,
            ratio_cell(rate_ratio(m, t, m.handoff, t.handoff), c.handoff),
            m.join,
            t.join,
        );
    }
    let ok = cs.iter().filter(|c| c.agrees()).count();
    let _ = writeln!(
        s,
        "\n{ok} of {} models within {RATE_BAND}x of their real program's rate of every kind of wait \
         (kinds with fewer than {NEGLIGIBLE_WAITS} waits per run on both sides not compared).",
        cs.len()
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prof(run_ms: f64, broadcast: f64, handoff: f64) -> Profile {
        Profile {
            threads: 4,
            cpu_ms: run_ms * 4.0,
            run_ms,
            broadcast,
            handoff,
            join: 1.0,
            sleep: 0.0,
        }
    }

    #[test]
    fn rates_are_compared_per_second_of_run_time() {
        // 100 waits in 100 ms (1000/s) against 70 in 50 ms (1400/s): 1.4x.
        let (m, t) = (prof(100.0, 100.0, 0.0), prof(50.0, 70.0, 0.0));
        let r = rate_ratio(&m, &t, m.broadcast, t.broadcast).unwrap();
        assert!((r - 1.4).abs() < 1e-12, "{r}");
        assert_eq!(agreement(&m, &t, 100.0, 70.0), Agreement::Within);
        // Same counts, but the real run is three times shorter: 3x the rate.
        let t = prof(100.0 / 3.0, 100.0, 0.0);
        assert_eq!(agreement(&m, &t, 100.0, 100.0), Agreement::Outside);
        // The band's edges are inside, just beyond is outside.
        let t = prof(100.0, 150.0, 0.0);
        assert_eq!(agreement(&m, &t, 100.0, 150.0), Agreement::Within);
        assert_eq!(agreement(&m, &t, 100.0, 151.0), Agreement::Outside);
        assert_eq!(agreement(&m, &t, 100.0, 66.0), Agreement::Outside);
    }

    #[test]
    fn a_kind_only_one_side_has_is_outside_unless_both_are_few() {
        let (m, t) = (prof(100.0, 0.0, 0.0), prof(100.0, 20.0, 7.0));
        assert_eq!(rate_ratio(&m, &t, 0.0, 20.0), None);
        assert_eq!(agreement(&m, &t, 0.0, 20.0), Agreement::Outside);
        assert_eq!(agreement(&m, &t, 0.0, 7.0), Agreement::Negligible);
        assert_eq!(agreement(&m, &t, 7.9, 0.0), Agreement::Negligible);
        assert_eq!(agreement(&m, &t, 8.0, 0.0), Agreement::Outside);
    }

    #[test]
    fn the_recordings_median_is_taken_field_by_field() {
        let ps = [
            prof(10.0, 300.0, 5.0),
            prof(30.0, 100.0, 1.0),
            prof(20.0, 200.0, 9.0),
        ];
        let m = median_profile(&ps);
        assert_eq!((m.run_ms, m.broadcast, m.handoff), (20.0, 200.0, 5.0));
        let m = median_profile(&ps[..2]);
        assert_eq!((m.run_ms, m.broadcast, m.handoff), (20.0, 200.0, 3.0));
    }

    #[test]
    fn an_unrecorded_program_is_an_error_naming_what_was_recorded() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/parsec");
        let err = compare_library(&Library::builtin(), &dir, 4, &["nosuch".into()], false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no recording of nosuch with 4 workers"),
            "{err}"
        );
        assert!(err.contains("ocean_cp"), "{err}");
    }

    #[test]
    fn a_program_is_compared_over_all_its_recordings() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/parsec");
        let cs = compare_library(&Library::builtin(), &dir, 4, &["lu_cb".into()], false).unwrap();
        assert_eq!(cs.len(), 1);
        let c = &cs[0];
        assert_eq!((c.program.as_str(), c.n, c.recordings), ("lu_cb", 4, 3));
        assert_eq!((c.model.threads, c.trace.threads), (4, 4));
        // Four threads on one core take longer than on four.
        for p in [&c.model, &c.trace] {
            assert!(p.cpu_ms > 1.2 * p.run_ms, "{p:?}");
        }
    }
}
