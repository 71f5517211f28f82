//! The nesting bound on YAML input. JSON is refused past 128 levels by
//! serde_json's recursion limit; YAML's parser (libyaml) has no such bound
//! while it reads flow collections (`[[[…`, `{a: {b: …`) and its cost
//! grows with the square of their depth, so a YAML text is scanned for
//! flow nesting before it is parsed, in one pass, and refused past the
//! same depth.
//!
//! The scan knows enough YAML to find flow collections: comments, quoted
//! scalars, and block scalars (`|`, `>`), whose text is not YAML, are
//! skipped; a `[` or `{` counts where a value starts (after `:`, `-`,
//! `?`, a line's indentation, or inside a flow collection). Indentation
//! nesting (block collections) does not reach the parser's quadratic path
//! and is bounded by the deserialiser.

/// The deepest nesting read, as serde_json's recursion limit.
pub const MAX_DEPTH: usize = 128;

/// Where flow nesting first exceeds [`MAX_DEPTH`]: 1-based line and column.
pub fn too_deep(text: &str) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    // The indentation of the line that opened a block scalar, while its
    // text lasts.
    let mut block_scalar: Option<usize> = None;
    for (line_index, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(opener) = block_scalar {
            if line.trim().is_empty() || indent > opener {
                continue;
            }
            block_scalar = None;
        }
        let bytes = line.as_bytes();
        let mut i = indent;
        // Whether the next non-space character starts a value.
        let mut value_start = true;
        while i < bytes.len() {
            let c = bytes[i];
            match c {
                b' ' | b'\t' => {}
                b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t') => break,
                b'\'' | b'"' if value_start || depth > 0 => {
                    i = skip_quoted(bytes, i);
                    value_start = false;
                    continue;
                }
                b'[' | b'{' if value_start || depth > 0 => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Some((line_index + 1, i + 1));
                    }
                    value_start = true;
                }
                b']' | b'}' if depth > 0 => {
                    depth -= 1;
                    value_start = false;
                }
                b',' if depth > 0 => value_start = true,
                b':' | b'-' | b'?'
                    if bytes.get(i + 1).is_none_or(|n| matches!(n, b' ' | b'\t')) =>
                {
                    value_start = true;
                }
                b'|' | b'>' if value_start && depth == 0 => {
                    block_scalar = Some(indent);
                    break;
                }
                _ => value_start = false,
            }
            i += 1;
        }
    }
    None
}

/// The index after the quoted scalar starting at `start` (on this line;
/// one that goes on past the line ends with it).
fn skip_quoted(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_flow_nesting_is_found_where_it_passes_the_limit() {
        let ok = format!("a: {}{}\n", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(too_deep(&ok), None);
        let deep = format!("a: {}\n", "[".repeat(MAX_DEPTH + 1));
        assert_eq!(too_deep(&deep), Some((1, 4 + MAX_DEPTH)));
        let maps = "x: {a: ".repeat(MAX_DEPTH + 1);
        assert!(too_deep(&maps).is_some());
        let list_items = format!("items:\n- {}\n", "[".repeat(MAX_DEPTH + 1));
        assert!(too_deep(&list_items).is_some());
    }

    #[test]
    fn brackets_in_text_do_not_count() {
        let many = "[".repeat(MAX_DEPTH + 1);
        for text in [
            format!("a: '{many}'\n"),
            format!("a: \"{many}\"\n"),
            format!("a: x{many}\n"),
            format!("a: 1 # {many}\n"),
            format!("script: |\n  {many}\n  {many}\nb: c\n"),
            format!("script: >-\n    {many}\n\n    more\nb: [1, 2]\n"),
            format!("a: it's {many}\n"),
        ] {
            assert_eq!(too_deep(&text), None, "{text}");
        }
        // After a block scalar ends, flow collections count again.
        let after = format!("s: |\n  text\nb: {}\n", "[".repeat(MAX_DEPTH + 1));
        assert_eq!(too_deep(&after), Some((3, 4 + MAX_DEPTH)));
    }
}
