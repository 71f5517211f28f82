//! The scheduling framework, without wasm: what an extension point is, the
//! vocabulary plugins answer in, the [`Plugin`] trait the scheduler calls
//! (implemented by wasm components in [`crate::runtime`] and by native fakes
//! in tests), failure policy, and the checks every answer passes before the
//! scheduler uses it.
//!
//! Layering: this module knows the [`crate::model`] and nothing above it;
//! the scheduler reaches plugins only through [`PluginSet`].

pub mod answers;
mod extension;
pub mod facts;
pub mod native;
mod plugin;
mod status;

pub use answers::OutputLimits;
pub use extension::{ExtensionPoint, FailureCause, FailurePolicy, PluginError};
pub use plugin::{
    Answer, At, CallTimes, Checked, LogDrops, LogLevel, LogLine, Plan, Plugin, PluginSet,
};

impl From<Progress> for wasched_sdk::Progress {
    fn from(p: Progress) -> Self {
        Self {
            scheduled: p.scheduled,
            remaining: p.remaining,
        }
    }
}
pub use status::{Code, Status};

use crate::model::{CompositeId, GroupId, NodeId, PodId};

/// What pre-enqueue, permit and the placement points are asked about: a
/// PodGroup or a CompositePodGroup (the queue holds PodGroups without a
/// parent and the roots of composite trees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unit {
    /// A PodGroup.
    Group(GroupId),
    /// A CompositePodGroup.
    Composite(CompositeId),
}

/// Progress of placing a unit's members within one placement
/// (`framework.PlacementProgress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Members placed so far: already bound plus assumed in this cycle.
    pub scheduled: u32,
    /// Pending members not tried yet.
    pub remaining: u32,
}

/// A candidate node set for a unit (`framework.Placement`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Display name (`cluster`, `example.com/rack=r1`).
    pub name: String,
    /// Nodes, ascending, without duplicates.
    pub nodes: Vec<NodeId>,
    /// The topology domain as (label key, value), if it is one.
    pub domain: Option<(String, String)>,
}

impl Placement {
    /// The whole cluster of `nodes` nodes: the placement of a unit without
    /// topology constraints.
    pub fn cluster(nodes: usize) -> Self {
        Self {
            name: "cluster".into(),
            nodes: (0..nodes as NodeId).collect(),
            domain: None,
        }
    }
}

/// What placement generation returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placements {
    /// Candidates, in the plugin's order of preference.
    pub candidates: Vec<Placement>,
    /// For a composite: how many placements the host may try for the tree.
    pub search_budget: Option<u32>,
    /// The plugin promised the answer holds for any unit of the same kind
    /// and topology key without a running pod, over the same parent nodes,
    /// within one pass (the WIT's `generated-placements.reusable`).
    pub reusable: bool,
}

/// Nodes a filter plugin rejected for one reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// Why.
    pub reason: String,
    /// The nodes.
    pub nodes: Vec<NodeId>,
}

/// A permit answer and how far the host may reuse it (contract 0.3.0).
pub use wasched_sdk::{PermitVerdict, ProgressBounds};

/// Who preempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preemptor {
    /// A PodGroup or composite root.
    Unit(Unit),
    /// A pod that belongs to no group.
    Pod(PodId),
}

/// What one eviction decision covers: a whole `disruptionMode: all` group,
/// or one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VictimUnit {
    /// Position in the list given to the plugin.
    pub index: u32,
    /// The pods evicted together, ascending.
    pub pods: Vec<PodId>,
    /// The `all` group that makes this a unit; `None` for a single pod.
    pub group: Option<GroupId>,
    /// The unit's priority.
    pub priority: i32,
    /// The earliest start time of its pods, Unix seconds.
    pub start_time: i64,
    /// Whether evicting it would violate a PodDisruptionBudget.
    pub violates_budget: bool,
}

/// One way to make room, for the plugin to choose from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreemptionCandidate {
    /// Position in the list given to the plugin.
    pub index: u32,
    /// A placement name, or a node name for a lone pod.
    pub domain: String,
    /// The units that would be evicted.
    pub victims: Vec<VictimUnit>,
    /// Where the preemptor's pods would go.
    pub assignments: Vec<(PodId, NodeId)>,
}
