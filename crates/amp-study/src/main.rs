//! `colab-amp-study`: the real-kernel study on this machine. Thin: the
//! plan from the arguments, then speeds, reference runs and each scheduler
//! in turn, with the work in the library's modules.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;
use colab_amp_study::report::{self, Report, SchedRun};
use colab_amp_study::sched_ext::SchedExt;
use colab_amp_study::scheds::{self, SchedSpec};
use colab_amp_study::summary::{self, Row};
use colab_amp_study::{speeds, DEFAULT_WORKLOADS, QUICK_WORKLOADS};
use colab_native::{Calibration, NativeError, NativeOptions};
use colab_workload::{Library, Workload};
use indicatif::{ProgressBar, ProgressStyle};
use scx_colab_user::detect::{self, format_cpu_list};

const EXAMPLES: &str = "\
Examples:
  sudo colab-amp-study                          # every installed scheduler, the default set, 3 repetitions
  sudo colab-amp-study --quick                  # a few minutes: two small workloads, once
  sudo colab-amp-study --scheduler scx_colab --scheduler 'paper=scx_colab --policy colab'
  colab-amp-study --dry-run                     # what would run, and the CPUs as detected

It runs as root (sched_ext schedulers need it) on Linux 6.12 or later with
sched_ext, with no sched_ext scheduler attached (stop scx_loader or the
scx_colab service first). The CPUs should be otherwise idle: close other
programs. Send OUT/report.md back; it holds the machine's description, the
results and every run.";

/// The real-kernel study on this machine: the kernel's default scheduler and
/// each sched_ext scheduler in turn run the COLAB study's workloads
/// natively (real threads, this machine's own cores); each CPU's speed is
/// measured and checked against what sysfs says. Writes OUT/report.md (send
/// it back), OUT/results.csv, OUT/summary.csv and each scheduler's output
/// in OUT/logs/.
#[derive(Parser)]
#[command(name = "colab-amp-study", version, after_help = EXAMPLES)]
struct Cli {
    /// Output directory (created; files of an earlier report there are replaced).
    #[arg(long, short, default_value = "colab-amp-study")]
    out: PathBuf,
    /// Workloads, comma-separated: benchmarks (`fft:4`), mixes (`Sync-2`) or
    /// workload TOML files, as `colab list` shows. Default: the VM study's
    /// set (Sync-2, NSync-1, Comm-2, Comp-2, Large-1, fft:4, ferret:4,
    /// finebar_25us, finebar_100us, lock_100us_hi).
    #[arg(long, short, value_delimiter = ',')]
    workloads: Vec<String>,
    /// Repetitions of every run (the median counts).
    #[arg(long, default_value_t = 3)]
    reps: u32,
    /// A sched_ext scheduler to run: `[LABEL=]PROGRAM [ARGS...]`, the
    /// program a name in PATH or a path; repeat for more. Default: each of
    /// scx_colab (also as scx_colab-paper, `--policy colab`), scx_bpfland,
    /// scx_lavd, scx_rusty, scx_flash, scx_p2dq, scx_rustland, scx_simple
    /// found in PATH or beside this program. The kernel's default always runs first.
    #[arg(long = "scheduler", value_name = "SPEC")]
    schedulers: Vec<String>,
    /// Two small workloads once (NSync-1, fft:4): checks that everything runs.
    #[arg(long, conflicts_with_all = ["workloads", "reps"])]
    quick: bool,
    /// The CPUs of the reference runs (T_ref), a kernel CPU list such as
    /// `0-7`. Default: every core type but the slowest, as scx_colab detects
    /// them (all CPUs on a machine with one type).
    #[arg(long, value_name = "LIST")]
    reference_cpus: Option<String>,
    /// Seconds a scheduler may take to attach.
    #[arg(long, default_value_t = 60)]
    attach_timeout: u64,
    /// Seconds one repetition of a workload may take.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// Print the plan (schedulers, workloads, CPUs) and exit.
    #[arg(long)]
    dry_run: bool,
    /// Read /sys and /proc under this directory (tests).
    #[arg(long, default_value = "/", hide = true)]
    root: PathBuf,
}

struct Plan {
    schedulers: Vec<SchedSpec>,
    workloads: Vec<Workload>,
    reps: u32,
    machine: detect::Machine,
    online: Vec<usize>,
    reference: Vec<usize>,
    /// Why these reference CPUs, for the report.
    reference_why: &'static str,
}

fn plan(cli: &Cli) -> Result<Plan> {
    let path = search_path();
    let schedulers = if cli.schedulers.is_empty() {
        scheds::discover(&path)
    } else {
        let v = cli
            .schedulers
            .iter()
            .map(|s| scheds::parse(s, &path))
            .collect::<Result<Vec<_>>>()?;
        scheds::with_default_first(v)?
    };
    let names: Vec<String> = if cli.quick {
        QUICK_WORKLOADS.iter().map(|s| s.to_string()).collect()
    } else if cli.workloads.is_empty() {
        DEFAULT_WORKLOADS.iter().map(|s| s.to_string()).collect()
    } else {
        cli.workloads.clone()
    };
    let mut lib = Library::builtin();
    let workloads = names
        .iter()
        .map(|n| {
            let mut w = lib
                .resolve(n)
                .with_context(|| format!("workload '{n}' (`colab list` shows the names)"))?;
            // Results name a workload as given (`fft:4`, as the VM study
            // does); a file by the name inside it.
            if !n.contains('/') && !n.ends_with(".toml") {
                w.name = n.clone();
            }
            Ok(w)
        })
        .collect::<Result<Vec<_>>>()?;
    if workloads.iter().any(|w| w.name.contains(',')) {
        bail!("a workload's name has a comma, which results.csv cannot hold");
    }
    let reps = if cli.quick { 1 } else { cli.reps };
    if reps == 0 {
        bail!("--reps must be at least 1");
    }
    let machine = detect::core_types(&cli.root).context("reading the CPUs from sysfs")?;
    let online: Vec<usize> = machine.cpus.iter().map(|c| c.id).collect();
    let (reference, reference_why) = match &cli.reference_cpus {
        Some(l) => {
            let v = colab_native::parse_cpu_list(l)
                .map_err(|e| anyhow::anyhow!("--reference-cpus {l}: {e}"))?;
            if let Some(c) = v.iter().find(|c| !online.contains(c)) {
                bail!(
                    "--reference-cpus {l}: CPU {c} is not online (online: {})",
                    format_cpu_list(&online)
                );
            }
            (v, "--reference-cpus")
        }
        None if machine.big().is_empty() => (online.clone(), "one core type: every CPU"),
        None => (machine.big(), "every core type but the slowest"),
    };
    Ok(Plan {
        schedulers,
        workloads,
        reps,
        machine,
        online,
        reference,
        reference_why,
    })
}

/// PATH, then this program's own directory (where `cargo build` puts
/// scx_colab beside it).
fn search_path() -> String {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(d) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        dirs.push(d);
    }
    std::env::join_paths(dirs)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn print_plan(p: &Plan) {
    println!("CPUs as detected: {}", p.machine.describe());
    for w in &p.machine.warnings {
        println!("  detector: {w}");
    }
    println!(
        "Reference runs (T_ref) on CPUs {} ({})",
        format_cpu_list(&p.reference),
        p.reference_why
    );
    println!("Schedulers, in order:");
    for s in &p.schedulers {
        println!("  {}: {}", s.label, s.command());
    }
    let names: Vec<&str> = p.workloads.iter().map(|w| w.name.as_str()).collect();
    println!(
        "Workloads ({} repetitions each): {}",
        p.reps,
        names.join(", ")
    );
}

/// What a workload's repetitions leave the study to do next.
#[derive(PartialEq)]
enum Flow {
    Go,
    /// The scheduler is gone: go on with the next.
    NextScheduler,
    /// A run timed out and left its threads spinning: stop measuring.
    Stop,
}

/// Appends rows to results.csv as they come, so a study cut short keeps them.
struct Results {
    rows: Vec<Row>,
    file: File,
}

impl Results {
    fn push(&mut self, r: Row) -> Result<()> {
        writeln!(self.file, "{}", r.csv())?;
        self.file.flush()?;
        self.rows.push(r);
        Ok(())
    }
}

/// One repetition of `w` on a thread of its own (the CPU mask a reference
/// run sets stays on that thread).
fn run_once(
    w: &Workload,
    cpus: Option<&[usize]>,
    cal: Calibration,
    timeout: u64,
) -> Result<Vec<(String, u64)>, NativeError> {
    let opts = NativeOptions {
        cpus: cpus.map(<[usize]>::to_vec),
        reps: 1,
        seed: 1,
        calibration: cal,
        timeout: Duration::from_secs(timeout.max(1)),
        emulate: None,
    };
    std::thread::scope(|s| {
        s.spawn(|| colab_native::run(w, &opts))
            .join()
            .expect("a workload run does not panic")
    })
    .map(|runs| {
        runs.into_iter()
            .map(|r| (r.name, r.raw_ns.first().copied().unwrap_or(0)))
            .collect()
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match study(&cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("colab-amp-study: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs the study; Ok(false) when some run failed (the report says which).
fn study(cli: &Cli) -> Result<bool> {
    let p = plan(cli)?;
    if cli.dry_run {
        print_plan(&p);
        return Ok(true);
    }
    let sx = SchedExt::new(&cli.root);
    if p.schedulers.iter().any(|s| s.program.is_some()) {
        sx.check_idle()?;
        // SAFETY: geteuid has no preconditions.
        if cli.root == Path::new("/") && unsafe { libc::geteuid() } != 0 {
            bail!("starting a sched_ext scheduler needs root: run it with sudo (or name only `--scheduler default`)");
        }
    }
    std::fs::create_dir_all(cli.out.join("logs"))
        .with_context(|| format!("creating {}", cli.out.display()))?;
    let started = utc_now();
    let system = report::system(&cli.root);
    print_plan(&p);

    let work = (p.workloads.len() as u64) * u64::from(p.reps);
    let pb = ProgressBar::new(p.online.len() as u64 + work * (1 + p.schedulers.len() as u64));
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let say = |m: String| {
        if pb.is_hidden() {
            eprintln!("{m}");
        } else {
            pb.println(m);
        }
    };

    pb.set_message("measuring each CPU's speed");
    let cpu_speeds = speeds::measure(&p.online, |_| pb.inc(1))?;
    let types = speeds::by_type(&p.machine, &cpu_speeds);
    let disagreements = speeds::disagreements(&types, detect::TYPE_GAP);
    for d in &disagreements {
        say(format!("warning: {d}"));
    }
    // Work units are microseconds on the fastest CPU.
    let cal = Calibration {
        spins_per_us: cpu_speeds
            .iter()
            .map(|c| c.spins_per_us)
            .fold(0.0, f64::max),
    };

    let csv = cli.out.join("results.csv");
    let mut results = Results {
        rows: Vec::new(),
        file: File::create(&csv).with_context(|| format!("creating {}", csv.display()))?,
    };
    writeln!(results.file, "{}", summary::CSV_HEADER)?;
    let mut failures: Vec<String> = Vec::new();
    let mut timed_out = false;

    // One workload's repetitions under what runs now.
    let reps_of = |label: Option<&str>,
                   w: &Workload,
                   cpus: Option<&[usize]>,
                   running: &mut Option<colab_amp_study::sched_ext::Running>,
                   results: &mut Results,
                   failures: &mut Vec<String>|
     -> Result<Flow> {
        for rep in 1..=p.reps {
            pb.set_message(format!(
                "{} {} {rep}/{}",
                label.unwrap_or("reference"),
                w.name,
                p.reps
            ));
            if let Some(r) = running.as_mut() {
                if let Err(e) = r.attached(&sx) {
                    failures.push(format!("{e:#}"));
                    return Ok(Flow::NextScheduler);
                }
            }
            match run_once(w, cpus, cal, cli.timeout) {
                Ok(progs) => {
                    for (program, ns) in progs {
                        results.push(Row {
                            scheduler: label.map(String::from),
                            workload: w.name.clone(),
                            rep,
                            program,
                            ns,
                        })?;
                    }
                }
                Err(e) => {
                    failures.push(format!(
                        "{} {} rep {rep}: {e}",
                        label.unwrap_or("reference"),
                        w.name
                    ));
                    if matches!(e, NativeError::Timeout { .. }) {
                        return Ok(Flow::Stop);
                    }
                }
            }
            pb.inc(1);
        }
        Ok(Flow::Go)
    };

    for w in &p.workloads {
        if reps_of(
            None,
            w,
            Some(&p.reference),
            &mut None,
            &mut results,
            &mut failures,
        )? == Flow::Stop
        {
            timed_out = true;
            break;
        }
    }
    let mut sched_runs = Vec::new();
    for s in &p.schedulers {
        if timed_out {
            break;
        }
        let mut run = SchedRun {
            label: s.label.clone(),
            command: s.command(),
            attach_s: None,
        };
        let mut running = None;
        if s.program.is_some() {
            pb.set_message(format!("starting {}", s.label));
            let log = cli.out.join("logs").join(format!("{}.log", s.label));
            match sx.start(s, Duration::from_secs(cli.attach_timeout), &log) {
                Ok(r) => {
                    run.attach_s = Some(r.attach_time.as_secs_f64());
                    say(format!(
                        "{}: attached in {:.1} s",
                        s.label,
                        r.attach_time.as_secs_f64()
                    ));
                    running = Some(r);
                }
                Err(e) => {
                    say(format!("{}: {e:#}", s.label));
                    failures.push(format!("{}: {e:#}", s.label));
                    pb.inc(work);
                    sched_runs.push(run);
                    continue;
                }
            }
        }
        for w in &p.workloads {
            match reps_of(
                Some(&s.label),
                w,
                None,
                &mut running,
                &mut results,
                &mut failures,
            )? {
                Flow::Go => {}
                Flow::NextScheduler => break,
                Flow::Stop => {
                    timed_out = true;
                    break;
                }
            }
        }
        if let Some(r) = running {
            if let Err(e) = r.stop(&sx, Duration::from_secs(10)) {
                failures.push(format!("{e:#}"));
            }
        }
        sched_runs.push(run);
    }
    pb.finish_and_clear();

    let labels: Vec<String> = p.schedulers.iter().map(|s| s.label.clone()).collect();
    let wl_names: Vec<String> = p.workloads.iter().map(|w| w.name.clone()).collect();
    failures.extend(summary::missing(&results.rows, &labels, &wl_names, p.reps));
    let cells = summary::cells(&results.rows);
    let geomeans = summary::geomeans(&cells);
    std::fs::write(cli.out.join("summary.csv"), summary::summary_csv(&cells))?;
    let rep = Report {
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
        started,
        version: format!("colab-amp-study {}", env!("CARGO_PKG_VERSION")),
        system,
        detected: p.machine.describe(),
        detect_warnings: &p.machine.warnings,
        reference_cpus: format!("{} ({})", format_cpu_list(&p.reference), p.reference_why),
        speeds: &cpu_speeds,
        types: &types,
        disagreements: &disagreements,
        schedulers: &sched_runs,
        reps: p.reps,
        cells: &cells,
        geomeans: &geomeans,
        workloads: &wl_names,
        failures: &failures,
        rows: &results.rows,
    };
    let md = rep.render();
    let path = cli.out.join("report.md");
    std::fs::write(&path, &md).with_context(|| format!("writing {}", path.display()))?;
    println!("\nGeomean H_ANTT (lower is better):");
    for (s, g) in &geomeans {
        println!("  {s}: {g:.3}");
    }
    if !failures.is_empty() {
        println!("\n{} failure(s):", failures.len());
        for f in &failures {
            println!("  {f}");
        }
    }
    println!("\nReport: {} (send this file back)", path.display());
    if timed_out {
        // The timed-out run's threads still spin; exiting ends them.
        println!("A run timed out; its threads are ended with this process.");
    }
    Ok(failures.is_empty())
}

/// The current UTC time, to the minute.
fn utc_now() -> String {
    chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string()
}
