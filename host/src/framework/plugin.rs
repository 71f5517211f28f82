//! The [`Plugin`] trait the scheduler calls, and the [`PluginSet`] that
//! holds plugins in configuration order and checks every answer.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use super::answers::{self, OutputLimits};
use super::{
    Code, ExtensionPoint, FailureCause, FailurePolicy, PermitVerdict, Placement, Placements,
    PluginError, PreemptionCandidate, Preemptor, Progress, ProgressBounds, Rejection, Status, Unit,
    VictimUnit,
};
use crate::model::{NodeId, PodId, Snapshot};

/// A plugin call's result: the answer, or why there is none.
pub type Answer<T> = Result<T, PluginError>;

/// Severity of a plugin's log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Verbose detail.
    Debug,
    /// Normal operation.
    Info,
    /// Something looks wrong.
    Warn,
    /// Something failed.
    Error,
}

/// One line a plugin logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// Severity.
    pub level: LogLevel,
    /// The text (cut to the plugin's limits).
    pub message: String,
}

/// Log output a plugin produced beyond its caps, dropped and counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogDrops {
    /// Lines dropped.
    pub lines: u64,
    /// Bytes dropped (whole dropped lines plus the cut tails of kept ones).
    pub bytes: u64,
}

/// One plugin as the scheduler sees it: one method per extension point.
///
/// Implemented by wasm components ([`crate::runtime::WasmPlugin`]) and by
/// native fakes in tests. The scheduler only calls a method if
/// [`Plugin::points`] lists its extension point; the default bodies are
/// neutral answers, so a fake implements just what it needs. Every answer
/// is checked by [`Checked`] before the scheduler uses it, whoever gave it.
///
/// The snapshot is `&mut` so that an implementation may lend it for the
/// duration of the call (the wasm runtime moves it into the plugin's store);
/// a plugin must hand it back unchanged.
pub trait Plugin {
    /// The plugin's name (unique in a set).
    fn name(&self) -> &str;
    /// Where it came from, for messages (a file, `bundled:<crate>`).
    fn source(&self) -> &str {
        self.name()
    }
    /// The contract version it was built against (`0.2.0`); `None` for
    /// plugins that are not components.
    fn contract_version(&self) -> Option<&str> {
        None
    }
    /// The extension points it implements, in cycle order.
    fn points(&self) -> &[ExtensionPoint];
    /// What a failure of this plugin does to the pod or group.
    fn failure_policy(&self) -> FailurePolicy {
        FailurePolicy::Fail
    }
    /// Caps on what it may hand the host.
    fn limits(&self) -> &OutputLimits {
        &answers::DEFAULT_LIMITS
    }
    /// A new run starts: per-run budgets (log bytes) start over.
    fn start_run(&mut self) {}

    /// `pre-enqueue`: may `unit` be queued?
    fn pre_enqueue(&mut self, _snapshot: &mut Snapshot, _unit: Unit) -> Answer<Status> {
        Ok(Status::success())
    }
    /// `filter`: the nodes among `nodes` that cannot host `pod`, grouped
    /// by reason.
    fn filter(
        &mut self,
        _snapshot: &mut Snapshot,
        _pod: PodId,
        _nodes: &[NodeId],
    ) -> Answer<Vec<Rejection>> {
        Ok(Vec::new())
    }
    /// `score`: one score per node of `nodes`, or a non-success status.
    fn score(
        &mut self,
        _snapshot: &mut Snapshot,
        _pod: PodId,
        nodes: &[NodeId],
    ) -> Answer<Result<Vec<i64>, Status>> {
        Ok(Ok(vec![0; nodes.len()]))
    }
    /// `permit`: is `unit`'s placement admissible so far, and how far may
    /// the answer be reused?
    fn permit(
        &mut self,
        _snapshot: &mut Snapshot,
        _unit: Unit,
        _progress: Progress,
    ) -> Answer<PermitVerdict> {
        Ok(PermitVerdict::reusable(
            Status::success(),
            ProgressBounds::ALWAYS,
        ))
    }
    /// `placement-generate`: candidate placements for `unit` within
    /// `parent`; a status with [`Code::Skip`] keeps `parent`.
    fn generate_placements(
        &mut self,
        _snapshot: &mut Snapshot,
        _unit: Unit,
        _parent: &Placement,
    ) -> Answer<Result<Placements, Status>> {
        Ok(Err(Status::new(Code::Skip, "")))
    }
    /// `placement-score`: a feasible placement's score in `0..=100`.
    fn score_placement(
        &mut self,
        _snapshot: &mut Snapshot,
        _unit: Unit,
        _placement: &Placement,
        _assignments: &[(PodId, NodeId)],
    ) -> Answer<Result<i64, Status>> {
        Ok(Ok(0))
    }
    /// `pod-group-post-filter.order-victims`: the reprieve order of `units`.
    fn order_victims(
        &mut self,
        _snapshot: &mut Snapshot,
        _preemptor: Preemptor,
        units: &[VictimUnit],
    ) -> Answer<Result<Vec<u32>, Status>> {
        Ok(Ok(units.iter().map(|u| u.index).collect()))
    }
    /// `pod-group-post-filter.select-candidate`: which candidate to carry out.
    fn select_candidate(
        &mut self,
        _snapshot: &mut Snapshot,
        _preemptor: Preemptor,
        _candidates: &[PreemptionCandidate],
    ) -> Answer<Result<u32, Status>> {
        Ok(Ok(0))
    }

    /// Takes the lines logged since the last call.
    fn take_logs(&mut self) -> Vec<LogLine> {
        Vec::new()
    }
    /// Log output dropped over the caps since the run started.
    fn log_drops(&self) -> LogDrops {
        LogDrops::default()
    }
}

struct Entry {
    plugin: Box<dyn Plugin>,
    /// Weight of its `score` and `placement-score` answers (default 1).
    weight: i64,
    /// Reasons cut to the plugin's `reason_bytes` since the run started.
    reasons_cut: u64,
    /// Calls and their wall-clock time per extension point, this run.
    times: BTreeMap<ExtensionPoint, CallTimes>,
}

/// How often a plugin was called at one extension point in a run, and how
/// long the calls took (the counterpart of upstream's
/// `scheduler_plugin_execution_duration_seconds`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallTimes {
    /// Calls.
    pub calls: u64,
    /// Their total wall-clock time.
    pub total: Duration,
    /// The longest one.
    pub max: Duration,
}

/// Plugins in configuration order; the scheduler's only way to them.
///
/// By default every plugin serves every extension point it implements, in
/// the order plugins were added, with weight 1. A [`Plan`] (from a
/// `KubeSchedulerConfiguration` profile) names, per extension point, which
/// plugins serve it, in which order and with which weight.
#[derive(Default)]
pub struct PluginSet {
    entries: Vec<Entry>,
    timing: bool,
    plan: Option<Plan>,
    /// Per point, the entries serving it and their weights (derived from
    /// `entries` and `plan` whenever either changes).
    routes: BTreeMap<ExtensionPoint, Vec<(usize, i64)>>,
    /// What the user should know about how the set was assembled.
    notes: Vec<String>,
    /// The profile's `percentageOfNodesToScore` (0: upstream's adaptive
    /// default).
    percentage_of_nodes_to_score: u32,
}

/// Per extension point, the plugins that serve it, in order, with their
/// score weights (by name).
pub type Plan = BTreeMap<ExtensionPoint, Vec<(String, i64)>>;

impl std::fmt::Debug for PluginSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl PluginSet {
    /// An empty set: the scheduler then runs only its in-tree node checks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a plugin; names must be unique. In a set already arranged
    /// ([`PluginSet::arrange`]) it serves every point it implements after
    /// the arranged plugins, with weight 1, as a profile's
    /// `multiPoint.enabled` appends a plugin.
    pub fn add(&mut self, plugin: Box<dyn Plugin>) -> Result<()> {
        if let Some(other) = self.iter().find(|p| p.name() == plugin.name()) {
            bail!(
                "{}: plugin name {} is already used by {}",
                plugin.source(),
                plugin.name(),
                other.source()
            );
        }
        if let Some(plan) = &mut self.plan {
            for &point in plugin.points() {
                plan.entry(point)
                    .or_default()
                    .push((plugin.name().to_string(), 1));
            }
        }
        self.entries.push(Entry {
            plugin,
            weight: 1,
            reasons_cut: 0,
            times: BTreeMap::new(),
        });
        self.route();
        Ok(())
    }

    /// Sets the weight of the plugin named `name` (at every point).
    pub fn set_weight(&mut self, name: &str, weight: i64) {
        if let Some(entry) = self.entries.iter_mut().find(|e| e.plugin.name() == name) {
            entry.weight = weight;
        }
        self.route();
    }

    /// Arranges the extension points as `plan` says. Every name must be a
    /// plugin of the set that implements that point.
    pub fn arrange(&mut self, plan: Plan) -> Result<()> {
        for (point, list) in &plan {
            for (name, _) in list {
                let Some(entry) = self.entries.iter().find(|e| e.plugin.name() == name) else {
                    bail!("plugin {name} is not loaded");
                };
                if !entry.plugin.points().contains(point) {
                    bail!(
                        "plugin {name} does not implement {} (it implements {})",
                        point.interface(),
                        entry
                            .plugin
                            .points()
                            .iter()
                            .map(|p| p.interface())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
            }
        }
        self.plan = Some(plan);
        self.route();
        Ok(())
    }

    fn route(&mut self) {
        self.routes = ExtensionPoint::ALL
            .into_iter()
            .map(|point| (point, self.serving(point)))
            .collect();
    }

    /// The entries serving `point`, in order, with their weights.
    fn serving(&self, point: ExtensionPoint) -> Vec<(usize, i64)> {
        match self.plan.as_ref() {
            Some(plan) => plan.get(&point).map_or_else(Vec::new, |list| {
                list.iter()
                    .filter_map(|(name, weight)| {
                        let i = self.entries.iter().position(|e| e.plugin.name() == name)?;
                        Some((i, *weight))
                    })
                    .collect()
            }),
            None => self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.plugin.points().contains(&point))
                .map(|(i, e)| (i, e.weight))
                .collect(),
        }
    }

    /// All plugins, in order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Plugin> {
        self.entries.iter().map(|e| e.plugin.as_ref())
    }

    /// The plugins' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.iter().map(|p| p.name()).collect()
    }

    /// The plugins serving `point`, in order, behind answer checks.
    pub fn at(&mut self, point: ExtensionPoint) -> At<'_> {
        let route = self.routes.get(&point).map_or(&[][..], Vec::as_slice);
        let ascending = route.windows(2).all(|w| w[0].0 < w[1].0);
        let order = if ascending {
            Order::Ascending {
                rest: &mut self.entries,
                offset: 0,
            }
        } else {
            Order::Any(self.entries.iter_mut().map(Some).collect())
        };
        At {
            order,
            route: route.iter(),
            timing: self.timing,
        }
    }

    /// Records a note on how the set was assembled (an in-tree plugin a
    /// `KubeSchedulerConfiguration` names, say).
    pub fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// The notes on how the set was assembled.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// How many plugins serve `point`.
    pub fn count_at(&self, point: ExtensionPoint) -> usize {
        self.routes.get(&point).map_or(0, Vec::len)
    }

    /// Sets the profile's `percentageOfNodesToScore` (0..=100; 0, the
    /// default, is upstream's adaptive share: 50% less one point per 125
    /// nodes, at least 5%).
    pub fn set_percentage_of_nodes_to_score(&mut self, percentage: u32) {
        self.percentage_of_nodes_to_score = percentage.min(100);
    }

    /// How many feasible nodes a pod's search over `all` nodes stops at
    /// (kube-scheduler's `numFeasibleNodesToFind`): every node below 100
    /// nodes; else the profile's percentage of them, never fewer than 100.
    pub fn feasible_nodes_to_find(&self, all: usize) -> usize {
        const MIN_FEASIBLE_NODES: usize = 100;
        const MIN_FEASIBLE_NODES_PERCENTAGE: usize = 5;
        if all < MIN_FEASIBLE_NODES {
            return all;
        }
        let percentage = match self.percentage_of_nodes_to_score as usize {
            0 => 50usize
                .saturating_sub(all / 125)
                .max(MIN_FEASIBLE_NODES_PERCENTAGE),
            p => p,
        };
        (all * percentage / 100).max(MIN_FEASIBLE_NODES)
    }

    /// Whether calls are timed ([`PluginSet::time_calls`]).
    pub fn timing(&self) -> bool {
        self.timing
    }

    /// Times every call from now on (`wasched simulate --stats`): two clock
    /// reads per call, a cost that shows at hundreds of thousands of calls,
    /// so off unless asked for. Calls are counted either way.
    pub fn time_calls(&mut self, on: bool) {
        self.timing = on;
    }

    /// Whether any plugin serves `point`.
    pub fn any_at(&self, point: ExtensionPoint) -> bool {
        self.count_at(point) > 0
    }

    /// A run starts: per-run counters and budgets start over.
    pub fn start_run(&mut self) {
        for entry in &mut self.entries {
            entry.reasons_cut = 0;
            entry.times.clear();
            entry.plugin.start_run();
        }
    }

    /// Every plugin's calls per extension point in this run, in plugin
    /// order then cycle order.
    pub fn call_times(&self) -> Vec<(&str, ExtensionPoint, CallTimes)> {
        self.entries
            .iter()
            .flat_map(|e| {
                e.times
                    .iter()
                    .map(|(&point, &times)| (e.plugin.name(), point, times))
            })
            .collect()
    }

    /// Takes every plugin's log lines, with the plugin's name.
    pub fn drain_logs(&mut self) -> Vec<(String, LogLine)> {
        let mut lines = Vec::new();
        for entry in &mut self.entries {
            let name = entry.plugin.name().to_string();
            let logs = entry.plugin.take_logs();
            lines.extend(logs.into_iter().map(|l| (name.clone(), l)));
        }
        lines
    }

    /// One warning per plugin that handed the host more than its caps
    /// allow in this run: reasons cut, log output dropped.
    pub fn output_warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        for entry in &self.entries {
            let (plugin, limits) = (&entry.plugin, entry.plugin.limits());
            if entry.reasons_cut > 0 {
                warnings.push(format!(
                    "plugin {}: {} reason(s) longer than {} bytes were cut (reasonBytes)",
                    plugin.name(),
                    entry.reasons_cut,
                    limits.reason_bytes
                ));
            }
            let drops = plugin.log_drops();
            if drops.lines > 0 || drops.bytes > 0 {
                warnings.push(format!(
                    "plugin {}: log output over its caps was dropped: {} line(s), {} byte(s) (logLinesPerCall {}, logBytesPerCall {}, logBytesPerRun {})",
                    plugin.name(),
                    drops.lines,
                    drops.bytes,
                    limits.log_lines_per_call,
                    limits.log_bytes_per_call,
                    limits.log_bytes_per_run
                ));
            }
        }
        warnings
    }
}

/// The plugins serving one extension point ([`PluginSet::at`]), in order.
pub struct At<'a> {
    order: Order<'a>,
    route: std::slice::Iter<'a, (usize, i64)>,
    timing: bool,
}

/// How [`At`] reaches the entries: by walking the slice when the route is
/// ascending (no allocation: the common case), else through a table.
enum Order<'a> {
    Ascending {
        rest: &'a mut [Entry],
        offset: usize,
    },
    Any(Vec<Option<&'a mut Entry>>),
}

impl<'a> Iterator for At<'a> {
    type Item = Checked<'a>;

    fn next(&mut self) -> Option<Checked<'a>> {
        let &(i, weight) = self.route.next()?;
        let entry: &'a mut Entry = match &mut self.order {
            Order::Ascending { rest, offset } => {
                let (_, tail) = std::mem::take(rest).split_at_mut(i - *offset);
                let (first, after) = tail.split_first_mut()?;
                *rest = after;
                *offset = i + 1;
                first
            }
            Order::Any(slots) => slots[i].take()?,
        };
        Some(Checked {
            plugin: entry.plugin.as_mut(),
            weight,
            reasons_cut: &mut entry.reasons_cut,
            times: &mut entry.times,
            timing: self.timing,
        })
    }
}

/// One plugin behind the answer checks: the same calls as [`Plugin`], but
/// an answer outside the contract becomes that plugin's
/// [`FailureCause::InvalidResult`] error and reasons are cut to its limit.
pub struct Checked<'a> {
    plugin: &'a mut dyn Plugin,
    weight: i64,
    reasons_cut: &'a mut u64,
    times: &'a mut BTreeMap<ExtensionPoint, CallTimes>,
    timing: bool,
}

impl Checked<'_> {
    /// Calls the plugin at `point`, counting (and if asked, timing) the call.
    fn timed<T>(&mut self, point: ExtensionPoint, call: impl FnOnce(&mut dyn Plugin) -> T) -> T {
        let start = self.timing.then(Instant::now);
        let answer = call(&mut *self.plugin);
        let times = self.times.entry(point).or_default();
        times.calls += 1;
        if let Some(start) = start {
            let elapsed = start.elapsed();
            times.total += elapsed;
            times.max = times.max.max(elapsed);
        }
        answer
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.plugin.name()
    }

    /// The weight of its score and placement-score answers at this point.
    pub fn weight(&self) -> i64 {
        self.weight
    }

    fn invalid(&self, point: ExtensionPoint, what: String) -> PluginError {
        PluginError {
            plugin: self.plugin.name().to_string(),
            point,
            cause: FailureCause::InvalidResult,
            message: format!("returned an invalid result ({what})"),
            policy: self.plugin.failure_policy(),
        }
    }

    fn cut(&mut self, text: &mut String) {
        if answers::cut_text(text, self.plugin.limits().reason_bytes) {
            *self.reasons_cut += 1;
        }
    }

    fn cut_status(&mut self, mut status: Status) -> Status {
        self.cut(&mut status.reason);
        status
    }

    fn cut_result<T>(&mut self, answer: Result<T, Status>) -> Result<T, Status> {
        answer.map_err(|status| self.cut_status(status))
    }

    fn check_length(&self, point: ExtensionPoint, what: &str, len: usize) -> Answer<()> {
        let max = self.plugin.limits().list_length;
        if len > max {
            return Err(self.invalid(
                point,
                format!("{len} {what}, more than the limit of {max} (listLength)"),
            ));
        }
        Ok(())
    }

    /// `pre-enqueue`.
    pub fn pre_enqueue(&mut self, snapshot: &mut Snapshot, unit: Unit) -> Answer<Status> {
        let status = self.timed(ExtensionPoint::PreEnqueue, |p| {
            p.pre_enqueue(snapshot, unit)
        })?;
        Ok(self.cut_status(status))
    }

    /// `filter`: rejections of candidates only, each node at most once.
    pub fn filter(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Answer<Vec<Rejection>> {
        let point = ExtensionPoint::Filter;
        let mut rejected = self.timed(point, |p| p.filter(snapshot, pod, nodes))?;
        let total = rejected.iter().map(|r| r.nodes.len()).sum();
        self.check_length(point, "rejections", total)?;
        answers::rejections(nodes, &rejected).map_err(|e| self.invalid(point, e))?;
        for rejection in &mut rejected {
            self.cut(&mut rejection.reason);
        }
        rejected.retain(|r| !r.nodes.is_empty());
        Ok(rejected)
    }

    /// `score`: one score in `0..=100` per node.
    pub fn score(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Answer<Result<Vec<i64>, Status>> {
        let scores = self.timed(ExtensionPoint::Score, |p| p.score(snapshot, pod, nodes))?;
        if let Ok(scores) = &scores {
            answers::scores(nodes.len(), scores)
                .map_err(|e| self.invalid(ExtensionPoint::Score, e))?;
        }
        Ok(self.cut_result(scores))
    }

    /// `permit`: the verdict, its reason cut; reuse bounds that do not
    /// contain the progress asked about are dropped (never trusted).
    pub fn permit(
        &mut self,
        snapshot: &mut Snapshot,
        unit: Unit,
        progress: Progress,
    ) -> Answer<PermitVerdict> {
        let mut verdict = self.timed(ExtensionPoint::Permit, |p| {
            p.permit(snapshot, unit, progress)
        })?;
        verdict.status = self.cut_status(verdict.status);
        if verdict.reuse.is_some_and(|b| !b.contain(progress.into())) {
            verdict.reuse = None;
        }
        Ok(verdict)
    }

    /// `placement-generate`: `Ok(Ok(None))` when the plugin skipped (keep
    /// `parent`); placements lie within `parent`, with unique names of at
    /// most `name_bytes`.
    pub fn generate_placements(
        &mut self,
        snapshot: &mut Snapshot,
        unit: Unit,
        parent: &Placement,
    ) -> Answer<Result<Option<Placements>, Status>> {
        let point = ExtensionPoint::PlacementGenerate;
        match self.timed(point, |p| p.generate_placements(snapshot, unit, parent))? {
            Ok(generated) => {
                self.check_length(point, "placements", generated.candidates.len())?;
                let max_name = self.plugin.limits().name_bytes;
                let candidates = answers::placements(parent, generated.candidates, max_name)
                    .map_err(|e| self.invalid(point, e))?;
                Ok(Ok(Some(Placements {
                    candidates,
                    search_budget: generated.search_budget,
                    reusable: generated.reusable,
                })))
            }
            Err(status) if status.code == Code::Skip => Ok(Ok(None)),
            Err(status) => Ok(Err(self.cut_status(status))),
        }
    }

    /// `placement-score`: a score in `0..=100`.
    pub fn score_placement(
        &mut self,
        snapshot: &mut Snapshot,
        unit: Unit,
        placement: &Placement,
        assignments: &[(PodId, NodeId)],
    ) -> Answer<Result<i64, Status>> {
        let score = self.timed(ExtensionPoint::PlacementScore, |p| {
            p.score_placement(snapshot, unit, placement, assignments)
        })?;
        if let Ok(s) = score {
            answers::score(s).map_err(|e| self.invalid(ExtensionPoint::PlacementScore, e))?;
        }
        Ok(self.cut_result(score))
    }

    /// `order-victims`: a permutation of the units' indices.
    pub fn order_victims(
        &mut self,
        snapshot: &mut Snapshot,
        preemptor: Preemptor,
        units: &[VictimUnit],
    ) -> Answer<Result<Vec<u32>, Status>> {
        let point = ExtensionPoint::PodGroupPostFilter;
        let order = self.timed(point, |p| p.order_victims(snapshot, preemptor, units))?;
        if let Ok(order) = &order {
            self.check_length(point, "victims", order.len())?;
            answers::permutation(units.len(), order).map_err(|e| self.invalid(point, e))?;
        }
        Ok(self.cut_result(order))
    }

    /// `select-candidate`: the index of one of `candidates`.
    pub fn select_candidate(
        &mut self,
        snapshot: &mut Snapshot,
        preemptor: Preemptor,
        candidates: &[PreemptionCandidate],
    ) -> Answer<Result<u32, Status>> {
        let choice = self.timed(ExtensionPoint::PodGroupPostFilter, |p| {
            p.select_candidate(snapshot, preemptor, candidates)
        })?;
        if let Ok(i) = choice {
            answers::choice(candidates.len(), i)
                .map_err(|e| self.invalid(ExtensionPoint::PodGroupPostFilter, e))?;
        }
        Ok(self.cut_result(choice))
    }
}
