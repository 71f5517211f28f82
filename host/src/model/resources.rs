//! Resource amounts the way kube-scheduler's `NodeResourcesFit` counts them.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow};
use k8s_openapi::api::core::v1::{Container, Node, PodSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use crate::manifest::quantity::Quantity;

/// Resource name → amount in scheduler units: millicores for `cpu`, bytes for
/// `memory`, storage and hugepages, counts for everything else.
pub type Amounts = BTreeMap<String, u64>;

/// The `pods` resource: how many pods a node takes.
pub const PODS: &str = "pods";
/// kubelet's default `maxPods`, used when a node reports no `pods` capacity.
pub const DEFAULT_MAX_PODS: u64 = 110;

/// One quantity in scheduler units for `resource`.
pub fn amount(resource: &str, quantity: &K8sQuantity) -> Result<u64, String> {
    let q = Quantity::parse(&quantity.0).map_err(|e| e.to_string())?;
    if q.is_negative() {
        // The API server refuses these (`ValidateResourceQuantityValue`).
        return Err(format!(
            "{:?} must be greater than or equal to 0",
            quantity.0
        ));
    }
    Ok(if resource == "cpu" {
        q.ceil_milli()
    } else {
        q.ceil_value()
    })
}

fn amounts(map: Option<&BTreeMap<String, K8sQuantity>>, field: &str) -> Result<Amounts> {
    let mut out = Amounts::new();
    for (resource, quantity) in map.into_iter().flatten() {
        let value =
            amount(resource, quantity).map_err(|e| anyhow!("field {field}.{resource}: {e}"))?;
        out.insert(resource.clone(), value);
    }
    Ok(out)
}

/// A node's `status.allocatable` (falling back to `status.capacity`), with
/// `pods` defaulting to kubelet's 110.
pub fn node_allocatable(node: &Node) -> Result<Amounts> {
    let status = node.status.as_ref();
    let (map, field) = match status.and_then(|s| s.allocatable.as_ref()) {
        Some(allocatable) => (Some(allocatable), "status.allocatable"),
        None => (status.and_then(|s| s.capacity.as_ref()), "status.capacity"),
    };
    let mut out = amounts(map, field)?;
    out.entry(PODS.to_string()).or_insert(DEFAULT_MAX_PODS);
    Ok(out)
}

/// A container's requests, where a resource with only a limit requests its limit.
fn container_requests(container: &Container, field: &str) -> Result<Amounts> {
    let resources = container.resources.as_ref();
    let mut out = amounts(
        resources.and_then(|r| r.limits.as_ref()),
        &format!("{field}.resources.limits"),
    )?;
    out.extend(amounts(
        resources.and_then(|r| r.requests.as_ref()),
        &format!("{field}.resources.requests"),
    )?);
    Ok(out)
}

fn add(into: &mut Amounts, from: &Amounts) {
    for (resource, value) in from {
        let slot = into.entry(resource.clone()).or_default();
        *slot = slot.saturating_add(*value);
    }
}

fn max(into: &mut Amounts, from: &Amounts) {
    for (resource, value) in from {
        let slot = into.entry(resource.clone()).or_default();
        *slot = (*slot).max(*value);
    }
}

/// A pod's effective requests (`resourcehelper.PodRequests`): the sum of its
/// containers plus restartable (sidecar) init containers, or the largest
/// regular init container (plus the sidecars started before it) if that is
/// more, plus `spec.overhead`; always one `pods`.
pub fn pod_requests(spec: &PodSpec) -> Result<Amounts> {
    let mut total = Amounts::new();
    for (i, container) in spec.containers.iter().enumerate() {
        add(
            &mut total,
            &container_requests(container, &format!("spec.containers[{i}]"))?,
        );
    }
    let mut sidecars = Amounts::new();
    let mut init_peak = Amounts::new();
    for (i, container) in spec.init_containers.iter().flatten().enumerate() {
        let requests = container_requests(container, &format!("spec.initContainers[{i}]"))?;
        if container.restart_policy.as_deref() == Some("Always") {
            add(&mut sidecars, &requests);
            max(&mut init_peak, &sidecars);
        } else {
            let mut during = sidecars.clone();
            add(&mut during, &requests);
            max(&mut init_peak, &during);
        }
    }
    add(&mut total, &sidecars);
    max(&mut total, &init_peak);
    add(
        &mut total,
        &amounts(spec.overhead.as_ref(), "spec.overhead")?,
    );
    total.insert(PODS.to_string(), 1);
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(value: serde_json::Value) -> PodSpec {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn requests_default_to_limits_and_init_containers_count_by_max() {
        let spec = spec(json!({
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1", "memory": "1Gi"}}},
                {"name": "b", "resources": {"limits": {"nvidia.com/gpu": "2"}}}
            ],
            "initContainers": [
                {"name": "init", "resources": {"requests": {"cpu": "3"}}},
                {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"memory": "1Gi"}}}
            ],
            "overhead": {"cpu": "100m"}
        }));
        let r = pod_requests(&spec).unwrap();
        assert_eq!(r["cpu"], 3100, "init container peak 3 cores + overhead");
        assert_eq!(r["memory"], 2 << 30, "limit-as-request + sidecar");
        assert_eq!(r["nvidia.com/gpu"], 2);
        assert_eq!(r[PODS], 1);
    }

    #[test]
    fn negative_quantities_are_refused_as_the_api_server_does() {
        let spec =
            spec(json!({"containers": [{"name": "a", "resources": {"requests": {"cpu": "-1"}}}]}));
        let err = pod_requests(&spec).unwrap_err().to_string();
        assert_eq!(
            err,
            "field spec.containers[0].resources.requests.cpu: \"-1\" must be greater than or equal to 0"
        );
        let zero = spec_zero();
        assert_eq!(
            pod_requests(&zero).unwrap()["cpu"],
            0,
            "-0 is zero, not negative"
        );
    }

    fn spec_zero() -> PodSpec {
        spec(json!({"containers": [{"name": "a", "resources": {"requests": {"cpu": "-0"}}}]}))
    }

    #[test]
    fn bad_quantity_names_the_field() {
        let spec = spec(
            json!({"containers": [{"name": "a", "resources": {"requests": {"cpu": "lots"}}}]}),
        );
        let err = pod_requests(&spec).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "field spec.containers[0].resources.requests.cpu: invalid quantity \"lots\""
            ),
            "{err}"
        );
    }
}
