//! One extension-point call: the request as the caller writes it (objects
//! by name), resolved against the view, answered by one instance of the
//! plugin behind the framework's answer checks, written back by name.
//!
//! Requests and responses are JSON ([`protocol`], mirrored by the Go
//! package `kube/wasm` and held to the same golden fixtures): `{"point": "filter", "pod": "ns/a", "nodes":
//! ["n1", ...]}` → `{"status": {"code": "Success", "reason": ""},
//! "rejections": [{"reason": "...", "nodes": ["n1"]}], "logs": [...]}`.
//! Status codes are kube-scheduler's names. A plugin that traps, runs out
//! of fuel or time, exhausts its memory or answers outside the contract is
//! contained: the response carries `failure` (plugin, cause, message) and a
//! status `Error` naming the plugin under `failurePolicy: Fail`, `Skip`
//! under `Ignore`.

use anyhow::{Result, anyhow, bail};
use wasched::Snapshot;
use wasched::framework::{
    Code, ExtensionPoint, FailurePolicy, LogLevel, Placement, PluginError, PreemptionCandidate,
    Preemptor, Progress, Status, Unit, VictimUnit,
};
use wasched::model::{NodeId, PodId};

use std::sync::Mutex;
use std::time::Instant;

use crate::pool::Plugin;
use crate::protocol::{
    self, PreemptorRef, ProgressBounds, Rejection, Request, Response, UnitRef, Victim,
};
use crate::view::View;

impl Request {
    fn point(&self) -> ExtensionPoint {
        match self {
            Self::PreEnqueue { .. } => ExtensionPoint::PreEnqueue,
            Self::Filter { .. } => ExtensionPoint::Filter,
            Self::Score { .. } => ExtensionPoint::Score,
            Self::Permit { .. } => ExtensionPoint::Permit,
            Self::PlacementGenerate { .. } => ExtensionPoint::PlacementGenerate,
            Self::PlacementScore { .. } => ExtensionPoint::PlacementScore,
            Self::OrderVictims { .. } | Self::SelectCandidate { .. } => {
                ExtensionPoint::PodGroupPostFilter
            }
        }
    }
}

/// Answers `request` (JSON) with `plugin` over `view`. An error is a request
/// the caller got wrong (malformed, an object not in the view, a point the
/// plugin does not implement); what the plugin does wrong is in the
/// response.
///
/// The view is locked only to take its snapshot: the plugin runs on that
/// copy (what the call assumes is its own), so that other calls and the
/// view's updates go on meanwhile.
pub fn call(
    runtime: &wasched::Runtime,
    plugin: &Plugin,
    view: &Mutex<View>,
    request: &[u8],
) -> Result<Response> {
    // Read without tracking the path; a request that does not read is
    // read again to name the field.
    let request: Request = serde_json::from_slice(request).or_else(|_| {
        serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(request))
            .map_err(|e| anyhow!("request: field {}: {}", e.path(), e.inner()))
    })?;
    let point = request.point();
    if !plugin.implements(point) {
        bail!("plugin {} does not implement {point}", plugin.name());
    }
    let in_cycle = point != ExtensionPoint::PreEnqueue;
    let mut snapshot = view
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .snapshot(in_cycle);
    // A request naming what the view lacks is the caller's error, breaker
    // open or not.
    let resolved = Resolved::new(&snapshot, request)?;
    let attempt = match plugin.breaker().attempt(Instant::now()) {
        Ok(attempt) => attempt,
        Err(refusal) => return Ok(refused(plugin, point, refusal)),
    };
    let answered = plugin
        .with_instance(runtime, |set| {
            set.start_run();
            let mut response = {
                let Some(mut checked) = set.at(point).next() else {
                    return Err(anyhow!("plugin {} does not serve {point}", plugin.name()));
                };
                resolved.answer(&mut checked, &mut snapshot, plugin.policy())
            };
            let logs: Vec<protocol::LogLine> = set
                .drain_logs()
                .into_iter()
                .map(|(_, line)| protocol::LogLine {
                    level: level(line.level).to_string(),
                    message: line.message,
                })
                .collect();
            if !logs.is_empty() {
                response.logs = Some(logs);
            }
            Ok(response)
        })
        .and_then(|answered| answered);
    let verdict = answered.as_ref().ok().map(|r| r.failure.is_some());
    let transition = attempt.finish(verdict, Instant::now());
    let mut response = answered?;
    response.breaker = transition.map(|t| t.label().to_string());
    Ok(response)
}

/// The answer of a plugin whose circuit breaker is open: its failure
/// policy's, without calling it.
fn refused(plugin: &Plugin, point: ExtensionPoint, refusal: String) -> Response {
    let reason = format!("plugin {}: {refusal} in {point}", plugin.name());
    contained(
        plugin.name(),
        CIRCUIT_OPEN,
        refusal,
        reason,
        plugin.policy(),
    )
}

/// The `failure.cause` of a call refused by an open circuit breaker.
pub const CIRCUIT_OPEN: &str = "circuit-open";

/// A request with its names resolved to the view's ids.
enum Resolved {
    PreEnqueue(Unit),
    Filter(PodId, Vec<NodeId>),
    Score(PodId, Vec<NodeId>),
    Permit(Unit, Progress),
    PlacementGenerate(Unit, Placement),
    PlacementScore(Unit, Placement, Vec<(PodId, NodeId)>),
    OrderVictims(Preemptor, Vec<VictimUnit>),
    SelectCandidate(Preemptor, Vec<PreemptionCandidate>),
}

impl Resolved {
    fn new(s: &Snapshot, request: Request) -> Result<Resolved> {
        Ok(match request {
            Request::PreEnqueue { unit } => Self::PreEnqueue(unit_of(s, &unit)?),
            Request::Filter { pod, nodes } => Self::Filter(pod_of(s, &pod)?, nodes_of(s, nodes)?),
            Request::Score { pod, nodes } => Self::Score(pod_of(s, &pod)?, nodes_of(s, nodes)?),
            Request::Permit { unit, progress } => Self::Permit(
                unit_of(s, &unit)?,
                Progress {
                    scheduled: progress.scheduled,
                    remaining: progress.remaining,
                },
            ),
            Request::PlacementGenerate { unit, parent } => {
                Self::PlacementGenerate(unit_of(s, &unit)?, placement_of(s, parent)?)
            }
            Request::PlacementScore {
                unit,
                placement,
                assignments,
            } => Self::PlacementScore(
                unit_of(s, &unit)?,
                placement_of(s, placement)?,
                assignments_of(s, &assignments)?,
            ),
            Request::OrderVictims { preemptor, units } => {
                Self::OrderVictims(preemptor_of(s, &preemptor)?, victims_of(s, units)?)
            }
            Request::SelectCandidate {
                preemptor,
                candidates,
            } => {
                let candidates = candidates
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| {
                        Ok(PreemptionCandidate {
                            index: i as u32,
                            domain: c.domain,
                            victims: victims_of(s, c.victims)?,
                            assignments: assignments_of(s, &c.assignments)?,
                        })
                    })
                    .collect::<Result<_>>()?;
                Self::SelectCandidate(preemptor_of(s, &preemptor)?, candidates)
            }
        })
    }

    /// Calls the plugin and writes its answer by name.
    fn answer(
        &self,
        plugin: &mut wasched::framework::Checked<'_>,
        s: &mut Snapshot,
        policy: FailurePolicy,
    ) -> Response {
        let success = || Response::of(status(&Status::success()));
        let answer = match self {
            Self::PreEnqueue(unit) => plugin
                .pre_enqueue(s, *unit)
                .map(|st| Response::of(status(&st))),
            Self::Filter(pod, nodes) => plugin.filter(s, *pod, nodes).map(|rejections| {
                if rejections.is_empty() {
                    return success();
                }
                let mut r = Response::of(status(&Status::new(Code::Unschedulable, "")));
                r.rejections = Some(
                    rejections
                        .iter()
                        .map(|r| Rejection {
                            reason: r.reason.clone(),
                            nodes: names(s, &r.nodes),
                        })
                        .collect(),
                );
                r
            }),
            Self::Score(pod, nodes) => plugin.score(s, *pod, nodes).map(|scores| match scores {
                Ok(scores) => Response {
                    scores: Some(scores),
                    ..success()
                },
                Err(st) => Response::of(status(&st)),
            }),
            Self::Permit(unit, progress) => {
                plugin.permit(s, *unit, *progress).map(|verdict| Response {
                    reuse: verdict.reuse.map(|b| ProgressBounds {
                        min_scheduled: b.min_scheduled,
                        max_scheduled: b.max_scheduled,
                        min_possible: b.min_possible,
                        max_possible: b.max_possible,
                    }),
                    ..Response::of(status(&verdict.status))
                })
            }
            Self::PlacementGenerate(unit, parent) => plugin
                .generate_placements(s, *unit, parent)
                .map(|generated| match generated {
                    Ok(None) => Response::of(status(&Status::new(Code::Skip, ""))),
                    Ok(Some(placements)) => Response {
                        placements: Some(
                            placements
                                .candidates
                                .iter()
                                .map(|p| protocol::Placement {
                                    name: p.name.clone(),
                                    nodes: Some(names(s, &p.nodes)),
                                    domain: p.domain.clone(),
                                })
                                .collect(),
                        ),
                        search_budget: placements.search_budget,
                        ..success()
                    },
                    Err(st) => Response::of(status(&st)),
                }),
            Self::PlacementScore(unit, placement, assignments) => {
                // The contract scores a placement with its pods assumed;
                // kube-scheduler has reverted them by the time it scores,
                // so they are assumed here, in the call's own copy.
                for &(pod, node) in assignments {
                    if s.pods[pod as usize].node.is_none() {
                        s.assume(pod, node);
                    }
                }
                plugin
                    .score_placement(s, *unit, placement, assignments)
                    .map(|score| match score {
                        Ok(score) => Response {
                            score: Some(score),
                            ..success()
                        },
                        Err(st) => Response::of(status(&st)),
                    })
            }
            Self::OrderVictims(preemptor, units) => {
                plugin
                    .order_victims(s, *preemptor, units)
                    .map(|order| match order {
                        Ok(order) => Response {
                            order: Some(order),
                            ..success()
                        },
                        Err(st) => Response::of(status(&st)),
                    })
            }
            Self::SelectCandidate(preemptor, candidates) => plugin
                .select_candidate(s, *preemptor, candidates)
                .map(|choice| match choice {
                    Ok(i) => Response {
                        candidate: Some(i),
                        ..success()
                    },
                    Err(st) => Response::of(status(&st)),
                }),
        };
        answer.unwrap_or_else(|e| failure(&e, policy))
    }
}

/// A contained plugin failure, under its failure policy.
fn failure(error: &PluginError, policy: FailurePolicy) -> Response {
    let reason = error.to_string();
    let cause = error.cause.label();
    contained(&error.plugin, cause, error.message.clone(), reason, policy)
}

/// What a contained failure answers: `Error` under `failurePolicy: Fail`,
/// `Skip` under `Ignore`, with the failure named.
fn contained(
    plugin: &str,
    cause: &str,
    message: String,
    reason: String,
    policy: FailurePolicy,
) -> Response {
    let code = match policy {
        FailurePolicy::Fail => Code::Error,
        FailurePolicy::Ignore => Code::Skip,
    };
    Response {
        failure: Some(protocol::Failure {
            plugin: plugin.to_string(),
            cause: cause.to_string(),
            message,
        }),
        ..Response::of(status(&Status::new(code, reason)))
    }
}

/// A status with kube-scheduler's code names.
fn status(status: &Status) -> protocol::Status {
    let code = match status.code {
        Code::Success => "Success",
        Code::Error => "Error",
        Code::Unschedulable => "Unschedulable",
        Code::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
        Code::Wait => "Wait",
        Code::Skip => "Skip",
    };
    protocol::Status {
        code: code.to_string(),
        reason: status.reason.clone(),
    }
}

fn level(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Debug => "debug",
        LogLevel::Info => "info",
        LogLevel::Warn => "warn",
        LogLevel::Error => "error",
    }
}

fn names(s: &Snapshot, nodes: &[NodeId]) -> Vec<String> {
    nodes
        .iter()
        .map(|&n| s.nodes[n as usize].name.clone())
        .collect()
}

fn pod_of(s: &Snapshot, key: &str) -> Result<PodId> {
    s.pod_named(key)
        .ok_or_else(|| anyhow!("pod {key} is not in the view"))
}

fn node_of(s: &Snapshot, name: &str) -> Result<NodeId> {
    s.node_named(name)
        .ok_or_else(|| anyhow!("node {name} is not in the view"))
}

/// The nodes named, ascending and without duplicates (the contract's
/// order); absent: every node.
fn nodes_of(s: &Snapshot, names: Option<Vec<String>>) -> Result<Vec<NodeId>> {
    let Some(names) = names else {
        return Ok((0..s.nodes.len() as NodeId).collect());
    };
    let mut ids = names
        .iter()
        .map(|n| node_of(s, n))
        .collect::<Result<Vec<_>>>()?;
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

fn unit_of(s: &Snapshot, unit: &UnitRef) -> Result<Unit> {
    match (&unit.pod_group, &unit.composite_pod_group) {
        (Some(g), None) => s
            .group_named(g)
            .map(Unit::Group)
            .ok_or_else(|| anyhow!("PodGroup {g} is not in the view")),
        (None, Some(c)) => s
            .composite_named(c)
            .map(Unit::Composite)
            .ok_or_else(|| anyhow!("CompositePodGroup {c} is not in the view")),
        _ => bail!("unit: give exactly one of podGroup, compositePodGroup"),
    }
}

fn preemptor_of(s: &Snapshot, p: &PreemptorRef) -> Result<Preemptor> {
    match (&p.pod_group, &p.composite_pod_group, &p.pod) {
        (None, None, Some(pod)) => Ok(Preemptor::Pod(pod_of(s, pod)?)),
        (g, c, None) => Ok(Preemptor::Unit(unit_of(
            s,
            &UnitRef {
                pod_group: g.clone(),
                composite_pod_group: c.clone(),
            },
        )?)),
        _ => bail!("preemptor: give exactly one of podGroup, compositePodGroup, pod"),
    }
}

fn placement_of(s: &Snapshot, p: protocol::Placement) -> Result<Placement> {
    Ok(Placement {
        nodes: nodes_of(s, p.nodes)?,
        name: p.name,
        domain: p.domain,
    })
}

fn assignments_of(s: &Snapshot, pairs: &[(String, String)]) -> Result<Vec<(PodId, NodeId)>> {
    pairs
        .iter()
        .map(|(pod, node)| Ok((pod_of(s, pod)?, node_of(s, node)?)))
        .collect()
}

fn victims_of(s: &Snapshot, units: Vec<Victim>) -> Result<Vec<VictimUnit>> {
    units
        .into_iter()
        .enumerate()
        .map(|(i, u)| {
            let mut pods = u
                .pods
                .iter()
                .map(|p| pod_of(s, p))
                .collect::<Result<Vec<_>>>()?;
            pods.sort_unstable();
            let group = match &u.group {
                Some(g) => Some(
                    s.group_named(g)
                        .ok_or_else(|| anyhow!("PodGroup {g} is not in the view"))?,
                ),
                None => None,
            };
            Ok(VictimUnit {
                index: i as u32,
                pods,
                group,
                priority: u.priority,
                start_time: u.start_time,
                violates_budget: u.violates_budget,
            })
        })
        .collect()
}
