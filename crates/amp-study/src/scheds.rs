//! Which schedulers the study runs: the kernel's default, then each
//! sched_ext scheduler given with `--scheduler` or found installed.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// One scheduler of the study.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedSpec {
    /// Its name in the results (no commas or spaces).
    pub label: String,
    /// The scheduler's program; None for the kernel's default scheduler.
    pub program: Option<PathBuf>,
    pub args: Vec<String>,
}

/// The kernel's default scheduler's label (EEVDF on 6.6 and later).
pub const DEFAULT: &str = "default";

/// sched_ext schedulers looked for when no `--scheduler` is given: ours and
/// the scx project's that run with no arguments (scx_layered and
/// scx_mitosis need a configuration, scx_loader and scxctl are not
/// schedulers). scx_colab also runs as scx_colab-paper (`--policy colab`),
/// as in the VM study.
pub const KNOWN: &[&str] = &[
    "scx_colab",
    "scx_bpfland",
    "scx_lavd",
    "scx_rusty",
    "scx_flash",
    "scx_p2dq",
    "scx_rustland",
    "scx_simple",
];

impl SchedSpec {
    pub fn default_scheduler() -> SchedSpec {
        SchedSpec {
            label: DEFAULT.into(),
            program: None,
            args: Vec::new(),
        }
    }

    /// The command line, as a user would type it.
    pub fn command(&self) -> String {
        match &self.program {
            None => "(the kernel's default scheduler)".into(),
            Some(p) => std::iter::once(p.display().to_string())
                .chain(self.args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// Parses `--scheduler`: `default`, or `[LABEL=]PROGRAM [ARGS...]`, the
/// program a path or a name looked up in `path` (the PATH variable's
/// value); the label defaults to the program's file name.
pub fn parse(spec: &str, path: &str) -> Result<SchedSpec> {
    let spec = spec.trim();
    if spec == DEFAULT {
        return Ok(SchedSpec::default_scheduler());
    }
    let (label, cmd) = match spec.split_once('=') {
        Some((l, c)) if !l.contains(char::is_whitespace) && !l.contains('/') => {
            (Some(l.to_string()), c)
        }
        _ => (None, spec),
    };
    let mut words = cmd.split_whitespace();
    let Some(prog) = words.next() else {
        bail!("--scheduler '{spec}': no program given");
    };
    let program = resolve(prog, path)?;
    let label = match label {
        Some(l) => l,
        None => file_name(&program),
    };
    if label.is_empty()
        || label == DEFAULT
        || !label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    {
        bail!(
            "--scheduler '{spec}': the label '{label}' must be letters, digits, '_', '-' or '.' and not '{DEFAULT}'"
        );
    }
    Ok(SchedSpec {
        label,
        program: Some(program),
        args: words.map(String::from).collect(),
    })
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn is_executable(p: &Path) -> bool {
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// A program given by path (it must exist and be executable) or by name
/// (the first executable of that name in `path`).
pub fn resolve(prog: &str, path: &str) -> Result<PathBuf> {
    if prog.contains('/') {
        let p = PathBuf::from(prog);
        if !is_executable(&p) {
            bail!("scheduler '{prog}': no such executable file");
        }
        return Ok(p);
    }
    match find_in(prog, path) {
        Some(p) => Ok(p),
        None => {
            bail!("scheduler '{prog}': not found in PATH ({path}); install it or give its path")
        }
    }
}

fn find_in(name: &str, path: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// The study's schedulers when none are given: the default, then each
/// [`KNOWN`] scheduler found in `path`, scx_colab also as scx_colab-paper.
pub fn discover(path: &str) -> Vec<SchedSpec> {
    let mut out = vec![SchedSpec::default_scheduler()];
    for name in KNOWN {
        let Some(p) = find_in(name, path) else {
            continue;
        };
        out.push(SchedSpec {
            label: name.to_string(),
            program: Some(p.clone()),
            args: Vec::new(),
        });
        if *name == "scx_colab" {
            out.push(SchedSpec {
                label: "scx_colab-paper".into(),
                program: Some(p),
                args: vec!["--policy".into(), "colab".into()],
            });
        }
    }
    out
}

/// The default scheduler first (added if missing: every result is read
/// against it), then the rest in the order given; labels must be unique.
pub fn with_default_first(specs: Vec<SchedSpec>) -> Result<Vec<SchedSpec>> {
    let mut seen = BTreeSet::new();
    for s in &specs {
        if !seen.insert(s.label.clone()) {
            bail!(
                "two schedulers are labelled '{}': name one with --scheduler LABEL=PROGRAM",
                s.label
            );
        }
    }
    let mut out = vec![SchedSpec::default_scheduler()];
    out.extend(specs.into_iter().filter(|s| s.program.is_some()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin_dir(names: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for n in names {
            let p = d.path().join(n);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // Not executable: never picked.
        std::fs::write(d.path().join("scx_lavd"), "").unwrap();
        d
    }

    #[test]
    fn discovery_finds_known_executables_and_adds_the_paper_policy() {
        let d = bin_dir(&["scx_colab", "scx_simple", "scx_loader", "scx_layered"]);
        let path = d.path().to_str().unwrap();
        let labels: Vec<String> = discover(path).into_iter().map(|s| s.label).collect();
        assert_eq!(
            labels,
            ["default", "scx_colab", "scx_colab-paper", "scx_simple"]
        );
        let paper = &discover(path)[2];
        assert_eq!(paper.args, ["--policy", "colab"]);
        assert_eq!(discover("/nonexistent").len(), 1);
    }

    #[test]
    fn a_scheduler_is_a_name_or_path_with_an_optional_label_and_arguments() {
        let d = bin_dir(&["scx_colab"]);
        let path = d.path().to_str().unwrap();
        let s = parse("scx_colab", path).unwrap();
        assert_eq!(s.label, "scx_colab");
        assert!(s.args.is_empty());
        let s = parse("nowin=scx_colab --window inf", path).unwrap();
        assert_eq!(s.label, "nowin");
        assert_eq!(s.args, ["--window", "inf"]);
        assert_eq!(
            s.program.as_deref(),
            Some(d.path().join("scx_colab").as_path())
        );
        let full = d.path().join("scx_colab");
        let s = parse(&format!("{} --stats 1", full.display()), "").unwrap();
        assert_eq!(s.label, "scx_colab");
        assert_eq!(
            parse("default", "").unwrap(),
            SchedSpec::default_scheduler()
        );
    }

    #[test]
    fn bad_schedulers_are_errors_that_say_what_is_wrong() {
        let d = bin_dir(&["scx_colab"]);
        let path = d.path().to_str().unwrap();
        let e = parse("scx_nosuch", path).unwrap_err().to_string();
        assert!(
            e.contains("scx_nosuch") && e.contains("not found in PATH"),
            "{e}"
        );
        let e = parse("scx_lavd", path).unwrap_err().to_string();
        assert!(e.contains("not found"), "{e}");
        let e = parse("/no/such/scx", path).unwrap_err().to_string();
        assert!(e.contains("no such executable"), "{e}");
        let e = parse("a,b=scx_colab", path).unwrap_err().to_string();
        assert!(e.contains("label 'a,b'"), "{e}");
        let e = parse("  ", path).unwrap_err().to_string();
        assert!(e.contains("no program"), "{e}");
        let two = vec![
            parse("scx_colab", path).unwrap(),
            parse("scx_colab", path).unwrap(),
        ];
        let e = with_default_first(two).unwrap_err().to_string();
        assert!(e.contains("two schedulers are labelled 'scx_colab'"), "{e}");
    }

    #[test]
    fn the_default_comes_first_once() {
        let d = bin_dir(&["scx_colab"]);
        let path = d.path().to_str().unwrap();
        let v = with_default_first(vec![
            parse("scx_colab", path).unwrap(),
            SchedSpec::default_scheduler(),
        ])
        .unwrap();
        let labels: Vec<&str> = v.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["default", "scx_colab"]);
    }
}
