//! A run's metrics in the Prometheus/OpenMetrics text format
//! (`wasched simulate --metrics FILE`), under upstream kube-scheduler names
//! where one exists.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::Outcome;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PluginErrorLabels {
    plugin: String,
    extension_point: String,
    cause: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: String,
}

/// Encodes the metrics of `outcome`:
/// - `wasched_plugin_errors_total{plugin,extension_point,cause}`;
/// - `scheduler_podgroup_schedule_attempts_total{result}` (upstream name; one
///   attempt per PodGroup that got past PreEnqueue: `scheduled`,
///   `unschedulable` or `error`; a group admitted by preemption counts an
///   `unschedulable` attempt and the `scheduled` retry);
/// - `scheduler_workload_preemption_attempts_total{result}` (`success` or
///   `failure`, per PodGroup that tried to preempt) and
///   `scheduler_workload_preemption_victims` (pods evicted per successful
///   preemption), upstream names.
pub fn encode_text(outcome: &Outcome) -> String {
    let mut registry = Registry::default();
    let plugin_errors = Family::<PluginErrorLabels, Counter>::default();
    registry.register(
        "wasched_plugin_errors",
        "Plugin calls that trapped, exceeded a bound or returned an invalid result",
        plugin_errors.clone(),
    );
    for e in &outcome.plugin_errors {
        let labels = PluginErrorLabels {
            plugin: e.plugin.clone(),
            extension_point: e.extension_point.clone(),
            cause: e.cause.clone(),
        };
        plugin_errors.get_or_create(&labels).inc_by(e.count);
    }
    let attempts = Family::<ResultLabels, Counter>::default();
    registry.register(
        "scheduler_podgroup_schedule_attempts",
        "Number of attempts to schedule pod groups, by the result",
        attempts.clone(),
    );
    let preemptions = Family::<ResultLabels, Counter>::default();
    registry.register(
        "scheduler_workload_preemption_attempts",
        "Number of workload-aware preemption attempts, by the result",
        preemptions.clone(),
    );
    let victims = Histogram::new([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]);
    registry.register(
        "scheduler_workload_preemption_victims",
        "Number of pods evicted by one successful workload-aware preemption",
        victims.clone(),
    );
    let count = |family: &Family<ResultLabels, Counter>, result: &str| {
        family
            .get_or_create(&ResultLabels {
                result: result.into(),
            })
            .inc();
    };
    for group in &outcome.pod_groups {
        if group.bound + group.pending == 0 {
            continue; // listed only for its disruption: not attempted
        }
        let preempted = group.preemption.as_ref().filter(|p| p.domain.is_some());
        if let Some(p) = &group.preemption {
            count(
                &preemptions,
                if preempted.is_some() {
                    "success"
                } else {
                    "failure"
                },
            );
            if preempted.is_some() {
                victims.observe(f64::from(p.victims));
                count(&attempts, "unschedulable");
            }
        }
        let result = match (group.scheduled, group.condition_reason.as_str()) {
            (true, _) => "scheduled",
            (false, "SchedulerError") => "error",
            (false, "Unschedulable") => "unschedulable",
            (false, _) => continue, // held back by PreEnqueue: no attempt
        };
        count(&attempts, result);
    }
    let mut text = String::new();
    encode(&mut text, &registry).expect("writing to a String cannot fail");
    text
}
