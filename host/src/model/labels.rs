//! Label and taint vocabulary shared by the model and the node checks.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// The text kube-scheduler v1.37 gives for an untolerated taint: one text
/// for every taint (`tainttoleration.Filter`; releases before it named the
/// taint, `{key: value}`).
pub fn taint_text(_taint: &Taint) -> String {
    UNTOLERATED_TAINT.to_string()
}

/// `TaintToleration`'s rejection (`node(s) had untolerated taint(s)`).
pub const UNTOLERATED_TAINT: &str = "node(s) had untolerated taint(s)";

/// `metav1.LabelSelector` semantics: every `matchLabels` pair and every
/// `matchExpressions` requirement must hold; an empty selector matches all.
pub fn label_selector_matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let pairs = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let expressions = selector.match_expressions.iter().flatten().all(|e| {
        let value = labels.get(&e.key);
        let values = e.values.as_deref().unwrap_or_default();
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    pairs && expressions
}
