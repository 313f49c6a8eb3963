//! Text for people: tables whose columns are as wide as their widest
//! cell, with the last column folded to the line width, and folded text.
//!
//! Widths count characters (the texts are ASCII or close to it).

use std::io::IsTerminal;

/// Width of text when stdout is not a terminal (a pipe, a file): fixed, so
/// that what is saved or grepped does not depend on a window.
pub const PIPE_WIDTH: usize = 100;

/// The width to fold text to: the terminal's (between 60 and 120 columns)
/// when stdout is one, else [`PIPE_WIDTH`].
pub fn width() -> usize {
    if !std::io::stdout().is_terminal() {
        return PIPE_WIDTH;
    }
    terminal_columns().map_or(PIPE_WIDTH, |c| c.clamp(60, 120))
}

fn terminal_columns() -> Option<usize> {
    terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0))
}

fn len(s: &str) -> usize {
    s.chars().count()
}

/// The words of `text`, a `quoted command` kept as one.
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for w in text.split_whitespace() {
        match out.last_mut() {
            Some(last) if open => {
                last.push(' ');
                last.push_str(w);
            }
            _ => out.push(w.to_string()),
        }
        if w.matches('`').count() % 2 == 1 {
            open = !open;
        }
    }
    out
}

/// `text` in lines of at most `width` characters, broken at spaces but not
/// inside backquotes (a word longer than `width` gets a line of its own).
/// Never empty.
pub fn fold(text: &str, width: usize) -> Vec<String> {
    fold_to(text, width, width)
}

/// [`fold`] with the first line `first` characters wide, the others `rest`.
fn fold_to(text: &str, first: usize, rest: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in words(text) {
        let word = word.as_str();
        let width = if lines.is_empty() { first } else { rest };
        if !line.is_empty() && len(&line) + 1 + len(word) > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// `text` folded to `width`, its first line after `first` and the others
/// after `rest` (both counted in the width), each line ending in a newline.
pub fn fold_indented(text: &str, first: &str, rest: &str, width: usize) -> String {
    let room = |indent: &str| width.saturating_sub(len(indent)).max(20);
    let mut out = String::new();
    for (i, l) in fold_to(text, room(first), room(rest)).iter().enumerate() {
        out += if i == 0 { first } else { rest };
        out += l;
        out += "\n";
    }
    out
}

/// `text` cut at a space to at most `max` characters, "..." saying so.
pub fn shorten(text: &str, max: usize) -> String {
    if len(text) <= max {
        return text.to_string();
    }
    let mut out = String::new();
    for word in text.split_whitespace() {
        if len(&out) + 1 + len(word) + 4 > max {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    // Not a parenthesis left open: cut before it.
    if out.matches('(').count() > out.matches(')').count() {
        if let Some(i) = out.rfind('(') {
            out.truncate(i);
        }
    }
    out.trim_end().trim_end_matches([',', ';', ':']).to_string() + " ..."
}

enum Line {
    Cells(Vec<String>),
    /// A line of its own between rows (a group's name).
    Heading(String),
    /// A line under a row, indented further, cut to one line.
    Note(String),
}

/// A table with a header row. Columns are as wide as their widest cell;
/// the last is folded to what is left of the line width, its continuation
/// lines starting under it.
pub struct Table {
    header: Vec<String>,
    right: Vec<bool>,
    lines: Vec<Line>,
}

/// Left of every line.
const INDENT: &str = "  ";
/// Between two columns.
const GAP: &str = "  ";
/// The last column is never folded narrower than this (the line is longer
/// than the width instead).
const MIN_LAST: usize = 30;

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            right: vec![false; header.len()],
            lines: Vec::new(),
        }
    }

    /// Right-aligns the columns `cols` (numbers); the last is always left-aligned.
    pub fn right_align(mut self, cols: &[usize]) -> Table {
        for &c in cols {
            self.right[c] = true;
        }
        self
    }

    pub fn row(&mut self, cells: Vec<String>) {
        assert_eq!(
            cells.len(),
            self.header.len(),
            "a row has a cell per column"
        );
        self.lines.push(Line::Cells(cells));
    }

    pub fn heading(&mut self, text: String) {
        self.lines.push(Line::Heading(text));
    }

    /// A line under the last row, cut to one line of the width.
    pub fn note(&mut self, text: String) {
        self.lines.push(Line::Note(text));
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The table, lines no longer than `width` unless a column other than
    /// the last, or the last's [`MIN_LAST`], needs more.
    pub fn render(&self, width: usize) -> String {
        let n = self.header.len();
        let last = n - 1;
        let mut widths: Vec<usize> = self.header.iter().map(|h| len(h)).collect();
        for l in &self.lines {
            if let Line::Cells(cells) = l {
                for (w, c) in widths.iter_mut().zip(cells) {
                    *w = (*w).max(len(c));
                }
            }
        }
        let before: usize =
            len(INDENT) + widths[..last].iter().map(|w| w + len(GAP)).sum::<usize>();
        let room = width.saturating_sub(before).max(MIN_LAST);
        widths[last] = widths[last].min(room);
        let mut out = String::new();
        let emit = |cells: &[String], out: &mut String| {
            let folded = fold(&cells[last], room);
            for (i, tail) in folded.iter().enumerate() {
                let mut line = String::from(INDENT);
                for (c, cell) in cells[..last].iter().enumerate() {
                    let cell = if i == 0 { cell.as_str() } else { "" };
                    let w = widths[c];
                    if self.right[c] {
                        line += &format!("{cell:>w$}{GAP}");
                    } else {
                        line += &format!("{cell:<w$}{GAP}");
                    }
                }
                line += tail;
                *out += line.trim_end();
                *out += "\n";
            }
        };
        emit(&self.header, &mut out);
        for l in &self.lines {
            match l {
                Line::Cells(cells) => emit(cells, &mut out),
                Line::Heading(h) => out += &fold_indented(h, INDENT, "    ", width),
                Line::Note(t) => {
                    out += &format!("{INDENT}{INDENT}{}\n", shorten(t, width - 2 * len(INDENT)));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_breaks_at_spaces_within_the_width() {
        assert_eq!(fold("aa bb cc dd", 5), ["aa bb", "cc dd"]);
        assert_eq!(fold("a verylongword b", 4), ["a", "verylongword", "b"]);
        assert_eq!(fold("", 10), [""]);
        assert_eq!(
            fold_indented("aaaa bbbb cccc dddd eeee ffff", "", "    ", 24),
            "aaaa bbbb cccc dddd eeee\n    ffff\n"
        );
        assert_eq!(
            fold("see `colab list rota` now", 12),
            ["see", "`colab list rota`", "now"]
        );
        assert_eq!(shorten("one two, three four", 14), "one two ...");
        assert_eq!(shorten("one two", 14), "one two");
        assert_eq!(shorten("one (two three four)", 16), "one ...");
    }

    #[test]
    fn columns_fit_their_widest_cell_and_the_last_folds() {
        let mut t = Table::new(&["name", "n", "what"]).right_align(&[1]);
        t.row(vec!["a-long-name".into(), "7".into(), "x y z".into()]);
        t.heading("[group]".into());
        t.row(vec![
            "b".into(),
            "12".into(),
            "one two three four five six seven eight nine ten eleven twelve thirteen".into(),
        ]);
        let out = t.render(50);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "  name          n  what");
        assert_eq!(lines[1], "  a-long-name   7  x y z");
        assert_eq!(lines[2], "  [group]");
        assert!(lines[3].starts_with("  b            12  one two"), "{out}");
        assert!(lines[4].starts_with("                   "), "{out}");
        assert!(out.lines().all(|l| l.len() <= 50), "{out}");
    }
}
