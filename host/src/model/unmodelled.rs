//! What a pod may ask of kube-scheduler that wasched does not model (the
//! book's "Differences from kube-scheduler",
//! `docs/src/semantics/not-modelled.md`): a snapshot is scheduled
//! regardless (a warning of the run names the pods and what was not
//! checked), a live scheduler must not bind such a pod blindly.

use k8s_openapi::api::core::v1::PodSpec;

/// The needs of `spec` that wasched cannot check, one phrase each, in a
/// fixed order; empty when it models everything the pod asks for.
pub fn needs(spec: &PodSpec) -> Vec<&'static str> {
    let mut needs = Vec::new();
    let affinity = spec.affinity.as_ref();
    if affinity.is_some_and(|a| a.pod_affinity.is_some() || a.pod_anti_affinity.is_some()) {
        needs.push("inter-pod affinity or anti-affinity");
    }
    let volumes = spec.volumes.iter().flatten();
    if volumes
        .clone()
        .any(|v| v.persistent_volume_claim.is_some() || v.ephemeral.is_some())
    {
        needs.push("persistent volume claims");
    }
    if spec.resource_claims.as_ref().is_some_and(|c| !c.is_empty()) {
        needs.push("resource claims (dynamic resource allocation)");
    }
    let containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    if containers
        .flat_map(|c| c.ports.iter().flatten())
        .any(|p| p.host_port.is_some_and(|port| port != 0))
    {
        needs.push("host ports");
    }
    needs
}

/// The message a pod with `needs` gets instead of a binding.
pub fn message(needs: &[&str]) -> String {
    format!(
        "wasched does not model {}: not scheduled (schedule this pod with kube-scheduler)",
        needs.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> PodSpec {
        serde_norway::from_str(yaml).expect("pod spec")
    }

    #[test]
    fn names_each_unmodelled_need_and_nothing_else() {
        let plain = spec("containers: [{name: a, image: x, ports: [{containerPort: 80}]}]");
        assert!(needs(&plain).is_empty());
        let all = spec(
            r#"
containers: [{name: a, image: x, ports: [{containerPort: 80, hostPort: 8080}]}]
affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: []}}
volumes: [{name: d, persistentVolumeClaim: {claimName: data}}, {name: e, emptyDir: {}}]
resourceClaims: [{name: gpu, resourceClaimName: gpu-claim}]
"#,
        );
        assert_eq!(
            needs(&all),
            [
                "inter-pod affinity or anti-affinity",
                "persistent volume claims",
                "resource claims (dynamic resource allocation)",
                "host ports"
            ]
        );
        assert_eq!(
            message(&needs(&all)[..1]),
            "wasched does not model inter-pod affinity or anti-affinity: not scheduled (schedule this pod with kube-scheduler)"
        );
        let node_affinity_only = spec(
            "containers: [{name: a}]\naffinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: []}}",
        );
        assert!(needs(&node_affinity_only).is_empty());
    }
}
