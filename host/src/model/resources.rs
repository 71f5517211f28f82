//! Resource amounts the way kube-scheduler's `NodeResourcesFit` counts them.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow, bail};
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

/// The amounts of `map` (the field `field` names, worked out only to say
/// what is wrong).
fn amounts(
    map: Option<&BTreeMap<String, K8sQuantity>>,
    field: impl Fn() -> String,
) -> Result<Amounts> {
    let mut out = Amounts::new();
    for (resource, quantity) in map.into_iter().flatten() {
        let value =
            amount(resource, quantity).map_err(|e| anyhow!("field {}.{resource}: {e}", field()))?;
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
    let mut out = amounts(map, || field.to_string())?;
    out.entry(PODS.to_string()).or_insert(DEFAULT_MAX_PODS);
    Ok(out)
}

/// Whether a resource may be requested below its limit
/// (`helper.IsOvercommitAllowed`): native resources (no domain, or a
/// `kubernetes.io/` one) except hugepages. Extended resources such as
/// `nvidia.com/gpu` may not.
fn overcommit_allowed(resource: &str) -> bool {
    let native = !resource.contains('/') || resource.contains("kubernetes.io/");
    native && !resource.starts_with("hugepages-")
}

/// A container's requests, where a resource with only a limit requests its
/// limit. A resource that cannot be overcommitted must have a limit equal
/// to its request, as the API server requires.
fn container_requests(container: &Container, field: &dyn Fn() -> String) -> Result<Amounts> {
    let resources = container.resources.as_ref();
    let limits = amounts(resources.and_then(|r| r.limits.as_ref()), || {
        format!("{}.resources.limits", field())
    })?;
    let requests = amounts(resources.and_then(|r| r.requests.as_ref()), || {
        format!("{}.resources.requests", field())
    })?;
    for (resource, request) in &requests {
        if overcommit_allowed(resource) {
            continue;
        }
        match limits.get(resource) {
            None => bail!(
                "field {}.resources.limits.{resource}: required: a limit must be set for resources that cannot be overcommitted",
                field()
            ),
            Some(limit) if limit != request => bail!(
                "field {}.resources.requests.{resource}: must be equal to its limit ({limit}): {resource} cannot be overcommitted",
                field()
            ),
            Some(_) => {}
        }
    }
    let mut out = limits;
    out.extend(requests);
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
    aggregate(spec, &[])
}

/// kube-scheduler's default for a container that requests no cpu
/// (`schedutil.DefaultMilliCPURequest`), in millicores.
pub const DEFAULT_CPU_REQUEST: u64 = 100;
/// Its default for a container that requests no memory
/// (`schedutil.DefaultMemoryRequest`: 200 MiB), in bytes.
pub const DEFAULT_MEMORY_REQUEST: u64 = 200 * 1024 * 1024;

/// The cpu (millicores) and memory (bytes) `NodeResourcesFit` scores a pod
/// by: its requests, where every container that requests no cpu or no
/// memory (neither a request nor a limit) counts as requesting 100m and
/// 200Mi (`NonMissingContainerRequests`); so a pod without requests still
/// spreads pods out. Filtering uses the real requests.
pub fn pod_scoring_requests(spec: &PodSpec) -> Result<[u64; 2]> {
    let defaults = [
        ("cpu", DEFAULT_CPU_REQUEST),
        ("memory", DEFAULT_MEMORY_REQUEST),
    ];
    let total = aggregate(spec, &defaults)?;
    Ok(defaults.map(|(resource, _)| total.get(resource).copied().unwrap_or(0)))
}

/// [`pod_requests`], where each container that requests none of a resource
/// in `defaults` requests the default.
fn aggregate(spec: &PodSpec, defaults: &[(&str, u64)]) -> Result<Amounts> {
    let requests = |container: &Container, field: &dyn Fn() -> String| -> Result<Amounts> {
        let mut requests = container_requests(container, field)?;
        for (resource, default) in defaults {
            requests.entry(resource.to_string()).or_insert(*default);
        }
        Ok(requests)
    };
    let mut total = Amounts::new();
    for (i, container) in spec.containers.iter().enumerate() {
        add(
            &mut total,
            &requests(container, &|| format!("spec.containers[{i}]"))?,
        );
    }
    let mut sidecars = Amounts::new();
    let mut init_peak = Amounts::new();
    for (i, container) in spec.init_containers.iter().flatten().enumerate() {
        let requests = requests(container, &|| format!("spec.initContainers[{i}]"))?;
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
    // Pod-level resources (PodLevelResources, on by default since v1.34):
    // a pod-level request of cpu, memory or a hugepages size stands for
    // what the containers add up to (`resource.PodRequests`,
    // `applyPodLevelResources`); the overhead comes on top.
    let pod_level = amounts(
        spec.resources.as_ref().and_then(|r| r.requests.as_ref()),
        || "spec.resources.requests".into(),
    )?;
    for (resource, request) in pod_level {
        if resource == "cpu" || resource == "memory" || resource.starts_with("hugepages-") {
            total.insert(resource, request);
        }
    }
    add(
        &mut total,
        &amounts(spec.overhead.as_ref(), || "spec.overhead".into())?,
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
    fn scoring_counts_containers_without_requests_at_the_defaults() {
        let spec = spec(json!({
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "2"}}},
                {"name": "b"},
                {"name": "c", "resources": {"requests": {"cpu": "0", "memory": "0"}}},
                {"name": "d", "resources": {"limits": {"memory": "1Gi"}}}
            ],
            "overhead": {"cpu": "10m"}
        }));
        let [cpu, memory] = pod_scoring_requests(&spec).unwrap();
        // a: 2000 + b: 100 + c: 0 (set, even to zero) + d: 100, + overhead.
        assert_eq!(cpu, 2000 + 100 + 100 + 10);
        // a, b: 200Mi each; c: 0; d: its limit.
        assert_eq!(memory, 2 * DEFAULT_MEMORY_REQUEST + (1 << 30));
        let real = pod_requests(&spec).unwrap();
        assert_eq!((real["cpu"], real["memory"]), (2010, 1 << 30));
    }

    #[test]
    fn extended_resources_need_a_limit_equal_to_the_request() {
        let missing = spec(
            json!({"containers": [{"name": "a", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}),
        );
        assert_eq!(
            pod_requests(&missing).unwrap_err().to_string(),
            "field spec.containers[0].resources.limits.nvidia.com/gpu: required: a limit must be set for resources that cannot be overcommitted"
        );
        let unequal = spec(
            json!({"containers": [{"name": "a", "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "2"}}}]}),
        );
        assert!(
            pod_requests(&unequal)
                .unwrap_err()
                .to_string()
                .contains("must be equal to its limit (2)")
        );
        let native = spec(
            json!({"containers": [{"name": "a", "resources": {"requests": {"cpu": "1", "example.kubernetes.io/thing": "1"}}}]}),
        );
        assert!(
            pod_requests(&native).is_ok(),
            "cpu and kubernetes.io resources may be overcommitted"
        );
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
