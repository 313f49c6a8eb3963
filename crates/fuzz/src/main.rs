//! colab-fuzz: see README.md and the library docs.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use colab_fuzz::{run, split, targets, Config, Stats, Target, CASE_LIMIT};

/// Deterministic fuzzing of colab's parsers and simulator.
///
/// Mutates the project's own example files (workloads, mixes, topologies,
/// traces and their manifest, model files, perf stat output, training
/// tables) and feeds each mutant to its parser, and parsed workloads,
/// topologies and traces to the simulator. Every input must parse or give an
/// error with a message: a panic, an empty error message or a case taking
/// more than 2 s is a failure. The same --seed and --cases always run the
/// same inputs.
///
/// With --target all the cases are split: workload 30%, topology 15%, mix,
/// trace, model, perf and table 10% each, manifest 5%.
#[derive(Parser)]
#[command(name = "colab-fuzz", version)]
struct Cli {
    /// Cases in all, split over the targets.
    #[arg(long, default_value_t = 100_000)]
    cases: u64,
    /// Seed of every mutation.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// What to fuzz: workload, mix, topology, trace, manifest, model, perf,
    /// table, or all.
    #[arg(long, default_value = "all", value_parser = parse_target)]
    target: Targets,
    /// Write failing inputs here, as TARGET-seedS-caseC.EXT.
    #[arg(long, default_value = "target/fuzz-failures")]
    save: PathBuf,
    /// Run only this case number of --target (to reproduce a failure); its
    /// outcome is printed.
    #[arg(long)]
    case: Option<u64>,
    /// Simulate only parsed inputs whose case number is a multiple of this.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    simulate_every: u64,
}

/// The targets `--target` names: one, or all of them.
#[derive(Clone)]
struct Targets(Vec<Target>);

fn parse_target(name: &str) -> Result<Targets, String> {
    if name == "all" {
        return Ok(Targets(Target::ALL.to_vec()));
    }
    Target::ALL
        .into_iter()
        .find(|t| t.name() == name)
        .map(|t| Targets(vec![t]))
        .ok_or_else(|| {
            let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
            format!("expected one of {}, or all", names.join(", "))
        })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let targets = cli.target.0;
    if cli.case.is_some() && targets.len() != 1 {
        eprintln!("error: --case needs one --target");
        return ExitCode::from(2);
    }
    let cfg = Config {
        cases: cli.cases,
        seed: cli.seed,
        targets,
        only_case: cli.case,
        simulate_every: cli.simulate_every,
        limit: CASE_LIMIT,
        save: Some(cli.save),
    };
    let counts = split(cfg.cases, &cfg.targets);
    let plan = match cfg.only_case {
        Some(c) => format!("{} case {c}", cfg.targets[0].name()),
        None => format!(
            "{} cases ({})",
            cfg.cases,
            cfg.targets
                .iter()
                .zip(&counts)
                .map(|(t, n)| format!("{} {n}", t.name()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    println!("colab-fuzz: seed {}, {plan}", cfg.seed);
    println!(
        "{:<10} {:>8} {:>10} {:>12} {:>10} {:>9} {:>9}",
        "target", "cases", "parsed ok", "clean errors", "simulated", "failures", "time"
    );
    let start = Instant::now();
    let row = |s: &Stats| {
        println!(
            "{:<10} {:>8} {:>10} {:>12} {:>10} {:>9} {:>8.1}s",
            s.target.name(),
            s.cases,
            s.parsed,
            s.rejected,
            s.simulated,
            s.failures.len(),
            s.time.as_secs_f64()
        )
    };
    let stats = match run(&cfg, &targets::repo_root(), row) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    };
    let total: u64 = stats.iter().map(|s| s.cases).sum();
    let failures: Vec<_> = stats.iter().flat_map(|s| &s.failures).collect();
    println!(
        "{:<10} {:>8} {:>10} {:>12} {:>10} {:>9} {:>8.1}s",
        "total",
        total,
        stats.iter().map(|s| s.parsed).sum::<u64>(),
        stats.iter().map(|s| s.rejected).sum::<u64>(),
        stats.iter().map(|s| s.simulated).sum::<u64>(),
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    if failures.is_empty() {
        return ExitCode::SUCCESS;
    }
    println!("\n{} failing case(s):", failures.len());
    for f in &failures {
        println!(
            "\n{} case {} (mutant of {}): {}",
            f.target.name(),
            f.case,
            f.seed_file,
            f.problem
        );
        if let Some(p) = &f.saved {
            println!("  input: {}", p.display());
        }
        println!(
            "  reproduce: cargo run --release -p colab-fuzz -- --seed {} --target {} --case {}{}",
            cfg.seed,
            f.target.name(),
            f.case,
            if cfg.simulate_every > 1 {
                format!(" --simulate-every {}", cfg.simulate_every)
            } else {
                String::new()
            }
        );
    }
    if total < cfg.cases && cfg.only_case.is_none() {
        println!("\nstopped early: too many cases ran past the time limit");
    }
    ExitCode::FAILURE
}
