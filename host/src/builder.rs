//! Builders for the objects a snapshot holds — the Rust counterpart of
//! Kubernetes' Go `workloadbuilder` — that validate as the API server would:
//! DNS-label names, `minCount`/`minGroupCount` ≥ 1, at most 8 PodGroup
//! templates per Workload with unique names, valid quantities, taint effects
//! and a CompositePodGroup hierarchy of depth ≤ 4 without cycles.
//!
//! ```
//! use wasched::builder::{NodeBuilder, PodBuilder, PodGroupBuilder};
//!
//! let node = NodeBuilder::new("gpu-0").cpu("96").memory("1Ti").gpus(8).label("rack", "r1").build()?;
//! let group = PodGroupBuilder::new("ml", "trainer").gang(4).topology("rack").build()?;
//! let pod = PodBuilder::new("ml", "trainer-0").cpu("8").gpus(8).group("trainer").build()?;
//! assert!(PodGroupBuilder::new("ml", "Bad_Name").gang(1).build().is_err());
//! # anyhow::Ok(())
//! ```

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use k8s_openapi::api::core::v1::{
    Container, Node, NodeSpec, NodeStatus, Pod, PodSchedulingGroup, PodSpec, ResourceRequirements,
    Taint, Toleration,
};
use k8s_openapi::api::scheduling::v1alpha3::{self as alpha, CompositePodGroup};
use k8s_openapi::api::scheduling::v1beta1::{
    AllDisruptionMode, BasicSchedulingPolicy, CompositeBasicSchedulingPolicy,
    CompositeGangSchedulingPolicy, CompositePodGroupSchedulingPolicy, CompositePodGroupTemplate,
    DisruptionMode, GangSchedulingPolicy, PodGroup, PodGroupSchedulingConstraints,
    PodGroupSchedulingPolicy, PodGroupSpec, PodGroupTemplate, TopologyConstraint,
    TypedLocalObjectReference, Workload, WorkloadReference, WorkloadSpec,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde_json::json;

use crate::manifest::quantity;
use crate::model::composite::{Member, validate};

/// Most PodGroup templates one Workload may hold.
pub const MAX_TEMPLATES: usize = 8;
pub use crate::model::composite::MAX_DEPTH;

/// An RFC 1123 DNS label: lowercase alphanumerics and `-`, 1–63 characters,
/// starting and ending alphanumeric.
pub fn check_dns_label(what: &str, field: &str, name: &str) -> Result<()> {
    let ok = (1..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !ok {
        bail!(
            "{what}: field {field}: {name:?} is not a DNS label (lowercase letters, digits and '-', at most 63 characters)"
        );
    }
    Ok(())
}

/// An RFC 1123 DNS subdomain: dot-separated DNS labels, at most 253 characters.
pub fn check_dns_subdomain(what: &str, field: &str, name: &str) -> Result<()> {
    if name.len() > 253
        || name
            .split('.')
            .any(|label| check_dns_label(what, field, label).is_err())
    {
        bail!("{what}: field {field}: {name:?} is not a DNS subdomain");
    }
    Ok(())
}

fn meta(namespace: Option<&str>, name: &str, created: Option<i64>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        creation_timestamp: created
            .and_then(|s| k8s_openapi::jiff::Timestamp::from_second(s).ok())
            .map(Time),
        ..Default::default()
    }
}

fn check_quantities(
    what: &str,
    field: &str,
    quantities: &BTreeMap<String, Quantity>,
) -> Result<()> {
    for (resource, q) in quantities {
        if let Err(e) = quantity::Quantity::parse(&q.0) {
            bail!("{what}: field {field}.{resource}: {e}");
        }
    }
    Ok(())
}

/// Builds a `v1 Node`.
#[derive(Debug, Clone)]
pub struct NodeBuilder {
    node: Node,
    allocatable: BTreeMap<String, Quantity>,
}

impl NodeBuilder {
    /// A node named `name` with the `kubernetes.io/hostname` label.
    pub fn new(name: &str) -> Self {
        let mut node = Node {
            metadata: meta(None, name, None),
            ..Default::default()
        };
        node.metadata.labels =
            Some([("kubernetes.io/hostname".to_string(), name.to_string())].into());
        Self {
            node,
            allocatable: BTreeMap::new(),
        }
    }

    /// Sets a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.node
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(key.into(), value.into());
        self
    }

    /// Sets `status.allocatable` (and capacity) of `resource`.
    pub fn allocatable(mut self, resource: &str, quantity: &str) -> Self {
        self.allocatable
            .insert(resource.into(), Quantity(quantity.into()));
        self
    }

    /// Allocatable cpu.
    pub fn cpu(self, quantity: &str) -> Self {
        self.allocatable("cpu", quantity)
    }

    /// Allocatable memory.
    pub fn memory(self, quantity: &str) -> Self {
        self.allocatable("memory", quantity)
    }

    /// `nvidia.com/gpu` devices.
    pub fn gpus(self, count: u32) -> Self {
        self.allocatable("nvidia.com/gpu", &count.to_string())
    }

    /// Adds a taint (`NoSchedule`, `PreferNoSchedule` or `NoExecute`).
    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        let taint = Taint {
            key: key.into(),
            value: Some(value.into()),
            effect: effect.into(),
            time_added: None,
        };
        self.node
            .spec
            .get_or_insert_with(NodeSpec::default)
            .taints
            .get_or_insert_with(Vec::new)
            .push(taint);
        self
    }

    /// Cordons the node (`spec.unschedulable`).
    pub fn unschedulable(mut self) -> Self {
        self.node
            .spec
            .get_or_insert_with(NodeSpec::default)
            .unschedulable = Some(true);
        self
    }

    /// Validates and returns the node.
    pub fn build(mut self) -> Result<Node> {
        let name = self.node.metadata.name.clone().unwrap_or_default();
        let what = format!("Node {name}");
        check_dns_subdomain(&what, "metadata.name", &name)?;
        check_quantities(&what, "status.allocatable", &self.allocatable)?;
        for (i, t) in self
            .node
            .spec
            .iter()
            .flat_map(|s| s.taints.iter().flatten())
            .enumerate()
        {
            if !matches!(
                t.effect.as_str(),
                "NoSchedule" | "PreferNoSchedule" | "NoExecute"
            ) {
                bail!(
                    "{what}: field spec.taints[{i}].effect: {:?} is not NoSchedule, PreferNoSchedule or NoExecute",
                    t.effect
                );
            }
        }
        self.allocatable
            .entry("pods".into())
            .or_insert_with(|| Quantity("110".into()));
        self.node.status = Some(NodeStatus {
            capacity: Some(self.allocatable.clone()),
            allocatable: Some(self.allocatable),
            ..Default::default()
        });
        Ok(self.node)
    }
}

/// Builds a `v1 Pod` with one container.
#[derive(Debug, Clone)]
pub struct PodBuilder {
    pod: Pod,
    requests: BTreeMap<String, Quantity>,
    limits: BTreeMap<String, Quantity>,
}

impl PodBuilder {
    /// A pending pod `namespace/name`.
    pub fn new(namespace: &str, name: &str) -> Self {
        let pod = Pod {
            metadata: meta(Some(namespace), name, None),
            spec: Some(PodSpec::default()),
            status: None,
        };
        Self {
            pod,
            requests: BTreeMap::new(),
            limits: BTreeMap::new(),
        }
    }

    fn spec(&mut self) -> &mut PodSpec {
        self.pod.spec.get_or_insert_with(PodSpec::default)
    }

    /// Requests `quantity` of `resource`.
    pub fn request(mut self, resource: &str, quantity: &str) -> Self {
        self.requests
            .insert(resource.into(), Quantity(quantity.into()));
        self
    }

    /// Limits `resource` to `quantity` (for an extended resource, which
    /// cannot be overcommitted, the request must equal it).
    pub fn limit(mut self, resource: &str, quantity: &str) -> Self {
        self.limits
            .insert(resource.into(), Quantity(quantity.into()));
        self
    }

    /// Requests cpu.
    pub fn cpu(self, quantity: &str) -> Self {
        self.request("cpu", quantity)
    }

    /// Requests memory.
    pub fn memory(self, quantity: &str) -> Self {
        self.request("memory", quantity)
    }

    /// Asks for `nvidia.com/gpu` devices (as a limit, the way device plugins
    /// are used; requests default to it).
    pub fn gpus(mut self, count: u32) -> Self {
        self.limits
            .insert("nvidia.com/gpu".into(), Quantity(count.to_string()));
        self
    }

    /// Joins PodGroup `name` (`spec.schedulingGroup.podGroupName`).
    pub fn group(mut self, name: &str) -> Self {
        self.spec().scheduling_group = Some(PodSchedulingGroup {
            pod_group_name: Some(name.into()),
        });
        self
    }

    /// `spec.priorityClassName`.
    pub fn priority_class(mut self, name: &str) -> Self {
        self.spec().priority_class_name = Some(name.into());
        self
    }

    /// `spec.priority`.
    pub fn priority(mut self, priority: i32) -> Self {
        self.spec().priority = Some(priority);
        self
    }

    /// Tolerates any taint with `key` (operator `Exists`).
    pub fn tolerate(mut self, key: &str) -> Self {
        let toleration = Toleration {
            key: Some(key.into()),
            operator: Some("Exists".into()),
            ..Default::default()
        };
        self.spec()
            .tolerations
            .get_or_insert_with(Vec::new)
            .push(toleration);
        self
    }

    /// Adds a `spec.nodeSelector` entry.
    pub fn node_selector(mut self, key: &str, value: &str) -> Self {
        self.spec()
            .node_selector
            .get_or_insert_with(Default::default)
            .insert(key.into(), value.into());
        self
    }

    /// Requires a node whose label `key` has one of `values` (required
    /// node affinity, operator `In`; each call adds a requirement to the
    /// one term, so all must hold).
    pub fn node_affinity_in(mut self, key: &str, values: &[String]) -> Self {
        use k8s_openapi::api::core::v1::{
            Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
        };
        let required = self
            .spec()
            .affinity
            .get_or_insert_with(Affinity::default)
            .node_affinity
            .get_or_insert_with(NodeAffinity::default)
            .required_during_scheduling_ignored_during_execution
            .get_or_insert_with(NodeSelector::default);
        if required.node_selector_terms.is_empty() {
            required
                .node_selector_terms
                .push(NodeSelectorTerm::default());
        }
        required.node_selector_terms[0]
            .match_expressions
            .get_or_insert_with(Vec::new)
            .push(NodeSelectorRequirement {
                key: key.into(),
                operator: "In".into(),
                values: Some(values.to_vec()),
            });
        self
    }

    /// Sets a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.pod
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(key.into(), value.into());
        self
    }

    /// Makes it a running pod on `node` (`spec.nodeName`, phase Running).
    pub fn running_on(mut self, node: &str) -> Self {
        self.spec().node_name = Some(node.into());
        self.pod.status = Some(k8s_openapi::api::core::v1::PodStatus {
            phase: Some("Running".into()),
            ..Default::default()
        });
        self
    }

    /// `metadata.creationTimestamp` as Unix seconds.
    pub fn created_at(mut self, seconds: i64) -> Self {
        self.pod.metadata.creation_timestamp = meta(None, "", Some(seconds)).creation_timestamp;
        self
    }

    /// Validates and returns the pod.
    pub fn build(mut self) -> Result<Pod> {
        let what = format!(
            "Pod {}/{}",
            self.pod.metadata.namespace.as_deref().unwrap_or_default(),
            self.pod.metadata.name.as_deref().unwrap_or_default()
        );
        check_dns_label(
            &what,
            "metadata.namespace",
            self.pod.metadata.namespace.as_deref().unwrap_or_default(),
        )?;
        check_dns_subdomain(
            &what,
            "metadata.name",
            self.pod.metadata.name.as_deref().unwrap_or_default(),
        )?;
        check_quantities(
            &what,
            "spec.containers[0].resources.requests",
            &self.requests,
        )?;
        check_quantities(&what, "spec.containers[0].resources.limits", &self.limits)?;
        let resources = ResourceRequirements {
            requests: (!self.requests.is_empty()).then_some(self.requests),
            limits: (!self.limits.is_empty()).then_some(self.limits),
            claims: None,
        };
        let container = Container {
            name: "main".into(),
            image: Some("busybox".into()),
            resources: Some(resources),
            ..Default::default()
        };
        self.pod
            .spec
            .get_or_insert_with(PodSpec::default)
            .containers = vec![container];
        Ok(self.pod)
    }
}

/// Builds a `scheduling.k8s.io/v1beta1 PodGroup`.
#[derive(Debug, Clone)]
pub struct PodGroupBuilder {
    group: PodGroup,
    min_count: Option<i32>,
}

impl PodGroupBuilder {
    /// A `basic` PodGroup `namespace/name`; call [`Self::gang`] for a gang.
    pub fn new(namespace: &str, name: &str) -> Self {
        let group = PodGroup {
            metadata: meta(Some(namespace), name, None),
            spec: PodGroupSpec::default(),
            status: None,
        };
        Self {
            group,
            min_count: None,
        }
    }

    /// `schedulingPolicy.gang.minCount`.
    pub fn gang(mut self, min_count: i32) -> Self {
        self.min_count = Some(min_count);
        self
    }

    /// `schedulingConstraints.topology[0].key`.
    pub fn topology(mut self, key: &str) -> Self {
        self.group.spec.scheduling_constraints = Some(PodGroupSchedulingConstraints {
            topology: Some(vec![TopologyConstraint { key: key.into() }]),
        });
        self
    }

    /// `priorityClassName`.
    pub fn priority_class(mut self, name: &str) -> Self {
        self.group.spec.priority_class_name = Some(name.into());
        self
    }

    /// `priority`.
    pub fn priority(mut self, priority: i32) -> Self {
        self.group.spec.priority = Some(priority);
        self
    }

    /// `disruptionMode: {all: {}}`: preempted as a whole.
    pub fn disrupt_all(mut self) -> Self {
        self.group.spec.disruption_mode = Some(DisruptionMode {
            all: Some(AllDisruptionMode(json!({}))),
            single: None,
        });
        self
    }

    /// `preemptionPolicy: Never`.
    pub fn never_preempt(mut self) -> Self {
        self.group.spec.preemption_policy = Some("Never".into());
        self
    }

    /// `parentCompositePodGroupName`.
    pub fn parent(mut self, composite: &str) -> Self {
        self.group.spec.parent_composite_pod_group_name = Some(composite.into());
        self
    }

    /// `workloadRef`.
    pub fn workload(mut self, workload: &str, template: &str) -> Self {
        self.group.spec.workload_ref = Some(WorkloadReference {
            workload_name: workload.into(),
            template_name: template.into(),
        });
        self
    }

    /// `metadata.creationTimestamp` as Unix seconds.
    pub fn created_at(mut self, seconds: i64) -> Self {
        self.group.metadata.creation_timestamp = meta(None, "", Some(seconds)).creation_timestamp;
        self
    }

    /// Validates and returns the PodGroup.
    pub fn build(mut self) -> Result<PodGroup> {
        let ns = self.group.metadata.namespace.clone().unwrap_or_default();
        let name = self.group.metadata.name.clone().unwrap_or_default();
        let what = format!("PodGroup {ns}/{name}");
        check_dns_label(&what, "metadata.namespace", &ns)?;
        check_dns_label(&what, "metadata.name", &name)?;
        self.group.spec.scheduling_policy = policy(&what, "spec.schedulingPolicy", self.min_count)?;
        if self.group.spec.parent_composite_pod_group_name.is_some()
            && self.group.spec.workload_ref.is_none()
        {
            bail!(
                "{what}: field spec.workloadRef: required: must be set when parentCompositePodGroupName is set"
            );
        }
        if let Some(priority) = self.group.spec.priority
            && priority > 1_000_000_000
        {
            bail!(
                "{what}: field spec.priority: {priority} is above 1000000000 (reserved for system priority classes)"
            );
        }
        Ok(self.group)
    }
}

fn policy(what: &str, field: &str, min_count: Option<i32>) -> Result<PodGroupSchedulingPolicy> {
    Ok(match min_count {
        None => PodGroupSchedulingPolicy {
            basic: Some(BasicSchedulingPolicy(json!({}))),
            gang: None,
        },
        Some(n) if n >= 1 => PodGroupSchedulingPolicy {
            basic: None,
            gang: Some(GangSchedulingPolicy { min_count: n }),
        },
        Some(n) => bail!("{what}: field {field}.gang.minCount: must be at least 1, got {n}"),
    })
}

/// A template: its name and `minCount` (`None`: basic).
type Template = (String, Option<i32>);

/// A CompositePodGroup template: name, `minGroupCount` (`None`: basic) and
/// its PodGroup templates.
type CompositeTemplate = (String, Option<i32>, Vec<Template>);

/// Builds a `scheduling.k8s.io/v1beta1 Workload`.
#[derive(Debug, Clone)]
pub struct WorkloadBuilder {
    workload: Workload,
    templates: Vec<Template>,
    composites: Vec<CompositeTemplate>,
}

impl WorkloadBuilder {
    /// A Workload `namespace/name`.
    pub fn new(namespace: &str, name: &str) -> Self {
        let workload = Workload {
            metadata: meta(Some(namespace), name, None),
            spec: WorkloadSpec::default(),
        };
        Self {
            workload,
            templates: Vec::new(),
            composites: Vec::new(),
        }
    }

    /// `controllerRef` (e.g. `batch`, `Job`, name).
    pub fn controller(mut self, api_group: &str, kind: &str, name: &str) -> Self {
        self.workload.spec.controller_ref = Some(TypedLocalObjectReference {
            api_group: Some(api_group.into()),
            kind: kind.into(),
            name: name.into(),
        });
        self
    }

    /// Adds a PodGroup template; `min_count` `None` means `basic`.
    pub fn template(mut self, name: &str, min_count: Option<i32>) -> Self {
        self.templates.push((name.into(), min_count));
        self
    }

    /// Adds a CompositePodGroup template (`min_group_count` `None` means
    /// `basic`) with PodGroup templates as its children.
    pub fn composite_template(
        mut self,
        name: &str,
        min_group_count: Option<i32>,
        children: &[(&str, Option<i32>)],
    ) -> Self {
        let children = children.iter().map(|(n, m)| (n.to_string(), *m)).collect();
        self.composites
            .push((name.into(), min_group_count, children));
        self
    }

    /// Validates and returns the Workload.
    pub fn build(mut self) -> Result<Workload> {
        let ns = self.workload.metadata.namespace.clone().unwrap_or_default();
        let name = self.workload.metadata.name.clone().unwrap_or_default();
        let what = format!("Workload {ns}/{name}");
        check_dns_label(&what, "metadata.namespace", &ns)?;
        check_dns_label(&what, "metadata.name", &name)?;
        let count = self.templates.len()
            + self
                .composites
                .iter()
                .map(|(_, _, children)| 1 + children.len())
                .sum::<usize>();
        if count == 0 || count > MAX_TEMPLATES {
            bail!(
                "{what}: field spec.podGroupTemplates: must have 1 to {MAX_TEMPLATES} templates, got {count}"
            );
        }
        let mut names: Vec<String> = Vec::new();
        let mut templates =
            |list: &[(String, Option<i32>)], field: &str| -> Result<Vec<PodGroupTemplate>> {
                let mut templates = Vec::new();
                for (i, (template, min_count)) in list.iter().enumerate() {
                    let field = format!("{field}[{i}]");
                    check_dns_label(&what, &format!("{field}.name"), template)?;
                    if names.contains(template) {
                        bail!("{what}: field {field}.name: {template:?} is used twice");
                    }
                    names.push(template.clone());
                    templates.push(PodGroupTemplate {
                        name: template.clone(),
                        scheduling_policy: policy(
                            &what,
                            &format!("{field}.schedulingPolicy"),
                            *min_count,
                        )?,
                        ..Default::default()
                    });
                }
                Ok(templates)
            };
        let plain = templates(&self.templates, "spec.podGroupTemplates")?;
        let mut composites = Vec::new();
        for (i, (template, min_group_count, children)) in self.composites.iter().enumerate() {
            let field = format!("spec.compositePodGroupTemplates[{i}]");
            check_dns_label(&what, &format!("{field}.name"), template)?;
            if children.is_empty() {
                bail!(
                    "{what}: field {field}: must have at least one child PodGroupTemplate or CompositePodGroupTemplate"
                );
            }
            let scheduling_policy = match min_group_count {
                None => CompositePodGroupSchedulingPolicy {
                    basic: Some(CompositeBasicSchedulingPolicy(json!({}))),
                    gang: None,
                },
                Some(n) if *n >= 1 => CompositePodGroupSchedulingPolicy {
                    basic: None,
                    gang: Some(CompositeGangSchedulingPolicy {
                        min_group_count: *n,
                    }),
                },
                Some(n) => bail!(
                    "{what}: field {field}.schedulingPolicy.gang.minGroupCount: must be at least 1, got {n}"
                ),
            };
            composites.push(CompositePodGroupTemplate {
                name: template.clone(),
                scheduling_policy,
                pod_group_templates: Some(templates(
                    children,
                    &format!("{field}.podGroupTemplates"),
                )?),
                ..Default::default()
            });
        }
        self.workload.spec.pod_group_templates = (!plain.is_empty()).then_some(plain);
        self.workload.spec.composite_pod_group_templates =
            (!composites.is_empty()).then_some(composites);
        Ok(self.workload)
    }
}

/// Builds a `scheduling.k8s.io/v1alpha3 CompositePodGroup`.
#[derive(Debug, Clone)]
pub struct CompositePodGroupBuilder {
    composite: CompositePodGroup,
    min_group_count: Option<i32>,
}

impl CompositePodGroupBuilder {
    /// A `basic` CompositePodGroup `namespace/name` of Workload `workload`
    /// (template `template`).
    pub fn new(namespace: &str, name: &str, workload: &str, template: &str) -> Self {
        let mut composite = CompositePodGroup {
            metadata: meta(Some(namespace), name, None),
            ..Default::default()
        };
        composite.spec.workload_ref = alpha::WorkloadReference {
            workload_name: workload.into(),
            template_name: template.into(),
        };
        Self {
            composite,
            min_group_count: None,
        }
    }

    /// `schedulingPolicy.gang.minGroupCount`.
    pub fn gang(mut self, min_group_count: i32) -> Self {
        self.min_group_count = Some(min_group_count);
        self
    }

    /// `schedulingConstraints.topology[0].key`.
    pub fn topology(mut self, key: &str) -> Self {
        self.composite.spec.scheduling_constraints =
            Some(alpha::CompositePodGroupSchedulingConstraints {
                topology: Some(vec![alpha::TopologyConstraint { key: key.into() }]),
            });
        self
    }

    /// `parentCompositePodGroupName`.
    pub fn parent(mut self, composite: &str) -> Self {
        self.composite.spec.parent_composite_pod_group_name = Some(composite.into());
        self
    }

    /// `priorityClassName`.
    pub fn priority_class(mut self, name: &str) -> Self {
        self.composite.spec.priority_class_name = Some(name.into());
        self
    }

    /// `metadata.creationTimestamp` as Unix seconds.
    pub fn created_at(mut self, seconds: i64) -> Self {
        self.composite.metadata.creation_timestamp =
            meta(None, "", Some(seconds)).creation_timestamp;
        self
    }

    /// Validates and returns the CompositePodGroup.
    pub fn build(mut self) -> Result<CompositePodGroup> {
        let ns = self
            .composite
            .metadata
            .namespace
            .clone()
            .unwrap_or_default();
        let name = self.composite.metadata.name.clone().unwrap_or_default();
        let what = format!("CompositePodGroup {ns}/{name}");
        check_dns_label(&what, "metadata.namespace", &ns)?;
        check_dns_label(&what, "metadata.name", &name)?;
        self.composite.spec.scheduling_policy = match self.min_group_count {
            None => alpha::CompositePodGroupSchedulingPolicy {
                basic: Some(alpha::CompositeBasicSchedulingPolicy(json!({}))),
                gang: None,
            },
            Some(n) if n >= 1 => alpha::CompositePodGroupSchedulingPolicy {
                basic: None,
                gang: Some(alpha::CompositeGangSchedulingPolicy { min_group_count: n }),
            },
            Some(n) => bail!(
                "{what}: field spec.schedulingPolicy.gang.minGroupCount: must be at least 1, got {n}"
            ),
        };
        Ok(self.composite)
    }
}

/// Checks a CompositePodGroup hierarchy as the scheduler does (the rules of
/// [`crate::model::composite::validate`]): every parent exists in the same
/// namespace, no cycles, depth (PodGroups included) at most [`MAX_DEPTH`],
/// one Workload per tree. The first problem is the error.
pub fn check_hierarchy(composites: &[CompositePodGroup], groups: &[PodGroup]) -> Result<()> {
    let key = |meta: &ObjectMeta| {
        format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default()
        )
    };
    let mut members: Vec<Member> = composites
        .iter()
        .map(|c| Member {
            kind: "CompositePodGroup",
            key: key(&c.metadata),
            parent: c.spec.parent_composite_pod_group_name.clone(),
            workload: Some(c.spec.workload_ref.workload_name.clone()),
        })
        .collect();
    members.extend(groups.iter().map(|g| {
        Member {
            kind: "PodGroup",
            key: key(&g.metadata),
            parent: g.spec.parent_composite_pod_group_name.clone(),
            workload: g
                .spec
                .workload_ref
                .as_ref()
                .map(|w| w.workload_name.clone()),
        }
    }));
    match validate(&members).into_iter().next() {
        Some((i, problem)) => bail!(
            "{} {}: field spec.parentCompositePodGroupName: {problem}",
            members[i].kind,
            members[i].key
        ),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_like_the_api_server() {
        let cases: Vec<(Result<()>, &str)> = vec![
            (
                PodGroupBuilder::new("ml", "g").gang(0).build().map(drop),
                "PodGroup ml/g: field spec.schedulingPolicy.gang.minCount: must be at least 1, got 0",
            ),
            (
                PodGroupBuilder::new("ml", "UPPER").build().map(drop),
                "field metadata.name: \"UPPER\" is not a DNS label",
            ),
            (
                PodGroupBuilder::new("ml", &"a".repeat(64))
                    .build()
                    .map(drop),
                "is not a DNS label",
            ),
            (
                PodGroupBuilder::new("ml", "g")
                    .priority(2_000_000_000)
                    .build()
                    .map(drop),
                "field spec.priority",
            ),
            (
                (0..9)
                    .fold(WorkloadBuilder::new("ml", "w"), |b, i| {
                        b.template(&format!("t{i}"), Some(1))
                    })
                    .build()
                    .map(drop),
                "field spec.podGroupTemplates: must have 1 to 8 templates, got 9",
            ),
            (
                WorkloadBuilder::new("ml", "w")
                    .template("a", None)
                    .template("a", Some(2))
                    .build()
                    .map(drop),
                "spec.podGroupTemplates[1].name: \"a\" is used twice",
            ),
            (
                WorkloadBuilder::new("ml", "w")
                    .template("a", Some(-1))
                    .build()
                    .map(drop),
                "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount",
            ),
            (
                CompositePodGroupBuilder::new("ml", "c", "w", "t")
                    .gang(0)
                    .build()
                    .map(drop),
                "minGroupCount: must be at least 1",
            ),
            (
                NodeBuilder::new("n").cpu("lots").build().map(drop),
                "Node n: field status.allocatable.cpu: invalid quantity",
            ),
            (
                NodeBuilder::new("n")
                    .taint("k", "v", "Sometimes")
                    .build()
                    .map(drop),
                "field spec.taints[0].effect",
            ),
            (
                PodBuilder::new("ml", "p").memory("1 Gi").build().map(drop),
                "Pod ml/p: field spec.containers[0].resources.requests.memory",
            ),
            (
                PodBuilder::new("Bad", "p").build().map(drop),
                "field metadata.namespace",
            ),
        ];
        for (result, expected) in cases {
            let err = result.expect_err(expected).to_string();
            assert!(err.contains(expected), "{err} lacks {expected}");
        }
        assert!(
            PodGroupBuilder::new("ml", "g-1")
                .gang(3)
                .topology("rack")
                .disrupt_all()
                .build()
                .is_ok()
        );
        assert!(
            WorkloadBuilder::new("ml", "w")
                .template("a", None)
                .template("b", Some(2))
                .build()
                .is_ok()
        );
    }

    #[test]
    fn hierarchies_are_at_most_four_deep_and_acyclic() {
        let cpg = |name: &str, parent: Option<&str>| {
            let b = CompositePodGroupBuilder::new("ml", name, "w", "t");
            parent.map_or(b.clone(), |p| b.parent(p)).build().unwrap()
        };
        let leaf = |parent: &str| {
            PodGroupBuilder::new("ml", "leaf")
                .parent(parent)
                .workload("w", "t")
                .build()
                .unwrap()
        };
        let orphan = PodGroupBuilder::new("ml", "leaf").parent("a").build();
        assert!(
            orphan.unwrap_err().to_string().contains(
                "field spec.workloadRef: required: must be set when parentCompositePodGroupName is set"
            ),
            "the API server's rule"
        );
        let three = [cpg("a", None), cpg("b", Some("a")), cpg("c", Some("b"))];
        assert!(
            check_hierarchy(&three, &[leaf("c")]).is_ok(),
            "depth 4 with the PodGroup"
        );
        let four = [
            cpg("a", None),
            cpg("b", Some("a")),
            cpg("c", Some("b")),
            cpg("d", Some("c")),
        ];
        let err = check_hierarchy(&four, &[leaf("d")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("deeper than 4 levels"), "{err}");
        let cycle = [cpg("a", Some("b")), cpg("b", Some("a"))];
        assert!(
            check_hierarchy(&cycle, &[])
                .unwrap_err()
                .to_string()
                .contains("cycle")
        );
        let err = check_hierarchy(&[], &[leaf("ghost")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("CompositePodGroup ml/ghost does not exist"),
            "{err}"
        );
    }
}
