//! What a scheduler's BPF source defines that the host must know by name:
//! its maps (type, key and value sizes, entries, flags, from the
//! `__uint`/`__type` fields of each `SEC(".maps")` definition) and its
//! tracing programs (`SEC("fentry/...")`, `SEC("tp_btf/...")` and the
//! like). Used by build.rs; pure text, so that it is testable.

use std::path::{Path, PathBuf};

/// One source file of a scheduler: its entry file and the local headers it
/// includes with `#include "..."`.
pub struct Source {
    pub path: PathBuf,
    pub text: String,
}

/// The entry file and, recursively, the local files it includes.
pub fn sources(entry: &Path) -> Result<Vec<Source>, String> {
    let mut out: Vec<Source> = Vec::new();
    let mut todo = vec![entry.to_path_buf()];
    while let Some(path) = todo.pop() {
        if out.iter().any(|s| s.path == path) {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        for line in text.lines() {
            let line = line.trim_start();
            if let Some(rest) = line.strip_prefix("#include") {
                let rest = rest.trim();
                if let Some(name) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
                    let p = dir.join(name);
                    if p.is_file() {
                        todo.push(p);
                    }
                }
            }
        }
        out.push(Source { path, text });
    }
    Ok(out)
}

/// A map as its definition spells it (C expressions, evaluated by the compiler).
#[derive(Debug, PartialEq, Eq)]
pub struct MapDef {
    pub name: String,
    pub type_: String,
    pub key_size: String,
    pub value_size: String,
    pub max_entries: String,
    pub flags: String,
}

/// A tracing program: its section (the attach point) and function.
#[derive(Debug, PartialEq, Eq)]
pub struct ProgDef {
    pub section: String,
    pub name: String,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Scan {
    pub maps: Vec<MapDef>,
    pub progs: Vec<ProgDef>,
}

/// Text without comments (so that a commented-out map is not a map).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// The argument list of a macro call starting at `open` (an opening
/// parenthesis), split at top-level commas.
fn macro_args(s: &str, open: usize) -> Option<(Vec<String>, usize)> {
    let mut depth = 0;
    let mut args = Vec::new();
    let mut cur = String::new();
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' => {
                depth += 1;
                if depth > 1 {
                    cur.push(c);
                }
            }
            ')' => {
                depth -= 1;
                if depth == 0 {
                    args.push(cur.trim().to_string());
                    return Some((args, open + i + 1));
                }
                cur.push(c);
            }
            ',' if depth == 1 => args.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    None
}

fn ident_before(s: &str, end: usize) -> Option<String> {
    let head = s[..end].trim_end();
    let start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let id = &head[start..];
    (!id.is_empty()).then(|| id.to_string())
}

/// The maps and programs of the sources.
pub fn scan(sources: &[Source]) -> Scan {
    let mut scan = Scan::default();
    for src in sources {
        let text = strip_comments(&src.text);
        let mut from = 0;
        while let Some(at) = text[from..].find("SEC(") {
            let at = from + at;
            from = at + 4;
            let Some((args, end)) = macro_args(&text, at + 3) else {
                continue;
            };
            let sec = args[0].trim_matches('"').to_string();
            if sec == ".maps" {
                // `struct { ... } NAME SEC(".maps")`
                let Some(name) = ident_before(&text, at) else {
                    continue;
                };
                let Some(close) = text[..at].rfind('}') else {
                    continue;
                };
                let Some(open) = text[..close].rfind('{') else {
                    continue;
                };
                let body = &text[open + 1..close];
                let mut m = MapDef {
                    name,
                    type_: String::new(),
                    key_size: "0".into(),
                    value_size: "0".into(),
                    max_entries: "0".into(),
                    flags: "0".into(),
                };
                for (kind, field) in [("__uint(", true), ("__type(", false)] {
                    let mut f = 0;
                    while let Some(k) = body[f..].find(kind) {
                        let k = f + k;
                        f = k + kind.len();
                        let Some((a, _)) = macro_args(body, k + kind.len() - 1) else {
                            continue;
                        };
                        if a.len() != 2 {
                            continue;
                        }
                        let v = a[1].clone();
                        match (a[0].as_str(), field) {
                            ("type", true) => m.type_ = v,
                            ("max_entries", true) => m.max_entries = v,
                            ("map_flags", true) => m.flags = v,
                            ("key_size", true) => m.key_size = v,
                            ("value_size", true) => m.value_size = v,
                            ("key", false) => m.key_size = format!("sizeof({v})"),
                            ("value", false) => m.value_size = format!("sizeof({v})"),
                            _ => {}
                        }
                    }
                }
                if !m.type_.is_empty() {
                    scan.maps.push(m);
                }
            } else if !sec.starts_with("struct_ops")
                && !sec.starts_with('.')
                && sec != "license"
                && !sec.is_empty()
            {
                // `SEC("fentry/x") int BPF_PROG(name, ...)` or `int name(...)`
                let rest = &text[end..];
                let name = match rest.find("BPF_PROG(") {
                    Some(p) if rest[..p].split_whitespace().count() <= 1 => {
                        let after = &rest[p + "BPF_PROG(".len()..];
                        after.split([',', ')']).next().map(|s| s.trim().to_string())
                    }
                    _ => rest.find('(').and_then(|p| ident_before(rest, p)),
                };
                if let Some(name) = name {
                    scan.progs.push(ProgDef { section: sec, name });
                }
            }
        }
    }
    scan
}

impl Scan {
    /// The header the glue includes: one `SCX_HOST_MAP` / `SCX_HOST_PROG` a line.
    pub fn tables_header(&self) -> String {
        let mut s =
            String::from("/* Generated by crates/scx_host/build.rs. */\n#ifdef SCX_HOST_MAPS\n");
        for m in &self.maps {
            s.push_str(&format!(
                "SCX_HOST_MAP({}, {}, {}, {}, {}, {})\n",
                m.name, m.type_, m.key_size, m.value_size, m.max_entries, m.flags
            ));
        }
        s.push_str("#endif\n#ifdef SCX_HOST_PROGS\n");
        for p in &self.progs {
            s.push_str(&format!("SCX_HOST_PROG(\"{}\", {})\n", p.section, p.name));
        }
        s.push_str("#endif\n");
        s
    }
}
