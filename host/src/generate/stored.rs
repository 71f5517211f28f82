//! Generated objects as an API server returns them (`wasched generate
//! --as-stored`): the shape of a real `kubectl get -o json` dump, with the
//! server's metadata (`uid`, `resourceVersion`, `generation`,
//! `managedFields`) and the status kubelets and the node controller write.
//! What a reader must wade through and never uses — it prices reading a
//! real dump (`benches/snapshot_load.rs`).

use serde_json::{Map, Value, json};

/// When the stored objects were last written (2026-11-20T08:00:00Z).
const WRITTEN: &str = "2026-11-20T08:00:00Z";

/// Adds what the API server and the cluster's controllers store to each of
/// `items`, deterministically from their order.
pub fn as_stored(items: &mut [Value]) {
    for (index, item) in items.iter_mut().enumerate() {
        let kind = item["kind"].as_str().unwrap_or_default().to_string();
        let status = match kind.as_str() {
            "Pod" => Some(pod_status(item, index)),
            "Node" => Some(node_status(item, index)),
            _ => None,
        };
        if let Some((status, writer)) = status {
            let fields = fields_v1(&status);
            item["status"] = status;
            push_managed(item, writer, "Update", Some("status"), fields);
        }
        let mut spec_fields = Map::new();
        for key in ["spec", "value", "description"] {
            if let Some(value) = item.get(key) {
                spec_fields.insert(format!("f:{key}"), fields_v1(value));
            }
        }
        if let Some(labels) = item.pointer("/metadata/labels") {
            spec_fields.insert(
                "f:metadata".into(),
                json!({ "f:labels": fields_v1(labels) }),
            );
        }
        let manager = match kind.as_str() {
            "Pod" | "PodGroup" | "Workload" | "CompositePodGroup" => "kube-controller-manager",
            "Node" => "kubelet",
            _ => "kubectl-client-side-apply",
        };
        push_managed(item, manager, "Update", None, Value::Object(spec_fields));
        let metadata = item["metadata"]
            .as_object_mut()
            .expect("generated metadata");
        metadata.insert("uid".into(), json!(uid(index)));
        metadata.insert("resourceVersion".into(), json!((1000 + index).to_string()));
        metadata
            .entry("creationTimestamp")
            .or_insert_with(|| json!(WRITTEN));
        if kind != "Pod" && kind != "Node" {
            metadata.insert("generation".into(), json!(1));
        }
    }
}

/// A deterministic version-4-shaped UID.
fn uid(index: usize) -> String {
    let n = (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        n >> 32,
        (n >> 16) & 0xffff,
        n & 0xfff,
        (n >> 52) & 0xfff,
        n & 0xffff_ffff_ffff
    )
}

/// Appends a `metadata.managedFields` entry.
fn push_managed(
    item: &mut Value,
    manager: &str,
    operation: &str,
    subresource: Option<&str>,
    fields: Value,
) {
    let api_version = item["apiVersion"].clone();
    let mut entry = json!({
        "apiVersion": api_version,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": operation,
        "time": WRITTEN,
    });
    if let Some(subresource) = subresource {
        entry["subresource"] = json!(subresource);
    }
    let metadata = item["metadata"]
        .as_object_mut()
        .expect("generated metadata");
    let managed = metadata.entry("managedFields").or_insert_with(|| json!([]));
    managed
        .as_array_mut()
        .expect("managedFields is a list")
        .push(entry);
}

/// The `FieldsV1` set of a value, as server-side apply tracks it: `f:key`
/// per field, `k:{"name":…}` per named list item, `.` for the item itself.
fn fields_v1(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (format!("f:{key}"), fields_v1(value)))
                .collect(),
        ),
        Value::Array(items) => {
            let mut set = Map::new();
            for item in items {
                let key = ["name", "type", "key"]
                    .iter()
                    .find_map(|k| item.get(*k).map(|v| (*k, v.clone())));
                if let Some((field, name)) = key {
                    let mut fields = fields_v1(item);
                    if let Value::Object(map) = &mut fields {
                        map.insert(".".into(), json!({}));
                    }
                    set.insert(format!("k:{}", json!({ field: name })), fields);
                }
            }
            Value::Object(set)
        }
        _ => json!({}),
    }
}

/// A pod's status as the kubelet (running) or the scheduler (pending)
/// writes it, and the manager that wrote it.
fn pod_status(pod: &Value, index: usize) -> (Value, &'static str) {
    let containers: Vec<&str> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| cs.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    if pod.pointer("/spec/nodeName").is_none() {
        let status = json!({
            "phase": "Pending",
            "qosClass": "Burstable",
            "conditions": [{
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": null,
                "lastTransitionTime": WRITTEN,
                "reason": "Unschedulable",
                "message": "0/2000 nodes are available: 2000 Insufficient nvidia.com/gpu. \
                            preemption: 0/2000 nodes are available: 2000 No preemption victims \
                            found for incoming pod.",
            }],
        });
        return (status, "kube-scheduler");
    }
    let ip = format!(
        "10.{}.{}.{}",
        (index >> 16) & 0xff,
        (index >> 8) & 0xff,
        index & 0xff
    );
    let conditions: Vec<Value> = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    .iter()
    .map(|t| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": WRITTEN}))
    .collect();
    let statuses: Vec<Value> = containers
        .iter()
        .map(|name| {
            json!({
                "name": name,
                "image": "registry.example.com/ml/trainer:2026.11",
                "imageID": "registry.example.com/ml/trainer@sha256:4b1f3c2a9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a",
                "containerID": format!("containerd://{:064x}", index as u128 * 0x9e37_79b9_7f4a_7c15),
                "ready": true,
                "started": true,
                "restartCount": 0,
                "lastState": {},
                "state": {"running": {"startedAt": WRITTEN}},
                "volumeMounts": [{
                    "name": "kube-api-access",
                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                    "readOnly": true,
                    "recursiveReadOnly": "Disabled",
                }],
            })
        })
        .collect();
    let status = json!({
        "phase": "Running",
        "qosClass": "Burstable",
        "conditions": conditions,
        "containerStatuses": statuses,
        "hostIP": "192.168.0.1",
        "hostIPs": [{"ip": "192.168.0.1"}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": WRITTEN,
    });
    (status, "kubelet")
}

/// A node's status as its kubelet writes it: capacity and allocatable
/// (kept from the generated node), conditions, addresses, node info and
/// the images it holds.
fn node_status(node: &Value, index: usize) -> (Value, &'static str) {
    let mut status = node["status"].clone();
    let conditions: Vec<Value> = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID"),
        ("Ready", "True", "KubeletReady"),
    ]
    .iter()
    .map(|(t, s, reason)| {
        json!({
            "type": t, "status": s, "reason": reason,
            "message": format!("kubelet reports {t} {s}"),
            "lastHeartbeatTime": WRITTEN, "lastTransitionTime": WRITTEN,
        })
    })
    .collect();
    let name = node.pointer("/metadata/name").cloned().unwrap_or_default();
    let images: Vec<Value> = (0..20)
        .map(|i| {
            json!({
                "names": [
                    format!("registry.example.com/platform/image-{i}@sha256:{:064x}", i * 7919),
                    format!("registry.example.com/platform/image-{i}:v1.{i}"),
                ],
                "sizeBytes": 100_000_000 + i * 1_000_003,
            })
        })
        .collect();
    let fields = [
        ("conditions", json!(conditions)),
        (
            "addresses",
            json!([
                {"type": "InternalIP", "address": format!("192.168.{}.{}", index >> 8 & 0xff, index & 0xff)},
                {"type": "Hostname", "address": name},
            ]),
        ),
        (
            "nodeInfo",
            json!({
                "architecture": "amd64", "bootID": uid(index + 1_000_000),
                "containerRuntimeVersion": "containerd://2.1.4",
                "kernelVersion": "6.8.0-1021-nvidia", "kubeProxyVersion": "",
                "kubeletVersion": "v1.37.2", "machineID": format!("{:032x}", index),
                "operatingSystem": "linux", "osImage": "Ubuntu 24.04.3 LTS",
                "systemUUID": uid(index + 2_000_000),
            }),
        ),
        ("images", json!(images)),
        (
            "daemonEndpoints",
            json!({"kubeletEndpoint": {"Port": 10250}}),
        ),
    ];
    let map = status.as_object_mut().expect("generated node status");
    for (key, value) in fields {
        map.insert(key.into(), value);
    }
    (status, "kubelet")
}

#[cfg(test)]
mod tests {
    #[test]
    fn stored_objects_read_as_the_plain_ones_and_carry_what_a_dump_carries() {
        let options = super::super::Options {
            nodes: 20,
            pending_pods: 30,
            seed: 3,
            shape: super::super::Shape::Gpu,
        };
        let plain = super::super::generate_json(&options).unwrap();
        let stored = super::super::dump_json(&options).unwrap();
        assert!(
            stored.len() > 3 * plain.len(),
            "{} vs {}",
            stored.len(),
            plain.len()
        );
        assert!(stored.contains("\"managedFields\"") && stored.contains("\"containerStatuses\""));
        let read = |name: &str, text: &str| {
            let mut manifests = crate::manifest::Manifests::default();
            crate::manifest::load_str(&mut manifests, name, text).unwrap();
            assert!(manifests.unknown_fields.warnings().is_empty(), "{name}");
            crate::Snapshot::build(&manifests).unwrap()
        };
        let (a, b) = (read("plain.json", &plain), read("stored.json", &stored));
        assert_eq!(a.nodes.len(), b.nodes.len());
        assert_eq!(a.pods.len(), b.pods.len());
        assert_eq!(
            a.pods.iter().filter(|p| p.pending).count(),
            b.pods.iter().filter(|p| p.pending).count()
        );
    }
}
