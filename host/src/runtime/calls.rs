//! [`WasmPlugin`] as a [`Plugin`]: each extension point converted to the
//! WIT records of the component's contract version and called through the
//! sandbox. Answers are checked by the framework's `Checked` before use.

use super::bindings::guest;
use super::contract_v0_1 as v0_1;
use super::contract_v0_2 as v0_2;
use super::contract_v0_3 as wit;
use super::exports::version_exports;
use super::plugin::{VersionExports, WasmPlugin};
use crate::framework::{
    Answer, Code, ExtensionPoint, FailurePolicy, LogDrops, LogLine, OutputLimits, PermitVerdict,
    Placement, Placements, Plugin, PreemptionCandidate, Preemptor, Progress, Rejection, Status,
    Unit, VictimUnit,
};
use crate::model::{NodeId, PodId, Snapshot};

version_exports!(guest;
    pre_enqueue: PreEnqueue => pre_enqueue,
    filter: Filter => filter,
    score: Score => score,
    permit: Permit => permit,
    placement_generate: PlacementGenerate => placement_generate,
    placement_score: PlacementScore => placement_score,
    pod_group_post_filter: PodGroupPostFilter => pod_group_post_filter,
);

/// A `match` over the component's contract version in which 0.3.0 and
/// 0.2.0 share one arm (`shared`): the export has the same signature in
/// both, over the same `types` (see `contract_v0_2`).
macro_rules! by_version {
    ($exports:expr; shared $e:ident => $shared:expr; $($arm:pat => $body:expr),* $(,)?) => {
        match $exports {
            VersionExports::Current($e) => $shared,
            VersionExports::V0_2($e) => $shared,
            $($arm => $body,)*
        }
    };
}

/// An export the plugin was wired into because it has it.
fn wired<T>(export: &Option<T>) -> &T {
    export
        .as_ref()
        .expect("a plugin is only called at points it exports")
}

/// What a 0.1.0 component answers for a unit it cannot know about (a
/// CompositePodGroup): nothing to say.
fn skip() -> Status {
    Status::new(Code::Skip, "")
}

impl Plugin for WasmPlugin {
    fn name(&self) -> &str {
        self.name_str()
    }

    fn source(&self) -> &str {
        self.source_str()
    }

    fn contract_version(&self) -> Option<&str> {
        Some(self.version())
    }

    fn points(&self) -> &[ExtensionPoint] {
        self.point_list()
    }

    fn failure_policy(&self) -> FailurePolicy {
        self.settings().failure_policy
    }

    fn limits(&self) -> &OutputLimits {
        &self.settings().limits
    }

    fn start_run(&mut self) {
        self.restart_run();
    }

    fn pre_enqueue(&mut self, snapshot: &mut Snapshot, unit: Unit) -> Answer<Status> {
        let old = v0_1::group_record(snapshot, unit);
        self.call(
            snapshot,
            ExtensionPoint::PreEnqueue,
            |exports, store, snap| {
                by_version!(exports;
                 shared e => wired(&e.pre_enqueue)
                                    .call_pre_enqueue(store, snap, wit::unit(unit))
                                    .map(wit::status);
                VersionExports::V0_1(e) => match &old {
                                    Some(group) => wired(&e.pre_enqueue)
                                        .call_pre_enqueue(store, snap, group)
                                        .map(v0_1::status),
                                    None => Ok(skip()),
                                },
                )
            },
        )
    }

    fn filter(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Answer<Vec<Rejection>> {
        self.call(snapshot, ExtensionPoint::Filter, |exports, store, snap| {
            Ok(match exports {
                VersionExports::Current(e) => wired(&e.filter)
                    .call_filter(store, snap, pod, nodes)?
                    .into_iter()
                    .map(|r| Rejection {
                        reason: r.status.reason,
                        nodes: r.nodes,
                    })
                    .collect(),
                VersionExports::V0_2(e) => {
                    v0_2::rejections(wired(&e.filter).call_filter(store, snap, pod, nodes)?)
                }
                VersionExports::V0_1(e) => wired(&e.filter)
                    .call_filter(store, snap, pod, nodes)?
                    .into_iter()
                    .map(|r| Rejection {
                        reason: r.status.reason,
                        nodes: vec![r.node],
                    })
                    .collect(),
            })
        })
    }

    fn score(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Answer<Result<Vec<i64>, Status>> {
        self.call(snapshot, ExtensionPoint::Score, |exports, store, snap| {
            Ok(by_version!(exports;
             shared e => wired(&e.score)
                                .call_score(store, snap, pod, nodes)?
                                .map_err(wit::status);
            VersionExports::V0_1(e) => wired(&e.score)
                                .call_score(store, snap, pod, nodes)?
                                .map_err(v0_1::status),
            ))
        })
    }

    fn permit(
        &mut self,
        snapshot: &mut Snapshot,
        unit: Unit,
        progress: Progress,
    ) -> Answer<PermitVerdict> {
        let current = super::bindings::types::PlacementProgress {
            scheduled: progress.scheduled,
            remaining: progress.remaining,
        };
        self.call(
            snapshot,
            ExtensionPoint::Permit,
            |exports, store, snap| match exports {
                VersionExports::Current(e) => wired(&e.permit)
                    .call_permit(store, snap, wit::unit(unit), current)
                    .map(wit::verdict),
                VersionExports::V0_2(e) => wired(&e.permit)
                    .call_permit(store, snap, wit::unit(unit), current)
                    .map(v0_2::verdict),
                VersionExports::V0_1(e) => match unit {
                    Unit::Group(group) => wired(&e.permit)
                        .call_permit(store, snap, group, v0_1::progress(progress))
                        .map(|s| PermitVerdict::once(v0_1::status(s))),
                    Unit::Composite(_) => Ok(PermitVerdict::once(skip())),
                },
            },
        )
    }

    fn generate_placements(
        &mut self,
        snapshot: &mut Snapshot,
        unit: Unit,
        parent: &Placement,
    ) -> Answer<Result<Placements, Status>> {
        let parent_wit = wit::placement(snapshot, parent);
        let old = v0_1::group_record(snapshot, unit);
        let answer = self.call(
            snapshot,
            ExtensionPoint::PlacementGenerate,
            |exports, store, snap| match exports {
                VersionExports::Current(e) => Ok(wired(&e.placement_generate)
                    .call_generate_placements(store, snap, wit::unit(unit), &parent_wit)?
                    .map_err(wit::status)
                    .map(|g| Generated::Current(g.placements, g.reusable))),
                VersionExports::V0_2(e) => Ok(wired(&e.placement_generate)
                    .call_generate_placements(store, snap, wit::unit(unit), &parent_wit)?
                    .map_err(wit::status)
                    .map(|p| Generated::Current(p, false))),
                VersionExports::V0_1(e) => match &old {
                    Some(group) => Ok(wired(&e.placement_generate)
                        .call_generate_placements(store, snap, group, &v0_1::placement(parent))?
                        .map_err(v0_1::status)
                        .map(Generated::V0_1)),
                    None => Ok(Err(skip())),
                },
            },
        )?;
        Ok(answer.map(|generated| match generated {
            Generated::Current(p, reusable) => Placements {
                candidates: p
                    .candidates
                    .into_iter()
                    .map(|p| wit::placement_from(snapshot, p))
                    .collect(),
                search_budget: p.search_budget,
                reusable,
            },
            Generated::V0_1(list) => Placements {
                candidates: list.into_iter().map(v0_1::placement_from).collect(),
                search_budget: None,
                reusable: false,
            },
        }))
    }

    fn score_placement(
        &mut self,
        snapshot: &mut Snapshot,
        unit: Unit,
        placement: &Placement,
        assignments: &[(PodId, NodeId)],
    ) -> Answer<Result<i64, Status>> {
        let placement_wit = wit::placement(snapshot, placement);
        self.call(
            snapshot,
            ExtensionPoint::PlacementScore,
            |exports, store, snap| by_version!(exports;
 shared e => {
                    let assignments: Vec<_> = assignments
                        .iter()
                        .map(|&(pod, node)| super::bindings::types::Assignment { pod, node })
                        .collect();
                    Ok(wired(&e.placement_score)
                        .call_score_placement(
                            store,
                            snap,
                            wit::unit(unit),
                            &placement_wit,
                            &assignments,
                        )?
                        .map_err(wit::status))
                };
VersionExports::V0_1(e) => match unit {
                    Unit::Group(group) => Ok(wired(&e.placement_score)
                        .call_score_placement(
                            store,
                            snap,
                            group,
                            &v0_1::placement(placement),
                            &v0_1::assignments(assignments),
                        )?
                        .map_err(v0_1::status)),
                    Unit::Composite(_) => Ok(Ok(0)),
                },
),
        )
    }

    fn order_victims(
        &mut self,
        snapshot: &mut Snapshot,
        preemptor: Preemptor,
        units: &[VictimUnit],
    ) -> Answer<Result<Vec<u32>, Status>> {
        let units: Vec<_> = units.iter().map(wit::victim).collect();
        self.call(
            snapshot,
            ExtensionPoint::PodGroupPostFilter,
            |exports, store, snap| by_version!(exports;
 shared e => Ok(wired(&e.pod_group_post_filter)
                    .call_order_victims(store, snap, wit::preemptor(preemptor), &units)?
                    .map_err(wit::status));
VersionExports::V0_1(_) => Err(post_filter_not_wired()),
),
        )
    }

    fn select_candidate(
        &mut self,
        snapshot: &mut Snapshot,
        preemptor: Preemptor,
        candidates: &[PreemptionCandidate],
    ) -> Answer<Result<u32, Status>> {
        let candidates: Vec<_> = candidates.iter().map(wit::candidate).collect();
        self.call(
            snapshot,
            ExtensionPoint::PodGroupPostFilter,
            |exports, store, snap| by_version!(exports;
 shared e => Ok(wired(&e.pod_group_post_filter)
                    .call_select_candidate(store, snap, wit::preemptor(preemptor), &candidates)?
                    .map_err(wit::status));
VersionExports::V0_1(_) => Err(post_filter_not_wired()),
),
        )
    }

    fn take_logs(&mut self) -> Vec<LogLine> {
        self.take_log_lines()
    }

    fn log_drops(&self) -> LogDrops {
        self.dropped()
    }
}

/// Placements as the component's contract version returned them: 0.3.0's
/// and 0.2.0's record (with whether it may be reused; never for 0.2.0),
/// or 0.1.0's list.
enum Generated {
    Current(super::bindings::types::Placements, bool),
    V0_1(Vec<v0_1::types::Placement>),
}

/// 0.1.0's `pod-group-post-filter` (built around a `group-trial` callback
/// no host served) is never wired; the host does not call it.
fn post_filter_not_wired() -> wasmtime::Error {
    wasmtime::format_err!("0.1.0 components are not wired into pod-group-post-filter")
}
