//! Building a filter's answer: rejections grouped by reason.

use alloc::string::String;
use alloc::vec::Vec;

use crate::{Code, NodeId, RejectionGroup, Status};

/// Collects rejected nodes under their reasons, in the order reasons first
/// appear, so that a filter answers one [`RejectionGroup`] per reason.
///
/// ```
/// use wasched_sdk::{Code, Rejections};
///
/// let mut rejections = Rejections::new();
/// rejections.reject(3, Code::Unschedulable, "Insufficient nvidia.com/gpu");
/// rejections.reject(5, Code::Unschedulable, "Insufficient nvidia.com/gpu");
/// rejections.reject(7, Code::UnschedulableAndUnresolvable, "node(s) were unschedulable");
/// let groups = rejections.into_groups();
/// assert_eq!(groups.len(), 2);
/// assert_eq!(groups[0].nodes, [3, 5]);
/// ```
#[derive(Debug, Default)]
pub struct Rejections {
    groups: Vec<RejectionGroup>,
}

impl Rejections {
    /// No rejections yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rejects `node` with `code` and `reason` (an existing group with the
    /// same status takes it; a short linear scan: filters have few reasons).
    pub fn reject(&mut self, node: NodeId, code: Code, reason: &str) {
        match self
            .groups
            .iter_mut()
            .find(|g| g.status.code == code && g.status.reason == reason)
        {
            Some(group) => group.nodes.push(node),
            None => self.groups.push(RejectionGroup {
                status: Status::new(code, String::from(reason)),
                nodes: alloc::vec![node],
            }),
        }
    }

    /// Whether nothing was rejected.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The groups, in the order their reasons first appeared.
    pub fn into_groups(self) -> Vec<RejectionGroup> {
        self.groups
    }
}
