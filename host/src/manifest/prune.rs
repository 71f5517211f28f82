//! What a cluster dump carries and wasched never reads, dropped from each
//! object as soon as it is parsed, before it becomes a typed object: a
//! dump of 60k pods is mostly `metadata.managedFields`, kubelet-written
//! status and `kubectl apply`'s copy of the object.
//!
//! Dropped:
//!
//! - `metadata.managedFields`, of every kind;
//! - the `kubectl.kubernetes.io/last-applied-configuration` annotation;
//! - a Pod's `status` but for `phase` (which pods hold resources),
//!   `startTime` (their age, for preemption) and `nominatedNodeName`;
//! - a Node's `status` but for `allocatable` and `capacity`.
//!
//! A dropped status field keeps its name (its value becomes `null`), so a
//! misspelt one is still named as an unknown field; what is kept is read as
//! before. Nothing is dropped when the objects go to a real API server
//! (`cluster up`, the kube-scheduler engines: `Manifests::keep_stored`),
//! whose scheduler reads more of them (node images, pods' allocated
//! resources).

use serde_json::Value;

/// The annotation `kubectl apply` keeps its last input in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The Pod status fields wasched reads.
const POD_STATUS: &[&str] = &["phase", "startTime", "nominatedNodeName"];

/// The Node status fields wasched reads.
const NODE_STATUS: &[&str] = &["allocatable", "capacity"];

/// Drops from `value`, an object of `kind`, what is never read.
pub fn never_read(kind: &str, value: &mut Value) {
    let Value::Object(object) = value else { return };
    if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
        metadata.remove("managedFields");
        if let Some(Value::Object(annotations)) = metadata.get_mut("annotations") {
            annotations.remove(LAST_APPLIED);
        }
    }
    let kept = match kind {
        "Pod" => POD_STATUS,
        "Node" => NODE_STATUS,
        _ => return,
    };
    if let Some(Value::Object(status)) = object.get_mut("status") {
        for (field, value) in status.iter_mut() {
            if !kept.contains(&field.as_str()) {
                *value = Value::Null;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drops_what_is_never_read_and_keeps_what_is() {
        let mut pod = json!({
            "kind": "Pod",
            "metadata": {
                "name": "p",
                "managedFields": [{"manager": "kubelet"}],
                "annotations": {LAST_APPLIED: "{}", "keep": "me"},
            },
            "status": {"phase": "Running", "startTime": "t", "nominatedNodeName": "n",
                       "conditions": [], "containerStatuses": [], "podIP": "10.0.0.1"},
        });
        never_read("Pod", &mut pod);
        assert_eq!(
            pod,
            json!({
                "kind": "Pod",
                "metadata": {"name": "p", "annotations": {"keep": "me"}},
                "status": {"phase": "Running", "startTime": "t", "nominatedNodeName": "n",
                           "conditions": null, "containerStatuses": null, "podIP": null},
            })
        );
        let mut node = json!({"metadata": {"managedFields": []},
            "status": {"allocatable": {}, "capacity": {}, "images": [], "conditions": []}});
        never_read("Node", &mut node);
        assert_eq!(
            node,
            json!({"metadata": {}, "status": {"allocatable": {}, "capacity": {}, "images": null,
                                              "conditions": null}})
        );
        let mut job = json!({"status": {"conditions": [{"type": "Complete"}]}});
        never_read("Job", &mut job.clone());
        never_read("Job", &mut job);
        assert_eq!(
            job,
            json!({"status": {"conditions": [{"type": "Complete"}]}})
        );
    }
}
