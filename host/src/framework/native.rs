//! Plugins compiled into the host: an SDK plugin ([`wasched_sdk::Plugin`])
//! run natively behind the framework's [`Plugin`] trait, over a
//! [`SnapshotView`] that answers the SDK's [`Cluster`] questions from the
//! host's snapshot directly.
//!
//! This is the same decision logic a component runs, without the wasm
//! boundary: the baseline the benchmarks price the boundary against, and a
//! way to run real plugin logic in tests without compiling components.

use wasched_sdk::Cluster;
use wasched_sdk::types as sdk;

use super::facts;
use super::{
    Answer, ExtensionPoint, PermitVerdict, Placement, Placements, Plugin, PreemptionCandidate,
    Preemptor, Progress, Rejection, Status, Unit, VictimUnit,
};
use crate::model::identity::Kind;
use crate::model::{CompositePolicy, GroupId, NodeId, PodId, Policy, Snapshot};

/// The host's snapshot as the SDK's read-only [`Cluster`] view.
#[derive(Debug, Clone, Copy)]
pub struct SnapshotView<'a>(pub &'a Snapshot);

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn preemption_policy(never: bool) -> sdk::PreemptionPolicy {
    if never {
        sdk::PreemptionPolicy::Never
    } else {
        sdk::PreemptionPolicy::PreemptLowerPriority
    }
}

fn disruption_mode(all: bool) -> sdk::DisruptionMode {
    if all {
        sdk::DisruptionMode::All
    } else {
        sdk::DisruptionMode::Single
    }
}

impl SnapshotView<'_> {
    fn symbol(&self, text: &str) -> Option<u32> {
        self.0.symbols.lookup(text)
    }

    fn group_spec(&self, group: GroupId) -> Option<sdk::PodGroupSpec> {
        let info = self.0.groups.get(group as usize)?;
        let spec = info.spec.as_ref()?;
        Some(sdk::PodGroupSpec {
            policy: match spec.policy {
                Policy::Basic => sdk::SchedulingPolicy::Basic,
                Policy::Gang { min_count } => sdk::SchedulingPolicy::Gang(min_count),
            },
            priority: spec.priority,
            disruption_mode: disruption_mode(spec.disrupt_all),
            preemption_policy: preemption_policy(spec.never_preempt),
            topology_key: spec.topology_key.as_deref().and_then(|k| self.symbol(k)),
            parent: info.parent,
        })
    }

    /// A host placement as the SDK's (domain interned).
    pub fn placement(&self, placement: &Placement) -> sdk::Placement {
        sdk::Placement {
            name: placement.name.clone(),
            nodes: placement.nodes.clone(),
            domain: placement
                .domain
                .as_ref()
                .and_then(|(k, v)| Some((self.symbol(k)?, self.symbol(v)?))),
        }
    }

    /// An SDK placement as the host's (domain symbols resolved).
    pub fn placement_from(&self, placement: sdk::Placement) -> Placement {
        let text = |s: u32| self.0.symbols.text(s).map(str::to_string);
        Placement {
            name: placement.name,
            nodes: placement.nodes,
            domain: placement
                .domain
                .and_then(|(k, v)| Some((text(k)?, text(v)?))),
        }
    }
}

impl Cluster for SnapshotView<'_> {
    fn node_count(&self) -> u32 {
        count(self.0.nodes.len())
    }

    fn pod_count(&self) -> u32 {
        count(self.0.pods.len())
    }

    fn pod_group_count(&self) -> u32 {
        count(self.0.groups.len())
    }

    fn composite_count(&self) -> u32 {
        count(self.0.composites.len())
    }

    fn disruption_budget_count(&self) -> u32 {
        count(self.0.budgets.len())
    }

    fn resource_names(&self) -> Vec<String> {
        self.0.resource_names.to_vec()
    }

    fn allocatable(&self, resource: u32) -> Vec<u64> {
        self.0.allocatable(resource as usize).to_vec()
    }

    fn requested(&self, resource: u32) -> Vec<u64> {
        self.0.requested(resource as usize).to_vec()
    }

    fn lookup(&self, text: &str) -> Option<u32> {
        self.symbol(text)
    }

    fn symbol_text(&self, id: u32) -> String {
        self.0.symbols.text(id).unwrap_or_default().to_string()
    }

    fn node_name(&self, node: NodeId) -> String {
        self.0
            .nodes
            .get(node as usize)
            .map(|n| n.name.clone())
            .unwrap_or_default()
    }

    fn node_label_column(&self, key: u32) -> Vec<Option<u32>> {
        match self.0.label_column(key) {
            [] => vec![None; self.0.nodes.len()],
            column => column.to_vec(),
        }
    }

    fn pod(&self, pod: PodId) -> Option<sdk::PodInfo> {
        let p = self.0.pods.get(pod as usize)?;
        Some(sdk::PodInfo {
            namespace: self.symbol(&p.namespace).unwrap_or(u32::MAX),
            priority: p.priority,
            preemption_policy: preemption_policy(p.never_preempt),
            node: p.node,
            nominated_node: p.nominated_node,
            group: p.group,
            start_time: p.started,
            pending: p.pending,
        })
    }

    fn pod_name(&self, pod: PodId) -> String {
        self.0
            .pods
            .get(pod as usize)
            .map(|p| p.key.clone())
            .unwrap_or_default()
    }

    fn pod_labels(&self, pod: PodId) -> Vec<(u32, u32)> {
        self.0
            .pods
            .get(pod as usize)
            .into_iter()
            .flat_map(|p| p.labels.iter())
            .filter_map(|(k, v)| Some((self.symbol(k)?, self.symbol(v)?)))
            .collect()
    }

    fn pod_requests(&self, pod: PodId) -> Vec<u64> {
        self.0
            .pods
            .get(pod as usize)
            .map(|p| p.requests.clone())
            .unwrap_or_default()
    }

    fn pods_on_node(&self, node: NodeId) -> Vec<PodId> {
        self.0.pods_on_node(node).to_vec()
    }

    fn pod_group(&self, group: GroupId) -> Option<sdk::PodGroup> {
        let info = self.0.groups.get(group as usize)?;
        let pods = &self.0.pods;
        let pending = info
            .members
            .iter()
            .copied()
            .filter(|&p| pods[p as usize].pending && pods[p as usize].node.is_none())
            .collect();
        let mut bound: Vec<PodId> = info
            .members
            .iter()
            .copied()
            .filter(|&p| self.0.is_running(p))
            .collect();
        bound.sort_unstable();
        Some(sdk::PodGroup {
            id: group,
            name: info.key.clone(),
            spec: self.group_spec(group),
            pending,
            bound,
        })
    }

    fn pod_group_spec(&self, group: GroupId) -> Option<sdk::PodGroupSpec> {
        self.group_spec(group)
    }

    fn composite(&self, id: u32) -> Option<sdk::Composite> {
        let c = self.0.composites.get(id as usize)?;
        Some(sdk::Composite {
            id,
            name: c.key.clone(),
            spec: sdk::CompositeSpec {
                policy: match c.spec.policy {
                    CompositePolicy::Basic => sdk::CompositePolicy::Basic,
                    CompositePolicy::Gang { min_group_count } => {
                        sdk::CompositePolicy::Gang(min_group_count)
                    }
                },
                priority: c.spec.priority,
                disruption_mode: disruption_mode(c.spec.disrupt_all),
                preemption_policy: preemption_policy(c.spec.never_preempt),
                topology_key: c.spec.topology_key.as_deref().and_then(|k| self.symbol(k)),
                parent: c.parent,
            },
            child_groups: c.child_groups.clone(),
            child_composites: c.child_composites.clone(),
        })
    }

    fn disruption_budget(&self, id: u32) -> Option<sdk::DisruptionBudget> {
        self.0
            .budgets
            .get(id as usize)
            .map(|b| sdk::DisruptionBudget {
                name: b.key.clone(),
                pods: b.pods.clone(),
                disruptions_allowed: b.disruptions_allowed,
            })
    }

    fn generation(&self) -> u64 {
        self.0.identity().generation()
    }

    fn node_changes(&self) -> Vec<u64> {
        self.0.identity().node_changes().to_vec()
    }

    fn changed_nodes(&self, since: u64) -> Vec<NodeId> {
        let changes = self.0.identity().node_changes();
        (0..count(changes.len()))
            .filter(|&n| changes[n as usize] > since)
            .collect()
    }

    fn node_handles(&self) -> Vec<sdk::Handle> {
        let handles = self.0.identity().handles(Kind::Node);
        handles.iter().map(|&h| facts::handle(h)).collect()
    }

    fn handle_of(&self, kind: sdk::ObjectKind, id: u32) -> Result<sdk::Handle, sdk::LookupError> {
        let handle = self.0.identity().handle(facts::kind(kind), id);
        handle.map(facts::handle).map_err(facts::lookup_error)
    }

    fn resolve(&self, kind: sdk::ObjectKind, handle: sdk::Handle) -> Result<u32, sdk::LookupError> {
        let handle = crate::model::identity::Handle {
            slot: handle.slot,
            generation: handle.generation,
        };
        let id = self.0.identity().resolve(facts::kind(kind), handle);
        id.map_err(facts::lookup_error)
    }

    fn nodes_facts(&self, nodes: &[NodeId]) -> Result<Vec<sdk::NodeFacts>, sdk::LookupError> {
        facts::nodes_facts(self.0, nodes)
    }

    fn pod_facts(&self, pod: PodId) -> Result<sdk::PodFacts, sdk::LookupError> {
        facts::pod_facts(self.0, pod)
    }

    fn group_nodes_by_label(
        &self,
        key: u32,
        nodes: &[NodeId],
    ) -> Result<Vec<sdk::LabelDomain>, sdk::LookupError> {
        facts::group_nodes_by_label(self.0, key, nodes)
    }

    fn node_resources(
        &self,
        resources: &[u32],
        nodes: &[NodeId],
    ) -> Result<wasched_sdk::NodeResources, sdk::LookupError> {
        let amounts = facts::node_resources(self.0, resources, nodes)?;
        Ok(wasched_sdk::NodeResources::new(amounts, nodes.len()))
    }

    fn pod_disruption_budgets(&self, pod: PodId) -> Vec<u32> {
        self.0.pod_budgets(pod).to_vec()
    }
}

fn unit(unit: Unit) -> sdk::Unit {
    match unit {
        Unit::Group(g) => sdk::Unit::PodGroup(g),
        Unit::Composite(c) => sdk::Unit::Composite(c),
    }
}

fn preemptor(preemptor: Preemptor) -> sdk::Preemptor {
    match preemptor {
        Preemptor::Unit(u) => sdk::Preemptor::Unit(unit(u)),
        Preemptor::Pod(p) => sdk::Preemptor::Pod(p),
    }
}

fn victim(victim: &VictimUnit) -> sdk::VictimUnit {
    sdk::VictimUnit {
        index: victim.index,
        pods: victim.pods.clone(),
        group: victim.group,
        priority: victim.priority,
        start_time: victim.start_time,
        violates_budget: victim.violates_budget,
    }
}

fn assignments(assignments: &[(PodId, NodeId)]) -> Vec<sdk::Assignment> {
    assignments
        .iter()
        .map(|&(pod, node)| sdk::Assignment { pod, node })
        .collect()
}

/// An SDK plugin run natively at the extension points it is given.
pub struct NativePlugin<P> {
    plugin: P,
    points: Vec<ExtensionPoint>,
}

impl<P: wasched_sdk::Plugin> NativePlugin<P> {
    /// `plugin`, wired into `points` (those its `register_plugin!` names).
    pub fn new(plugin: P, points: &[ExtensionPoint]) -> Self {
        Self {
            plugin,
            points: points.to_vec(),
        }
    }
}

impl<P: wasched_sdk::Plugin> Plugin for NativePlugin<P> {
    fn name(&self) -> &str {
        P::NAME
    }

    fn points(&self) -> &[ExtensionPoint] {
        &self.points
    }

    fn pre_enqueue(&mut self, snapshot: &mut Snapshot, u: Unit) -> Answer<Status> {
        Ok(self.plugin.pre_enqueue(&SnapshotView(snapshot), unit(u)))
    }

    fn filter(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Answer<Vec<Rejection>> {
        let rejected = self.plugin.filter(&SnapshotView(snapshot), pod, nodes);
        Ok(rejected
            .into_iter()
            .map(|r| Rejection {
                reason: r.status.reason,
                nodes: r.nodes,
            })
            .collect())
    }

    fn score(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Answer<Result<Vec<i64>, Status>> {
        Ok(self.plugin.score(&SnapshotView(snapshot), pod, nodes))
    }

    fn permit(
        &mut self,
        snapshot: &mut Snapshot,
        u: Unit,
        progress: Progress,
    ) -> Answer<PermitVerdict> {
        let progress = sdk::Progress {
            scheduled: progress.scheduled,
            remaining: progress.remaining,
        };
        Ok(self
            .plugin
            .permit(&SnapshotView(snapshot), unit(u), progress))
    }

    fn generate_placements(
        &mut self,
        snapshot: &mut Snapshot,
        u: Unit,
        parent: &Placement,
    ) -> Answer<Result<Placements, Status>> {
        let view = SnapshotView(snapshot);
        let generated = self
            .plugin
            .generate_placements(&view, unit(u), &view.placement(parent));
        Ok(generated.map(|p| Placements {
            candidates: p
                .candidates
                .into_iter()
                .map(|c| view.placement_from(c))
                .collect(),
            search_budget: p.search_budget,
            reusable: p.reusable,
        }))
    }

    fn score_placement(
        &mut self,
        snapshot: &mut Snapshot,
        u: Unit,
        placement: &Placement,
        assigned: &[(PodId, NodeId)],
    ) -> Answer<Result<i64, Status>> {
        let view = SnapshotView(snapshot);
        Ok(self.plugin.score_placement(
            &view,
            unit(u),
            &view.placement(placement),
            &assignments(assigned),
        ))
    }

    fn order_victims(
        &mut self,
        snapshot: &mut Snapshot,
        who: Preemptor,
        units: &[VictimUnit],
    ) -> Answer<Result<Vec<u32>, Status>> {
        let units: Vec<sdk::VictimUnit> = units.iter().map(victim).collect();
        Ok(self
            .plugin
            .order_victims(&SnapshotView(snapshot), preemptor(who), &units))
    }

    fn select_candidate(
        &mut self,
        snapshot: &mut Snapshot,
        who: Preemptor,
        candidates: &[PreemptionCandidate],
    ) -> Answer<Result<u32, Status>> {
        let candidates: Vec<sdk::PreemptionCandidate> = candidates
            .iter()
            .map(|c| sdk::PreemptionCandidate {
                index: c.index,
                domain: c.domain.clone(),
                victims: c.victims.iter().map(victim).collect(),
                assignments: assignments(&c.assignments),
            })
            .collect();
        Ok(self
            .plugin
            .select_candidate(&SnapshotView(snapshot), preemptor(who), &candidates))
    }
}
