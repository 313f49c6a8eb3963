//! A researcher's own workload files, as the command line names them: a
//! TOML file may hold a program, mixes, or both; a mix may name program
//! files (relative to the mix file) beside built-in benchmarks; `FILE:NAME`
//! picks one mix of a file (or its program), `FILE:n` sets its program's
//! thread parameter; `Rand-SEED-K` names random mix K of a seed.

use crate::spec::{MixFile, ProgramSpec};
use crate::{compile, random, Library, Workload, WorkloadError, COLAB_BENCHMARKS};
use std::path::{Path, PathBuf};

/// What one loaded file held (names as the library now knows them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Loaded {
    pub file: String,
    /// Its program's name, if it has one.
    pub program: Option<String>,
    /// Its mixes' names, in the file's order.
    pub mixes: Vec<String>,
}

/// A workload a command-line argument named, and what the user should be
/// told about the choice made for them (a file of several mixes).
#[derive(Clone, Debug)]
pub struct Resolved {
    pub workload: Workload,
    pub note: Option<String>,
    /// How to name this workload alone on a command line: the argument,
    /// or `FILE:MIX` for one mix of a file given whole.
    pub arg: String,
}

/// Keys a program file has at its top level (`ProgramSpec`'s fields).
const PROGRAM_KEYS: [&str; 12] = [
    "name",
    "description",
    "parallelism",
    "sync_rate",
    "comm_comp",
    "default_n",
    "threads_formula",
    "mutex",
    "barrier",
    "cond",
    "timer",
    "queue",
];

fn parse_err(file: &str, message: String) -> WorkloadError {
    WorkloadError::Parse {
        file: file.into(),
        message,
    }
}

/// Does `bench` (a mix's program entry) name a file rather than a
/// benchmark?
fn names_a_file(bench: &str) -> bool {
    bench.ends_with(".toml") || bench.ends_with(".json") || bench.contains('/')
}

/// Splits `FILE:SEL` when FILE is a file (or looks like one), so that
/// benchmark arguments such as `ferret:8` are left alone.
fn file_and_selector(arg: &str) -> Option<(&str, &str)> {
    let (file, sel) = arg.rsplit_once(':')?;
    let looks = file.ends_with(".toml") || file.ends_with(".json") || Path::new(file).is_file();
    (looks && !sel.is_empty()).then_some((file, sel))
}

/// Is `arg` a file argument (a path that exists, or a `.toml` / `.json`
/// name, which is then reported missing by name)?
fn is_file_arg(arg: &str) -> bool {
    arg.ends_with(".toml") || arg.ends_with(".json") || Path::new(arg).is_file()
}

impl Library {
    /// Loads a user's file: an rt-app task set (`.json`) or a TOML file
    /// holding a program, `[[mix]]` entries, or both. A mix's entry may
    /// name a program file by its path relative to this file.
    pub fn load_file(&mut self, path: &Path) -> Result<Loaded, WorkloadError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| WorkloadError::Io {
            file: file.clone(),
            source: e,
        })?;
        if file.ends_with(".json") {
            let name = self.add_rtapp_text(&file, &text)?;
            return Ok(Loaded {
                file,
                program: Some(name),
                mixes: vec![],
            });
        }
        self.load_text(&file, path.parent(), &text)
    }

    /// [`Library::load_file`] of a text, as from file `file` in directory
    /// `dir` (where a mix's program files are looked for; None: only
    /// benchmark names).
    pub fn load_text(
        &mut self,
        file: &str,
        dir: Option<&Path>,
        text: &str,
    ) -> Result<Loaded, WorkloadError> {
        let table: toml::Table = toml::from_str(text)
            .map_err(|e| parse_err(file, colab_core::toml_error::describe(text, &e)))?;
        let has_mixes = table.contains_key("mix");
        let has_program =
            table.contains_key("thread") || PROGRAM_KEYS.iter().any(|k| table.contains_key(*k));
        let mut loaded = Loaded {
            file: file.to_string(),
            ..Loaded::default()
        };
        let mixes = match (has_program, has_mixes) {
            (true, false) => {
                loaded.program = Some(self.add_user_program(file, crate::parse_program(file, text)?)?);
                return Ok(loaded);
            }
            (false, true) => crate::parse_mixes(file, text)?.mix,
            (true, true) => {
                // Both in one file: the program is what is left once the
                // mixes are taken out.
                let mut rest = table;
                let mixes = rest.remove("mix").expect("checked above");
                let mf: MixFile = toml::Table::from_iter([("mix".to_string(), mixes)])
                    .try_into()
                    .map_err(|e: toml::de::Error| parse_err(file, format!("[[mix]]: {}", e.message())))?;
                let spec: ProgramSpec = rest.try_into().map_err(|e: toml::de::Error| {
                    parse_err(file, format!("its program: {}", e.message()))
                })?;
                loaded.program = Some(self.add_user_program(file, spec)?);
                mf.mix
            }
            (false, false) => {
                return Err(WorkloadError::Invalid {
                    file: file.into(),
                    place: "file".into(),
                    problem: "holds neither a program (`name` and `[thread.main]`) nor `[[mix]]` entries (workloads/README.md)".into(),
                })
            }
        };
        if mixes.is_empty() {
            return Err(WorkloadError::Invalid {
                file: file.into(),
                place: "mix".into(),
                problem: "`mix` holds no entries".into(),
            });
        }
        let mut specs = Vec::with_capacity(mixes.len());
        for mut m in mixes {
            for (i, p) in m.programs.iter_mut().enumerate() {
                if names_a_file(&p.bench) {
                    p.bench = self.program_file_of_mix(file, dir, &loaded, &m.name, i, &p.bench)?;
                } else if !self.benchmarks.contains_key(&p.bench) {
                    return Err(unknown_in_mix(file, dir, &m.name, i, &p.bench));
                }
            }
            specs.push(m);
        }
        loaded.mixes = self.add_mixes(file, specs)?;
        Ok(loaded)
    }

    /// Adds a program a user's file holds; refuses one that would take a
    /// built-in benchmark's name (or another file's).
    fn add_user_program(&mut self, file: &str, spec: ProgramSpec) -> Result<String, WorkloadError> {
        compile(file, &spec, None)?;
        if let Some((other, _)) = self.benchmarks.get(&spec.name) {
            if !same_file(Path::new(other), Path::new(file)) {
                return Err(WorkloadError::Invalid {
                    file: file.into(),
                    place: format!("program '{}'", spec.name),
                    problem: format!(
                        "has the name of the program of {other}; give it a name of its own"
                    ),
                });
            }
        }
        let name = spec.name.clone();
        self.benchmarks
            .insert(name.clone(), (file.to_string(), spec));
        Ok(name)
    }

    /// The program a mix's entry names by its file (relative to the mix's
    /// file), loaded; its name.
    fn program_file_of_mix(
        &mut self,
        file: &str,
        dir: Option<&Path>,
        this: &Loaded,
        mix: &str,
        index: usize,
        bench: &str,
    ) -> Result<String, WorkloadError> {
        let place = format!("mix '{mix}' program {}", index + 1);
        let path: PathBuf = match dir {
            Some(d) => d.join(bench),
            None => PathBuf::from(bench),
        };
        if same_file(&path, Path::new(file)) {
            return this.program.clone().ok_or_else(|| WorkloadError::Invalid {
                file: file.into(),
                place,
                problem: format!("names '{bench}', this file, which holds no program"),
            });
        }
        let inner = self.load_file(&path).map_err(|e| WorkloadError::Invalid {
            file: file.into(),
            place: place.clone(),
            problem: format!("names the program file '{bench}': {e}"),
        })?;
        inner.program.ok_or_else(|| WorkloadError::Invalid {
            file: file.into(),
            place,
            problem: format!("names '{bench}', which holds mixes but no program"),
        })
    }

    /// Resolves command-line workload arguments: built-in benchmarks
    /// (`ferret`, `ferret:8`), mixes (`Sync-2`, `Rand-7-2`: random mix 2
    /// of seed 7), and files (`mine.toml`, `mine.toml:NAME` for one of its
    /// mixes or its program, `mine.toml:n` for its program at n, `task.json`
    /// for an rt-app task set). Every file is loaded before any is
    /// resolved, so a mix may name the program of a file given beside it.
    /// A file of several mixes gives its first with a note, or every one
    /// with `every_mix`.
    pub fn resolve_args(
        &mut self,
        args: &[String],
        every_mix: bool,
    ) -> Result<Vec<Resolved>, WorkloadError> {
        let mut loaded = std::collections::BTreeMap::new();
        // Program files first: mixes of other files may name their programs.
        let mut files: Vec<&str> = args
            .iter()
            .map(|a| file_and_selector(a).map_or(a.as_str(), |(f, _)| f))
            .filter(|f| is_file_arg(f))
            .collect();
        files.dedup();
        let mut pending = Vec::new();
        for f in files {
            if loaded.contains_key(f) {
                continue;
            }
            match self.load_file(Path::new(f)) {
                Ok(l) => {
                    loaded.insert(f.to_string(), l);
                }
                // A mix naming a program given later on the line: retry
                // once every other file is in.
                Err(e @ WorkloadError::Invalid { .. }) => pending.push((f, e)),
                Err(e) => return Err(e),
            }
        }
        for (f, _) in pending {
            let l = self.load_file(Path::new(f))?;
            loaded.insert(f.to_string(), l);
        }
        let mut out = Vec::new();
        for arg in args {
            out.extend(self.resolve_one(arg, &loaded, every_mix)?);
        }
        Ok(out)
    }

    fn resolve_one(
        &self,
        arg: &str,
        loaded: &std::collections::BTreeMap<String, Loaded>,
        every_mix: bool,
    ) -> Result<Vec<Resolved>, WorkloadError> {
        let one = |workload| {
            Ok(vec![Resolved {
                workload,
                note: None,
                arg: arg.to_string(),
            }])
        };
        let (file, sel) = match file_and_selector(arg) {
            Some((f, s)) => (f, Some(s)),
            None if is_file_arg(arg) => (arg, None),
            None => return one(self.resolve_name(arg)?),
        };
        let l = &loaded[file];
        let program = || {
            l.program.clone().ok_or_else(|| WorkloadError::Invalid {
                file: file.into(),
                place: arg.into(),
                problem: format!("holds no program, only the mixes {}", l.mixes.join(", ")),
            })
        };
        match sel {
            Some(s) => {
                if let Some(m) = l.mixes.iter().find(|m| m.eq_ignore_ascii_case(s)) {
                    return one(self.mix(m)?);
                }
                if l.program.as_deref() == Some(s) {
                    return one(self.single(s, None)?);
                }
                if let Ok(n) = s.parse::<i64>() {
                    return one(self.single(&program()?, Some(n))?);
                }
                let mut known: Vec<&str> = l.mixes.iter().map(String::as_str).collect();
                known.extend(l.program.as_deref());
                Err(WorkloadError::Invalid {
                    file: file.into(),
                    place: format!("`:{s}`"),
                    problem: format!(
                        "'{s}' is neither a thread count nor one of its mixes or its program ({})",
                        known.join(", ")
                    ),
                })
            }
            None if l.mixes.is_empty() => one(self.single(&program()?, None)?),
            None if l.mixes.len() == 1 => one(self.mix(&l.mixes[0])?),
            None if every_mix => l
                .mixes
                .iter()
                .map(|m| {
                    Ok(Resolved {
                        workload: self.mix(m)?,
                        note: None,
                        arg: format!("{file}:{m}"),
                    })
                })
                .collect(),
            None => Ok(vec![Resolved {
                workload: self.mix(&l.mixes[0])?,
                arg: format!("{file}:{}", l.mixes[0]),
                note: Some(format!(
                    "{file} holds {} mixes ({}); this is the first, {}: `{file}:NAME` picks one, --every-mix runs them all",
                    l.mixes.len(),
                    l.mixes.join(", "),
                    l.mixes[0]
                )),
            }]),
        }
    }

    /// A name that is not a file: a mix of the library, a random mix
    /// (`Rand-SEED-K`), or a benchmark (`name` or `name:n`).
    pub fn resolve_name(&self, arg: &str) -> Result<Workload, WorkloadError> {
        if self.mixes.iter().any(|m| m.name.eq_ignore_ascii_case(arg)) {
            return self.mix(arg);
        }
        if let Some((seed, index)) = random_mix_name(arg) {
            let m = random::random_mix(self, &COLAB_BENCHMARKS, seed, index)?;
            return self.mix_workload(&m.source, &m);
        }
        let (name, n) = match arg.split_once(':') {
            Some((a, b)) => (
                a,
                Some(b.parse::<i64>().map_err(|_| WorkloadError::Invalid {
                    file: "<command line>".into(),
                    place: arg.into(),
                    problem: format!("'{b}' is not a thread count"),
                })?),
            ),
            None => (arg, None),
        };
        self.single(name, n)
    }
}

/// `Rand-SEED-K` (K from 1), as [`random::mix_name`] writes it.
fn random_mix_name(arg: &str) -> Option<(u64, u32)> {
    let rest = arg
        .strip_prefix("Rand-")
        .or_else(|| arg.strip_prefix("rand-"))?;
    let (seed, k) = rest.split_once('-')?;
    let (seed, k) = (seed.parse().ok()?, k.parse().ok()?);
    (k >= 1).then_some((seed, k))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// An unknown benchmark in a mix, with the file it probably meant.
fn unknown_in_mix(
    file: &str,
    dir: Option<&Path>,
    mix: &str,
    index: usize,
    bench: &str,
) -> WorkloadError {
    let beside = dir
        .map(|d| d.join(format!("{bench}.toml")))
        .filter(|p| p.is_file());
    let hint = match beside {
        Some(_) => format!(
            "; to use the program file beside the mix, write bench = \"{bench}.toml\" (a path relative to the mix file)"
        ),
        None => "; name a built-in benchmark (`colab list`) or a program file by its path, relative to the mix file".into(),
    };
    WorkloadError::Invalid {
        file: file.into(),
        place: format!("mix '{mix}' program {}", index + 1),
        problem: format!("unknown benchmark '{bench}'{hint}"),
    }
}
