//! Real programs in the validation: each runs natively (untraced) for the
//! real turnaround, is recorded once with the trace recorder, and its trace is
//! replayed in the simulator on this machine's topology.

use crate::{CaseResult, ValidateError};
use colab_core::Topology;
use colab_sim::{simulate, SimConfig};
use colab_trace::library::{Entry, NativeTimes};
use rand::{Rng, SeedableRng};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramCase {
    pub name: String,
    /// How to get it (a Debian package, or a build script), for the
    /// "missing" message.
    pub package: String,
    /// Command line; `{input}` is replaced by the generated input file. A
    /// first word with a `/` is a path (relative to the working directory).
    pub command: Vec<String>,
    /// For a trace library (`--keep-traces`): the program and the worker
    /// threads asked for, the input, and the speedups replay should give
    /// its threads, with their source.
    #[serde(default)]
    pub program: Option<String>,
    #[serde(default)]
    pub threads: Option<u32>,
    #[serde(default)]
    pub input: Option<String>,
    #[serde(default)]
    pub speedup: Option<f64>,
    #[serde(default)]
    pub thread_speedup: std::collections::BTreeMap<String, f64>,
    #[serde(default)]
    pub speedup_source: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProgramsFile {
    program: Vec<ProgramCase>,
}

pub fn load(path: &Path) -> Result<Vec<ProgramCase>, ValidateError> {
    let text = std::fs::read_to_string(path).map_err(|e| ValidateError::Suite {
        path: path.into(),
        source: e,
    })?;
    let f: ProgramsFile = toml::from_str(&text).map_err(|e| ValidateError::Write {
        path: path.into(),
        message: colab_core::toml_error::describe(&text, &e),
    })?;
    Ok(f.program)
}

/// An 8 MiB text file of seeded pseudo-random base64-like lines.
pub fn make_input(dir: &Path) -> Result<PathBuf, ValidateError> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(42);
    let mut buf = Vec::with_capacity(8 << 20);
    while buf.len() < 8 << 20 {
        for _ in 0..76 {
            buf.push(ALPHABET[rng.gen_range(0..64)]);
        }
        buf.push(b'\n');
    }
    let path = dir.join("validate-input.txt");
    std::fs::write(&path, &buf).map_err(|e| ValidateError::Write {
        path: path.clone(),
        message: e.to_string(),
    })?;
    Ok(path)
}

fn expand(cmd: &[String], input: &Path) -> Vec<String> {
    cmd.iter()
        .map(|a| a.replace("{input}", &input.to_string_lossy()))
        .collect()
}

/// Is the program's executable there (a path) or on PATH?
pub fn available(case: &ProgramCase) -> bool {
    let Some(exe) = case.command.first() else {
        return false;
    };
    if exe.contains('/') {
        return Path::new(exe).is_file();
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(exe).is_file()))
        .unwrap_or(false)
}

/// Wall-clock turnaround of `reps` untraced runs.
fn time_native(cmd: &[String], reps: u32) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let status = Command::new(&cmd[0])
            .args(&cmd[1..])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run {}: {e}", cmd[0]))?;
        if !status.success() {
            return Err(format!("`{}` failed: {status}", cmd.join(" ")));
        }
        out.push(t.elapsed().as_nanos() as u64);
    }
    Ok(out)
}

/// Runs one real program natively `reps` times and records it `recordings`
/// times, interleaved (this VM's speed drifts by up to 20% within seconds,
/// and a single recording would carry the drift of its moment), and
/// replays every recording. The simulated turnaround is the median over
/// recordings of the mean over seeds.
#[allow(clippy::too_many_arguments)]
pub fn run_program(
    case: &ProgramCase,
    input: &Path,
    workdir: &Path,
    reps: u32,
    recordings: u32,
    seeds: u64,
    topo: &Topology,
    policy: &str,
    record: &colab_trace::record::RecordOptions,
    keep: Option<&Path>,
) -> Result<(CaseResult, Vec<Entry>), ValidateError> {
    let fail = |m: String| ValidateError::Program {
        case: case.name.clone(),
        message: m,
    };
    let cmd = expand(&case.command, input);
    let mut samples = Vec::new();
    let mut sims = Vec::new();
    let mut threads = 0;
    let mut busy_recordings = 0;
    let mut kept = Vec::new();
    for i in 0..reps.max(recordings).max(1) {
        if i < reps.max(1) {
            samples.extend(time_native(&cmd, 1).map_err(fail)?);
        }
        if i < recordings.max(1) {
            let trace_path = workdir.join(format!("{}-{i}.trace", case.name));
            let rec = colab_trace::record::record(&cmd, &trace_path, record)
                .map_err(|e| fail(e.to_string()))?;
            if !rec.status.success() {
                let _ = std::fs::remove_file(&trace_path);
                return Err(fail(format!(
                    "the program failed while it was recorded ({})",
                    rec.status
                )));
            }
            if let Some(o) = rec.others.filter(|o| o.busy()) {
                busy_recordings += 1;
                eprintln!(
                    "validate: {}: recording {} made on a busy machine (others used {:.0}% of the CPU time)",
                    case.name,
                    i + 1,
                    o.share * 100.0
                );
            }
            let (sim, n) = replay(case, &trace_path, seeds, topo, policy)?;
            if let Some(dir) = keep {
                kept.push(keep_trace(case, &cmd, &trace_path, dir, i + 1, &rec).map_err(fail)?);
            }
            let _ = std::fs::remove_file(&trace_path);
            sims.push(sim);
            threads = n;
        }
    }
    samples.sort_unstable();
    sims.sort_unstable();
    let med = samples[samples.len() / 2];
    let (min, max) = (samples[0], samples[samples.len() - 1]);
    let sim = sims[sims.len() / 2];
    let result = CaseResult {
        case: format!("real:{}", case.name),
        program: cmd[0].clone(),
        threads,
        real_median_ns: med,
        real_min_ns: min,
        real_max_ns: max,
        real_spread: if med > 0 {
            (max - min) as f64 / med as f64
        } else {
            0.0
        },
        sim_ns: sim,
        error: if med > 0 {
            sim as f64 / med as f64 - 1.0
        } else {
            0.0
        },
        busy_recordings,
    };
    let ms = |ns: u64| ns as f64 / 1e6;
    for e in &mut kept {
        e.native_ms = NativeTimes {
            runs: samples.len() as u32,
            median: ms(med),
            min: ms(min),
            max: ms(max),
        };
    }
    Ok((result, kept))
}

/// Keeps recording `k` of `case` in the library `dir`, gzipped, and says
/// what it is (the native times are filled in by the caller).
fn keep_trace(
    case: &ProgramCase,
    cmd: &[String],
    trace_path: &Path,
    dir: &Path,
    k: u32,
    rec: &colab_trace::RecordSummary,
) -> Result<Entry, String> {
    let name = format!("{}-r{k}", case.name);
    let file = format!("{name}.trace.gz");
    let text = std::fs::read_to_string(trace_path).map_err(|e| e.to_string())?;
    colab_trace::library::write_gz(&dir.join(&file), &text)
        .map_err(|e| format!("{}: {e}", dir.join(&file).display()))?;
    Ok(Entry {
        name,
        program: case.program.clone().unwrap_or_else(|| case.name.clone()),
        threads: case.threads,
        file,
        command: cmd.to_vec(),
        input: case.input.clone().unwrap_or_else(|| "none".into()),
        // Assumption when the case names none: 2.0, mid-range of the
        // papers' speedups (as `colab sim --trace`).
        speedup: case.speedup.unwrap_or(2.0),
        thread_speedup: case.thread_speedup.clone(),
        speedup_source: case
            .speedup_source
            .clone()
            .unwrap_or_else(|| "assumption: 2.0 for every thread".into()),
        native_ms: NativeTimes {
            runs: 0,
            median: 0.0,
            min: 0.0,
            max: 0.0,
        },
        recorded_ms: rec.wall.as_secs_f64() * 1e3,
        others: rec.others,
        overhead_ns: rec.overhead,
    })
}

/// Replays one recording under `policy`: mean turnaround over seeds,
/// and the number of threads.
fn replay(
    case: &ProgramCase,
    trace_path: &Path,
    seeds: u64,
    topo: &Topology,
    policy: &str,
) -> Result<(u64, u32), ValidateError> {
    let fail = |m: String| ValidateError::Program {
        case: case.name.clone(),
        message: m,
    };
    let text =
        colab_trace::library::read_trace_text(trace_path).map_err(|e| fail(e.to_string()))?;
    let trace = colab_trace::Trace::parse(&trace_path.to_string_lossy(), &text)
        .map_err(|e| fail(e.to_string()))?;
    // The speedup does not matter on this one-core-type machine.
    let opts = colab_trace::ReplayOptions {
        name: case.name.clone(),
        speedup: 2.0,
        thread_speedup: Default::default(),
        keep_tracing_overhead: false,
        sleep_unnamed_wakes: false,
    };
    let prog = colab_trace::to_program(&trace, &opts).map_err(|e| fail(e.to_string()))?;
    let threads = prog.total_threads;
    let w = colab_workload::Workload {
        name: case.name.clone(),
        classes: vec![],
        source: String::new(),
        programs: vec![prog],
    };
    let mut sum = 0u64;
    for seed in 1..=seeds.max(1) {
        let mut pol = colab_policies::by_name(policy)?;
        let cfg = SimConfig {
            seed,
            ..SimConfig::default()
        };
        let r = simulate(&w, topo, pol.as_mut(), &cfg).map_err(|e| ValidateError::Sim {
            case: case.name.clone(),
            source: e,
        })?;
        sum += r.programs[0].turnaround_ns;
    }
    Ok((sum / seeds.max(1), threads))
}
