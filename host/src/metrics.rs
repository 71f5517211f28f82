//! A run's metrics in the Prometheus/OpenMetrics text format
//! (`wasched simulate --metrics FILE`), under upstream kube-scheduler names
//! where one exists.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
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
///   `unschedulable` or `error`).
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
    for group in &outcome.pod_groups {
        let result = match (group.scheduled, group.condition_reason.as_str()) {
            (true, _) => "scheduled",
            (false, "SchedulerError") => "error",
            (false, "Unschedulable") => "unschedulable",
            (false, _) => continue, // held back by PreEnqueue: no attempt
        };
        attempts
            .get_or_create(&ResultLabels {
                result: result.into(),
            })
            .inc();
    }
    let mut text = String::new();
    encode(&mut text, &registry).expect("writing to a String cannot fail");
    text
}
