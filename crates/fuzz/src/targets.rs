//! What is fuzzed: each target's seed files and the code a mutant is fed to.
//!
//! A case passes when every stage either succeeds or returns an error whose
//! text is not empty; a panic (caught per stage) or an empty error message
//! is a failure. Stages after the parser (building, simulating, describing)
//! run only on inputs the parser accepted, since accepted hostile values are
//! what broke the simulator before (a zero tick, a sleep that wrapped the
//! clock).

use std::cell::{Cell, RefCell};
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{bail, Context as _};
use colab_core::{CoreOrder, Topology};
use colab_model::Model;
use colab_sim::SimConfig;
use colab_trace::{library::Manifest, ReplayOptions, Trace};
use colab_workload::{Library, Workload};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Workload,
    RtApp,
    Mix,
    Topology,
    Trace,
    Manifest,
    Model,
    Perf,
    Table,
}

impl Target {
    pub const ALL: [Target; 9] = [
        Target::Workload,
        Target::RtApp,
        Target::Mix,
        Target::Topology,
        Target::Trace,
        Target::Manifest,
        Target::Model,
        Target::Perf,
        Target::Table,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Target::Workload => "workload",
            Target::RtApp => "rtapp",
            Target::Mix => "mix",
            Target::Topology => "topology",
            Target::Trace => "trace",
            Target::Manifest => "manifest",
            Target::Model => "model",
            Target::Perf => "perf",
            Target::Table => "table",
        }
    }

    /// Share of the cases (percent) in a run of every target. The workload
    /// format is the largest and the only one with its own semantics checks
    /// and a simulation, so it gets the most; the small line formats the
    /// least. The shares add up to 100.
    pub fn share(self) -> u64 {
        match self {
            Target::Workload => 25,
            Target::RtApp => 5,
            Target::Mix => 10,
            Target::Topology => 15,
            Target::Trace => 10,
            Target::Manifest => 5,
            Target::Model => 10,
            Target::Perf => 10,
            Target::Table => 10,
        }
    }

    /// File extension of saved inputs, so editors show them right.
    pub fn extension(self) -> &'static str {
        match self {
            Target::Workload | Target::Mix | Target::Topology | Target::Manifest => "toml",
            Target::Trace => "trace",
            Target::Model | Target::RtApp => "json",
            Target::Perf => "perf.csv",
            Target::Table => "csv",
        }
    }

    /// The target of a regression file, from its name's first word
    /// (`topology-tick-ns-0.toml` is a topology).
    pub fn of_file(name: &str) -> Option<Target> {
        let word = name.split(['-', '.']).next()?;
        Target::ALL.into_iter().find(|t| t.name() == word)
    }
}

/// One example file a target's mutants start from.
pub struct Seed {
    pub name: String,
    pub text: String,
}

/// The traces used as seeds: the two smallest of the library, one small
/// trace with futex waits and wakes (blackscholes has none), and the
/// first lines of a larger one (the cut makes a trace that ends with
/// threads still running, a clean error, and mutants around it).
const TRACE_SEEDS: &[(&str, Option<usize>)] = &[
    ("blackscholes-t4-r2.trace.gz", None),
    ("blackscholes-t4-r1.trace.gz", None),
    ("fft-t4-r1.trace.gz", None),
    ("dedup-t4-r1.trace.gz", Some(200)),
];

/// The repository root (seeds are the project's own files).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The seed files of `target`, in a fixed order (cases depend on it).
pub fn seeds(target: Target, root: &Path) -> anyhow::Result<Vec<Seed>> {
    let seeds = match target {
        Target::Workload => {
            let mut s = files(&root.join("workloads/benchmarks"), ".toml")?;
            s.extend(files(&root.join("workloads/scenarios"), ".toml")?);
            s
        }
        Target::RtApp => files(&root.join("crates/workload/tests/rt-app"), ".json")?,
        Target::Mix => files(&root.join("workloads/mixes"), ".toml")?,
        Target::Topology => files(&root.join("topologies"), ".toml")?,
        Target::Trace => {
            let mut s = Vec::new();
            for &(file, lines) in TRACE_SEEDS {
                let path = root.join("traces/parsec").join(file);
                let mut text = colab_trace::library::read_trace_text(&path)
                    .with_context(|| format!("{}", path.display()))?;
                if let Some(n) = lines {
                    text = text.split_inclusive('\n').take(n).collect();
                }
                s.push(Seed {
                    name: file.to_string(),
                    text,
                });
            }
            s
        }
        Target::Manifest => {
            let path = root.join("traces/parsec/manifest.toml");
            let text =
                std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
            // The whole library (2,500 lines) and its first three entries:
            // mutants of the short one reach the per-entry checks cheaply.
            let short = text
                .match_indices("[[trace]]")
                .nth(3)
                .map_or(text.as_str(), |(i, _)| &text[..i]);
            vec![
                Seed {
                    name: "manifest-3.toml".into(),
                    text: short.to_string(),
                },
                Seed {
                    name: "manifest.toml".into(),
                    text,
                },
            ]
        }
        Target::Model => colab_model::BUILTIN_MODELS
            .iter()
            .map(|(name, _)| Seed {
                name: format!("{name}.json"),
                text: Model::builtin(name)
                    .expect("a listed built-in model exists")
                    .to_json(),
            })
            .collect(),
        Target::Perf => files(&root.join("crates/fuzz/seeds/perf"), ".csv")?,
        Target::Table => files(&root.join("crates/fuzz/seeds/table"), ".csv")?,
    };
    if seeds.is_empty() {
        bail!("no seed files for target {}", target.name());
    }
    Ok(seeds)
}

/// The files of `dir` whose names end in `suffix`, sorted by name.
fn files(dir: &Path, suffix: &str) -> anyhow::Result<Vec<Seed>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.ends_with(suffix) {
            let text =
                std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
            out.push(Seed {
                name: name.into_owned(),
                text,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// What a case that did not fail came to.
#[derive(Debug, Default)]
pub struct Verdict {
    /// The parser accepted the input.
    pub parsed: bool,
    /// The input went through the simulator (which may have refused it).
    pub simulated: bool,
    /// The first clean error of any stage.
    pub error: Option<String>,
}

/// A case that broke the contract: which stage, and how.
#[derive(Debug)]
pub struct Failure {
    pub stage: &'static str,
    pub problem: String,
}

impl Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.stage, self.problem)
    }
}

thread_local! {
    /// Set while a stage runs under `catch_unwind`: the panic hook then
    /// records the panic here instead of printing it.
    pub(crate) static QUIET: Cell<bool> = const { Cell::new(false) };
    pub(crate) static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs one stage: a panic becomes a [`Failure`] with the panic's message
/// and location, an error with an empty text too; other errors are returned
/// as text.
fn stage<T, E: Display>(
    stage: &'static str,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<Result<T, String>, Failure> {
    QUIET.with(|q| q.set(true));
    LAST_PANIC.with(|p| p.borrow_mut().take());
    let r = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    match r {
        Ok(Ok(v)) => Ok(Ok(v)),
        Ok(Err(e)) => {
            let text = e.to_string();
            if text.trim().is_empty() {
                return Err(Failure {
                    stage,
                    problem: "error with an empty message".into(),
                });
            }
            Ok(Err(text))
        }
        Err(payload) => {
            let hooked = LAST_PANIC.with(|p| p.borrow_mut().take());
            let problem = hooked.unwrap_or_else(|| {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(no message)".into());
                format!("panicked: {msg}")
            });
            Err(Failure { stage, problem })
        }
    }
}

/// `stage(...)`, returning the verdict so far from the enclosing function
/// when the stage gave a clean error.
macro_rules! step {
    ($verdict:ident, $name:expr, $body:expr) => {
        match stage($name, || $body)? {
            Ok(v) => v,
            Err(e) => {
                $verdict.error = Some(e);
                return Ok($verdict);
            }
        }
    };
}

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What the targets need besides the input, built once per worker.
pub struct Context {
    /// The machine parsed workloads and traces run on (2B2S, big first).
    machine: Topology,
    /// A small workload (blackscholes, 5 threads) run on parsed topologies.
    small: Workload,
    /// The built-in library: mixes name its benchmarks.
    builtin: Library,
    /// A copy of the trace library's directory with empty trace files:
    /// manifests are only read from a directory, and their check wants
    /// the files they list to exist.
    manifest_dir: TempDir,
}

/// The event budget of a fuzzed simulation: far more than the seeds' runs
/// need to show misbehaviour, small enough that a case takes milliseconds.
pub const FUZZ_MAX_EVENTS: u64 = 20_000;

impl Context {
    pub fn new(root: &Path) -> anyhow::Result<Context> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "colab-fuzz-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).with_context(|| format!("{}", dir.display()))?;
        let manifest_dir = TempDir(dir);
        let traces = root.join("traces/parsec");
        for entry in std::fs::read_dir(&traces).with_context(|| format!("{}", traces.display()))? {
            let name = entry?.file_name();
            if name.to_string_lossy().ends_with(".gz") {
                std::fs::write(manifest_dir.0.join(name), "")?;
            }
        }
        let builtin = Library::builtin();
        Ok(Context {
            machine: Topology::named("2B2S", CoreOrder::BigFirst)?,
            small: builtin.single("blackscholes", None)?,
            builtin,
            manifest_dir,
        })
    }

    /// Feeds `text` to `target`'s parser and, when `simulate` and it
    /// parsed, to the simulator.
    pub fn check(&self, target: Target, text: &str, simulate: bool) -> Result<Verdict, Failure> {
        let mut v = Verdict::default();
        match target {
            Target::Workload | Target::RtApp => {
                let mut lib = Library::default();
                let parsed = if target == Target::RtApp {
                    lib.add_rtapp_text("fuzz.json", text)
                } else {
                    lib.add_program_text("fuzz.toml", text)
                };
                let name = step!(v, "parse", parsed);
                v.parsed = true;
                let w = step!(v, "build", lib.single(&name, None));
                if simulate {
                    v.simulated = true;
                    step!(v, "simulate", run_sim(&w, &self.machine));
                }
            }
            Target::Mix => {
                let mut lib = self.builtin.clone();
                step!(v, "parse", lib.add_mix_text("fuzz-mixes.toml", text));
                v.parsed = true;
            }
            Target::Topology => {
                step!(
                    v,
                    "parse little-first",
                    Topology::from_toml(text, CoreOrder::LittleFirst)
                );
                let t = step!(v, "parse", Topology::from_toml(text, CoreOrder::BigFirst));
                v.parsed = true;
                if simulate {
                    v.simulated = true;
                    step!(v, "simulate", run_sim(&self.small, &t));
                }
            }
            Target::Trace => {
                let trace = step!(v, "parse", Trace::parse("fuzz.trace", text));
                v.parsed = true;
                let opts = ReplayOptions {
                    name: "fuzz".into(),
                    speedup: 2.0,
                    thread_speedup: Default::default(),
                    keep_tracing_overhead: false,
                    sleep_unnamed_wakes: false,
                };
                let p = step!(v, "replay", colab_trace::to_program(&trace, &opts));
                if simulate {
                    let w = Workload {
                        name: p.name.clone(),
                        classes: vec!["single".into()],
                        source: String::new(),
                        programs: vec![p],
                    };
                    v.simulated = true;
                    step!(v, "simulate", run_sim(&w, &self.machine));
                }
            }
            Target::Manifest => {
                let dir = &self.manifest_dir.0;
                std::fs::write(dir.join(colab_trace::library::MANIFEST), text)
                    .expect("the fuzzer's temporary directory is writable");
                step!(v, "parse", Manifest::load(dir));
                v.parsed = true;
            }
            Target::Model => {
                let m = step!(v, "parse", Model::from_json(text));
                v.parsed = true;
                step!(v, "describe", ok(colab_train::describe_model(&m)));
                let counts = |e: &str| {
                    Some(if e == colab_model::CPU_CYCLES {
                        1e6
                    } else {
                        1e4
                    })
                };
                for c in m.core_types().map(|(c, _)| c).chain(["big", "little"]) {
                    step!(v, "predict", m.predict(c, &counts));
                }
            }
            Target::Perf => {
                step!(v, "parse", colab_model::perf::parse_perf_stat(text));
                v.parsed = true;
            }
            Target::Table => {
                // Both CSV readers on every mutant: the training table and
                // the measurements of `colab train --perf`.
                let a = stage("parse measurements", || {
                    colab_model::perf::parse_measurements(text)
                })?;
                let b = stage("parse table", || {
                    colab_model::TrainingTable::from_csv_str(text)
                })?;
                v.parsed = a.is_ok() || b.is_ok();
                v.error = a.err().or(b.err());
            }
        }
        Ok(v)
    }
}

/// A value as an infallible stage.
fn ok<T>(t: T) -> Result<T, std::convert::Infallible> {
    Ok(t)
}

/// Simulates `w` on `topo` under CFS with the fuzzing event budget.
fn run_sim(w: &Workload, topo: &Topology) -> anyhow::Result<()> {
    let mut policy = colab_policies::by_name("cfs")?;
    let cfg = SimConfig {
        max_events: FUZZ_MAX_EVENTS,
        ..SimConfig::default()
    };
    colab_sim::simulate(w, topo, policy.as_mut(), &cfg)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_or_an_empty_message_is_a_failure_with_its_location() {
        let f = crate::quiet_panics(|| stage("parse", || -> Result<(), String> { panic!("boom") }))
            .unwrap_err();
        assert_eq!(f.stage, "parse");
        assert!(
            f.problem.contains("boom") && f.problem.contains("targets.rs:"),
            "{f}"
        );
        let f = stage("parse", || Err::<(), _>(" ")).unwrap_err();
        assert!(f.problem.contains("empty message"), "{f}");
        assert_eq!(
            stage("parse", || Err::<(), _>("bad")).unwrap(),
            Err("bad".into())
        );
    }
}
