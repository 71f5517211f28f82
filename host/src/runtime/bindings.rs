//! Host bindings generated from `wit/` (world `extension-host`).
//!
//! The two resources of the `cluster` interface are backed by
//! [`SnapshotHandle`] and [`GroupTrialHandle`]: marker values in the store's
//! resource table; the data they stand for lives in the store's state for the
//! duration of one call (see [`super::state`]).

#![allow(missing_docs)]

wasmtime::component::bindgen!({
    world: "extension-host",
    path: "../wit",
    with: {
        "wasched:scheduler/cluster.snapshot": super::state::SnapshotHandle,
        "wasched:scheduler/cluster.group-trial": super::state::GroupTrialHandle,
    },
});

pub use self::wasched::scheduler::{cluster, log, types};
pub use exports::wasched::scheduler as guest;

/// The WIT package version this host implements.
pub const PACKAGE_VERSION: &str = "0.1.0";
/// The WIT package name.
pub const PACKAGE: &str = "wasched:scheduler";
