//! The schema of a wasched plugin's `pluginConfig[].args`: its sandbox
//! bounds, failure policy, caps on what it hands the host, and the `args`
//! handed to the plugin's own `configure`.
//!
//! ```yaml
//! pluginConfig:
//!   - name: WaschedGangScheduling
//!     args:
//!       failurePolicy: Fail     # Fail (default): the pod/group stays pending; Ignore: skip the plugin
//!       fuel: 100000000         # wasm instructions (roughly) per call; deterministic
//!       timeout: 1s             # wall-clock deadline per call
//!       memoryLimit: 64Mi       # linear memory per instance
//!       wasmLimits:             # what one instance may define (interpreters need more)
//!         instances: 64         # core module instances
//!         memories: 4           # linear memories
//!         tables: 8             # tables
//!         tableElements: 100000 # elements of one table
//!       poolSize: 16            # instances alive at once in kube-scheduler
//!       limits:                 # caps on what the plugin hands the host
//!         logLinesPerCall: 64
//!         logBytesPerCall: 16Ki
//!         logBytesPerRun: 1Mi
//!         reasonBytes: 1Ki      # longer reasons are cut
//!         nameBytes: 253        # longer placement names are invalid answers
//!         listLength: 100000    # longer lists in answers are invalid answers
//!       circuitBreaker:         # where the component runs live (kube-scheduler)
//!         failures: 5           # this many failed calls within `window` open it (0: never)
//!         window: 1m
//!         coolDown: 30s         # open this long, then one trial call
//!       args: {}                # handed to the plugin's `configure`, as JSON
//! ```

use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use super::{PluginSettings, StoreLimits};
use crate::framework::{FailurePolicy, OutputLimits};
use crate::manifest::quantity::Quantity;

/// A plugin's `pluginConfig` args as written: every field optional, values
/// in the file's own notation (`250ms`, `32Mi`).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Args {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wasm_limits: Option<WasmLimits>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub circuit_breaker: Option<Breaker>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<serde_json::Value>,
}

/// `circuitBreaker:`; durations in the file's notation (`30s`).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Breaker {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cool_down: Option<String>,
}

impl Breaker {
    /// `self`, with each field it does not set taken from `under`.
    fn or(self, under: &Breaker) -> Breaker {
        Breaker {
            failures: self.failures.or(under.failures),
            window: self.window.or_else(|| under.window.clone()),
            cool_down: self.cool_down.or_else(|| under.cool_down.clone()),
        }
    }
}

/// A section of the args set in `mine`, `theirs` or both: both merged
/// field by field with `or` (`mine`'s fields first), else the one set.
fn merged<T: Clone>(mine: Option<T>, theirs: &Option<T>, or: fn(T, &T) -> T) -> Option<T> {
    match (mine, theirs) {
        (Some(mine), Some(theirs)) => Some(or(mine, theirs)),
        (mine, theirs) => mine.or_else(|| theirs.clone()),
    }
}

/// `wasmLimits:`; counts.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct WasmLimits {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memories: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tables: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_elements: Option<u64>,
}

impl WasmLimits {
    /// `self`, with each field it does not set taken from `under`.
    fn or(self, under: &WasmLimits) -> WasmLimits {
        WasmLimits {
            instances: self.instances.or(under.instances),
            memories: self.memories.or(under.memories),
            tables: self.tables.or(under.tables),
            table_elements: self.table_elements.or(under.table_elements),
        }
    }
}

/// `limits:`; byte counts are numbers or quantities (`16Ki`).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Limits {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_lines_per_call: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_bytes_per_call: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_bytes_per_run: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_bytes: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_bytes: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_length: Option<u64>,
}

impl Limits {
    /// `self`, with each field it does not set taken from `under`.
    pub fn or(self, under: &Limits) -> Limits {
        Limits {
            log_lines_per_call: self.log_lines_per_call.or(under.log_lines_per_call),
            log_bytes_per_call: self
                .log_bytes_per_call
                .or_else(|| under.log_bytes_per_call.clone()),
            log_bytes_per_run: self
                .log_bytes_per_run
                .or_else(|| under.log_bytes_per_run.clone()),
            reason_bytes: self.reason_bytes.or_else(|| under.reason_bytes.clone()),
            name_bytes: self.name_bytes.or_else(|| under.name_bytes.clone()),
            list_length: self.list_length.or(under.list_length),
        }
    }
}

impl Args {
    /// Reads the `args` of the `pluginConfig` entry at `path`
    /// (`profiles[0].pluginConfig[2]`); absent args (`null`) are empty.
    pub fn read(args: serde_json::Value, path: &str) -> Result<Args> {
        let args = match args {
            serde_json::Value::Null => return Ok(Args::default()),
            serde_json::Value::Object(fields) => fields,
            _ => bail!("field {path}.args: must be an object"),
        };
        for reserved in ["name", "enabled", "weight"] {
            if args.contains_key(reserved) {
                bail!(
                    "field {path}.args.{reserved}: not allowed here (name is the entry's; enable and weigh plugins in profiles[].plugins)"
                );
            }
        }
        super::deserialize(serde_json::Value::Object(args), &format!("{path}.args."))
    }

    /// `self`, with each field it does not set taken from `under`
    /// (`limits`, `wasmLimits` and `circuitBreaker` field by field).
    pub fn or(self, under: &Args) -> Args {
        Args {
            failure_policy: self.failure_policy.or(under.failure_policy),
            fuel: self.fuel.or(under.fuel),
            timeout: self.timeout.or_else(|| under.timeout.clone()),
            memory_limit: self.memory_limit.or_else(|| under.memory_limit.clone()),
            wasm_limits: merged(self.wasm_limits, &under.wasm_limits, WasmLimits::or),
            pool_size: self.pool_size.or(under.pool_size),
            limits: merged(self.limits, &under.limits, Limits::or),
            circuit_breaker: merged(self.circuit_breaker, &under.circuit_breaker, Breaker::or),
            args: self.args.or_else(|| under.args.clone()),
        }
    }

    /// Whether it sets nothing.
    pub fn is_empty(&self) -> bool {
        self.failure_policy.is_none()
            && self.fuel.is_none()
            && self.timeout.is_none()
            && self.memory_limit.is_none()
            && self.wasm_limits.is_none()
            && self.pool_size.is_none()
            && self.limits.is_none()
            && self.circuit_breaker.is_none()
            && self.args.is_none()
    }

    /// The settings these args give over `base`; `at` names the args in
    /// messages.
    pub fn settings(&self, base: PluginSettings, at: &str) -> Result<PluginSettings> {
        let mut settings = base;
        if let Some(policy) = self.failure_policy {
            settings.failure_policy = policy;
        }
        if let Some(fuel) = self.fuel {
            if fuel == 0 {
                bail!("field {at}.fuel: must be positive");
            }
            settings.fuel = fuel;
        }
        if let Some(timeout) = &self.timeout {
            settings.timeout =
                parse_duration(timeout).map_err(|e| anyhow!("field {at}.timeout: {e}"))?;
        }
        if let Some(limit) = &self.memory_limit {
            let bytes = Quantity::parse(limit)
                .map_err(|e| anyhow!("field {at}.memoryLimit: {e}"))?
                .ceil_value();
            if bytes < 1 << 16 {
                bail!("field {at}.memoryLimit: {limit} is less than one wasm page (64Ki)");
            }
            settings.memory_limit = bytes;
        }
        if let Some(wasm) = &self.wasm_limits {
            apply_wasm_limits(&mut settings.wasm_limits, wasm, at)?;
        }
        if let Some(size) = self.pool_size {
            if !(1..=MAX_POOL_SIZE).contains(&size) {
                bail!("field {at}.poolSize: must be in 1..={MAX_POOL_SIZE}, got {size}");
            }
            settings.pool_size = size as usize;
        }
        if let Some(limits) = &self.limits {
            apply_limits(&mut settings.limits, limits, at)?;
        }
        if let Some(breaker) = &self.circuit_breaker {
            let at = format!("{at}.circuitBreaker");
            // A day at most: longer is a plugin switched off, which is
            // what `enabled: false` says.
            let period = |text: &str, field: &str| -> Result<Duration> {
                let duration =
                    parse_duration(text).map_err(|e| anyhow!("field {at}.{field}: {e}"))?;
                if duration > MAX_BREAKER_PERIOD {
                    bail!("field {at}.{field}: {text} is longer than 24h");
                }
                Ok(duration)
            };
            if let Some(failures) = breaker.failures {
                if failures > MAX_BREAKER_FAILURES {
                    bail!("field {at}.failures: {failures} is more than {MAX_BREAKER_FAILURES}");
                }
                settings.breaker.failures = failures;
            }
            if let Some(window) = &breaker.window {
                settings.breaker.window = period(window, "window")?;
            }
            if let Some(cool_down) = &breaker.cool_down {
                settings.breaker.cool_down = period(cool_down, "coolDown")?;
            }
        }
        if let Some(args) = &self.args {
            settings.args = args.to_string();
        }
        Ok(settings)
    }
}

/// The longest `circuitBreaker` window or cool-down.
const MAX_BREAKER_PERIOD: Duration = Duration::from_secs(24 * 60 * 60);
/// The most failures a `circuitBreaker` may count to.
const MAX_BREAKER_FAILURES: u32 = 10_000;

/// The largest `poolSize`: instances of one component alive at once.
const MAX_POOL_SIZE: u64 = 256;

/// The largest value of a `wasmLimits` field: far beyond any toolchain's
/// need, small enough that a mistyped value is caught.
const MAX_WASM_LIMIT: u64 = 10_000_000;

fn apply_wasm_limits(limits: &mut StoreLimits, overrides: &WasmLimits, at: &str) -> Result<()> {
    let count = |n: u64, field: &str| -> Result<usize> {
        if !(1..=MAX_WASM_LIMIT).contains(&n) {
            bail!("field {at}.wasmLimits.{field}: must be in 1..={MAX_WASM_LIMIT}, got {n}");
        }
        Ok(n as usize)
    };
    if let Some(n) = overrides.instances {
        limits.instances = count(n, "instances")?;
    }
    if let Some(n) = overrides.memories {
        limits.memories = count(n, "memories")?;
    }
    if let Some(n) = overrides.tables {
        limits.tables = count(n, "tables")?;
    }
    if let Some(n) = overrides.table_elements {
        limits.table_elements = count(n, "tableElements")?;
    }
    Ok(())
}

/// A byte count given as a number or a quantity, at least 1.
fn bytes(value: &serde_json::Value, field: &str) -> Result<u64> {
    let bytes = match value {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(text) => Quantity::parse(text)
            .ok()
            .filter(|q| !q.is_negative())
            .map(|q| q.ceil_value()),
        _ => None,
    }
    .ok_or_else(|| {
        anyhow!("field {field}: expected a byte count such as 1024 or 16Ki, got {value}")
    })?;
    if bytes == 0 {
        bail!("field {field}: must be positive");
    }
    Ok(bytes)
}

fn apply_limits(limits: &mut OutputLimits, overrides: &Limits, at: &str) -> Result<()> {
    let positive = |n: u64, field: &str| -> Result<u64> {
        if n == 0 {
            bail!("field {at}.limits.{field}: must be positive");
        }
        Ok(n)
    };
    if let Some(n) = overrides.log_lines_per_call {
        limits.log_lines_per_call = positive(n, "logLinesPerCall")?;
    }
    if let Some(v) = &overrides.log_bytes_per_call {
        limits.log_bytes_per_call = bytes(v, &format!("{at}.limits.logBytesPerCall"))?;
    }
    if let Some(v) = &overrides.log_bytes_per_run {
        limits.log_bytes_per_run = bytes(v, &format!("{at}.limits.logBytesPerRun"))?;
    }
    if let Some(v) = &overrides.reason_bytes {
        limits.reason_bytes = bytes(v, &format!("{at}.limits.reasonBytes"))? as usize;
    }
    if let Some(v) = &overrides.name_bytes {
        limits.name_bytes = bytes(v, &format!("{at}.limits.nameBytes"))? as usize;
    }
    if let Some(n) = overrides.list_length {
        limits.list_length = positive(n, "listLength")? as usize;
    }
    Ok(())
}

/// `250ms`, `2s`, `1m` (Kubernetes-style durations, one unit).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let err = || format!("invalid duration {text:?}: expected e.g. 50ms, 2s or 1m");
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(err)?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| err())?;
    let duration = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.checked_mul(60).ok_or_else(err)?),
        _ => return Err(err()),
    };
    if duration.is_zero() {
        return Err(format!("{text}: must be positive"));
    }
    Ok(duration)
}
