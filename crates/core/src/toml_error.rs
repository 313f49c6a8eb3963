//! TOML errors that always say what is wrong. The toml crate leaves the
//! description empty for some errors (a file cut short inside an array
//! after a comment gives only "TOML parse error at line 53, column 58");
//! this adds one.

/// `e` as text, with a description when the parser gave none.
pub fn describe(text: &str, e: &toml::de::Error) -> String {
    let shown = e.to_string();
    if !e.message().trim().is_empty() {
        return shown;
    }
    let at_end = e
        .span()
        .is_some_and(|s| text[s.start.min(text.len())..].trim().is_empty());
    let why = if at_end {
        "the file ends inside an array, table or string: a closing `]`, `}` or quote is missing \
         (was the file cut short?)"
    } else {
        "unexpected text here"
    };
    format!("{}\n{why}", shown.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct F {
        ops: Vec<u32>,
    }

    #[test]
    fn a_file_cut_short_after_a_comment_says_so() {
        let text = "ops = [\n  1,\n  # a comment";
        let e = toml::from_str::<F>(text).unwrap_err();
        let d = describe(text, &e);
        assert!(d.contains("the file ends inside an array"), "{d}");
        assert!(d.contains("line 3"), "{d}");
    }

    #[test]
    fn errors_that_have_a_description_keep_it() {
        let text = "ops = [1, \"x\"]\n";
        let e = toml::from_str::<F>(text).unwrap_err();
        assert_eq!(describe(text, &e), e.to_string());
    }
}
