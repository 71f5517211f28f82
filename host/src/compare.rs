//! What-if comparison (`wasched compare`): two plugin sets or
//! configurations on one snapshot, and only what differs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::report::{ClusterView, DecisionView, Differences, Fate, PodState, RunView, Summary};
use crate::{PluginConfig, ReadOptions, Runtime, Simulation};

/// What one side of a comparison loads: `bundled`, a plugin directory, a
/// configuration file for the bundled plugins, `kube-scheduler` (the real
/// one, v1.37.2, on a real control plane), or `kube-scheduler-wasm` (that
/// kube-scheduler running the bundled components).
#[derive(Debug, Clone)]
pub struct PluginChoice {
    /// As the user wrote it.
    pub label: String,
    /// A plugin directory, or `None` for the bundled plugins.
    pub plugins: Option<PathBuf>,
    /// The configuration.
    pub config: PluginConfig,
    /// This side is the real kube-scheduler, not wasched's engine.
    pub kube_scheduler: bool,
    /// The kube-scheduler side runs wasched's components.
    pub wasm: Option<crate::cluster::WasmComponents>,
}

impl PluginChoice {
    /// Reads `text`: `bundled`, `kube-scheduler`, `kube-scheduler-wasm`, a
    /// directory (its `*.wasm` components) or a file (a configuration of
    /// the bundled plugins). `queued`: the run has a queue (a replay), so
    /// the configuration's backoff counts.
    pub fn parse(text: &str, queued: bool) -> Result<Self> {
        let path = Path::new(text);
        if text == "kube-scheduler" || text == "kube-scheduler-wasm" {
            return Ok(Self {
                label: text.to_string(),
                plugins: None,
                config: PluginConfig::default(),
                kube_scheduler: true,
                wasm: (text == "kube-scheduler-wasm").then(crate::cluster::WasmComponents::default),
            });
        }
        let (plugins, config) = if text == "bundled" {
            (None, PluginConfig::default())
        } else if path.is_dir() {
            (Some(path.to_path_buf()), PluginConfig::default())
        } else if path.is_file() {
            (None, PluginConfig::read_noting(Some(path), queued)?)
        } else {
            bail!(
                "{text}: expected `bundled`, `kube-scheduler`, `kube-scheduler-wasm`, a plugin directory or a configuration file; no such file or directory"
            )
        };
        Ok(Self {
            label: text.to_string(),
            plugins,
            config,
            kube_scheduler: false,
            wasm: None,
        })
    }
}

/// Both runs of a comparison and what differs.
#[derive(Debug)]
pub struct Compared {
    /// The cluster before the runs.
    pub cluster: ClusterView,
    /// Side A's run, then side B's.
    pub runs: Vec<RunView>,
    /// What differs.
    pub comparison: Comparison,
}

/// Reads the snapshot once and schedules it with each side's plugins;
/// `progress` hears of each run's cycles in turn. A side that fails to
/// load is named in the error.
///
/// A `kube-scheduler` side runs after the other: where kube-scheduler
/// breaks a tie between equally scored nodes or placements, it breaks it
/// toward the other side's choice if that is among the tied best
/// ([`crate::cluster::agreement::preferences`]), so that a tie it would
/// break at random shows as no difference.
pub fn run(
    runtime: &Runtime,
    files: &[PathBuf],
    read: &ReadOptions,
    sides: &[PluginChoice; 2],
    group_by: &[String],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Compared> {
    // A kube-scheduler side loads the objects into a real API server.
    let read = crate::ReadOptions {
        keep_stored: sides.iter().any(|s| s.kube_scheduler),
        ..read.clone()
    };
    let manifests = crate::read_manifests_with(files, &read)?;
    // The pending pods of default-scheduler, as `simulate` and
    // kube-scheduler take them; other schedulers' are noted.
    let build = crate::model::BuildOptions {
        schedulers: vec![crate::model::DEFAULT_SCHEDULER_NAME.to_string()],
        live: false,
    };
    let against_kube_scheduler = read.keep_stored;
    let (snapshot, objects) = crate::snapshot_keeping(manifests, &build, against_kube_scheduler)?;
    let cluster = ClusterView::capture(&snapshot, group_by);
    let names = ["A", "B"];
    let mut simulated: [Option<crate::Simulated>; 2] = [None, None];
    for (i, side) in sides.iter().enumerate().filter(|(_, s)| !s.kube_scheduler) {
        let mut config = side.config.clone();
        if against_kube_scheduler {
            // The kube-scheduler engine scores every feasible node
            // (its sampling is parallel and racy); so does this side.
            config.set_percentage_of_nodes_to_score(100);
        }
        let simulation = Simulation {
            plugins: side.plugins.clone(),
            config,
            ..Simulation::default()
        };
        let run = simulation
            .schedule(snapshot.clone(), runtime, progress)
            .with_context(|| format!("side {} ({})", names[i], side.label))?;
        simulated[i] = Some(run);
    }
    for (i, side) in sides.iter().enumerate().filter(|(_, s)| s.kube_scheduler) {
        let prefer = simulated[1 - i]
            .as_ref()
            .map(|other| crate::cluster::agreement::preferences(&snapshot, &other.outcome));
        let options = crate::cluster::ScheduleOptions {
            prefer,
            wasm: side.wasm.clone(),
            ..Default::default()
        };
        let objects = objects.as_ref().expect("kept for kube-scheduler");
        let run = crate::kube_scheduler(objects, &snapshot, &options)
            .with_context(|| format!("side {} ({})", names[i], side.label))?;
        simulated[i] = Some(run);
    }
    let runs: Vec<RunView> = simulated
        .into_iter()
        .zip(sides)
        .map(|(run, side)| {
            let run = run.expect("every side ran");
            RunView::of(&cluster, &run.outcome, &side.label, run.plugins)
        })
        .collect();
    let comparison = Comparison::of(&cluster, &runs[0], &runs[1]);
    Ok(Compared {
        cluster,
        runs,
        comparison,
    })
}

/// One side of a comparison, in the summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Side {
    /// What was loaded.
    pub label: String,
    /// Its totals.
    #[serde(flatten)]
    pub summary: Summary,
}

/// Where a pod ended up on one side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodSide {
    /// `running`, `bound`, `pending` or `evicted`.
    pub state: Fate,
    /// Its node (for an evicted pod, the node it left).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// A pod whose fate differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodDifference {
    /// `namespace/name`.
    pub pod: String,
    /// On side A.
    pub a: PodSide,
    /// On side B.
    pub b: PodSide,
}

/// One decision on one side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecisionSide {
    /// `admitted`, `pending`, `disrupted`, `bound`, `evicted`, or `absent`
    /// when this side made no such decision.
    pub result: String,
    /// The placement it was admitted into.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// Pods it evicted.
    pub evictions: usize,
}

/// A PodGroup (or lone pod) decision that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecisionDifference {
    /// `PodGroup` or `Pod`.
    pub kind: String,
    /// `namespace/name`.
    pub name: String,
    /// On side A.
    pub a: DecisionSide,
    /// On side B.
    pub b: DecisionSide,
}

/// What differs between two runs on one snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// Side A's label and totals.
    pub a: Side,
    /// Side B's label and totals.
    pub b: Side,
    /// Decisions that differ, in A's order, then B's extra ones: every
    /// PodGroup's, and lone pods' whose pod is not already in `pods`.
    pub decisions: Vec<DecisionDifference>,
    /// Pods whose fate or node differs, by name.
    pub pods: Vec<PodDifference>,
    /// The same, as indices for the report.
    #[serde(skip)]
    pub differences: Differences,
}

impl Comparison {
    /// Compares two runs read against the same cluster.
    pub fn of(cluster: &ClusterView, a: &RunView, b: &RunView) -> Self {
        let side = |run: &RunView, i: usize| {
            let PodState { state, node } = run.pods[i];
            PodSide {
                state,
                node: node.map(|n| cluster.nodes[n].name.clone()),
            }
        };
        let mut differences = Differences::default();
        let mut pods = Vec::new();
        for i in 0..cluster.pods.len() {
            if a.pods[i] != b.pods[i] {
                differences.pods.push(i);
                pods.push(PodDifference {
                    pod: cluster.pods[i].name.clone(),
                    a: side(a, i),
                    b: side(b, i),
                });
            }
        }
        pods.sort_by(|x, y| x.pod.cmp(&y.pod));
        let by_key = |run: &RunView| -> BTreeMap<String, DecisionSide> {
            run.decisions
                .iter()
                .map(|d| (d.key(), decision_side(d)))
                .collect()
        };
        let (in_a, in_b) = (by_key(a), by_key(b));
        let absent = DecisionSide {
            result: "absent".into(),
            placement: None,
            evictions: 0,
        };
        let mut decisions = Vec::new();
        let order = a
            .decisions
            .iter()
            .chain(b.decisions.iter().filter(|d| !in_a.contains_key(&d.key())));
        for d in order {
            let key = d.key();
            let x = in_a.get(&key).unwrap_or(&absent);
            let y = in_b.get(&key).unwrap_or(&absent);
            if x == y {
                continue;
            }
            differences.decisions.push(key);
            // A lone pod whose fate differs is listed with the pods; listed
            // here is every other decision that differs (a group admitted
            // or placed elsewhere, a pod that preempted other pods).
            let pod_listed = d.kind == "Pod"
                && d.pods
                    .iter()
                    .any(|p| differences.pods.binary_search(p).is_ok());
            if !pod_listed {
                decisions.push(DecisionDifference {
                    kind: d.kind.into(),
                    name: d.name.clone(),
                    a: x.clone(),
                    b: y.clone(),
                });
            }
        }
        Self {
            a: Side {
                label: a.label.clone(),
                summary: a.summary,
            },
            b: Side {
                label: b.label.clone(),
                summary: b.summary,
            },
            decisions,
            pods,
            differences,
        }
    }

    /// Whether the two runs decided anything differently.
    pub fn differs(&self) -> bool {
        !self.differences.pods.is_empty() || !self.differences.decisions.is_empty()
    }

    /// The summary line: bound, pending, evicted and GPUs for A and B.
    pub fn summary_line(&self) -> String {
        let side = |name: &str, s: &Side| {
            format!(
                "{name} ({}): {} bound, {} pending, {} evicted, {} GPUs used",
                s.label, s.summary.bound, s.summary.pending, s.summary.evicted, s.summary.gpus
            )
        };
        format!("{}; {}", side("A", &self.a), side("B", &self.b))
    }

    /// The JSON object scripts read.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("comparison serialises")
    }

    /// An aligned table of the differences, then the summary line.
    pub fn to_table(&self) -> String {
        let mut rows: Vec<[String; 4]> =
            vec![["KIND".into(), "NAME".into(), "A".into(), "B".into()]];
        let decision = |d: &DecisionSide| {
            let mut text = d.result.clone();
            if let Some(p) = &d.placement {
                text.push_str(&format!(" in {p}"));
            }
            if d.evictions > 0 {
                text.push_str(&format!(", {} evicted", d.evictions));
            }
            text
        };
        for d in &self.decisions {
            rows.push([
                d.kind.clone(),
                d.name.clone(),
                decision(&d.a),
                decision(&d.b),
            ]);
        }
        let pod = |p: &PodSide| match (&p.state, &p.node) {
            (Fate::Evicted, Some(node)) => format!("evicted from {node}"),
            (state, Some(node)) => format!("{} on {node}", state.as_str()),
            (state, None) => state.as_str().to_string(),
        };
        for p in &self.pods {
            rows.push(["Pod".into(), p.pod.clone(), pod(&p.a), pod(&p.b)]);
        }
        let mut out = if rows.len() > 1 {
            crate::table::render(&rows)
        } else {
            "no differences\n".to_string()
        };
        out.push_str(&self.summary_line());
        out.push('\n');
        out
    }
}

fn decision_side(d: &DecisionView) -> DecisionSide {
    DecisionSide {
        result: d.result.into(),
        placement: d.placement.clone(),
        evictions: d.evictions.len(),
    }
}
