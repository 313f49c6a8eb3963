//! Workloads: the TOML spec format, compilation to flat programs, and the
//! built-in library of the papers' benchmark models and mixes.

pub mod control;
pub mod expr;
pub mod files;
pub mod program;
pub mod random;
pub mod rtapp;
pub mod spec;

pub use files::{Loaded, Resolved};
pub use program::{
    compile, mem_frac_for_speedup, reference_speedup, BenchInfo, Group, IndexSel, LoopCount, Op,
    Program,
};
pub use spec::{MixFile, MixProgram, MixSpec, ProgramSpec};

use std::collections::BTreeMap;
use std::path::Path;

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin_files.rs"));
}

#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: {place}: {problem}")]
    Invalid {
        file: String,
        place: String,
        problem: String,
    },
    #[error("unknown workload '{name}'{hint}: not a built-in benchmark or mix, and not a file (try `colab list`)", hint = builtin_hint(name))]
    Unknown { name: String },
    #[error("random mixes: {problem}")]
    Random { problem: String },
    #[error("{file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
}

/// " (did you mean 'X'?)" for the built-in benchmark or mix nearest
/// `name` (the part before any `:n`).
fn builtin_hint(name: &str) -> String {
    let lib = Library::builtin();
    let base = name.split(':').next().unwrap_or(name);
    let names = lib
        .benchmarks
        .keys()
        .map(String::as_str)
        .chain(lib.mixes.iter().map(|m| m.name.as_str()));
    colab_core::did_you_mean(base, names)
}

/// Directory of the built-in scenario programs (`workloads/scenarios/`):
/// small programs built around one scheduling situation each, not models of
/// a paper's benchmark.
pub const SCENARIO_DIR: &str = "workloads/scenarios/";

/// The most programs one mix may hold (assumption: the papers' mixes have
/// at most 9 and the random ones 6; 256 leaves room for any study while
/// refusing a file that would expand to millions of programs).
pub const MAX_MIX_PROGRAMS: usize = 256;

/// The most threads one workload may create in all (assumption: 4x the
/// 4,096 threads a single program may create, the largest the simulator's
/// benchmark measures).
pub const MAX_WORKLOAD_THREADS: u64 = 16_384;

/// Is `file` (as `Library::benchmarks` records it) a built-in scenario
/// program rather than a benchmark model?
pub fn is_scenario_file(file: &str) -> bool {
    file.starts_with(SCENARIO_DIR)
}

/// Is a mix with this `source` one of the scenario mixes
/// (`workloads/mixes/scenarios.toml`)?
pub fn is_scenario_mix(source: &str) -> bool {
    source.starts_with("scenario")
}

/// A set of programs started together. It serializes (JSON), so that a
/// campaign's runs can be sent to other processes or machines.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Workload {
    pub name: String,
    pub classes: Vec<String>,
    pub source: String,
    pub programs: Vec<Program>,
}

impl Workload {
    /// `p` alone: a one-program workload named after it, with no classes
    /// (the baseline runs the metrics need, single programs, replays).
    pub fn alone(p: &Program) -> Workload {
        Workload {
            name: p.name.clone(),
            classes: vec![],
            source: String::new(),
            programs: vec![p.clone()],
        }
    }

    pub fn total_threads(&self) -> u32 {
        self.programs.iter().map(|p| p.total_threads).sum()
    }
}

/// The 17 benchmark models of the COLAB papers (colab-tpds Table 2 and
/// colab-cgo20 Table BC); the library also holds the CAMP / Prop-SP ones.
pub const COLAB_BENCHMARKS: [&str; 17] = [
    "blackscholes",
    "bodytrack",
    "bzip2",
    "dedup",
    "ferret",
    "fft",
    "fluidanimate",
    "fmm",
    "freqmine",
    "lu_cb",
    "lu_ncb",
    "mcf",
    "ocean_cp",
    "radix",
    "swaptions",
    "water_nsquared",
    "water_spatial",
];

/// The benchmark models whose sizes and synchronisation counts are measured
/// from recordings of the real programs (traces/parsec, `colab
/// model-check`) rather than assumed; the others follow the campaign budget
/// of workloads/README.md.
pub const RECORDED_MODELS: [&str; 15] = [
    "blackscholes",
    "bodytrack",
    "dedup",
    "ferret",
    "fft",
    "fluidanimate",
    "fmm",
    "freqmine",
    "lu_cb",
    "lu_ncb",
    "ocean_cp",
    "radix",
    "swaptions",
    "water_nsquared",
    "water_spatial",
];

/// Known benchmark specs and mixes.
#[derive(Clone, Debug, Default)]
pub struct Library {
    /// name -> (file it came from, spec)
    pub benchmarks: BTreeMap<String, (String, ProgramSpec)>,
    pub mixes: Vec<MixSpec>,
    mix_files: BTreeMap<String, String>,
}

pub fn parse_program(file: &str, text: &str) -> Result<ProgramSpec, WorkloadError> {
    toml::from_str(text).map_err(|e| WorkloadError::Parse {
        file: file.into(),
        message: colab_core::toml_error::describe(text, &e),
    })
}

pub fn parse_mixes(file: &str, text: &str) -> Result<MixFile, WorkloadError> {
    toml::from_str(text).map_err(|e| WorkloadError::Parse {
        file: file.into(),
        message: colab_core::toml_error::describe(text, &e),
    })
}

impl Library {
    /// The built-in library. Panics only if a shipped file is broken, which
    /// the test suite rules out.
    pub fn builtin() -> Library {
        let mut lib = Library::default();
        // Scenario programs resolve by name like the benchmarks; they are
        // told apart by their file (see `is_scenario_file`).
        for (file, text) in builtin::BENCHMARK_FILES
            .iter()
            .chain(builtin::SCENARIO_FILES)
        {
            lib.add_program_text(file, text)
                .expect("built-in benchmark file is valid");
        }
        for (file, text) in builtin::MIX_FILES {
            lib.add_mix_text(file, text)
                .expect("built-in mix file is valid");
        }
        lib
    }

    pub fn add_program_text(&mut self, file: &str, text: &str) -> Result<String, WorkloadError> {
        let spec = parse_program(file, text)?;
        // Compile once with the default n so broken specs fail at load time.
        compile(file, &spec, None)?;
        let name = spec.name.clone();
        self.benchmarks
            .insert(name.clone(), (file.to_string(), spec));
        Ok(name)
    }

    /// Adds the program an rt-app task set (JSON) describes ([`rtapp`]),
    /// named after the file (its stem); returns that name.
    pub fn add_rtapp_text(&mut self, file: &str, text: &str) -> Result<String, WorkloadError> {
        let stem = Path::new(file)
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| !s.is_empty())
            .unwrap_or("rt-app");
        let spec = rtapp::program_spec(stem, file, text)?;
        compile(file, &spec, None)?;
        let name = spec.name.clone();
        self.benchmarks
            .insert(name.clone(), (file.to_string(), spec));
        Ok(name)
    }

    pub fn add_mix_text(&mut self, file: &str, text: &str) -> Result<Vec<String>, WorkloadError> {
        self.add_mixes(file, parse_mixes(file, text)?.mix)
    }

    /// Adds mixes of `file` (replacing any of the same name), each checked
    /// to resolve; their names.
    pub fn add_mixes(
        &mut self,
        file: &str,
        mixes: Vec<MixSpec>,
    ) -> Result<Vec<String>, WorkloadError> {
        let mut names = Vec::new();
        for m in mixes {
            self.mix_files.insert(m.name.clone(), file.to_string());
            names.push(m.name.clone());
            self.mixes.retain(|x| x.name != m.name);
            self.mixes.push(m);
        }
        // Check every mix resolves.
        for n in &names {
            self.mix(n)?;
        }
        Ok(names)
    }

    /// A benchmark compiled for thread parameter `n` (default when None).
    pub fn program(&self, name: &str, n: Option<i64>) -> Result<Program, WorkloadError> {
        let (file, spec) = self
            .benchmarks
            .get(name)
            .ok_or_else(|| WorkloadError::Unknown {
                name: name.to_string(),
            })?;
        compile(file, spec, n)
    }

    /// A mix as a workload.
    pub fn mix(&self, name: &str) -> Result<Workload, WorkloadError> {
        let m = self
            .mixes
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| WorkloadError::Unknown {
                name: name.to_string(),
            })?;
        let file = self.mix_files.get(&m.name).cloned().unwrap_or_default();
        self.mix_workload(&file, m)
    }

    /// A mix that is not (necessarily) in the library, such as a generated
    /// one (see [`random`]), as a workload; `file` names it in errors.
    pub fn mix_workload(&self, file: &str, m: &MixSpec) -> Result<Workload, WorkloadError> {
        let file = file.to_string();
        if m.programs.len() > MAX_MIX_PROGRAMS {
            return Err(WorkloadError::Invalid {
                file,
                place: format!("mix '{}'", m.name),
                problem: format!(
                    "has {} programs; a mix may have at most {MAX_MIX_PROGRAMS}",
                    m.programs.len()
                ),
            });
        }
        let mut programs = Vec::new();
        let mut threads = 0u64;
        for (i, p) in m.programs.iter().enumerate() {
            let prog = self.program(&p.bench, p.n).map_err(|e| match e {
                WorkloadError::Unknown { name } => WorkloadError::Invalid {
                    file: file.clone(),
                    place: format!("mix '{}' program {}", m.name, i + 1),
                    problem: format!("unknown benchmark '{name}'"),
                },
                e => e,
            })?;
            threads += u64::from(prog.total_threads);
            if threads > MAX_WORKLOAD_THREADS {
                return Err(WorkloadError::Invalid {
                    file,
                    place: format!("mix '{}' program {}", m.name, i + 1),
                    problem: format!(
                        "the mix creates more than {MAX_WORKLOAD_THREADS} threads in all by here"
                    ),
                });
            }
            programs.push(prog);
        }
        if programs.is_empty() {
            return Err(WorkloadError::Invalid {
                file,
                place: format!("mix '{}'", m.name),
                problem: "has no programs".into(),
            });
        }
        let w = Workload {
            name: m.name.clone(),
            classes: m.classes.clone(),
            source: m.source.clone(),
            programs,
        };
        if let Some(t) = m.threads {
            if t != w.total_threads() as i64 {
                return Err(WorkloadError::Invalid {
                    file,
                    place: format!("mix '{}'", m.name),
                    problem: format!(
                        "declares {t} threads but its programs create {}",
                        w.total_threads()
                    ),
                });
            }
        }
        Ok(w)
    }

    /// A single benchmark run alone, as a workload.
    pub fn single(&self, name: &str, n: Option<i64>) -> Result<Workload, WorkloadError> {
        let p = self.program(name, n)?;
        Ok(Workload {
            name: p.name.clone(),
            classes: vec!["single".into()],
            source: String::new(),
            programs: vec![p],
        })
    }

    /// The workload a TOML text holds, read as from a file named `file`:
    /// its first mix if it has `[[mix]]` entries, else its one program alone
    /// (see [`Library::load_text`]).
    pub fn resolve_text(&mut self, file: &str, text: &str) -> Result<Workload, WorkloadError> {
        let l = self.load_text(file, None, text)?;
        match (l.mixes.first(), &l.program) {
            (Some(m), _) => self.mix(m),
            (None, Some(p)) => self.single(p, None),
            (None, None) => unreachable!("a loaded file holds a program or mixes"),
        }
    }

    /// Resolves one command-line workload (see [`Library::resolve_args`]):
    /// a file of several mixes gives its first.
    pub fn resolve(&mut self, arg: &str) -> Result<Workload, WorkloadError> {
        let mut r = self.resolve_args(&[arg.to_string()], false)?;
        Ok(r.remove(0).workload)
    }
}

#[cfg(test)]
mod tests;
