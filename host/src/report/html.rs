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
    fill(TEMPLATE, PLACEHOLDER, report)
}

/// `template` with `value` as JSON where `placeholder` is (inside a
/// `<script type="application/json">` element).
pub fn fill(template: &str, placeholder: &str, value: &impl serde::Serialize) -> String {
    let json = serde_json::to_string(value).expect("page data serialises");
    // Inside <script>, only `</` can end the element early; `<\/` is the
    // same JSON string.
    let json = json.replace("</", "<\\/");
    template.replacen(placeholder, &json, 1)
}

/// Whether `template` takes its data at exactly one `placeholder` and
/// references nothing on the network (the page opens anywhere).
pub fn is_self_contained(template: &str, placeholder: &str) -> Result<(), String> {
    if template.matches(placeholder).count() != 1 {
        return Err(format!("{placeholder} is not there exactly once"));
    }
    for remote in ["http://", "https://", "//cdn", "@import", "url(http"] {
        if template.contains(remote) {
            return Err(format!("the template references {remote}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_has_one_placeholder_and_no_network_references() {
        assert_eq!(is_self_contained(TEMPLATE, PLACEHOLDER), Ok(()));
        assert!(is_self_contained("<a href='https://x'>__P__</a>", "__P__").is_err());
        assert!(is_self_contained("__P__ __P__", "__P__").is_err());
    }
}
