//! Builds a sched_ext scheduler the simulator hosts as a plug-in: its
//! published crate's BPF C, fetched by cargo, compiled as build.rs compiles
//! scx_colab (src/native_build.rs: the same compiler, flags and shim) into
//! `<out-dir>/scx_<name>.so`, which `scx:<name>` loads at run time. The
//! source is GPL-2.0: it is compiled into that file alone, never into the
//! host's binaries, and nothing of it is kept in the repository.
//!
//! Run by `bash scripts/build-scx-plugins.sh` (all plug-ins) or directly:
//!
//! ```text
//! cargo run -p colab-scx-host --example build-scx-plugin -- \
//!     [--out-dir DIR] [--source DIR] [NAME...]
//! ```
//!
//! For each NAME (default: every plug-in below) it writes a throwaway Cargo
//! project under `<out-dir>/fetch/` that depends on the crate at its exact
//! version, runs `cargo fetch` there (the crate lands in cargo's registry
//! cache, unpacked), finds the unpacked crate in `$CARGO_HOME/registry/src`
//! and confirms it with `cargo metadata` (name and version), then compiles
//! its BPF entry file. `--source DIR` skips the fetch and takes the crate's
//! root directory as given (one NAME). Exit status 2: cargo could not fetch
//! the crate (no access to crates.io); 1: any other failure.

#[path = "../src/build_scan.rs"]
#[allow(dead_code)]
mod build_scan;
#[path = "../src/native_build.rs"]
mod native_build;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A plug-in: its `scx:` name, crate, exact version, BPF entry file in the crate.
struct Plugin {
    name: &'static str,
    krate: &'static str,
    version: &'static str,
    entry: &'static str,
}

const PLUGINS: &[Plugin] = &[Plugin {
    name: "bpfland",
    krate: "scx_bpfland",
    version: "1.1.4",
    entry: "src/bpf/main.bpf.c",
}];

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn run(cmd: &mut Command, what: &str) -> Result<Vec<u8>, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: could not run it: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out.stdout)
}

fn cargo_home() -> PathBuf {
    if let Some(h) = std::env::var_os("CARGO_HOME") {
        return PathBuf::from(h);
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    PathBuf::from(home).join(".cargo")
}

/// `cargo metadata` of the crate at `dir`: its name and version.
fn metadata_of(dir: &Path) -> Result<(String, String), String> {
    let out = run(
        cargo()
            .args([
                "metadata",
                "--format-version",
                "1",
                "--no-deps",
                "--offline",
            ])
            .arg("--manifest-path")
            .arg(dir.join("Cargo.toml")),
        &format!("cargo metadata of {}", dir.display()),
    )?;
    let v: serde_json::Value = serde_json::from_slice(&out).map_err(|e| e.to_string())?;
    let p = v["packages"]
        .as_array()
        .and_then(|a| a.first())
        .ok_or("cargo metadata listed no package")?;
    Ok((
        p["name"].as_str().unwrap_or_default().to_string(),
        p["version"].as_str().unwrap_or_default().to_string(),
    ))
}

/// The published crate's source: fetched by cargo through a throwaway
/// project, found unpacked in cargo's registry, confirmed by cargo metadata.
fn fetch(p: &Plugin, out_dir: &Path) -> Result<PathBuf, String> {
    let proj = out_dir
        .join("fetch")
        .join(format!("{}-{}", p.krate, p.version));
    std::fs::create_dir_all(&proj).map_err(|e| format!("{}: {e}", proj.display()))?;
    std::fs::write(
        proj.join("Cargo.toml"),
        format!(
            "# Written by crates/scx_host/examples/build-scx-plugin.rs: fetches {k} {v}'s\n\
             # source (a binary crate: cargo only downloads it, nothing is built).\n\
             [package]\nname = \"scx-plugin-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
             publish = false\n\n[lib]\npath = \"lib.rs\"\n\n[dependencies]\n{k} = \"={v}\"\n\n\
             # Not part of the repository's workspace.\n[workspace]\n",
            k = p.krate,
            v = p.version
        ),
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(proj.join("lib.rs"), "").map_err(|e| e.to_string())?;
    eprintln!("fetching {} {} with cargo ...", p.krate, p.version);
    run(
        cargo()
            .arg("fetch")
            .arg("--manifest-path")
            .arg(proj.join("Cargo.toml")),
        &format!("{NO_FETCH}{} {}", p.krate, p.version),
    )?;
    // A binary-only crate is left out of its dependent's `cargo metadata`,
    // so the unpacked crate is found in the registry and confirmed there.
    let src = cargo_home().join("registry").join("src");
    let dirs = std::fs::read_dir(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    let want = format!("{}-{}", p.krate, p.version);
    let mut found = Vec::new();
    for d in dirs.flatten() {
        let c = d.path().join(&want);
        if c.join("Cargo.toml").is_file() {
            found.push(c);
        }
    }
    found.sort();
    for c in found {
        let (name, version) = metadata_of(&c)?;
        if name == p.krate && version == p.version {
            return Ok(c);
        }
    }
    Err(format!(
        "cargo fetched {} {} but its source is not under {}",
        p.krate,
        p.version,
        src.display()
    ))
}

/// Exit status when cargo could not fetch the crate (no network, no
/// crates.io): scripts/test.sh then skips the plug-in's tests visibly.
const EXIT_NO_FETCH: i32 = 2;
/// An error message that starts so is a failed fetch.
const NO_FETCH: &str = "cargo fetch of ";

fn main() {
    if let Err(e) = real_main() {
        eprintln!("build-scx-plugin: {e}");
        std::process::exit(if e.starts_with(NO_FETCH) {
            EXIT_NO_FETCH
        } else {
            1
        });
    }
}

fn real_main() -> Result<(), String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out_dir = manifest.join("../../target/scx-plugins");
    let mut source: Option<PathBuf> = None;
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out-dir" => out_dir = PathBuf::from(args.next().ok_or("--out-dir needs a path")?),
            "--source" => source = Some(PathBuf::from(args.next().ok_or("--source needs a path")?)),
            "-h" | "--help" => {
                println!(
                    "build-scx-plugin [--out-dir DIR] [--source CRATE_DIR] [NAME...]\nplug-ins: {}",
                    PLUGINS
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                return Ok(());
            }
            n => names.push(n.to_string()),
        }
    }
    if names.is_empty() {
        names = PLUGINS.iter().map(|p| p.name.to_string()).collect();
    }
    if source.is_some() && names.len() != 1 {
        return Err("--source takes one plug-in name".into());
    }
    let cc =
        native_build::Compiler::from_env_strings(env!("SCX_HOST_CC"), env!("SCX_HOST_CC_ARGS"));
    let shim = manifest.join("shim");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let out_dir = out_dir.canonicalize().map_err(|e| e.to_string())?;
    for n in &names {
        let p = PLUGINS.iter().find(|p| p.name == n).ok_or_else(|| {
            format!(
                "no plug-in '{n}' (known: {})",
                PLUGINS
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        let root = match &source {
            Some(s) => s.clone(),
            None => fetch(p, &out_dir)?,
        };
        let entry = root.join(p.entry);
        let entry = entry
            .canonicalize()
            .map_err(|e| format!("{}: {e}", entry.display()))?;
        let so = out_dir.join(format!("scx_{}.so", p.name));
        let work = out_dir.join("build");
        native_build::compile(p.name, &entry, &[], &shim, &work, &so, &cc)?;
        println!("scx:{} <- {} ({})", p.name, so.display(), entry.display());
    }
    Ok(())
}
