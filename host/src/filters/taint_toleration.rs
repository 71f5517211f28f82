//! `TaintToleration` (filter): a node's `NoSchedule` and `NoExecute`
//! taints each need a toleration of the pod, as upstream's
//! `pkg/scheduler/framework/plugins/tainttoleration` and
//! `v1.Toleration.ToleratesTaint`.

use k8s_openapi::api::core::v1::{Taint, Toleration};

use super::Rejection;
use crate::model::{NodeId, PodId, Snapshot};

/// Upstream's `Filter`: the first taint of `node` that `pod` does not
/// tolerate, as its rejection.
pub fn filter(snapshot: &Snapshot, pod: PodId, node: NodeId) -> Result<(), Rejection> {
    let n = &snapshot.nodes[node as usize];
    match untolerated_taint(&n.taints, &snapshot.pods[pod as usize].tolerations) {
        Some(i) => Err(Rejection::Taint(n.taint_texts[i])),
        None => Ok(()),
    }
}

/// The index of the first `NoSchedule`/`NoExecute` taint no toleration
/// tolerates.
pub(super) fn untolerated_taint(taints: &[Taint], tolerations: &[Toleration]) -> Option<usize> {
    taints.iter().position(|taint| {
        (taint.effect == "NoSchedule" || taint.effect == "NoExecute")
            && !tolerations.iter().any(|t| {
                tolerates(
                    t,
                    &taint.key,
                    taint.value.as_deref().unwrap_or_default(),
                    &taint.effect,
                )
            })
    })
}

/// `Toleration.ToleratesTaint`.
pub(super) fn tolerates(toleration: &Toleration, key: &str, value: &str, effect: &str) -> bool {
    let toleration_effect = toleration.effect.as_deref().unwrap_or_default();
    if !toleration_effect.is_empty() && toleration_effect != effect {
        return false;
    }
    let toleration_key = toleration.key.as_deref().unwrap_or_default();
    if !toleration_key.is_empty() && toleration_key != key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => toleration.value.as_deref().unwrap_or_default() == value,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn toleration(value: serde_json::Value) -> Toleration {
        serde_json::from_value(value).unwrap()
    }

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: Some(value.into()),
            effect: effect.into(),
            ..Default::default()
        }
    }

    #[test]
    fn tolerations_follow_kubernetes_rules() {
        let gpu = taint("nvidia.com/gpu", "present", "NoSchedule");
        let cases = [
            (json!({"key": "nvidia.com/gpu", "operator": "Exists"}), true),
            (
                json!({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}),
                true,
            ),
            (
                json!({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}),
                true,
            ),
            (json!({"key": "nvidia.com/gpu", "value": "absent"}), false),
            (
                json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}),
                false,
            ),
            (json!({"operator": "Exists"}), true),
            (json!({"key": "other", "operator": "Exists"}), false),
        ];
        for (t, expected) in cases {
            let tolerations = [toleration(t.clone())];
            let tolerated = untolerated_taint(std::slice::from_ref(&gpu), &tolerations).is_none();
            assert_eq!(tolerated, expected, "{t}");
        }
        let soft = [taint("a", "b", "PreferNoSchedule")];
        assert!(
            untolerated_taint(&soft, &[]).is_none(),
            "PreferNoSchedule does not filter"
        );
    }
}
