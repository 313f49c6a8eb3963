//! Text mutations. Every mutant is valid UTF-8 (the parsers take `&str`),
//! and every random choice comes from the caller's generator, so a seed and
//! a case number always give the same mutant.

use rand::Rng;
use rand_pcg::Pcg64;

/// Numbers that have broken parsers before, or sit on a type's edge.
pub const HOSTILE_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "4294967296",
    "18446744073709551615",
    "9223372036854775807",
    "1e308",
    "-1e308",
    "nan",
    "inf",
];

/// Tokens inserted anywhere: the numbers above plus syntax of the formats
/// fuzzed (TOML, JSON, CSV, perf's `-x,` lines).
pub const TOKENS: &[&str] = &[
    "\"\"",
    "[",
    "]",
    "{",
    "}",
    "=",
    "\"",
    "#",
    "\n",
    "[[mix]]",
    "[thread.x]",
    ",",
    ":",
];

/// Length of the very long token (a name or value nobody would write).
pub const LONG_TOKEN_CHARS: usize = 10_000;

/// `text` with 1 to 4 mutations stacked.
pub fn mutate(text: &str, rng: &mut Pcg64) -> String {
    let mut s = text.to_string();
    for _ in 0..rng.gen_range(1..=4) {
        s = mutate_once(s, rng);
    }
    s
}

fn mutate_once(mut s: String, rng: &mut Pcg64) -> String {
    match rng.gen_range(0..9) {
        0 => flip_bit(s, rng),
        1 => {
            // Replace one char: mostly ASCII (syntax), sometimes any char.
            let at = boundary(&s, rng);
            let len = s[at..].chars().next().map_or(0, char::len_utf8);
            let c = if rng.gen_bool(0.8) {
                char::from(rng.gen_range(0u8..128))
            } else {
                rng.gen::<char>()
            };
            s.replace_range(at..at + len, c.encode_utf8(&mut [0; 4]));
            s
        }
        2 => {
            let (a, b) = span(&s, rng);
            s.replace_range(a..b, "");
            s
        }
        3 => {
            let (a, b) = span(&s, rng);
            let copy = s[a..b].to_string();
            let at = boundary(&s, rng);
            s.insert_str(at, &copy);
            s
        }
        4 => {
            let mut lines = lines(&s);
            if !lines.is_empty() {
                let i = rng.gen_range(0..lines.len());
                lines.insert(i, lines[i]);
            }
            lines.concat()
        }
        5 => {
            let mut lines = lines(&s);
            if !lines.is_empty() {
                let (i, j) = (rng.gen_range(0..lines.len()), rng.gen_range(0..lines.len()));
                lines.swap(i, j);
            }
            lines.concat()
        }
        6 => {
            let at = boundary(&s, rng);
            s.truncate(at);
            s
        }
        7 => {
            let at = boundary(&s, rng);
            let n = TOKENS.len() + HOSTILE_NUMBERS.len();
            match rng.gen_range(0..=n) {
                i if i < TOKENS.len() => s.insert_str(at, TOKENS[i]),
                i if i < n => s.insert_str(at, HOSTILE_NUMBERS[i - TOKENS.len()]),
                _ => s.insert_str(at, &"x".repeat(LONG_TOKEN_CHARS)),
            }
            s
        }
        _ => replace_number(s, rng),
    }
}

/// Flips one bit of one byte; a byte that is no longer UTF-8 becomes U+FFFD.
fn flip_bit(s: String, rng: &mut Pcg64) -> String {
    let mut bytes = s.into_bytes();
    if bytes.is_empty() {
        return String::new();
    }
    let i = rng.gen_range(0..bytes.len());
    bytes[i] ^= 1 << rng.gen_range(0..8);
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Replaces one number of the text (a run of digits, with its sign,
/// fraction and exponent) by a hostile one; inserts one if there is none.
fn replace_number(mut s: String, rng: &mut Pcg64) -> String {
    let spans = numbers(&s);
    let new = HOSTILE_NUMBERS[rng.gen_range(0..HOSTILE_NUMBERS.len())];
    if spans.is_empty() {
        let at = boundary(&s, rng);
        s.insert_str(at, new);
    } else {
        let (a, b) = spans[rng.gen_range(0..spans.len())];
        s.replace_range(a..b, new);
    }
    s
}

/// Byte spans of the numbers in `s` (ASCII only, so always char boundaries).
fn numbers(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
        while i < b.len() && (b[i].is_ascii_digit() || matches!(b[i], b'.' | b'e' | b'E' | b'_')) {
            i += 1;
        }
        out.push((start, i));
    }
    out
}

/// The text's lines, each with its newline (so `concat` gives the text back).
fn lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

/// A random char boundary of `s`, the end included.
fn boundary(s: &str, rng: &mut Pcg64) -> usize {
    let mut i = rng.gen_range(0..=s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A random span of `s` on char boundaries: mostly short (a token or two),
/// sometimes up to 1 KiB. Bounded so that stacked duplications cannot grow
/// a seed without limit (each case must stay fast).
fn span(s: &str, rng: &mut Pcg64) -> (usize, usize) {
    let a = boundary(s, rng);
    let len = if rng.gen_bool(0.8) {
        rng.gen_range(1..=16)
    } else {
        rng.gen_range(1..=1024)
    };
    let mut b = (a + len).min(s.len());
    while !s.is_char_boundary(b) {
        b -= 1;
    }
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_same_seed_gives_the_same_mutants_and_never_panics() {
        let text = "name = \"x\"\n# héllo ✓\nops = [ { compute = 1.5e3 }, -2 ]\n";
        let run = |seed| {
            let mut rng = Pcg64::seed_from_u64(seed);
            (0..2000)
                .map(|_| mutate(text, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        // Empty and tiny texts are mutated too, without the mutator panicking.
        let mut rng = Pcg64::seed_from_u64(1);
        for t in ["", "é", "\n"] {
            for _ in 0..500 {
                mutate(t, &mut rng);
            }
        }
    }

    #[test]
    fn numbers_are_found_with_sign_fraction_and_exponent() {
        let s = "a = -12.5e3, b = 7";
        let got: Vec<&str> = numbers(s).iter().map(|&(a, b)| &s[a..b]).collect();
        assert_eq!(got, ["-12.5e3", "7"]);
    }
}
