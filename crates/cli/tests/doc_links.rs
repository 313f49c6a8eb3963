//! No relative link in the README or the book is broken: every linked file
//! exists, every `#anchor` names a heading of its page (as mdBook derives
//! heading ids) and every `{{#include}}` target is a file. SUMMARY.md is a
//! page too, so each chapter it names must exist. README.md's links into
//! book/src are checked like the book's own. One failure lists every broken
//! link as `file:line: what is wrong`.
//!
//! The rules, kept as they were when this replaced scripts/check-book-links.py:
//! - A line starting with ```` ``` ```` opens or closes a fence (indented or
//!   `~~~` fences are not fences). Links inside a fence are not checked,
//!   includes are (mdBook expands them there too).
//! - A link is `[text](target)` or `![alt](target)`, on one line, the target
//!   without spaces or `)`. A target starting with a lower-case scheme
//!   (`https:`, `mailto:`) is not checked; `#anchor` alone means this page.
//! - A path is resolved against the linking page's folder, lexically (`..`
//!   drops the folder before it, as Python's `os.path.normpath` did).
//! - Only an anchor into a `.md` page is checked, against the ids of its
//!   headings: the lines outside fences that start with `#`.

use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// `[text](target)` or `![alt](target)`. Python's `\s` also matched
/// U+001C..U+001F, which Rust's does not: they are named.
static LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"!?\[[^\]]*\]\(([^)\s\x1C-\x1F]+)\)").unwrap());
/// `{{#include path}}`.
static INCLUDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\{\{#include[\s\x1C-\x1F]+([^}\s\x1C-\x1F]+)[\s\x1C-\x1F]*\}\}").unwrap()
});

fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// README.md and every book/src/**/*.md, as paths relative to `root` with
/// `/` between folders (the book may not exist).
fn doc_pages(root: &Path) -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    let mut stack = vec!["book/src".to_string()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = format!("{dir}/{name}");
            if e.path().is_dir() {
                stack.push(rel);
            } else if name.ends_with(".md") {
                pages.push(rel);
            }
        }
    }
    pages[1..].sort();
    pages
}

/// Whitespace as Python's `str.isspace` has it: Rust's plus U+001C..U+001F.
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Letters and numbers as Python's `str.isalnum` has them (general
/// categories L and N; Rust's `is_alphanumeric` also takes some marks and
/// symbols, such as circled letters).
fn is_alnum(c: char) -> bool {
    static ALNUM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[\p{L}\p{N}]$").unwrap());
    c.is_ascii_alphanumeric() || (!c.is_ascii() && ALNUM.is_match(c.encode_utf8(&mut [0; 4])))
}

/// mdBook's id for a heading's text: lower case, backticks dropped, letters,
/// digits, `-` and `_` kept, each space a `-`, other punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim_matches(is_space)
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            '-' | '_' => Some(c),
            c if is_alnum(c) => Some(c),
            c if is_space(c) => Some('-'),
            _ => None,
        })
        .collect()
}

/// A file's lines as Python's text mode read them: `\n`, `\r\n` and a lone
/// `\r` each end a line.
fn lines_of(text: &str) -> Vec<String> {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .lines()
        .map(str::to_string)
        .collect()
}

/// The ids of `text`'s headings.
fn anchors(text: &str) -> HashSet<String> {
    let mut ids = HashSet::new();
    let mut fence = false;
    for line in lines_of(text) {
        if line.starts_with("```") {
            fence = !fence;
        } else if !fence && line.starts_with('#') {
            ids.insert(slug(line.trim_start_matches('#')));
        }
    }
    ids
}

/// `path` with `.`, `..` and doubled `/` resolved without the file system,
/// as Python's `posixpath.normpath`.
fn normpath(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let lead = if path.starts_with("//") && !path.starts_with("///") {
        "//"
    } else if path.starts_with('/') {
        "/"
    } else {
        ""
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if lead.is_empty() && parts.last().is_none_or(|p| *p == "..") => parts.push(".."),
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let out = format!("{lead}{}", parts.join("/"));
    if out.is_empty() {
        ".".into()
    } else {
        out
    }
}

/// `file` relative to the folder of `page` (both relative to the root),
/// normalized; an absolute `file` stays as it is.
fn resolve(page: &str, file: &str) -> String {
    let dir = page.rfind('/').map_or("", |i| &page[..i]);
    if file.starts_with('/') || dir.is_empty() {
        normpath(file)
    } else {
        normpath(&format!("{dir}/{file}"))
    }
}

/// `https:`, `mailto:` and the like: a lower-case scheme.
fn is_external(target: &str) -> bool {
    let n = target.bytes().take_while(u8::is_ascii_lowercase).count();
    n > 0 && target.as_bytes().get(n) == Some(&b':')
}

/// Every broken link, include and anchor of `pages` (relative to `root`).
fn broken_links(root: &Path, pages: &[String]) -> Vec<String> {
    let read = |rel: &str| {
        let p = root.join(rel);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: cannot read: {e}", p.display()))
    };
    let mut ids: HashMap<String, HashSet<String>> = HashMap::new();
    let mut errors = Vec::new();
    for page in pages {
        let mut fence = false;
        for (i, line) in lines_of(&read(page)).iter().enumerate() {
            let n = i + 1;
            if line.starts_with("```") {
                fence = !fence;
                continue;
            }
            for m in INCLUDE.captures_iter(line) {
                let file = &m[1];
                if !root.join(resolve(page, file)).is_file() {
                    errors.push(format!("{page}:{n}: include {file} does not exist"));
                }
            }
            if fence {
                continue;
            }
            for m in LINK.captures_iter(line) {
                let target = &m[1];
                if is_external(target) {
                    continue;
                }
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let dest = if file.is_empty() {
                    page.clone()
                } else {
                    resolve(page, file)
                };
                if !root.join(&dest).exists() {
                    errors.push(format!("{page}:{n}: link to {target}: no such file"));
                } else if !anchor.is_empty() && dest.ends_with(".md") {
                    let there = ids
                        .entry(dest.clone())
                        .or_insert_with(|| anchors(&read(&dest)));
                    if !there.contains(anchor) {
                        errors.push(format!(
                            "{page}:{n}: link to {target}: no heading #{anchor} there"
                        ));
                    }
                }
            }
        }
    }
    errors
}

#[test]
fn no_relative_link_or_anchor_in_the_book_or_readme_is_broken() {
    let root = repo_root();
    let pages = doc_pages(&root);
    let errors = broken_links(&root, &pages);
    assert!(
        errors.is_empty(),
        "{} broken link(s) in {} pages:\n{}",
        errors.len(),
        pages.len(),
        errors.join("\n")
    );
}

#[test]
fn heading_ids_are_mdbooks() {
    assert_eq!(slug(" Getting started\n"), "getting-started");
    assert_eq!(slug("The `colab sim` command"), "the-colab-sim-command");
    assert_eq!(slug("Q&A: what's new? (v2)"), "qa-whats-new-v2");
    assert_eq!(
        slug("snake_case and kebab-case"),
        "snake_case-and-kebab-case"
    );
    assert_eq!(slug("Ärger über µs — 4B4S"), "ärger-über-µs--4b4s");
    assert_eq!(slug("Ⓐ ①"), "-①");
    let text = "# Top\n```sh\n# not a heading\n```\n## Sub `x`\n#!shebang\n";
    let ids = anchors(text);
    let want: HashSet<String> = ["top", "sub-x", "shebang"].map(String::from).into();
    assert_eq!(ids, want);
}

#[test]
fn paths_resolve_lexically() {
    assert_eq!(resolve("README.md", "book/src/a.md"), "book/src/a.md");
    assert_eq!(resolve("book/src/guide/a.md", "../b.md"), "book/src/b.md");
    assert_eq!(
        resolve("book/src/a.md", "./x//y/../z.md"),
        "book/src/x/z.md"
    );
    assert_eq!(resolve("book/src/a.md", "../../../../up.md"), "../../up.md");
    assert_eq!(resolve("book/src/a.md", "/abs/../p"), "/p");
    assert!(is_external("https://x.org") && is_external("mailto:a@b"));
    assert!(!is_external("a.md") && !is_external("HTTP://x") && !is_external(":x"));
}

#[test]
fn every_kind_of_break_is_reported_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("book/src/guide")).unwrap();
    std::fs::create_dir_all(root.join("book/src/images")).unwrap();
    std::fs::write(root.join("book/src/images/a.svg"), "").unwrap();
    std::fs::write(
        root.join("book/src/guide/page.md"),
        "# Page\n\n## The `run` step\n\n```md\n# Fenced\n```\n",
    )
    .unwrap();
    std::fs::write(
        root.join("book/src/index.md"),
        "# Index\n\
         [ok](guide/page.md#the-run-step) ![img](images/a.svg) [web](https://x/y#z)\n\
         [self](#index) [dir](guide) [gone](guide/none.md)\n\
         [bad anchor](guide/page.md#fenced) [self bad](#nowhere)\n\
         ```sh\n\
         [in a fence](nowhere.md) {{#include missing.rs}}\n\
         ```\n\
         {{#include guide/page.md}} {{#include guide}}\n\
         ![lost](images/b.svg) [svg anchor](images/a.svg#any)\n",
    )
    .unwrap();
    std::fs::write(
        root.join("README.md"),
        "[book](book/src/index.md#index) [no](book/src/index.md#guide)\n",
    )
    .unwrap();
    let pages = doc_pages(root);
    assert_eq!(
        pages,
        ["README.md", "book/src/guide/page.md", "book/src/index.md"]
    );
    assert_eq!(
        broken_links(root, &pages),
        [
            "README.md:1: link to book/src/index.md#guide: no heading #guide there",
            "book/src/index.md:3: link to guide/none.md: no such file",
            "book/src/index.md:4: link to guide/page.md#fenced: no heading #fenced there",
            "book/src/index.md:4: link to #nowhere: no heading #nowhere there",
            "book/src/index.md:6: include missing.rs does not exist",
            "book/src/index.md:8: include guide does not exist",
            "book/src/index.md:9: link to images/b.svg: no such file",
        ]
    );
}
