//! A trace library: recordings of real programs kept in a directory with a
//! `manifest.toml` that says what each is (program, threads, input), how it
//! was made (machine, date, native wall times beside it, what else ran) and
//! what replay needs that a trace cannot tell (the big/little speedups of
//! its threads, with their source). `colab validate --keep-traces DIR`
//! writes one; `colab reproduce --traces DIR` runs the study over it.

use crate::busy::Others;
use crate::overhead::Overhead;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

pub const MANIFEST: &str = "manifest.toml";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub library: LibraryInfo,
    #[serde(default)]
    pub trace: Vec<Entry>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LibraryInfo {
    pub name: String,
    /// Where the programs came from (repository and commit, packages).
    pub source: String,
    /// The command that made the library.
    pub made_by: String,
    /// Date (UTC) of the recordings.
    pub recorded: String,
    pub host: String,
    pub kernel: String,
    pub cpus: u32,
}

/// One recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Unique in the library, e.g. `blackscholes-t4-r1`.
    pub name: String,
    pub program: String,
    /// Worker threads asked for, when the program takes a count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// The trace file, relative to the library's directory (`.gz`: gzip).
    pub file: String,
    pub command: Vec<String>,
    pub input: String,
    /// Big/little speedup of every thread, unless `thread_speedup` says.
    pub speedup: f64,
    /// Per-thread speedups by selector (`COMM`, `COMM#K`, `@root`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub thread_speedup: BTreeMap<String, f64>,
    /// Where the speedups come from.
    pub speedup_source: String,
    /// Untraced runs of the same command, interleaved with the recordings.
    pub native_ms: NativeTimes,
    /// Wall time of this recording (perf included).
    pub recorded_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others: Option<Others>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_ns: Option<Overhead>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NativeTimes {
    pub runs: u32,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Bad { path: PathBuf, message: String },
}

impl Manifest {
    /// Reads `dir/manifest.toml` and checks it: unique names, files that
    /// exist inside the directory, speedups of at least 1.
    pub fn load(dir: &Path) -> Result<Manifest, LibraryError> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|source| LibraryError::Io {
            path: path.clone(),
            source,
        })?;
        let bad = |message: String| LibraryError::Bad {
            path: path.clone(),
            message,
        };
        let m: Manifest =
            toml::from_str(&text).map_err(|e| bad(colab_core::toml_error::describe(&text, &e)))?;
        let mut names = BTreeSet::new();
        for e in &m.trace {
            if !names.insert(e.name.as_str()) {
                return Err(bad(format!("trace `{}` listed twice", e.name)));
            }
            let rel = Path::new(&e.file);
            if rel.is_absolute() || rel.components().any(|c| c.as_os_str() == "..") {
                return Err(bad(format!(
                    "trace `{}`: file {} is not inside the library",
                    e.name, e.file
                )));
            }
            if !dir.join(rel).is_file() {
                return Err(bad(format!(
                    "trace `{}`: file {} is missing",
                    e.name, e.file
                )));
            }
            let speedups = std::iter::once(e.speedup).chain(e.thread_speedup.values().copied());
            if let Some(s) = speedups.into_iter().find(|s| !(s.is_finite() && *s >= 1.0)) {
                return Err(bad(format!("trace `{}`: speedup {s} below 1", e.name)));
            }
        }
        Ok(m)
    }

    /// Writes `dir/manifest.toml` through a temporary file.
    pub fn write(&self, dir: &Path) -> Result<(), LibraryError> {
        let path = dir.join(MANIFEST);
        let text = format!(
            "# A colab trace library (crates/trace/src/library.rs); made by `{}`.\n{}",
            self.library.made_by,
            toml::to_string(self).expect("a manifest serializes")
        );
        crate::record::write_atomic(&path, text.as_bytes())
            .map_err(|source| LibraryError::Io { path, source })
    }
}

/// A trace file's text; `.gz` files are gunzipped.
pub fn read_trace_text(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    if path.extension().is_some_and(|x| x == "gz") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut text)?;
        Ok(text)
    } else {
        String::from_utf8(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}

/// Writes `text` gzipped to `path` (through a temporary file).
pub fn write_gz(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(text.as_bytes())?;
    crate::record::write_atomic(path, &enc.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, file: &str) -> Entry {
        Entry {
            name: name.into(),
            program: "p".into(),
            threads: Some(4),
            file: file.into(),
            command: vec!["p".into(), "4".into()],
            input: "generated".into(),
            speedup: 2.0,
            thread_speedup: [("@root".to_string(), 1.4)].into(),
            speedup_source: "test".into(),
            native_ms: NativeTimes {
                runs: 3,
                median: 10.0,
                min: 9.0,
                max: 12.0,
            },
            recorded_ms: 11.0,
            others: None,
            overhead_ns: None,
        }
    }

    fn manifest(entries: Vec<Entry>) -> Manifest {
        Manifest {
            library: LibraryInfo {
                name: "t".into(),
                source: "here".into(),
                made_by: "a test".into(),
                recorded: "2026-11-24".into(),
                host: "h".into(),
                kernel: "k".into(),
                cpus: 2,
            },
            trace: entries,
        }
    }

    #[test]
    fn a_library_round_trips_and_gz_traces_read_back() {
        let dir = tempfile::tempdir().unwrap();
        write_gz(&dir.path().join("a.trace.gz"), "hello\n").unwrap();
        assert_eq!(
            read_trace_text(&dir.path().join("a.trace.gz")).unwrap(),
            "hello\n"
        );
        let m = manifest(vec![entry("a", "a.trace.gz")]);
        m.write(dir.path()).unwrap();
        assert_eq!(Manifest::load(dir.path()).unwrap(), m);
    }

    #[test]
    fn bad_libraries_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        write_gz(&dir.path().join("a.trace.gz"), "x").unwrap();
        let err = |m: Manifest| {
            m.write(dir.path()).unwrap();
            Manifest::load(dir.path()).unwrap_err().to_string()
        };
        let e = err(manifest(vec![
            entry("a", "a.trace.gz"),
            entry("a", "a.trace.gz"),
        ]));
        assert!(e.contains("`a` listed twice"), "{e}");
        let e = err(manifest(vec![entry("b", "b.trace.gz")]));
        assert!(e.contains("b.trace.gz is missing"), "{e}");
        let e = err(manifest(vec![entry("c", "../a.trace.gz")]));
        assert!(e.contains("not inside the library"), "{e}");
        let mut slow = entry("d", "a.trace.gz");
        slow.thread_speedup.insert("x".into(), 0.5);
        let e = err(manifest(vec![slow]));
        assert!(e.contains("speedup 0.5 below 1"), "{e}");
        std::fs::write(dir.path().join(MANIFEST), "[library]\nname = 1\n").unwrap();
        let e = Manifest::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("manifest.toml"), "{e}");
        let e = Manifest::load(&dir.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope"), "{e}");
    }
}
