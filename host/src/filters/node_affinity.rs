//! `NodeAffinity` (filter): `nodeSelector` and the required node affinity
//! terms, as upstream's `pkg/scheduler/framework/plugins/nodeaffinity` and
//! `component-helpers/scheduling/corev1/nodeaffinity`.

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm};

use super::Rejection;
use crate::model::{NodeId, NodeInfo, PodId, PodInfo, Snapshot};

/// Upstream's `Filter`: whether `node` matches the pod's `nodeSelector`
/// and required node affinity.
pub fn filter(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    match matches(&snapshot.pods[pod as usize], &snapshot.nodes[node as usize]) {
        true => Ok(()),
        false => Err(Rejection::NodeAffinity),
    }
}

/// `nodeSelector` (every label must match) and required node affinity (any
/// term matches; within a term every requirement matches).
pub(super) fn matches(pod: &PodInfo, node: &NodeInfo) -> bool {
    let selector_ok = pod
        .node_selector
        .iter()
        .all(|(k, v)| node.labels.get(k) == Some(v));
    let affinity_ok = pod
        .required_node_affinity
        .as_ref()
        .is_none_or(|terms| terms.iter().any(|term| term_matches(term, node)));
    selector_ok && affinity_ok
}

/// Whether a node selector term matches `node`, as upstream's
/// `nodeSelectorTerm.match`: a term without requirements matches nothing,
/// nor does a term upstream's parse refuses (an unknown operator, a key
/// that is not a qualified name, a value that is not a label value, values
/// wrong for the operator: the API server refuses such pods, and the
/// scheduler's parse skips such a term); otherwise every requirement must
/// match.
pub(super) fn term_matches(term: &NodeSelectorTerm, node: &NodeInfo) -> bool {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty()
        || !expressions.iter().all(expression_parses)
        || !fields.iter().all(field_parses)
    {
        return false;
    }
    expressions
        .iter()
        .all(|r| requirement_matches(r, node.labels.get(&r.key).map(String::as_str)))
        && fields.iter().all(|r| field_matches(r, &node.name))
}

/// Whether upstream's `labels.NewRequirement` takes a `matchExpressions`
/// requirement (`nodeSelectorRequirementsAsSelector`).
fn expression_parses(requirement: &NodeSelectorRequirement) -> bool {
    let values = requirement.values.as_deref().unwrap_or_default();
    let arity = match requirement.operator.as_str() {
        "In" | "NotIn" => !values.is_empty(),
        "Exists" | "DoesNotExist" => values.is_empty(),
        "Gt" | "Lt" => values.len() == 1 && values[0].parse::<i64>().is_ok(),
        _ => false,
    };
    arity && is_qualified_name(&requirement.key) && values.iter().all(|v| is_label_value(v))
}

/// Whether upstream's `nodeSelectorRequirementsAsFieldSelector` takes a
/// `matchFields` requirement: `In` or `NotIn` with exactly one value.
fn field_parses(requirement: &NodeSelectorRequirement) -> bool {
    matches!(requirement.operator.as_str(), "In" | "NotIn")
        && requirement.values.as_ref().is_some_and(|v| v.len() == 1)
}

/// A parsed `matchFields` requirement against the node's fields, of which
/// there is only `metadata.name` (any other key reads as empty, as a
/// `fields.Set` lookup does).
fn field_matches(requirement: &NodeSelectorRequirement, node_name: &str) -> bool {
    let value = match requirement.key.as_str() {
        "metadata.name" => node_name,
        _ => "",
    };
    let wanted = requirement.values.iter().flatten().next();
    (requirement.operator == "In") == wanted.is_some_and(|w| w == value)
}

/// `validation.IsQualifiedName`: an optional DNS subdomain prefix and `/`,
/// then a name of at most 63 characters.
fn is_qualified_name(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    prefix.is_none_or(is_dns1123_subdomain) && name.len() <= 63 && is_name(name)
}

/// `validation.IsValidLabelValue`: empty, or a name of at most 63
/// characters.
fn is_label_value(value: &str) -> bool {
    value.is_empty() || value.len() <= 63 && is_name(value)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_name(s: &str) -> bool {
    let b = s.as_bytes();
    b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `validation.IsDNS1123Subdomain`: at most 253 characters, dot-separated
/// lowercase RFC 1123 labels.
fn is_dns1123_subdomain(s: &str) -> bool {
    let lower = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            b.first().is_some_and(lower)
                && b.last().is_some_and(lower)
                && b.iter().all(|c| lower(c) || *c == b'-')
        })
}

fn requirement_matches(requirement: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = requirement.values.as_deref().unwrap_or_default();
    let as_int = |s: &str| s.parse::<i64>().ok();
    match requirement.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), Some(bound)) = (
                value.and_then(as_int),
                values.first().and_then(|b| as_int(b)),
            ) else {
                return false;
            };
            if requirement.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filters::table::{Cluster, rejected};

    #[test]
    fn node_selector_requirements() {
        let req = |op: &str, values: &[&str]| NodeSelectorRequirement {
            key: "k".into(),
            operator: op.into(),
            values: Some(values.iter().map(|s| s.to_string()).collect()),
        };
        assert!(requirement_matches(&req("In", &["a", "b"]), Some("b")));
        assert!(!requirement_matches(&req("In", &["a"]), None));
        assert!(requirement_matches(&req("NotIn", &["a"]), None));
        assert!(!requirement_matches(&req("NotIn", &["a"]), Some("a")));
        assert!(requirement_matches(&req("Exists", &[]), Some("x")));
        assert!(requirement_matches(&req("DoesNotExist", &[]), None));
        assert!(requirement_matches(&req("Gt", &["4"]), Some("8")));
        assert!(!requirement_matches(&req("Lt", &["4"]), Some("8")));
        assert!(!requirement_matches(&req("Gt", &["4"]), Some("eight")));
        assert!(expression_parses(&req("In", &["a", "b"])));
        assert!(!expression_parses(&req("In", &[])));
        assert!(!expression_parses(&req("Exists", &["a"])));
        assert!(!expression_parses(&req("Gt", &["four"])));
        assert!(!expression_parses(&req("In", &["not a value"])));
        assert!(!expression_parses(&req("Equals", &["a"])));
        assert!(is_qualified_name("example.com/zone-1"));
        assert!(!is_qualified_name("Example.com/zone"));
        assert!(!is_qualified_name("/zone"));
        assert!(!is_qualified_name("a/b/c"));
        assert!(!is_qualified_name("invalid key"));
    }

    /// Upstream's `TestNodeAffinity`
    /// (`nodeaffinity/node_affinity_test.go`): the Filter verdict of every
    /// case wasched can express. Upstream's node has no name unless the case
    /// gives one (`n` here); the PreFilter status and result upstream also
    /// checks (Skip, the node names of `metadata.name` terms, the conflict
    /// of two `matchFields` names) are PreFilter-only and not compared here.
    ///
    /// Only the pod's part expressed: "Matches added affinity and Pod's node
    /// affinity" and "Matches added affinity but not Pod's node affinity" —
    /// wasched has no `NodeAffinityArgs.addedAffinity`; the added affinity
    /// (`metadata.name In [node2]`) matches the case's node, so the verdict
    /// is the pod's own.
    ///
    /// Not expressible here: "Doesn't match added affinity" — its rejection
    /// (`node(s) didn't match scheduler-enforced node affinity`) comes only
    /// from `NodeAffinityArgs.addedAffinity`, a plugin argument wasched does
    /// not read.
    #[test]
    fn test_node_affinity() {
        let node = |name: &str, labels: &str| {
            format!(
                "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {labels}}}\nstatus: {{allocatable: {{cpu: '1', pods: '10'}}}}\n"
            )
        };
        let pod = |spec: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: default}}\nspec:\n  containers: [{{name: c, image: x}}]\n{spec}"
            )
        };
        let selector = |labels: &str| format!("  nodeSelector: {labels}\n");
        let required = |terms: &str| {
            format!(
                "  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{terms}]}}}}}}\n"
            )
        };
        let gpu_not_amd = "{matchExpressions: [{key: GPU, operator: Exists}, {key: GPU, operator: NotIn, values: [AMD, INTER]}]}";
        let cases: Vec<(&str, &str, &str, String, bool)> = vec![
            ("missing labels", "n", "{}", selector("{foo: bar}"), false),
            (
                "same labels",
                "n",
                "{foo: bar}",
                selector("{foo: bar}"),
                true,
            ),
            (
                "node labels are superset",
                "n",
                "{foo: bar, baz: blah}",
                selector("{foo: bar}"),
                true,
            ),
            (
                "node labels are subset",
                "n",
                "{foo: bar}",
                selector("{foo: bar, baz: blah}"),
                false,
            ),
            (
                "Pod with matchExpressions using In operator that matches the existing node",
                "n",
                "{foo: bar}",
                required("{matchExpressions: [{key: foo, operator: In, values: [bar, value2]}]}"),
                true,
            ),
            (
                "Pod with matchExpressions using Gt operator that matches the existing node",
                "n",
                "{kernel-version: '0206'}",
                required(
                    "{matchExpressions: [{key: kernel-version, operator: Gt, values: ['0204']}]}",
                ),
                true,
            ),
            (
                "Pod with matchExpressions using NotIn operator that matches the existing node",
                "n",
                "{mem-type: DDR3}",
                required(
                    "{matchExpressions: [{key: mem-type, operator: NotIn, values: [DDR, DDR2]}]}",
                ),
                true,
            ),
            (
                "Pod with matchExpressions using Exists operator that matches the existing node",
                "n",
                "{GPU: NVIDIA-GRID-K1}",
                required("{matchExpressions: [{key: GPU, operator: Exists}]}"),
                true,
            ),
            (
                "Pod with affinity that don't match node's labels won't schedule onto the node",
                "n",
                "{foo: bar}",
                required(
                    "{matchExpressions: [{key: foo, operator: In, values: [value1, value2]}]}",
                ),
                false,
            ),
            (
                "Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
                "n",
                "{foo: bar}",
                required("{matchExpressions: []}"),
                false,
            ),
            (
                "Pod with no Affinity will schedule onto a node",
                "n",
                "{foo: bar}",
                String::new(),
                true,
            ),
            (
                "Pod with Affinity but nil NodeSelector will schedule onto a node",
                "n",
                "{foo: bar}",
                "  affinity: {nodeAffinity: {}}\n".to_string(),
                true,
            ),
            (
                "Pod with multiple matchExpressions ANDed that matches the existing node",
                "n",
                "{GPU: NVIDIA-GRID-K1}",
                required(gpu_not_amd),
                true,
            ),
            (
                "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
                "n",
                "{GPU: NVIDIA-GRID-K1}",
                required(
                    "{matchExpressions: [{key: GPU, operator: Exists}, {key: GPU, operator: In, values: [AMD, INTER]}]}",
                ),
                false,
            ),
            (
                "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
                "n",
                "{foo: bar}",
                required(
                    "{matchExpressions: [{key: foo, operator: In, values: [bar, value2]}]}, {matchExpressions: [{key: diffkey, operator: In, values: [wrong, value2]}]}",
                ),
                true,
            ),
            (
                "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will schedule onto the node",
                "n",
                "{foo: bar}",
                selector("{foo: bar}")
                    + &required("{matchExpressions: [{key: foo, operator: Exists}]}"),
                true,
            ),
            (
                "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) is not satisfied, won't schedule onto the node",
                "n",
                "{foo: barrrrrr}",
                selector("{foo: bar}")
                    + &required("{matchExpressions: [{key: foo, operator: Exists}]}"),
                false,
            ),
            // The API server refuses this value but wasched's reader takes
            // it: the term fails upstream's parse and matches nothing.
            (
                "Pod with an invalid value in Affinity term won't be scheduled onto the node",
                "n",
                "{foo: bar}",
                required(
                    "{matchExpressions: [{key: foo, operator: NotIn, values: ['invalid value: ___@#$%^']}]}",
                ),
                false,
            ),
            (
                "Pod with matchFields using In operator that matches the existing node",
                "node1",
                "{}",
                required("{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}"),
                true,
            ),
            (
                "Pod with matchFields using In operator that does not match the existing node",
                "node2",
                "{}",
                required("{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}"),
                false,
            ),
            (
                "Pod with two terms: matchFields does not match, but matchExpressions matches",
                "node2",
                "{foo: bar}",
                required(
                    "{matchFields: [{key: metadata.name, operator: In, values: [node1]}, {key: metadata.name, operator: In, values: [node2]}]}, {matchExpressions: [{key: foo, operator: In, values: [bar]}]}",
                ),
                true,
            ),
            (
                "Pod with one term: matchFields does not match, but matchExpressions matches",
                "node2",
                "{foo: bar}",
                required(
                    "{matchFields: [{key: metadata.name, operator: In, values: [node1]}], matchExpressions: [{key: foo, operator: In, values: [bar]}]}",
                ),
                false,
            ),
            (
                "Pod with one term: both matchFields and matchExpressions match",
                "node1",
                "{foo: bar}",
                required(
                    "{matchFields: [{key: metadata.name, operator: In, values: [node1]}], matchExpressions: [{key: foo, operator: In, values: [bar]}]}",
                ),
                true,
            ),
            (
                "Pod with two terms: both matchFields and matchExpressions do not match",
                "node2",
                "{foo: bar}",
                required(
                    "{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}, {matchExpressions: [{key: foo, operator: In, values: [not-match-to-bar]}]}",
                ),
                false,
            ),
            (
                "Pod with two terms of node.Name affinity",
                "node2",
                "{}",
                required(
                    "{matchFields: [{key: metadata.name, operator: In, values: [node1]}]}, {matchFields: [{key: metadata.name, operator: In, values: [node2]}]}",
                ),
                true,
            ),
            (
                "Pod with two conflicting mach field requirements",
                "node2",
                "{foo: bar}",
                required(
                    "{matchFields: [{key: metadata.name, operator: In, values: [node1]}, {key: metadata.name, operator: In, values: [node2]}]}",
                ),
                false,
            ),
            // The added affinity (`metadata.name In [node2]`) is not
            // expressible; the pod's own affinity decides.
            (
                "Matches added affinity and Pod's node affinity",
                "node2",
                "{zone: foo}",
                required("{matchExpressions: [{key: zone, operator: In, values: [foo]}]}"),
                true,
            ),
            (
                "Matches added affinity but not Pod's node affinity",
                "node2",
                "{zone: foo}",
                required("{matchExpressions: [{key: zone, operator: In, values: [bar]}]}"),
                false,
            ),
            (
                "Matches node selector correctly even if PreFilter is not called",
                "n",
                "{foo: bar, baz: blah}",
                selector("{foo: bar}"),
                true,
            ),
            (
                "Matches node affinity correctly even if PreFilter is not called",
                "n",
                "{GPU: NVIDIA-GRID-K1}",
                required(gpu_not_amd),
                true,
            ),
        ];
        assert_eq!(cases.len(), 30, "31 upstream cases, one not expressible");
        for (name, node_name, labels, spec, fits) in cases {
            let cluster = Cluster::new(&format!("{}---\n{}", node(node_name, labels), pod(&spec)));
            let expected = if fits {
                Ok(())
            } else {
                rejected(&["node(s) didn't match Pod's node affinity/selector"])
            };
            assert_eq!(
                cluster.verdict(filter, "default/p", node_name),
                expected,
                "{name}"
            );
        }
    }
}
