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
    // The column of the key whose block scalar's text lasts.
    let mut block_scalar: Option<usize> = None;
    // The quote of a quoted scalar that goes on past its line.
    let mut open_quote: Option<u8> = None;
    for (line_index, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(opener) = block_scalar {
            if line.trim().is_empty() || indent > opener {
                continue;
            }
            block_scalar = None;
        }
        let bytes = line.as_bytes();
        if open_quote.is_none() && (line.starts_with("---") || line.starts_with("...")) {
            // A new document: nothing is open any more.
            depth = 0;
            continue;
        }
        let mut i = match open_quote {
            Some(quote) => {
                let end = skip_quoted_from(bytes, 0, quote);
                if end > bytes.len() {
                    continue;
                }
                open_quote = None;
                end
            }
            None => indent,
        };
        // Where the current line's key starts, past `- ` item markers.
        let mut key_column = i;
        // Whether the next non-space character starts a value.
        let mut value_start = true;
        while i < bytes.len() {
            let c = bytes[i];
            match c {
                b' ' | b'\t' => {}
                b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t') => break,
                b'\'' | b'"' if value_start || depth > 0 => {
                    i = skip_quoted_from(bytes, i + 1, c);
                    if i > bytes.len() {
                        open_quote = Some(c);
                        break;
                    }
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
                b'-' | b'?' if bytes.get(i + 1).is_none_or(|n| matches!(n, b' ' | b'\t')) => {
                    if depth == 0 && i == key_column {
                        key_column = i + 2;
                    }
                    value_start = true;
                }
                b':' if bytes.get(i + 1).is_none_or(|n| matches!(n, b' ' | b'\t')) => {
                    value_start = true;
                }
                b'|' | b'>' if value_start && depth == 0 => {
                    block_scalar = Some(key_column);
                    break;
                }
                _ => value_start = false,
            }
            i += 1;
        }
    }
    None
}

/// The index after the quoted scalar whose text starts at `start` and
/// ends with `quote`; past the line's end (`len + 1`) when it goes on to
/// the next line.
fn skip_quoted_from(bytes: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len() + 1
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
        // A block scalar under an item ends with the item's key's column.
        let item = format!("- a: |\n    text\n  b: {}\n", "[".repeat(MAX_DEPTH + 1));
        assert_eq!(too_deep(&item), Some((3, 6 + MAX_DEPTH)));
        // A quoted scalar over several lines, and unbalanced brackets in
        // earlier documents, never add up.
        let folded = format!(
            "a: \"x\n  [[ y\"\nb: {}{}\n",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        assert_eq!(too_deep(&folded), None);
        let documents = "a: [[\n---\n".repeat(MAX_DEPTH);
        assert_eq!(too_deep(&documents), None);
        // After a block scalar ends, flow collections count again.
        let after = format!("s: |\n  text\nb: {}\n", "[".repeat(MAX_DEPTH + 1));
        assert_eq!(too_deep(&after), Some((3, 4 + MAX_DEPTH)));
    }
}
