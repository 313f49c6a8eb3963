//! Writing a study's files: each one through a temporary sibling and a rename,
//! so a reader never sees a half-written file and a failure leaves the old
//! file (if any) untouched.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::AnalyticError;

/// What a study wrote.
#[derive(Debug, Clone)]
pub struct StudyFiles {
    pub dir: PathBuf,
    /// Every file written, in writing order.
    pub files: Vec<PathBuf>,
    /// Short plain-text summary for the terminal.
    pub summary: String,
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> AnalyticError + '_ {
    move |source| AnalyticError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates `dir` (and its parents); an existing non-directory is an error.
pub(crate) fn prepare_dir(dir: &Path) -> Result<(), AnalyticError> {
    if dir.exists() && !dir.is_dir() {
        return Err(AnalyticError::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "exists and is not a directory",
            ),
        });
    }
    fs::create_dir_all(dir).map_err(io_err(dir))
}

/// A hidden temporary sibling of `path` that keeps its extension (plotters'
/// bitmap backend picks the image format from the extension).
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let stem = path
        .file_stem()
        .map_or_else(|| "out".into(), |s| s.to_string_lossy().into_owned());
    let ext = path
        .extension()
        .map_or_else(String::new, |e| format!(".{}", e.to_string_lossy()));
    path.with_file_name(format!(".{stem}.tmp-{}-{nanos}{ext}", std::process::id()))
}

/// Moves a finished temporary file into place (same directory, so atomic);
/// removes it on failure.
pub(crate) fn commit(tmp: &Path, path: &Path) -> Result<(), AnalyticError> {
    fs::rename(tmp, path).map_err(|e| {
        let _ = fs::remove_file(tmp);
        io_err(path)(e)
    })
}

pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<(), AnalyticError> {
    let tmp = tmp_path(path);
    if let Err(e) = fs::write(&tmp, text) {
        let _ = fs::remove_file(&tmp);
        return Err(io_err(&tmp)(e));
    }
    commit(&tmp, path)
}

/// A Markdown table with a header row.
pub(crate) fn md_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!("| {} |\n", headers.join(" | "));
    s.push_str(&format!(
        "|{}\n",
        headers.iter().map(|_| "---|").collect::<String>()
    ));
    for r in rows {
        s.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    s
}

/// A fixed-width plain-text table for the terminal.
pub(crate) fn text_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            l.push_str(&format!("{c:>w$}"));
        }
        l.trim_end().to_string() + "\n"
    };
    let mut s = line(headers.to_vec());
    for r in rows {
        s.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    s
}
