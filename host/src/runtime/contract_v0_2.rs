//! Components built against `wasched:scheduler@0.2.0` (frozen in
//! `wit/frozen/v0.2.0`) keep loading: this module links the 0.2.0 imports
//! to the same host state and converts the current host's calls to the
//! 0.2.0 exports.
//!
//! 0.3.0 only added to 0.2.0's `types` (every 0.2.0 type is unchanged), so
//! the 0.2.0 bindings use the current `types` module and share every
//! conversion; what differs is answered here: 0.2.0's filter answers one
//! rejection per node (grouped by reason for the host), and its permit a
//! bare status (never reused: the host asks after every member, as before).
//! Its placement-generate answers bare `placements`, which the host never
//! hands to another unit (`calls.rs`).

#![allow(missing_docs)]

use wasmtime::component::Resource;

use wasched_sdk::Cluster;

use super::bindings::types;
use super::contract_v0_3::{self as wit, common_snapshot_methods, snapshot_methods_since_v0_2};
use super::state::{HostState, SnapshotHandle};
use crate::framework::native::SnapshotView;
use crate::framework::{LogLevel, PermitVerdict, Rejection};
use wasched_sdk::types as sdk;

mod bindings {
    wasmtime::component::bindgen!({
        world: "extension-host",
        path: "../wit/frozen/v0.2.0",
        with: {
            "wasched:scheduler/types": crate::runtime::bindings::types,
            "wasched:scheduler/cluster.snapshot": crate::runtime::state::SnapshotHandle,
        },
    });
}

use bindings::exports::wasched::scheduler as guest;
use bindings::wasched::scheduler::{cluster, log};

/// The contract version this module adapts.
pub const VERSION: &str = "0.2.0";

super::exports::version_exports!(guest;
    pre_enqueue: PreEnqueue => pre_enqueue,
    filter: Filter => filter,
    score: Score => score,
    permit: Permit => permit,
    placement_generate: PlacementGenerate => placement_generate,
    placement_score: PlacementScore => placement_score,
    pod_group_post_filter: PodGroupPostFilter => pod_group_post_filter,
);

/// Links the 0.2.0 imports.
pub fn add_to_linker(linker: &mut wasmtime::component::Linker<HostState>) -> wasmtime::Result<()> {
    bindings::ExtensionHost::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(
        linker,
        |state| state,
    )
}

/// 0.2.0's per-node rejections, grouped by reason in first-seen order.
pub fn rejections(rejected: Vec<super::bindings::types::NodeRejection>) -> Vec<Rejection> {
    let mut groups: Vec<Rejection> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    for r in rejected {
        match index.get(&r.status.reason) {
            Some(&at) => groups[at].nodes.push(r.node),
            None => {
                index.insert(r.status.reason.clone(), groups.len());
                groups.push(Rejection {
                    reason: r.status.reason,
                    nodes: vec![r.node],
                });
            }
        }
    }
    groups
}

/// 0.2.0's permit status as a verdict asked again after every member.
pub fn verdict(status: super::bindings::types::Status) -> PermitVerdict {
    PermitVerdict::once(wit::status(status))
}

impl cluster::Host for HostState {}

impl cluster::HostSnapshot for HostState {
    snapshot_methods_since_v0_2!(cluster);
}

wit::log_host!(log);
