//! Host bindings generated from `wit/` (world `extension-host`), the
//! current contract `wasched:scheduler@0.3.0`.
//!
//! The `snapshot` resource of the `cluster` interface is backed by
//! [`SnapshotHandle`](super::state::SnapshotHandle): a marker value in the
//! store's resource table; the data it stands for lives in the store's state
//! for the duration of one call (see [`super::state`]).

#![allow(missing_docs)]

wasmtime::component::bindgen!({
    world: "extension-host",
    path: "../wit",
    with: {
        "wasched:scheduler/cluster.snapshot": super::state::SnapshotHandle,
    },
});

pub use self::wasched::scheduler::{cluster, log, types};
pub use exports::wasched::scheduler as guest;

/// The WIT package version this host implements.
pub const PACKAGE_VERSION: &str = "0.3.0";
/// The WIT package name.
pub const PACKAGE: &str = "wasched:scheduler";
