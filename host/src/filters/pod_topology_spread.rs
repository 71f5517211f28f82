//! `PodTopologySpread` (filter): a pod's hard constraints
//! (`whenUnsatisfiable: DoNotSchedule`) over the domains of their topology
//! keys, counted over the nodes the pod's node affinity allows that carry
//! the topology keys of all its constraints, pods being deleted left out,
//! as upstream's `pkg/scheduler/framework/plugins/podtopologyspread`.
//! Not modelled: soft constraints, `matchLabelKeys`, the node inclusion
//! policies (`nodeAffinityPolicy` is always Honor, `nodeTaintsPolicy`
//! always Ignore: upstream's defaults) and the default constraints.

use std::collections::HashMap;

use super::{Rejection, node_affinity};
use crate::model::{NodeId, NodeInfo, PodId, PodInfo, Snapshot, label_selector_matches};

/// Per-domain counts of the pods a pod's hard topology spread constraints
/// select, taken once per placement of that pod (`PodTopologySpread`'s
/// PreFilter state).
#[derive(Debug, Default)]
pub struct SpreadState {
    constraints: Vec<SpreadCounts>,
}

#[derive(Debug)]
struct SpreadCounts {
    key: String,
    max_skew: i64,
    counts: HashMap<String, i64>,
    min: i64,
    self_match: i64,
}

impl SpreadState {
    /// Whether the pod has no hard constraint.
    pub fn is_empty(&self) -> bool {
        self.constraints.is_empty()
    }

    /// Per constraint, the matching pods per domain, sorted by domain
    /// (what the constraint checks against; for tests and diagnostics).
    pub fn domain_counts(&self) -> Vec<Vec<(String, i64)>> {
        self.constraints
            .iter()
            .map(|c| {
                let mut counts: Vec<(String, i64)> =
                    c.counts.iter().map(|(d, n)| (d.clone(), *n)).collect();
                counts.sort();
                counts
            })
            .collect()
    }

    /// Counts, for each constraint of `pod`, the matching pods (same
    /// namespace, selected by the constraint's label selector, not being
    /// deleted) in every domain of its topology key over the nodes the
    /// pod's node affinity allows that carry the topology keys of all its
    /// constraints (upstream's `calPreFilterState`).
    pub fn for_pod(snapshot: &Snapshot, pod: PodId) -> Self {
        let info = &snapshot.pods[pod as usize];
        let has_every_key = |node: &NodeInfo| {
            info.spread
                .iter()
                .all(|c| node.labels.contains_key(&c.topology_key))
        };
        let constraints = info
            .spread
            .iter()
            .map(|c| {
                let selects = |p: &PodInfo| {
                    p.namespace == info.namespace
                        && c.label_selector
                            .as_ref()
                            .is_some_and(|s| label_selector_matches(s, &p.labels))
                };
                let mut counts: HashMap<String, i64> = HashMap::new();
                for (n, node) in snapshot.nodes.iter().enumerate() {
                    let Some(domain) = node.labels.get(&c.topology_key) else {
                        continue;
                    };
                    if !node_affinity::matches(info, node) || !has_every_key(node) {
                        continue;
                    }
                    let matching = snapshot
                        .pods_on_node(n as NodeId)
                        .iter()
                        .map(|&p| (p, &snapshot.pods[p as usize]))
                        .filter(|&(p, other)| p != pod && !other.terminating && selects(other))
                        .count() as i64;
                    *counts.entry(domain.clone()).or_default() += matching;
                }
                let too_few_domains = (counts.len() as i64) < i64::from(c.min_domains.unwrap_or(1));
                let min = if too_few_domains {
                    0
                } else {
                    counts.values().copied().min().unwrap_or(0)
                };
                SpreadCounts {
                    key: c.topology_key.clone(),
                    max_skew: i64::from(c.max_skew),
                    counts,
                    min,
                    self_match: i64::from(selects(info)),
                }
            })
            .collect();
        Self { constraints }
    }

    pub(super) fn check(&self, node: &NodeInfo) -> Result<(), Rejection> {
        for c in &self.constraints {
            let Some(domain) = node.labels.get(&c.key) else {
                return Err(Rejection::SpreadMissingLabel);
            };
            let count = c.counts.get(domain).copied().unwrap_or(0);
            if count + c.self_match - c.min > c.max_skew {
                return Err(Rejection::Spread);
            }
        }
        Ok(())
    }
}

/// Upstream's `Filter`: the constraints of `pod` against `node`, in the
/// snapshot as it is.
pub fn filter(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    SpreadState::for_pod(snapshot, pod).check(&snapshot.nodes[node as usize])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::filter;
    use crate::filters::table::{Cluster, rejected};
    use crate::model::{BuildOptions, Model};

    /// A node over `maxSkew` (upstream's `Unschedulable`).
    const SKEW: &str = "node(s) didn't match pod topology spread constraints";
    /// A node without a constraint's topology key (upstream's
    /// `UnschedulableAndUnresolvable`).
    const MISSING: &str =
        "node(s) didn't match pod topology spread constraints (missing required label)";
    /// The unschedulable taint of upstream's node-inclusion cases.
    const TAINTED: &str = "taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]";

    /// A node with `labels` and `spec` (YAML flow entries, no braces).
    fn node_with(name: &str, labels: &str, spec: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{labels}}}}}\nspec: {{{spec}}}\nstatus: {{allocatable: {{cpu: '100', pods: '100'}}}}\n"
        )
    }

    fn node(name: &str, labels: &str) -> String {
        node_with(name, labels, "")
    }

    /// Upstream's usual four nodes: node-a and node-b in zone1, node-x
    /// and node-y in zone2, each with its name as label `node`.
    fn zoned() -> Vec<String> {
        ["a", "b", "x", "y"]
            .map(|n| {
                let zone = if n < "c" { "zone1" } else { "zone2" };
                node(
                    &format!("node-{n}"),
                    &format!("zone: {zone}, node: node-{n}"),
                )
            })
            .into()
    }

    /// A pod document: `key` is `name` (namespace default) or
    /// `namespace/name`; `meta` and `spec` are extra YAML flow entries.
    fn pod(key: &str, meta: &str, labels: &str, spec: &str) -> String {
        let (namespace, name) = key.split_once('/').unwrap_or(("default", key));
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {namespace}, labels: {{{labels}}}{meta}}}\nspec: {{containers: [{{name: c, image: x}}]{spec}}}\n"
        )
    }

    /// An existing pod bound to `node`.
    fn running(key: &str, node: &str, labels: &str) -> String {
        pod(key, "", labels, &format!(", nodeName: {node}"))
    }

    /// An existing pod bound to `node` and being deleted.
    fn terminating(key: &str, node: &str, labels: &str) -> String {
        pod(
            key,
            ", deletionTimestamp: '2025-01-01T00:00:00Z'",
            labels,
            &format!(", nodeName: {node}"),
        )
    }

    /// A `DoNotSchedule` constraint whose selector requires label
    /// `selects` to exist (none: no selector).
    fn hard(max_skew: i32, key: &str, selects: Option<&str>, min_domains: Option<i32>) -> String {
        let selector = selects.map_or(String::new(), |l| {
            format!(", labelSelector: {{matchExpressions: [{{key: {l}, operator: Exists}}]}}")
        });
        let min = min_domains.map_or(String::new(), |m| format!(", minDomains: {m}"));
        format!(
            "{{maxSkew: {max_skew}, topologyKey: {key}, whenUnsatisfiable: DoNotSchedule{selector}{min}}}"
        )
    }

    /// The pod under test, `default/p`, with `constraints` and `spec`
    /// (extra YAML flow entries: node selector or affinity).
    fn incoming(labels: &str, constraints: &[String], spec: &str) -> String {
        pod(
            "p",
            "",
            labels,
            &format!(
                ", topologySpreadConstraints: [{}]{spec}",
                constraints.join(", ")
            ),
        )
    }

    /// `spec.affinity` requiring node label `key` to be `op` `values`.
    fn node_affinity(key: &str, op: &str, values: &str) -> String {
        format!(
            ", affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: {key}, operator: {op}, values: [{values}]}}]}}]}}}}}}"
        )
    }

    type Case<'a> = (
        &'a str,
        Vec<String>,
        Vec<String>,
        String,
        Vec<(&'a str, Option<&'a str>)>,
    );

    /// Runs `cases` (name, nodes, existing pods, pod under test, verdict
    /// per node: `None` fits, else the reason), checking every node.
    fn run(cases: Vec<Case>) {
        for (name, nodes, existing, pod, want) in cases {
            let mut docs = nodes;
            docs.extend(existing);
            docs.push(pod);
            let cluster = Cluster::new(&docs.join("---\n"));
            let got = cluster.verdicts(filter, "default/p");
            let want: BTreeMap<String, Result<(), Vec<String>>> = want
                .into_iter()
                .map(|(n, r)| (n.to_string(), r.map_or(Ok(()), |r| rejected(&[r]))))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    /// Upstream's `TestSingleConstraint`
    /// (`podtopologyspread/filtering_test.go`), Filter's verdict on every
    /// node. Cases with `enableNodeInclusionPolicy` whose constraints leave
    /// the policies unset are here: the defaults (nodeAffinityPolicy
    /// Honor, nodeTaintsPolicy Ignore) are what wasched does.
    ///
    /// Not expressible here (wasched does not model the node inclusion
    /// policies of topology spread and reads a constraint as if they were
    /// unset):
    /// - "NodeAffinityPolicy ignored with labelSelectors" (the case with a
    ///   `nodeSelector`) — `nodeAffinityPolicy: Ignore`;
    /// - "NodeAffinityPolicy ignored with labelSelectors" (the case with a
    ///   required node affinity) — `nodeAffinityPolicy: Ignore`;
    /// - "NodeTaintsPolicy honored" — `nodeTaintsPolicy: Honor`.
    #[test]
    fn test_single_constraint() {
        let foo_zone = || vec![hard(1, "zone", Some("foo"), None)];
        let foo_node = || vec![hard(1, "node", Some("foo"), None)];
        let spread_2_1_0_3 = || {
            vec![
                running("p-a1", "node-a", "foo: ''"),
                running("p-a2", "node-a", "foo: ''"),
                running("p-b1", "node-b", "foo: ''"),
                running("p-y1", "node-y", "foo: ''"),
                running("p-y2", "node-y", "foo: ''"),
                running("p-y3", "node-y", "foo: ''"),
            ]
        };
        let plain = |names: &[&str]| -> Vec<String> {
            names
                .iter()
                .map(|n| node(n, &format!("node: {n}")))
                .collect()
        };
        let spread_2_2_1 = || {
            vec![
                running("p-a1", "node-a", "foo: ''"),
                running("p-a2", "node-a", "foo: ''"),
                running("p-b1", "node-b", "foo: ''"),
                running("p-b2", "node-b", "foo: ''"),
                running("p-c1", "node-c", "foo: ''"),
            ]
        };
        let spread_zone_2_1 = || {
            vec![
                running("p-b1", "node-a", "foo: ''"),
                running("p-b2", "node-b", "foo: ''"),
                running("p-y1", "node-y", "foo: ''"),
            ]
        };
        // node-a, node-b and node-x labelled foo, node-y not (upstream's
        // node inclusion cases), pods spread 1/1/0/1.
        let foo_nodes = |y_spec: &str| {
            vec![
                node("node-a", "node: node-a, foo: ''"),
                node("node-b", "node: node-b, foo: ''"),
                node("node-x", "node: node-x, foo: ''"),
                node_with("node-y", "node: node-y", y_spec),
            ]
        };
        let spread_1_1_0_1 = || {
            vec![
                running("p-b1", "node-a", "foo: ''"),
                running("p-b2", "node-b", "foo: ''"),
                running("p-y1", "node-y", "foo: ''"),
            ]
        };
        let cases: Vec<Case> = vec![
            (
                "no existing pods",
                zoned(),
                vec![],
                incoming("foo: ''", &foo_zone(), ""),
                vec![
                    ("node-a", None),
                    ("node-b", None),
                    ("node-x", None),
                    ("node-y", None),
                ],
            ),
            (
                "no existing pods, incoming pod doesn't match itself",
                zoned(),
                vec![],
                incoming("foo: ''", &[hard(1, "zone", Some("bar"), None)], ""),
                vec![
                    ("node-a", None),
                    ("node-b", None),
                    ("node-x", None),
                    ("node-y", None),
                ],
            ),
            (
                "existing pods in a different namespace do not count",
                zoned(),
                vec![
                    running("ns1/p-a1", "node-a", "foo: ''"),
                    running("ns2/p-b1", "node-a", "foo: ''"),
                    running("p-x1", "node-x", "foo: ''"),
                    running("p-y1", "node-y", "foo: ''"),
                ],
                incoming("foo: ''", &foo_zone(), ""),
                vec![
                    ("node-a", None),
                    ("node-b", None),
                    ("node-x", Some(SKEW)),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "existing pods do not match null selector",
                zoned(),
                vec![
                    running("p-x1", "node-x", "foo: ''"),
                    running("p-y1", "node-y", "foo: ''"),
                ],
                incoming("foo: ''", &[hard(1, "zone", None, None)], ""),
                vec![
                    ("node-a", None),
                    ("node-b", None),
                    ("node-x", None),
                    ("node-y", None),
                ],
            ),
            (
                "pods spread across zones as 3/3, all nodes fit",
                zoned(),
                spread_2_1_0_3(),
                incoming("foo: ''", &foo_zone(), ""),
                vec![
                    ("node-a", None),
                    ("node-b", None),
                    ("node-x", None),
                    ("node-y", None),
                ],
            ),
            (
                "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
                vec![
                    node("node-a", "zone: zone1, node: node-a"),
                    node("node-b", "zon: zone1, node: node-b"),
                    node("node-x", "zone: zone2, node: node-x"),
                    node("node-y", "zone: zone2, node: node-y"),
                ],
                vec![
                    running("p-a1", "node-a", "foo: ''"),
                    running("p-b1", "node-b", "foo: ''"),
                    running("p-x1", "node-x", "foo: ''"),
                    running("p-y1", "node-y", "foo: ''"),
                ],
                incoming("foo: ''", &foo_zone(), ""),
                vec![
                    ("node-a", None),
                    ("node-b", Some(MISSING)),
                    ("node-x", Some(SKEW)),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "pod cannot be scheduled as all nodes don't have label 'rack'",
                vec![
                    node("node-a", "zone: zone1, node: node-a"),
                    node("node-x", "zone: zone2, node: node-x"),
                ],
                vec![],
                incoming("foo: ''", &[hard(1, "rack", Some("foo"), None)], ""),
                vec![("node-a", Some(MISSING)), ("node-x", Some(MISSING))],
            ),
            (
                "pods spread across nodes as 2/1/0/3, only node-x fits",
                zoned(),
                spread_2_1_0_3(),
                incoming("foo: ''", &foo_node(), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", None),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
                zoned(),
                spread_2_1_0_3(),
                incoming("foo: ''", &[hard(2, "node", Some("foo"), None)], ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", None),
                    ("node-x", None),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
                zoned(),
                spread_2_1_0_3(),
                incoming("bar: ''", &foo_node(), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", None),
                    ("node-x", None),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                // Only node-a and node-y are counted; node-b and node-x
                // fit as NodeAffinity's own Filter is not run.
                "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
                zoned(),
                spread_2_1_0_3(),
                incoming(
                    "foo: ''",
                    &foo_node(),
                    &node_affinity("node", "In", "node-a, node-y"),
                ),
                vec![
                    ("node-a", None),
                    ("node-b", None),
                    ("node-x", None),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "terminating Pods should be excluded",
                plain(&["node-a", "node-b"]),
                vec![
                    terminating("p-a", "node-a", "foo: ''"),
                    running("p-b", "node-b", "foo: ''"),
                ],
                incoming("foo: ''", &foo_node(), ""),
                vec![("node-a", None), ("node-b", Some(SKEW))],
            ),
            (
                "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
                zoned(),
                vec![
                    running("p-b1", "node-b", "foo: ''"),
                    running("p-b2", "node-b", "foo: ''"),
                    running("p-y1", "node-y", "foo: ''"),
                ],
                incoming(
                    "foo: ''",
                    &foo_zone(),
                    &node_affinity("node", "NotIn", "node-b"),
                ),
                vec![
                    ("node-a", None),
                    ("node-b", None),
                    ("node-x", Some(SKEW)),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
                plain(&["node-a", "node-b", "node-c"]),
                spread_2_2_1(),
                incoming("foo: ''", &[hard(2, "node", Some("foo"), Some(4))], ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-c", None),
                ],
            ),
            (
                "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
                plain(&["node-a", "node-b", "node-c"]),
                spread_2_2_1(),
                incoming("foo: ''", &[hard(2, "node", Some("foo"), Some(2))], ""),
                vec![("node-a", None), ("node-b", None), ("node-c", None)],
            ),
            (
                "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
                zoned(),
                spread_zone_2_1(),
                incoming("foo: ''", &[hard(2, "zone", Some("foo"), Some(3))], ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", None),
                    ("node-y", None),
                ],
            ),
            (
                "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
                zoned(),
                spread_zone_2_1(),
                incoming("foo: ''", &[hard(2, "zone", Some("foo"), Some(1))], ""),
                vec![
                    ("node-a", None),
                    ("node-b", None),
                    ("node-x", None),
                    ("node-y", None),
                ],
            ),
            (
                // node-y fits as NodeAffinity's own Filter is not run.
                "NodeAffinityPolicy honored with labelSelectors",
                foo_nodes(""),
                spread_1_1_0_1(),
                incoming("foo: ''", &foo_node(), ", nodeSelector: {foo: ''}"),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", None),
                    ("node-y", None),
                ],
            ),
            (
                "NodeAffinityPolicy honored with nodeAffinity",
                foo_nodes(""),
                spread_1_1_0_1(),
                incoming("foo: ''", &foo_node(), &node_affinity("foo", "In", "''")),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", None),
                    ("node-y", None),
                ],
            ),
            (
                "NodeTaintsPolicy ignored",
                foo_nodes(TAINTED),
                spread_1_1_0_1(),
                incoming("foo: ''", &foo_node(), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", None),
                    ("node-y", Some(SKEW)),
                ],
            ),
        ];
        assert_eq!(cases.len(), 20, "23 upstream cases, 3 not expressible");
        run(cases);
    }

    /// Upstream's `TestMultipleConstraints`
    /// (`podtopologyspread/filtering_test.go`), Filter's verdict on every
    /// node. "two node inclusion Constraints, zone: honor/ignore, node:
    /// honor/ignore" leaves the policies unset (the defaults, what wasched
    /// does) and is here.
    ///
    /// Not expressible here (wasched does not model the node inclusion
    /// policies of topology spread and reads a constraint as if they were
    /// unset):
    /// - "two node inclusion Constraints, zone: honor/ignore, node:
    ///   ignore/ignore" — `nodeAffinityPolicy: Ignore`;
    /// - "two node inclusion Constraints, zone: honor/honor, node:
    ///   honor/ignore" — `nodeTaintsPolicy: Honor`;
    /// - "two node inclusion Constraints, zone: honor/honor, node:
    ///   ignore/ignore" — `nodeTaintsPolicy: Honor` and
    ///   `nodeAffinityPolicy: Ignore`.
    #[test]
    fn test_multiple_constraints() {
        let zone_and_node = |zone: &str, node: &str| {
            vec![
                hard(1, "zone", Some(zone), None),
                hard(1, "node", Some(node), None),
            ]
        };
        let two_zone = || {
            vec![
                hard(1, "zone", Some("bar"), None),
                hard(1, "zone", Some("foo"), None),
            ]
        };
        let spread_3_4 = |extra: bool| {
            let mut pods = vec![
                running("p-a1", "node-a", "foo: ''"),
                running("p-a2", "node-a", "foo: ''"),
                running("p-b1", "node-b", "foo: ''"),
                running("p-y1", "node-y", "foo: ''"),
                running("p-y2", "node-y", "foo: ''"),
                running("p-y3", "node-y", "foo: ''"),
            ];
            if extra {
                pods.push(running("p-y4", "node-y", "foo: ''"));
            }
            pods
        };
        let two_zone_pods = |extra: bool| {
            let mut pods = vec![
                running("p-a1", "node-a", "foo: '', bar: ''"),
                running("p-a2", "node-a", "foo: ''"),
                running("p-b1", "node-b", "foo: '', bar: ''"),
                running("p-y1", "node-y", "foo: ''"),
                running("p-y2", "node-y", "foo: '', bar: ''"),
                running("p-y3", "node-y", "foo: ''"),
            ];
            if extra {
                pods.push(running("p-y4", "node-y", "foo: ''"));
            }
            pods
        };
        let cases: Vec<Case> = vec![
            (
                "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
                zoned(),
                spread_3_4(false),
                incoming("foo: ''", &zone_and_node("foo", "foo"), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", None),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
                zoned(),
                spread_3_4(true),
                incoming("foo: ''", &zone_and_node("foo", "foo"), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", Some(SKEW)),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
                zoned(),
                vec![
                    running("p-a1", "node-a", "foo: ''"),
                    running("p-y1", "node-y", "bar: ''"),
                ],
                incoming("foo: '', bar: ''", &zone_and_node("foo", "bar"), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", None),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
                zoned(),
                vec![
                    running("p-a1", "node-a", "foo: ''"),
                    running("p-x1", "node-x", "bar: ''"),
                    running("p-y1", "node-y", "bar: ''"),
                ],
                incoming("foo: '', bar: ''", &zone_and_node("foo", "bar"), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", Some(SKEW)),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
                zoned(),
                vec![
                    running("p-a1", "node-a", "foo: ''"),
                    running("p-a2", "node-a", "foo: '', bar: ''"),
                    running("p-y1", "node-y", "foo: ''"),
                    running("p-y2", "node-y", "foo: '', bar: ''"),
                    running("p-y3", "node-y", "foo: ''"),
                ],
                incoming("foo: '', bar: ''", &zone_and_node("foo", "bar"), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", None),
                    ("node-x", Some(SKEW)),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
                zoned(),
                vec![
                    running("p-a1", "node-a", "foo: ''"),
                    running("p-x1", "node-x", "bar: ''"),
                    running("p-y1", "node-y", "bar: ''"),
                ],
                incoming("bar: ''", &zone_and_node("foo", "bar"), ""),
                vec![
                    ("node-a", None),
                    ("node-b", None),
                    ("node-x", Some(SKEW)),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
                vec![
                    node("node-a", "zone: zone1, node: node-a"),
                    node("node-b", "zone: zone1, node: node-b"),
                    node("node-x", "zone: zone2"),
                    node("node-y", "zone: zone2, node: node-y"),
                ],
                vec![
                    running("p-a1", "node-a", "foo: ''"),
                    running("p-y3", "node-y", "foo: ''"),
                ],
                incoming("foo: ''", &zone_and_node("foo", "foo"), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", None),
                    ("node-x", Some(MISSING)),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                // node-b fits and node-y fails on `node` only as neither
                // NodeAffinity's nor TaintToleration's Filter is run.
                "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
                vec![
                    node("node-a", "zone: zone1, node: node-a, foo: ''"),
                    node("node-b", "zone: zone1, node: node-b"),
                    node("node-x", "zone: zone2, node: node-x, foo: ''"),
                    node_with("node-y", "zone: zone2, node: node-y, foo: ''", TAINTED),
                ],
                vec![
                    running("p-a1", "node-a", "foo: ''"),
                    running("p-b1", "node-b", "foo: ''"),
                    running("p-y1", "node-y", "foo: ''"),
                ],
                incoming(
                    "foo: ''",
                    &zone_and_node("foo", "foo"),
                    ", nodeSelector: {foo: ''}",
                ),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", None),
                    ("node-x", None),
                    ("node-y", Some(SKEW)),
                ],
            ),
            (
                "two Constraints on zone, spreads = [3/3, 2/1]",
                zoned(),
                two_zone_pods(false),
                incoming("foo: '', bar: ''", &two_zone(), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", None),
                    ("node-y", None),
                ],
            ),
            (
                "two Constraints on zone, spreads = [3/4, 2/1]",
                zoned(),
                two_zone_pods(true),
                incoming("foo: '', bar: ''", &two_zone(), ""),
                vec![
                    ("node-a", Some(SKEW)),
                    ("node-b", Some(SKEW)),
                    ("node-x", Some(SKEW)),
                    ("node-y", Some(SKEW)),
                ],
            ),
        ];
        assert_eq!(cases.len(), 10, "13 upstream cases, 3 not expressible");
        run(cases);
    }

    /// The cluster of `yaml` read as a live cluster's
    /// (`BuildOptions::live`): pods being deleted stay on their nodes, as
    /// in kube-scheduler's cache.
    fn live(yaml: &str) -> Cluster {
        let mut manifests = crate::manifest::Manifests::default();
        crate::manifest::load_str(&mut manifests, "case.yaml", yaml)
            .unwrap_or_else(|e| panic!("{e:#}"));
        crate::manifest::expand_workloads(&mut manifests).unwrap_or_else(|e| panic!("{e:#}"));
        manifests.finish();
        let options = BuildOptions {
            live: true,
            ..BuildOptions::default()
        };
        let snapshot = Model::snapshot_of(manifests, &options).unwrap_or_else(|e| panic!("{e:#}"));
        Cluster { snapshot }
    }

    /// Upstream's "terminating Pods should be excluded"
    /// (`TestSingleConstraint`) on a live cluster, where a pod being
    /// deleted is still on its node: `countPodsMatchSelector` skips it.
    #[test]
    fn terminating_pods_are_excluded_on_a_live_cluster() {
        let docs = [
            node("node-a", "node: node-a"),
            node("node-b", "node: node-b"),
            terminating("p-a", "node-a", "foo: ''"),
            running("p-b", "node-b", "foo: ''"),
            incoming("foo: ''", &[hard(1, "node", Some("foo"), None)], ""),
        ];
        let cluster = live(&docs.join("---\n"));
        let p_a = &cluster.snapshot.pods[cluster.pod("default/p-a") as usize];
        assert!(p_a.terminating && p_a.node.is_some(), "p-a stays on node-a");
        assert_eq!(cluster.verdict(filter, "default/p", "node-a"), Ok(()));
        assert_eq!(
            cluster.verdict(filter, "default/p", "node-b"),
            rejected(&[SKEW])
        );
    }

    /// Upstream's `calPreFilterState` counts only the nodes that carry the
    /// topology keys of all the pod's constraints
    /// (`nodeLabelsMatchSpreadConstraints`): node-x, without label `node`,
    /// holds two matching pods that its zone does not count.
    #[test]
    fn counts_only_nodes_with_every_topology_key() {
        let docs = [
            node("node-a", "zone: zone1, node: node-a"),
            node("node-x", "zone: zone2"),
            node("node-y", "zone: zone2, node: node-y"),
            running("p-x1", "node-x", "foo: ''"),
            running("p-x2", "node-x", "foo: ''"),
            incoming(
                "foo: ''",
                &[
                    hard(1, "zone", Some("foo"), None),
                    hard(1, "node", Some("foo"), None),
                ],
                "",
            ),
        ];
        let cluster = Cluster::new(&docs.join("---\n"));
        let verdicts: Vec<_> = ["node-a", "node-x", "node-y"]
            .map(|n| cluster.verdict(filter, "default/p", n))
            .into();
        assert_eq!(verdicts, [Ok(()), rejected(&[MISSING]), Ok(())]);
    }
}
