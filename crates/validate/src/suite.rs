//! The `colab validate` run around the cases: this machine's topology, the
//! real programs (run, recorded, replayed), the run's description for the
//! report, and the tables printed at the end.

use crate::programs::{self, ProgramCase};
use crate::{CaseResult, ValidateOptions};
use anyhow::{Context, Result};
use colab_native::Calibration;
use colab_trace::library::Entry;
use colab_trace::record::RecordOptions;
use std::path::Path;

/// The topology to simulate this machine with: the file `given`, or one
/// measured now by calibration (its warnings go to `warn`). Returns the
/// topology's TOML text, how it was had, and the busy-loop calibration.
pub fn machine_topology(
    given: Option<&Path>,
    log: &mut dyn FnMut(&str),
) -> Result<(String, String, Calibration)> {
    Ok(match given {
        Some(p) => (
            std::fs::read_to_string(p)
                .with_context(|| format!("{}: cannot read topology file", p.display()))?,
            format!("topology {}", p.display()),
            colab_native::calibrate_spin(),
        ),
        None => {
            log("validate: calibrating this machine...");
            let m = colab_native::calibrate::measure();
            for w in &m.warnings {
                log(&format!(
                    "warning: calibrate: {w} (the report's topology says so too)"
                ));
            }
            (
                m.topology_toml("this-machine"),
                "topology measured now by calibrate".into(),
                m.spin,
            )
        }
    })
}

/// How the real programs are run and recorded.
pub struct RealRun<'a> {
    pub recordings: u32,
    pub record: &'a RecordOptions,
    /// Keep every recording here (gzipped) for a trace library.
    pub keep: Option<&'a Path>,
    /// Scratch directory (the input file, the traces being replayed).
    pub work: &'a Path,
}

/// Runs, records and replays each real program that is installed (the
/// others are skipped with a message to `log`). Returns one result per
/// program and the kept recordings' manifest entries.
pub fn run_real_programs(
    list: &[ProgramCase],
    opts: &ValidateOptions,
    real: &RealRun<'_>,
    log: &mut dyn FnMut(&str),
) -> Result<(Vec<CaseResult>, Vec<Entry>)> {
    std::fs::create_dir_all(real.work)
        .with_context(|| format!("{}: cannot create", real.work.display()))?;
    let input = programs::make_input(real.work)?;
    if let Some(dir) = real.keep {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    let (reps, recordings) = (opts.reps, real.recordings);
    let mut results = Vec::new();
    let mut kept = Vec::new();
    for p in list {
        if !programs::available(p) {
            log(&format!(
                "validate: skipping {}: `{}` not found (Debian package {})",
                p.name, p.command[0], p.package
            ));
            continue;
        }
        log(&format!(
            "validate: real program {} (run {reps} times, record and replay {recordings} times)",
            p.name
        ));
        let (r, k) = programs::run_program(
            p,
            &input,
            real.work,
            reps,
            recordings,
            opts.seeds,
            &opts.topology,
            &opts.policy,
            real.record,
            real.keep,
        )?;
        results.push(r);
        kept.extend(k);
    }
    Ok((results, kept))
}

/// The report's one-line description of the run: what was compared, how
/// often and on which topology (`how`).
pub fn describe_run(
    cases: usize,
    suite: &Path,
    real_programs: usize,
    programs_file: &Path,
    opts: &ValidateOptions,
    recordings: u32,
    how: &str,
) -> String {
    let programs_part = if real_programs == 0 {
        String::new()
    } else {
        format!(
            "; {real_programs} real programs from {}, each recorded and replayed {recordings} times between its native runs (median replay compared)",
            programs_file.display()
        )
    };
    format!(
        "{cases} cases from {}{programs_part}; {} native repetitions each on all CPUs, {} simulation seeds, `{}` policy; {how}.",
        suite.display(),
        opts.reps,
        opts.seeds,
        opts.policy
    )
}

/// The per-case table `colab validate` prints: real and simulated times,
/// the native noise and the error.
pub fn results_table(results: &[CaseResult]) -> String {
    let mut out = format!(
        "  {:<28} {:<16} {:>10} {:>7} {:>10} {:>8}\n",
        "case", "program", "real ms", "noise", "sim ms", "error"
    );
    for r in results {
        out += &format!(
            "  {:<28} {:<16} {:>10.1} {:>6.1}% {:>10.1} {:>+7.1}%\n",
            r.case,
            r.program,
            r.real_median_ns as f64 / 1e6,
            r.real_spread * 100.0,
            r.sim_ns as f64 / 1e6,
            r.error * 100.0
        );
    }
    out
}

/// One summary line each for the specs and the replayed real programs
/// (those present): median and largest error, how many are within 5% and
/// 15%, and the native noise.
pub fn summary_lines(results: &[CaseResult]) -> String {
    let (real, specs): (Vec<_>, Vec<_>) = results.iter().cloned().partition(crate::is_replay);
    let mut out = String::new();
    for (what, part) in [("specs", specs), ("replayed real programs", real)] {
        if part.is_empty() {
            continue;
        }
        let s = crate::summarize(&part);
        out += &format!(
            "{what}: median |error| {:.1}%, max {:.1}%, {}/{} within 5%, {}/{} within 15%; native noise (median spread) {:.1}%\n",
            s.median_abs_error * 100.0,
            s.max_abs_error * 100.0,
            s.within_5,
            s.points,
            s.within_15,
            s.points,
            s.median_spread * 100.0,
        );
    }
    out
}
