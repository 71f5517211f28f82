//! Aligned plain-text tables, as `kubectl get` prints them.

/// Renders `rows` (the first is the header) with every column but the last
/// padded to its widest cell and two spaces between columns; trailing
/// spaces are trimmed.
pub fn render<R: AsRef<[String]>>(rows: &[R]) -> String {
    render_within(rows, None)
}

/// [`render`], with every line cut to `width` characters when a width is
/// given (a terminal's), ending in `…`: the last column goes first, and a
/// terminal narrower than the other columns cuts those too.
pub fn render_within<R: AsRef<[String]>>(rows: &[R], width: Option<usize>) -> String {
    let columns = rows.iter().map(|r| r.as_ref().len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.as_ref().get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let row = row.as_ref();
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 < row.len() {
                line.push_str(&format!("{cell:<width$}  ", width = widths[c]));
            } else {
                line.push_str(cell);
            }
        }
        let line = line.trim_end();
        match width {
            Some(width) if line.chars().count() > width && width > 1 => {
                let cut: String = line.chars().take(width - 1).collect();
                out.push_str(cut.trim_end());
                out.push('…');
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn pads_all_but_the_last_column() {
        let rows = vec![
            vec!["KIND".to_string(), "NAME".into(), "DETAIL".into()],
            vec!["Pod".into(), "default/a-long-name".into(), "bound".into()],
            vec!["PodGroup".into(), "x".into(), String::new()],
        ];
        assert_eq!(
            super::render(&rows),
            "KIND      NAME                 DETAIL\nPod       default/a-long-name  bound\nPodGroup  x\n"
        );
    }

    #[test]
    fn lines_are_cut_to_the_width_given() {
        let rows = vec![
            vec!["KIND".to_string(), "DETAIL".into()],
            vec!["Pod".into(), "a reason that goes on and on".into()],
        ];
        assert_eq!(
            super::render_within(&rows, Some(20)),
            "KIND  DETAIL\nPod   a reason that…\n"
        );
        assert_eq!(super::render_within(&rows, None), super::render(&rows));
    }
}
