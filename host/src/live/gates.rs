//! The API server's feature gates that drop fields wasched reads. A server
//! with one of them off takes the objects and silently drops the field: a
//! gang's pods never join their PodGroup, a topology constraint vanishes.
//! `wasched shadow` reads them once at start from the server's `/metrics`
//! (`kubernetes_feature_enabled{name,stage}`, as kube-apiserver exposes
//! them) and says once which fields it will not see.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use kube::Client;

/// A gate that drops a field when off, what it drops, and what that does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// The gate's name.
    pub name: &'static str,
    /// The field the API server drops while the gate is off.
    pub drops: &'static str,
    /// What scheduling then does without it.
    pub effect: &'static str,
}

/// The gates of Kubernetes v1.37.2 whose fields wasched reads (the API
/// server's `dropDisabled*` strategies for pods and PodGroups).
pub const DROPPING: [Gate; 4] = [
    Gate {
        name: "GenericWorkload",
        drops: "spec.schedulingGroup of Pods",
        effect: "pods never join their PodGroups and are scheduled one by one, without gang admission",
    },
    Gate {
        name: "TopologyAwareWorkloadScheduling",
        drops: "spec.schedulingConstraints of PodGroups",
        effect: "PodGroups are placed without their topology constraints",
    },
    Gate {
        name: "CompositePodGroup",
        drops: "spec.parentCompositePodGroupName of PodGroups",
        effect: "PodGroups are scheduled on their own, outside any CompositePodGroup tree",
    },
    Gate {
        name: "PodGroupPreemptionPolicy",
        drops: "spec.preemptionPolicy of PodGroups and CompositePodGroups",
        effect: "every group may preempt, including those that ask never to",
    },
];

/// The `kubernetes_feature_enabled` values of a Prometheus text
/// exposition: gate name → on.
pub fn parse(text: &str) -> BTreeMap<String, bool> {
    let mut gates = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("kubernetes_feature_enabled{") else {
            continue;
        };
        let Some((labels, value)) = rest.split_once('}') else {
            continue;
        };
        let name = labels.split(',').find_map(|label| {
            let value = label.trim().strip_prefix("name=")?;
            Some(value.trim_matches('"').to_string())
        });
        let value = value.trim().parse::<f64>().ok();
        if let (Some(name), Some(value)) = (name, value) {
            gates.insert(name, value != 0.0);
        }
    }
    gates
}

/// One line per gate of [`DROPPING`] the server has off.
pub fn warnings(gates: &BTreeMap<String, bool>) -> Vec<String> {
    DROPPING
        .iter()
        .filter(|gate| gates.get(gate.name) == Some(&false))
        .map(|gate| {
            format!(
                "the API server has feature gate {} off: it drops {}, so {}",
                gate.name, gate.drops, gate.effect
            )
        })
        .collect()
}

/// The server's feature gates, from its `/metrics`; an error when that
/// cannot be read (not permitted, say).
pub async fn read(client: &Client) -> Result<BTreeMap<String, bool>> {
    let request = hyper::Request::get("/metrics")
        .body(Vec::new())
        .context("GET /metrics")?;
    let text = client.request_text(request).await.context("GET /metrics")?;
    Ok(parse(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXPOSITION: &str = "\
# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name=\"CompositePodGroup\",stage=\"ALPHA\"} 1
kubernetes_feature_enabled{name=\"GenericWorkload\",stage=\"BETA\"} 1
kubernetes_feature_enabled{stage=\"ALPHA\",name=\"TopologyAwareWorkloadScheduling\"} 0
kubernetes_feature_enabled{name=\"Broken\"
apiserver_request_total{code=\"200\"} 5
";

    #[test]
    fn reads_the_gates_whatever_the_label_order() {
        let gates = parse(EXPOSITION);
        assert_eq!(gates.get("CompositePodGroup"), Some(&true));
        assert_eq!(gates.get("GenericWorkload"), Some(&true));
        assert_eq!(gates.get("TopologyAwareWorkloadScheduling"), Some(&false));
        assert_eq!(gates.len(), 3, "{gates:?}");
    }

    #[test]
    fn warns_for_each_gate_off_only() {
        let lines = warnings(&parse(EXPOSITION));
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("TopologyAwareWorkloadScheduling off"));
        assert!(lines[0].contains("spec.schedulingConstraints of PodGroups"));
        // A gate the server does not list (an older server) is not said off.
        assert!(warnings(&BTreeMap::new()).is_empty());
    }
}
