//! Guest-side SDK for wasched plugins.
//!
//! A plugin crate keeps its decision logic in plain Rust (it also compiles
//! natively, for tests and benchmarks) and adds a thin export layer for
//! `wasm32`. This crate provides both halves:
//!
//! - everywhere: the status vocabulary ([`Status`], [`Code`]) that plugin
//!   logic returns;
//! - on `wasm32`: the WIT bindings (shared imports in [`bindings`], one module
//!   per plugin world behind a cargo feature, each with an `export!` macro),
//!   a global allocator, `cabi_realloc`, and a panic handler that logs the
//!   panic message through the host's `log` import before trapping.
//!
//! ```ignore
//! // plugins/my-plugin/src/lib.rs, with `features = ["gang-admission"]`
//! #[cfg(target_arch = "wasm32")]
//! mod component {
//!     use wasched_sdk::gang_admission::exports::wasched::scheduler::{permit, plugin, pre_enqueue};
//!     struct MyPlugin;
//!     impl plugin::Guest for MyPlugin { /* name, configure */ }
//!     impl pre_enqueue::Guest for MyPlugin { /* ... */ }
//!     impl permit::Guest for MyPlugin { /* ... */ }
//!     wasched_sdk::gang_admission::export!(MyPlugin);
//! }
//! ```
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

mod status;
pub use status::{Code, Status};

#[cfg(target_arch = "wasm32")]
mod guest;
#[cfg(target_arch = "wasm32")]
pub use guest::*;
