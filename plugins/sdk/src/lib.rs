//! SDK for wasched scheduling plugins (`wasched:scheduler@0.3.0`, see
//! [`CONTRACT_VERSION`]).
//!
//! A plugin is a library crate under `plugins/` (the workspace's `members`
//! include `plugins/*`, and the host's build script builds and bundles every
//! crate there) that
//!
//! 1. implements one trait, [`Plugin`]: its configuration `args` are
//!    deserialized with serde into its own [`Plugin::Args`] type and
//!    validated in [`Plugin::new`]; its state lives in `self`; it overrides
//!    the methods of the extension points it implements, each called with a
//!    read-only [`Cluster`] view and the point's arguments as plain Rust types
//!    ([`types`]);
//! 2. registers with one macro, [`register_plugin!`], naming those extension
//!    points. Built for `wasm32-wasip2`, the component exports `plugin` plus
//!    exactly the named points; natively the macro only checks the names.
//!
//! ```
//! // plugins/my-plugin/src/lib.rs
//! #![cfg_attr(target_arch = "wasm32", no_std)]
//! extern crate alloc;
//!
//! use alloc::string::String;
//! use wasched_sdk::{
//!     Cluster, Code, NoArgs, PermitVerdict, Plugin, Progress, SchedulingPolicy, Status, Unit,
//! };
//!
//! /// All-or-nothing admission of PodGroups.
//! pub struct MyGang;
//!
//! impl Plugin for MyGang {
//!     type Args = NoArgs;
//!     // Not a kube-scheduler in-tree name, so both can be configured.
//!     const NAME: &'static str = "MyGang";
//!
//!     fn new(_args: NoArgs) -> Result<Self, String> {
//!         Ok(MyGang)
//!     }
//!
//!     fn permit(&mut self, cluster: &impl Cluster, unit: Unit, progress: Progress) -> PermitVerdict {
//!         let Unit::PodGroup(group) = unit else { return Status::success().into() };
//!         match cluster.pod_group_spec(group).map(|spec| spec.policy) {
//!             Some(SchedulingPolicy::Gang(min)) if progress.scheduled < min => {
//!                 Status::new(Code::Wait, alloc::format!("waiting for minCount {min}")).into()
//!             }
//!             _ => Status::success().into(),
//!         }
//!     }
//! }
//!
//! // `pre_enqueue` keeps its default body (success) in this sketch.
//! wasched_sdk::register_plugin!(MyGang: pre_enqueue, permit);
//! ```
//!
//! The crate's `Cargo.toml` needs `crate-type = ["cdylib", "rlib"]` (the
//! `cdylib` becomes the component, the `rlib` serves native tests) and the
//! dependencies `wasched-sdk` and, for a derived `Args` type, `serde` (both
//! `workspace = true`). The host's build script builds every crate under
//! `plugins/` into a component (`cargo build --target wasm32-wasip2
//! --profile plugin -p <crate>`).
//!
//! # Extension points
//!
//! | `register_plugin!` name | WIT interface | [`Plugin`] method(s) |
//! |---|---|---|
//! | `pre_enqueue` | `pre-enqueue` | [`pre_enqueue`](Plugin::pre_enqueue) |
//! | `filter` | `filter` | [`filter`](Plugin::filter) |
//! | `score` | `score` | [`score`](Plugin::score) |
//! | `permit` | `permit` | [`permit`](Plugin::permit) |
//! | `placement_generate` | `placement-generate` | [`generate_placements`](Plugin::generate_placements) |
//! | `placement_score` | `placement-score` | [`score_placement`](Plugin::score_placement) |
//! | `pod_group_post_filter` | `pod-group-post-filter` | [`order_victims`](Plugin::order_victims), [`select_candidate`](Plugin::select_candidate) |
//!
//! Every method has a neutral default body, used only when the plugin calls
//! it itself: the component exports only the points named in the macro.
//!
//! # Configuration
//!
//! The host's `configure` call is handled by the SDK ([`configure`]): empty
//! args or `null` mean `{}`; the JSON text is parsed into [`Plugin::Args`]
//! (a parse error refuses the plugin with `invalid args for <NAME>: <serde
//! message>`, or `<NAME> takes no args, got <args>` for [`NoArgs`]), then
//! [`Plugin::new`] builds the instance (its `Err` string is the refusal,
//! verbatim). The instance lives until the host discards the component
//! instance; every extension-point call gets `&mut` access to it.
//!
//! # Testing natively
//!
//! Keep decisions in plain functions, and test the [`Plugin`] methods over
//! [`fake::FakeCluster`], an in-memory [`Cluster`] with a builder API.
//! Natively [`log`] appends to a buffer that [`fake::take_logs`] returns.
//!
//! # The wasm32 runtime
//!
//! On `wasm32` the crate is `no_std` + `alloc`; the SDK supplies the global
//! allocator (dlmalloc), `cabi_realloc`, `memcmp`/`bcmp`, and a panic
//! handler that logs the panic message at `error` level before trapping (the
//! host reports the trap and discards the instance). Plugins should be
//! `#![cfg_attr(target_arch = "wasm32", no_std)]` with `extern crate alloc`.
//!
//! How the export set is kept exact: the SDK generates the bindings of the
//! shared `imports` world and of one single-export world per point
//! (`export-plugin`, `export-pre-enqueue`, ... in `wit/worlds.wit`), the
//! latter with wit-bindgen's `pub_export_macro`, which embeds only the
//! world's imports in the SDK and the exports' component-type section where
//! the world's `export!` macro is invoked. [`register_plugin!`] invokes it in
//! the plugin crate for `plugin` and each named point, so wit-component's
//! union of the sections is exactly those exports.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

mod cluster;
pub mod scoring;
mod status;
pub mod types;

pub use cluster::{Cluster, NodeResources};
pub use rejections::Rejections;
pub use status::{Code, Status};
pub use types::*;

mod rejections;

/// The contract this SDK builds components against: the version of the
/// `wasched:scheduler` WIT package in `wit/`.
pub const CONTRACT_VERSION: &str = "0.3.0";

/// serde, re-exported for plugins that prefer `#[serde(crate = "wasched_sdk::serde")]`
/// to a dependency of their own.
pub use serde;

#[cfg(not(target_arch = "wasm32"))]
pub mod fake;

#[cfg(target_arch = "wasm32")]
mod guest;
#[cfg(target_arch = "wasm32")]
pub use guest::{HostCluster, bindings};

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// `Args` of a plugin that takes none: only `{}`, `null` or nothing is
/// accepted; anything else refuses the plugin with `<NAME> takes no args,
/// got <args>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// A scheduling plugin: one implementation per plugin crate, registered
/// with [`register_plugin!`].
///
/// Each extension-point method gets `&mut self`, the cycle's read-only
/// [`Cluster`] view (valid for the call only) and the point's arguments. The
/// default bodies answer neutrally; only the points named in
/// [`register_plugin!`] are exported.
pub trait Plugin: Sized + 'static {
    /// The plugin's configuration, deserialized from the `args` JSON of its
    /// configuration entry (`{}` when there are none). Use [`NoArgs`] for a
    /// plugin without args.
    type Args: serde::de::DeserializeOwned + 'static;

    /// The name used in configuration, metrics and messages; unique per host.
    const NAME: &'static str;

    /// Builds the plugin from its parsed args, validating them; an `Err`
    /// refuses the plugin at load time with that message (verbatim).
    fn new(args: Self::Args) -> Result<Self, String>;

    /// PreEnqueue: may `unit` (a parentless PodGroup or a composite root)
    /// enter the active queue? Any code but success keeps its pods pending.
    /// Default: success.
    fn pre_enqueue(&mut self, cluster: &impl Cluster, unit: Unit) -> Status {
        let _ = (cluster, unit);
        Status::success()
    }

    /// Filter: the nodes among `nodes` that cannot host `pod`, grouped by
    /// status (each node at most once; [`Rejections`] builds the groups);
    /// nodes not listed are feasible. Default: none.
    fn filter(
        &mut self,
        cluster: &impl Cluster,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Vec<RejectionGroup> {
        let _ = (cluster, pod, nodes);
        Vec::new()
    }

    /// Score: one score in `0 ..= 100` per entry of `nodes`, in order.
    /// Default: all zero.
    fn score(
        &mut self,
        cluster: &impl Cluster,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Result<Vec<i64>, Status> {
        let _ = (cluster, pod);
        Ok(vec![0; nodes.len()])
    }

    /// Permit (merged with `PlacementFeasible`): after each member of `unit`
    /// was tried within a placement. `Unschedulable` aborts the placement,
    /// `Wait` keeps placing, success admits; [`PermitVerdict::reusable`]
    /// lets the host skip calls while progress stays within bounds.
    /// Default: success, reusable for the whole attempt.
    fn permit(&mut self, cluster: &impl Cluster, unit: Unit, progress: Progress) -> PermitVerdict {
        let _ = (cluster, unit, progress);
        PermitVerdict::reusable(Status::success(), ProgressBounds::ALWAYS)
    }

    /// PlacementGenerate: splits `parent` into candidate placements for
    /// `unit`. `Err` with [`Code::Skip`] keeps `parent` as the only
    /// placement. Set [`Placements::reusable`] when the answer depends only
    /// on the unit's kind and topology key, `parent`'s nodes and node
    /// labels while no pod of the unit runs: the host then hands it to such
    /// units without asking. Default: skip.
    fn generate_placements(
        &mut self,
        cluster: &impl Cluster,
        unit: Unit,
        parent: &Placement,
    ) -> Result<Placements, Status> {
        let _ = (cluster, unit, parent);
        Err(Status::new(Code::Skip, ""))
    }

    /// PlacementScore: scores a feasible placement in `0 ..= 100` given the
    /// pods assumed in it. Default: 0.
    fn score_placement(
        &mut self,
        cluster: &impl Cluster,
        unit: Unit,
        placement: &Placement,
        assignments: &[Assignment],
    ) -> Result<i64, Status> {
        let _ = (cluster, unit, placement, assignments);
        Ok(0)
    }

    /// PodGroupPostFilter: the reprieve order of `units`, most important
    /// first, as a permutation of their `index` values. Default: as given.
    fn order_victims(
        &mut self,
        cluster: &impl Cluster,
        preemptor: Preemptor,
        units: &[VictimUnit],
    ) -> Result<Vec<u32>, Status> {
        let _ = (cluster, preemptor);
        Ok(units.iter().map(|unit| unit.index).collect())
    }

    /// PodGroupPostFilter: the `index` of the candidate to carry out;
    /// `Unschedulable` declines to preempt. Default: the first candidate
    /// (`Unschedulable` if there is none).
    fn select_candidate(
        &mut self,
        cluster: &impl Cluster,
        preemptor: Preemptor,
        candidates: &[PreemptionCandidate],
    ) -> Result<u32, Status> {
        let _ = (cluster, preemptor);
        candidates
            .first()
            .map(|candidate| candidate.index)
            .ok_or_else(|| Status::new(Code::Unschedulable, "no preemption candidate"))
    }
}

/// What the SDK does with the host's `configure(args)`: parses `args`
/// (empty or `null` meaning `{}`) into `P::Args` and calls [`Plugin::new`].
///
/// Public so that native tests configure plugins exactly as the host does.
///
/// ```
/// use wasched_sdk::{NoArgs, Plugin};
///
/// struct Quiet;
/// impl Plugin for Quiet {
///     type Args = NoArgs;
///     const NAME: &'static str = "Quiet";
///     fn new(_: NoArgs) -> Result<Self, String> {
///         Ok(Quiet)
///     }
/// }
///
/// assert!(wasched_sdk::configure::<Quiet>("").is_ok());
/// assert!(wasched_sdk::configure::<Quiet>(" { } ").is_ok());
/// let err = wasched_sdk::configure::<Quiet>(r#"{"x": 1}"#).err().unwrap();
/// assert_eq!(err, r#"Quiet takes no args, got {"x": 1}"#);
/// ```
pub fn configure<P: Plugin>(args: &str) -> Result<P, String> {
    let trimmed = args.trim();
    let text = if trimmed.is_empty() || trimmed == "null" {
        "{}"
    } else {
        trimmed
    };
    let parsed: P::Args = serde_json::from_str(text).map_err(|e| {
        if core::any::TypeId::of::<P::Args>() == core::any::TypeId::of::<NoArgs>() {
            format!("{} takes no args, got {text}", P::NAME)
        } else {
            format!("invalid args for {}: {e}", P::NAME)
        }
    })?;
    P::new(parsed)
}

/// Writes one line to the host's log (with the plugin's name; the host caps
/// lines and bytes per call and per run).
///
/// Natively the line goes to a per-thread buffer that
/// [`fake::take_logs`] returns, so tests can assert on it and test output
/// stays clean.
pub fn log(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    guest::log(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    fake::log(level, message);
}

/// Registers a [`Plugin`] and names the extension points it implements
/// (the crate documentation's example compiles it):
///
/// ```text
/// wasched_sdk::register_plugin!(MyGang: pre_enqueue, permit);
/// ```
///
/// Points: `pre_enqueue`, `filter`, `score`, `permit`, `placement_generate`,
/// `placement_score`, `pod_group_post_filter` (`plugin` is always exported
/// and not named). An unknown name is a compile error; name each point once.
///
/// Built for wasm32 it exports the WIT `plugin` interface (name and
/// configure, see [`configure`]) and exactly the named points, each
/// forwarding to the plugin's method with the host's snapshot as a
/// [`Cluster`]. Natively it only checks that the type implements
/// [`Plugin`] and that the names are known.
///
/// Use it once per crate, at the crate root or in any module.
#[macro_export]
macro_rules! register_plugin {
    ($plugin:ty : $($point:ident),+ $(,)?) => {
        const _: () = {
            fn __wasched_assert_plugin<P: $crate::Plugin>() {}
            let _ = __wasched_assert_plugin::<$plugin>;
        };
        $( $crate::__wasched_point!(check $point); )+
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type __WaschedExports = $crate::__private::Exports<$plugin>;
            $crate::__private::export_plugin::export!(
                __WaschedExports with_types_in $crate::__private::export_plugin
            );
            $( $crate::__wasched_point!(export $point __WaschedExports); )+
        };
    };
}

/// Maps a point name of [`register_plugin!`] to its single-export world's
/// `export!` macro (see `wit/worlds.wit`: `export-pre-enqueue`, ...).
#[doc(hidden)]
#[macro_export]
macro_rules! __wasched_point {
    (check pre_enqueue) => {};
    (check filter) => {};
    (check score) => {};
    (check permit) => {};
    (check placement_generate) => {};
    (check placement_score) => {};
    (check pod_group_post_filter) => {};
    (check $other:ident) => {
        ::core::compile_error!(::core::concat!(
            "wasched_sdk::register_plugin!: unknown extension point `",
            ::core::stringify!($other),
            "`; expected one of pre_enqueue, filter, score, permit, placement_generate, \
             placement_score, pod_group_post_filter"
        ));
    };
    (export pre_enqueue $ty:ident) => {
        $crate::__private::export_pre_enqueue::export!(
            $ty with_types_in $crate::__private::export_pre_enqueue
        );
    };
    (export filter $ty:ident) => {
        $crate::__private::export_filter::export!(
            $ty with_types_in $crate::__private::export_filter
        );
    };
    (export score $ty:ident) => {
        $crate::__private::export_score::export!(
            $ty with_types_in $crate::__private::export_score
        );
    };
    (export permit $ty:ident) => {
        $crate::__private::export_permit::export!(
            $ty with_types_in $crate::__private::export_permit
        );
    };
    (export placement_generate $ty:ident) => {
        $crate::__private::export_placement_generate::export!(
            $ty with_types_in $crate::__private::export_placement_generate
        );
    };
    (export placement_score $ty:ident) => {
        $crate::__private::export_placement_score::export!(
            $ty with_types_in $crate::__private::export_placement_score
        );
    };
    (export pod_group_post_filter $ty:ident) => {
        $crate::__private::export_pod_group_post_filter::export!(
            $ty with_types_in $crate::__private::export_pod_group_post_filter
        );
    };
    // Unknown names were reported by `check`.
    (export $other:ident $ty:ident) => {};
}

/// Implementation details of [`register_plugin!`]; not part of the API.
#[doc(hidden)]
#[cfg(target_arch = "wasm32")]
pub mod __private {
    pub use crate::guest::{
        Exports, export_filter, export_permit, export_placement_generate, export_placement_score,
        export_plugin, export_pod_group_post_filter, export_pre_enqueue, export_score,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FakeCluster;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Args {
        min_score: i64,
        #[serde(default)]
        label: String,
    }

    struct Scorer {
        min_score: i64,
    }

    impl Plugin for Scorer {
        type Args = Args;
        const NAME: &'static str = "Scorer";

        fn new(args: Args) -> Result<Self, String> {
            if args.min_score < 0 {
                return Err(format!(
                    "Scorer: minScore must be >= 0, got {}",
                    args.min_score
                ));
            }
            let _ = args.label;
            Ok(Self {
                min_score: args.min_score,
            })
        }
    }

    #[test]
    fn configure_parses_validates_and_names_the_plugin() {
        assert_eq!(
            configure::<Scorer>(r#"{"minScore": 3}"#).unwrap().min_score,
            3
        );
        let err = configure::<Scorer>(r#"{"minScore": -1}"#).err().unwrap();
        assert_eq!(err, "Scorer: minScore must be >= 0, got -1");
        let err = configure::<Scorer>(r#"{"minScor": 3}"#).err().unwrap();
        assert!(
            err.starts_with("invalid args for Scorer: unknown field `minScor`"),
            "{err}"
        );
        let err = configure::<Scorer>("").err().unwrap();
        assert!(
            err.starts_with("invalid args for Scorer: missing field `minScore`"),
            "{err}"
        );
    }

    #[test]
    fn default_methods_answer_neutrally() {
        let cluster = FakeCluster::new();
        let mut plugin = Scorer { min_score: 0 };
        let unit = Unit::PodGroup(0);
        assert!(plugin.pre_enqueue(&cluster, unit).is_success());
        assert!(plugin.filter(&cluster, 0, &[0, 1]).is_empty());
        assert_eq!(plugin.score(&cluster, 0, &[0, 1]), Ok(vec![0, 0]));
        assert!(
            plugin
                .permit(&cluster, unit, Progress::default())
                .status
                .is_success()
        );
        let parent = Placement::default();
        let skip = plugin
            .generate_placements(&cluster, unit, &parent)
            .unwrap_err();
        assert_eq!(skip.code, Code::Skip);
        assert_eq!(plugin.score_placement(&cluster, unit, &parent, &[]), Ok(0));
        let victim = |index| VictimUnit {
            index,
            pods: vec![],
            group: None,
            priority: 0,
            start_time: 0,
            violates_budget: false,
        };
        let preemptor = Preemptor::Pod(0);
        assert_eq!(
            plugin.order_victims(&cluster, preemptor, &[victim(1), victim(0)]),
            Ok(vec![1, 0])
        );
        let candidate = PreemptionCandidate {
            index: 0,
            domain: "node-a".into(),
            victims: vec![victim(0)],
            assignments: vec![],
        };
        assert_eq!(
            plugin.select_candidate(&cluster, preemptor, &[candidate]),
            Ok(0)
        );
        assert_eq!(
            plugin
                .select_candidate(&cluster, preemptor, &[])
                .unwrap_err()
                .code,
            Code::Unschedulable
        );
    }
}
