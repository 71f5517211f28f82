//! Which cluster events requeue an unschedulable pod: the events the
//! plugins that rejected it registered, asked through their queueing
//! hints, as kube-scheduler v1.37.2's `isPodWorthRequeuing` does.
//!
//! - A pod no plugin rejected (a plugin failed instead) does not wait for
//!   an event: the queue retries it after its backoff
//!   ([`super::queue::Queue::failed`]); were it waiting, any event would
//!   move it.
//! - The in-tree filters' registrations of pod events
//!   (`EventsToRegister` in `pkg/scheduler/framework/plugins`):
//!   `NodeResourcesFit` — an assigned pod deleted (the replay makes that
//!   event only for a pod that held a node or a nomination, which its hint
//!   queues); `PodTopologySpread` and `InterPodAffinity` — an assigned pod
//!   added or deleted (their hints compare the pod with the rejected pod's
//!   constraints; the replay queues). `NodeUnschedulable`,
//!   `TaintToleration` and `NodeAffinity` register node events only, and
//!   the replay's nodes never change.
//! - Components: `kube/wasmplugin/events.json`, the table kube-scheduler's
//!   wasched plugin registers from, embedded here.
//!
//! An event that a nominated pod's deletion makes moves only pods of at
//! most its priority (`getLEPriorityPreCheck`).

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::filters::{InTree, Rejectors};
use crate::framework::PluginSet;

/// The table both kube-scheduler's wasched plugin and the replay read.
const COMPONENT_EVENTS: &str = include_str!("../../../kube/wasmplugin/events.json");

/// What an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// A pod with a node.
    AssignedPod,
    /// A pod without one.
    UnscheduledPod,
    /// A `scheduling.k8s.io` PodGroup.
    PodGroup,
}

/// What happened to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Created (a pod: or bound).
    Add,
    /// Changed (a victim's deletion begun).
    Update,
    /// Deleted (a pod: or ended).
    Delete,
}

/// One cluster event of the replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// What it is about.
    pub resource: Resource,
    /// What happened.
    pub action: Action,
    /// The pod's PodGroup, or the PodGroup (`namespace/name`).
    pub group: Option<String>,
    /// Only pods of at most this priority may move.
    pub at_most_priority: Option<i32>,
}

impl Event {
    /// `action` on a pod of `group` (assigned or not).
    pub fn pod(resource: Resource, action: Action, group: Option<String>) -> Self {
        Self {
            resource,
            action,
            group,
            at_most_priority: None,
        }
    }
}

/// A pod waiting with the unschedulable pods, as the hints read it.
#[derive(Debug, Clone, Copy)]
pub struct Waiting<'a> {
    /// The plugins that rejected it.
    pub rejectors: &'a Rejectors,
    /// Its PodGroup (`namespace/name`), if any.
    pub group: Option<&'a str>,
    /// Its priority.
    pub priority: i32,
}

/// A queueing hint the table may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hint {
    /// Always queue.
    Queue,
    /// Queue for a pod of the waiting pod's own PodGroup.
    SameGroupPod,
    /// Queue for the waiting pod's own PodGroup.
    OwnPodGroup,
}

/// One registration: the resources and actions it matches, and its hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Registration {
    assigned: bool,
    unscheduled: bool,
    pod_group: bool,
    /// Bits: 1 add, 2 update, 4 delete.
    actions: u8,
    hint: Hint,
}

impl Registration {
    fn matches(&self, event: &Event) -> bool {
        let resource = match event.resource {
            Resource::AssignedPod => self.assigned,
            Resource::UnscheduledPod => self.unscheduled,
            Resource::PodGroup => self.pod_group,
        };
        resource && self.actions & action_bit(event.action) != 0
    }

    fn queues(&self, waiting: &Waiting, event: &Event) -> bool {
        match self.hint {
            Hint::Queue => true,
            Hint::SameGroupPod | Hint::OwnPodGroup => {
                waiting.group.is_some() && waiting.group == event.group.as_deref()
            }
        }
    }
}

fn action_bit(action: Action) -> u8 {
    match action {
        Action::Add => 1,
        Action::Update => 2,
        Action::Delete => 4,
    }
}

/// A row of `events.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    resource: String,
    actions: Vec<String>,
    #[serde(default)]
    hint: Option<String>,
}

/// `events.json`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Table {
    #[allow(dead_code)]
    about: String,
    node_level_points: Vec<String>,
    node_level: Vec<Row>,
    gate_only: Vec<Row>,
}

/// Reads rows as registrations, naming what cannot be mapped.
fn registrations(rows: &[Row]) -> Result<Vec<Registration>> {
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            let (assigned, unscheduled, pod_group) = match row.resource.as_str() {
                "Pod" => (true, true, false),
                "AssignedPod" => (true, false, false),
                "UnscheduledPod" => (false, true, false),
                "scheduling.k8s.io/PodGroup" => (false, false, true),
                // Events the replay never makes.
                "Node" | "TargetPod" => (false, false, false),
                other => bail!("row {i}: unknown resource {other:?}"),
            };
            if row.actions.is_empty() {
                bail!("row {i}: a resource and an action are required");
            }
            let mut actions = 0;
            for action in &row.actions {
                actions |= match action.as_str() {
                    "Add" => 1,
                    "Update" => 2,
                    "Delete" => 4,
                    "All" => 7,
                    other => bail!("row {i}: unknown action {other:?}"),
                };
            }
            let hint = match row.hint.as_deref() {
                None => Hint::Queue,
                Some("sameGroupPod") => Hint::SameGroupPod,
                Some("ownPodGroup") => Hint::OwnPodGroup,
                Some(other) => bail!("row {i}: unknown hint {other:?}"),
            };
            Ok(Registration {
                assigned,
                unscheduled,
                pod_group,
                actions,
                hint,
            })
        })
        .collect()
}

/// The in-tree filters' registrations of the events the replay makes.
fn in_tree(plugin: InTree) -> &'static [Registration] {
    const ASSIGNED_POD_DELETED: Registration = Registration {
        assigned: true,
        unscheduled: false,
        pod_group: false,
        actions: 4,
        hint: Hint::Queue,
    };
    const ASSIGNED_POD_ADDED_OR_DELETED: Registration = Registration {
        actions: 1 | 4,
        ..ASSIGNED_POD_DELETED
    };
    match plugin {
        InTree::NodeResourcesFit => &[ASSIGNED_POD_DELETED],
        InTree::PodTopologySpread | InTree::InterPodAffinity => &[ASSIGNED_POD_ADDED_OR_DELETED],
        InTree::NodeUnschedulable | InTree::TaintToleration | InTree::NodeAffinity => &[],
    }
}

/// The registrations of a replay's plugins (see the module documentation).
#[derive(Debug, Clone)]
pub struct Requeue {
    /// A component's registrations, by name.
    components: Vec<(String, Vec<Registration>)>,
}

impl Requeue {
    /// The registrations of `plugins`' components, chosen from the shared
    /// table by the points each implements, as kube-scheduler's wasched
    /// plugin chooses them.
    pub fn new(plugins: &PluginSet) -> Result<Self> {
        Self::of_components(plugins.iter().map(|plugin| {
            let points = plugin.points().iter().map(|p| p.interface()).collect();
            (plugin.name(), points)
        }))
    }

    /// The registrations of components given as (name, the WIT interfaces
    /// it exports).
    fn of_components<'a>(
        components: impl IntoIterator<Item = (&'a str, Vec<&'a str>)>,
    ) -> Result<Self> {
        let table: Table =
            serde_json::from_str(COMPONENT_EVENTS).context("kube/wasmplugin/events.json")?;
        let node_level =
            registrations(&table.node_level).context("kube/wasmplugin/events.json: nodeLevel")?;
        let gate_only =
            registrations(&table.gate_only).context("kube/wasmplugin/events.json: gateOnly")?;
        let components = components
            .into_iter()
            .map(|(name, points)| {
                let node_view = points
                    .iter()
                    .any(|p| table.node_level_points.iter().any(|n| n == p));
                let events = if node_view { &node_level } else { &gate_only };
                (name.to_string(), events.clone())
            })
            .collect();
        Ok(Self { components })
    }

    /// Whether `event` may make `waiting` schedulable: it moves to the
    /// backoff or active queue.
    pub fn worth_requeuing(&self, waiting: &Waiting, event: &Event) -> bool {
        if event.at_most_priority.is_some_and(|p| waiting.priority > p) {
            return false;
        }
        if waiting.rejectors.is_empty() {
            return true;
        }
        let asks = |registrations: &[Registration]| {
            registrations
                .iter()
                .any(|r| r.matches(event) && r.queues(waiting, event))
        };
        waiting.rejectors.in_tree().any(|p| asks(in_tree(p)))
            || waiting.rejectors.components().iter().any(|name| {
                self.components
                    .iter()
                    .find(|(n, _)| n == name)
                    .is_some_and(|(_, events)| asks(events))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        serde_json::from_str(COMPONENT_EVENTS).unwrap()
    }

    fn requeue(components: &[(&str, &str)]) -> Requeue {
        Requeue::of_components(components.iter().map(|&(name, point)| (name, vec![point]))).unwrap()
    }

    fn event(resource: Resource, action: Action) -> Event {
        Event::pod(resource, action, None)
    }

    #[test]
    fn the_shared_table_reads_as_kube_schedulers_plugin_reads_it() {
        let table = table();
        assert_eq!(
            table.node_level_points,
            ["filter", "score", "placement-generate", "placement-score"]
        );
        let node_level = registrations(&table.node_level).unwrap();
        // Pod All, Node All, PodGroup All.
        assert_eq!(node_level.len(), 3);
        assert!(node_level[0].assigned && node_level[0].unscheduled && node_level[0].actions == 7);
        assert_eq!(
            (
                node_level[1].assigned,
                node_level[1].unscheduled,
                node_level[1].pod_group
            ),
            (false, false, false)
        );
        assert!(node_level[2].pod_group && node_level[2].actions == 7);
        let gate_only = registrations(&table.gate_only).unwrap();
        assert_eq!(
            gate_only.iter().map(|r| r.hint).collect::<Vec<_>>(),
            [Hint::SameGroupPod, Hint::SameGroupPod, Hint::OwnPodGroup]
        );
        assert_eq!(gate_only[2].actions, 1 | 2);
    }

    #[test]
    fn a_row_that_cannot_be_mapped_is_named() {
        let rows = |json: &str| -> Vec<Row> { serde_json::from_str(json).unwrap() };
        for (json, want) in [
            (
                r#"[{"resource": "Pod", "actions": ["Bump"]}]"#,
                "row 0: unknown action \"Bump\"",
            ),
            (
                r#"[{"resource": "Lease", "actions": ["Add"]}]"#,
                "row 0: unknown resource \"Lease\"",
            ),
            (
                r#"[{"resource": "Pod", "actions": ["Add"], "hint": "never"}]"#,
                "row 0: unknown hint \"never\"",
            ),
        ] {
            assert_eq!(registrations(&rows(json)).unwrap_err().to_string(), want);
        }
    }

    #[test]
    fn a_pod_moves_on_the_events_its_rejectors_registered() {
        let requeue = requeue(&[("gpu-binpack", "filter"), ("gang-permit", "permit")]);
        let mut fit = Rejectors::default();
        fit.add_in_tree(InTree::NodeResourcesFit);
        let moves = |rejectors: &Rejectors, event: &Event| {
            let waiting = Waiting {
                rejectors,
                group: None,
                priority: 0,
            };
            requeue.worth_requeuing(&waiting, event)
        };
        let bound = event(Resource::AssignedPod, Action::Add);
        let deleted = event(Resource::AssignedPod, Action::Delete);
        let created = event(Resource::UnscheduledPod, Action::Add);
        let terminating = event(Resource::AssignedPod, Action::Update);
        // NodeResourcesFit: a deleted assigned pod only.
        assert!(moves(&fit, &deleted));
        assert!(!moves(&fit, &bound) && !moves(&fit, &created) && !moves(&fit, &terminating));
        // NodeAffinity registers node events only: nothing the replay makes.
        let mut affinity = Rejectors::default();
        affinity.add_in_tree(InTree::NodeAffinity);
        assert!(!moves(&affinity, &deleted));
        // InterPodAffinity: assigned pods added or deleted.
        let mut anti = Rejectors::default();
        anti.add_in_tree(InTree::InterPodAffinity);
        assert!(moves(&anti, &bound) && !moves(&anti, &terminating));
        // A filter component: any pod event.
        let mut component = Rejectors::default();
        component.add_component("gpu-binpack");
        for e in [&bound, &deleted, &created, &terminating] {
            assert!(moves(&component, e), "{e:?}");
        }
        // A gate-only component: its own group's pods only.
        let mut gate = Rejectors::default();
        gate.add_component("gang-permit");
        assert!(!moves(&gate, &created));
        let own = Waiting {
            rejectors: &gate,
            group: Some("ml/a"),
            priority: 0,
        };
        let member = Event::pod(Resource::UnscheduledPod, Action::Add, Some("ml/a".into()));
        let other = Event::pod(Resource::UnscheduledPod, Action::Add, Some("ml/b".into()));
        assert!(requeue.worth_requeuing(&own, &member));
        assert!(!requeue.worth_requeuing(&own, &other));
        // An unknown component (not loaded) registers nothing.
        let mut stranger = Rejectors::default();
        stranger.add_component("not-loaded");
        assert!(!moves(&stranger, &bound));
        // No rejector: any event; a priority bound holds for every pod.
        let none = Rejectors::default();
        assert!(moves(&none, &terminating));
        let nominated_gone = Event {
            at_most_priority: Some(-1),
            ..deleted.clone()
        };
        assert!(!moves(&none, &nominated_gone) && !moves(&fit, &nominated_gone));
    }
}
