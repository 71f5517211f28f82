//! The page: one HTML file with the report's JSON, CSS, JS and SVG inline,
//! so it opens anywhere without network access.

use super::Report;

/// The page template; the JSON goes where [`PLACEHOLDER`] is.
const TEMPLATE: &str = include_str!("report.html");

/// Where the template takes the report's JSON (inside a
/// `<script type="application/json">` element).
pub const PLACEHOLDER: &str = "__WASCHED_DATA__";

/// The page for `report`.
pub fn render(report: &Report) -> String {
    let json = serde_json::to_string(report).expect("report serialises");
    // Inside <script>, only `</` can end the element early; `<\/` is the
    // same JSON string.
    let json = json.replace("</", "<\\/");
    TEMPLATE.replacen(PLACEHOLDER, &json, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_has_one_placeholder_and_no_network_references() {
        assert_eq!(TEMPLATE.matches(PLACEHOLDER).count(), 1);
        for remote in ["http://", "https://", "//cdn", "@import", "url(http"] {
            assert!(!TEMPLATE.contains(remote), "template references {remote}");
        }
    }
}
