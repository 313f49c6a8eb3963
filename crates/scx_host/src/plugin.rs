//! Plug-ins: hosted schedulers whose BPF source may not be compiled into
//! the host's binaries (scx_bpfland is GPL-2.0). Each is a shared object
//! built apart by `bash scripts/build-scx-plugins.sh`
//! (examples/build-scx-plugin.rs) and loaded at run time, found in the
//! first of:
//!
//! 1. each directory of `$COLAB_SCX_PLUGINS` (separated by `:`);
//! 2. `target/scx-plugins/` of the repository this host was built in;
//! 3. `target/scx-plugins/` under the current directory;
//! 4. beside the executable: `scx-plugins/` in its directory or one of the
//!    two above it (`target/<profile>/colab` and the test binaries in
//!    `target/<profile>/deps/` find `target/scx-plugins/`).

use std::path::{Path, PathBuf};

/// The one command that builds every plug-in.
pub const BUILD_COMMAND: &str = "bash scripts/build-scx-plugins.sh";

/// Where plug-ins are looked for, in order.
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(v) = std::env::var_os("COLAB_SCX_PLUGINS") {
        dirs.extend(std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty()));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    dirs.push(
        repo.canonicalize()
            .unwrap_or(repo)
            .join("target/scx-plugins"),
    );
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd.join("target/scx-plugins"));
    }
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        for up in exe_dir.ancestors().take(3) {
            dirs.push(up.join("scx-plugins"));
        }
    }
    let mut seen = Vec::new();
    dirs.retain(|d| {
        let new = !seen.contains(d);
        seen.push(d.clone());
        new
    });
    dirs
}

/// The plug-in `file` (e.g. `scx_bpfland.so`) in the first of `dirs` that
/// has it; or an error that lists where it looked and names the command
/// that builds it. `what` says what the plug-in is.
pub fn find(file: &str, what: &str, dirs: &[PathBuf]) -> Result<PathBuf, String> {
    for d in dirs {
        let p = d.join(file);
        if p.is_file() {
            return Ok(p.canonicalize().unwrap_or(p));
        }
    }
    let seen: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    Err(format!(
        "its plug-in {file} ({what}) is not built. Build it with `{BUILD_COMMAND}` (run in the \
         repository; cargo fetches the crate's source), or set COLAB_SCX_PLUGINS to the directory \
         that holds it. Looked in: {}",
        seen.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_plugin_names_the_command_that_builds_it() {
        let dir = std::env::temp_dir().join(format!("colab-no-plugins-{}", std::process::id()));
        let e = find("scx_nothing.so", "a test", std::slice::from_ref(&dir)).unwrap_err();
        assert!(e.contains("bash scripts/build-scx-plugins.sh"), "{e}");
        assert!(e.contains(&dir.display().to_string()), "{e}");
    }

    #[test]
    fn the_first_directory_that_has_it_wins() {
        let base = std::env::temp_dir().join(format!("colab-plugins-{}", std::process::id()));
        let (a, b) = (base.join("a"), base.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(b.join("scx_x.so"), b"x").unwrap();
        let found = find("scx_x.so", "a test", &[a.clone(), b.clone()]).unwrap();
        assert_eq!(found, b.join("scx_x.so").canonicalize().unwrap());
        std::fs::write(a.join("scx_x.so"), b"x").unwrap();
        let found = find("scx_x.so", "a test", &[a.clone(), b]).unwrap();
        assert_eq!(found, a.join("scx_x.so").canonicalize().unwrap());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
