//! `colab validate`: the simulator's error against this machine.

use crate::common::{bar, command_line, probe_command};
use anyhow::{bail, Context, Result};
use colab_campaign::Progress;
use colab_core::{CoreOrder, Topology};
use colab_validate::suite;
use indicatif::ProgressStyle;
use std::path::PathBuf;

pub const ABOUT: &str =
    "Measure the simulator's error against this machine: run a suite natively and simulated.";

pub const EXAMPLES: &str = "\
Examples:
  colab validate                           # specs and real programs (about 7 min)
  colab validate --no-programs --policy eevdf --reps 3
  colab validate --topology reports/this-machine.toml --out reports/validate-again
  sudo colab validate --no-specs --keep-traces traces/mine --library mine 'Debian packages'";

#[derive(clap::Args)]
pub struct ValidateArgs {
    /// Directory of workload specs (one case per .toml).
    #[arg(long, default_value = "validation")]
    suite: PathBuf,
    /// Native repetitions per case (their spread is the noise floor).
    #[arg(short, long, default_value_t = 5)]
    reps: u32,
    /// Simulation seeds averaged per case.
    #[arg(long, default_value_t = 3)]
    seeds: u64,
    /// Topology of this machine (default: measure it now with `calibrate`).
    #[arg(short, long)]
    topology: Option<PathBuf>,
    /// Report directory.
    #[arg(short, long, default_value = "reports/validate")]
    out: PathBuf,
    /// Abort a case whose native repetition takes longer (seconds).
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Real programs to run, record and replay (needs root for recording).
    #[arg(long, default_value = "validation/programs/real-programs.toml")]
    programs: PathBuf,
    /// Skip the real programs.
    #[arg(long, conflicts_with = "no_specs")]
    no_programs: bool,
    /// Skip the workload specs (run only the real programs).
    #[arg(long)]
    no_specs: bool,
    /// Recordings per real program, interleaved with its native runs; the
    /// replays' median is compared (one recording carries the drift of its
    /// moment on a VM).
    #[arg(long, default_value_t = 3)]
    recordings: u32,
    /// Keep every recording of the real programs (gzipped) in this directory
    /// with a manifest.toml: a trace library for `colab reproduce --traces`.
    #[arg(long, value_name = "DIR")]
    keep_traces: Option<PathBuf>,
    /// The kept library's name and where its programs came from (repository
    /// and commit, packages), for its manifest.
    #[arg(
        long,
        value_name = "NAME SOURCE",
        num_args = 2,
        requires = "keep_traces"
    )]
    library: Vec<String>,
    /// The simulated Linux baseline: `cfs` (the papers') or `eevdf` (what
    /// this host's kernel runs).
    #[arg(long, default_value = "cfs")]
    policy: String,
}

pub fn run(args: ValidateArgs) -> Result<()> {
    if args.reps == 0 || args.seeds == 0 || args.recordings == 0 {
        bail!("--reps, --seeds and --recordings must be at least 1");
    }
    colab_campaign::policy_by_name(&args.policy)
        .with_context(|| format!("--policy {}", args.policy))?;
    let cases = if args.no_specs {
        Vec::new()
    } else {
        colab_validate::cases(&args.suite)?
    };
    let real_programs = if args.no_programs {
        Vec::new()
    } else {
        colab_validate::programs::load(&args.programs)?
    };
    let (topo_text, how, spin) =
        suite::machine_topology(args.topology.as_deref(), &mut |l| eprintln!("{l}"))?;
    let topo = Topology::from_toml(&topo_text, CoreOrder::BigFirst).context("invalid topology")?;
    let opts = colab_validate::ValidateOptions {
        reps: args.reps,
        seeds: args.seeds,
        topology: topo,
        policy: args.policy.clone(),
        cpus: None,
        calibration: spin,
        timeout: std::time::Duration::from_secs(args.timeout.max(1)),
    };
    let pb = bar();
    pb.0.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} cases {msg}",
        )
        .expect("valid template"),
    );
    pb.start(cases.len() as u64);
    let mut results = Vec::new();
    for c in &cases {
        let stem = c.file_stem().map(|s| s.to_string_lossy().to_string());
        pb.0.set_message(stem.unwrap_or_default());
        match colab_validate::run_case(c, &opts) {
            Ok(r) => results.extend(r),
            Err(e @ colab_validate::ValidateError::Native { .. }) => {
                pb.finish();
                // A hung native run leaves threads behind: report and leave.
                eprintln!("error: {e}");
                std::process::exit(1);
            }
            Err(e) => return Err(e.into()),
        }
        pb.inc();
    }
    pb.finish();
    if !real_programs.is_empty() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("validate: skipping the real programs: recording them needs root (run as root or with sudo)");
        } else {
            results.extend(real_programs_run(&args, &opts, &real_programs)?);
        }
    }
    let line = suite::describe_run(
        cases.len(),
        &args.suite,
        real_programs.len(),
        &args.programs,
        &opts,
        args.recordings,
        &how,
    );
    colab_validate::write_report(&args.out, &results, &topo_text, &line)?;
    print!("{}", suite::results_table(&results));
    print!("{}", suite::summary_lines(&results));
    println!("report in {}", args.out.display());
    Ok(())
}

/// Runs, records and replays the real programs (as root), keeping the
/// recordings as a trace library when asked.
fn real_programs_run(
    args: &ValidateArgs,
    opts: &colab_validate::ValidateOptions,
    list: &[colab_validate::programs::ProgramCase],
) -> Result<Vec<colab_validate::CaseResult>> {
    let work = args.out.with_extension("work");
    let record = colab_trace::record::RecordOptions {
        overhead_probe: Some(probe_command()?),
        probe_cache: colab_trace::record::default_probe_cache(),
        quiet: true,
        ..Default::default()
    };
    let real = suite::RealRun {
        recordings: args.recordings,
        record: &record,
        keep: args.keep_traces.as_deref(),
        work: &work,
    };
    let (results, kept) = suite::run_real_programs(list, opts, &real, &mut |l| eprintln!("{l}"))?;
    if let Some(dir) = &args.keep_traces {
        let name_source = match args.library.as_slice() {
            [n, s] => Some((n.clone(), s.clone())),
            _ => None,
        };
        let m = colab_trace::workloads::write_kept_library(
            dir,
            name_source,
            &args.programs,
            command_line(),
            kept,
        )?;
        eprintln!(
            "validate: {} recordings kept in {} (manifest.toml)",
            m.trace.len(),
            dir.display()
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(results)
}
