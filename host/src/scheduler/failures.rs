//! Plugin failures of a run, applied under each plugin's failure policy.

use std::collections::BTreeMap;

use crate::framework::{ExtensionPoint, FailurePolicy, PluginError};
use crate::outcome::PluginErrorCount;

/// Failures so far, counted and remembered for the report.
#[derive(Debug, Default)]
pub struct PluginFailures {
    /// (plugin, extension point, cause) → count, for `wasched_plugin_errors_total`.
    counts: BTreeMap<(String, ExtensionPoint, &'static str), u64>,
    /// Plugins skipped under `failurePolicy: Ignore` → (count, first failure).
    ignored: BTreeMap<String, (u64, String)>,
    /// Failures under `failurePolicy: Fail` so far (tells `SchedulerError`
    /// from `Unschedulable`).
    pub failed: u64,
    /// Failures ignored under `failurePolicy: Ignore` so far.
    pub ignored_calls: u64,
    /// The last failure ignored.
    pub last_ignored: Option<String>,
}

impl PluginFailures {
    /// A plugin call's result under its failure policy: `Ok(Some(v))` to use
    /// the answer, `Ok(None)` to skip the plugin (`Ignore`), `Err(reason)` to
    /// fail the pod or group (`Fail`).
    pub fn under_policy<T>(&mut self, result: Result<T, PluginError>) -> Result<Option<T>, String> {
        let error = match result {
            Ok(value) => return Ok(Some(value)),
            Err(error) => error,
        };
        *self
            .counts
            .entry((error.plugin.clone(), error.point, error.cause.label()))
            .or_default() += 1;
        match error.policy {
            FailurePolicy::Fail => {
                self.failed += 1;
                Err(error.to_string())
            }
            FailurePolicy::Ignore => {
                let text = error.to_string();
                let entry = self
                    .ignored
                    .entry(error.plugin.clone())
                    .or_insert((0, text.clone()));
                entry.0 += 1;
                self.ignored_calls += 1;
                self.last_ignored = Some(text);
                Ok(None)
            }
        }
    }

    /// Warnings for skipped plugins, and the error counts.
    pub fn report(self) -> (Vec<String>, Vec<PluginErrorCount>) {
        let warnings = self
            .ignored
            .into_iter()
            .map(|(plugin, (count, first))| {
                format!(
                    "plugin {plugin} failed {count} time(s) and was skipped (failurePolicy: Ignore); first failure: {first}"
                )
            })
            .collect();
        let counts = self
            .counts
            .into_iter()
            .map(|((plugin, point, cause), count)| PluginErrorCount {
                plugin,
                extension_point: point.interface().to_string(),
                cause: cause.to_string(),
                count,
            })
            .collect();
        (warnings, counts)
    }
}
