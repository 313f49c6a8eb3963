//! Ordering and naming helpers.

use std::cmp::Ordering;

/// Compares strings so that embedded numbers sort by value: "2B-2" < "2B-10",
/// "Sync-1" < "Sync-2". Falls back to plain string order on ties so the order
/// is total (e.g. "a01" vs "a1").
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a, b);
    loop {
        match (x.is_empty(), y.is_empty()) {
            (true, true) => return a.cmp(b),
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let (cx, rx) = chunk(x);
        let (cy, ry) = chunk(y);
        let both_digits = cx.as_bytes()[0].is_ascii_digit() && cy.as_bytes()[0].is_ascii_digit();
        let ord = if both_digits {
            // Compare digit runs by value without parsing (no overflow):
            // strip leading zeros, then longer is bigger, then lexicographic.
            let tx = cx.trim_start_matches('0');
            let ty = cy.trim_start_matches('0');
            tx.len().cmp(&ty.len()).then_with(|| tx.cmp(ty))
        } else {
            cx.cmp(cy)
        };
        if ord != Ordering::Equal {
            return ord;
        }
        x = rx;
        y = ry;
    }
}

/// Splits off the leading run of ASCII digits or of non-digits. `s` is non-empty.
fn chunk(s: &str) -> (&str, &str) {
    let digits = s.as_bytes()[0].is_ascii_digit();
    let end = s
        .char_indices()
        .find(|(_, c)| c.is_ascii_digit() != digits)
        .map_or(s.len(), |(i, _)| i);
    s.split_at(end)
}

/// A file-name-safe version of a label ("2B2S" stays, "a/b c" -> "a_b_c").
pub(crate) fn file_stem(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "_".to_string()
    } else {
        s
    }
}

/// Stem of the per-application speedup chart of a configuration.
pub(crate) fn app_speedup_stem(config: &str) -> String {
    format!("app_speedup_{}", file_stem(config))
}

/// Stem of the fast-core share chart of a configuration.
pub(crate) fn fast_share_stem(config: &str) -> String {
    format!("fast_share_{}", file_stem(config))
}

/// Stem of the ASP-against-unfairness scatter of a configuration.
pub(crate) fn asp_unfairness_stem(config: &str) -> String {
    format!("asp_unfairness_{}", file_stem(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v = vec![
            "2B-10", "2B-2", "2B-1", "4B-1", "Sync-1", "NSync-2", "NSync-10", "ferret", "",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            vec!["", "2B-1", "2B-2", "2B-10", "4B-1", "NSync-2", "NSync-10", "Sync-1", "ferret"]
        );
        assert_eq!(natural_cmp("a01", "a1"), "a01".cmp("a1"));
        assert_eq!(natural_cmp("x", "x"), Ordering::Equal);
        assert_eq!(
            natural_cmp("n99999999999999999999999", "n100000000000000000000000"),
            Ordering::Less
        );
        assert_eq!(natural_cmp("é1", "é2"), Ordering::Less);
    }

    #[test]
    fn stems() {
        assert_eq!(file_stem("2B2S"), "2B2S");
        assert_eq!(file_stem("a/b c"), "a_b_c");
        assert_eq!(file_stem(""), "_");
    }
}
