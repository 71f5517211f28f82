//! What a plugin's store holds: the snapshot lent for one call, the log
//! lines of the call (within the plugin's caps), and the memory limiter.
//!
//! The snapshot is moved into the store for the duration of one call
//! ([`HostState::snapshot`]) and moved back afterwards, so host functions read
//! it without copying or locking; the guest sees it through a
//! `borrow<snapshot>` handle that is removed from the table after the call.
//! The host side of the imports is in `contract_v0_3` (and `contract_v0_1` for
//! old components).

use wasmtime::component::ResourceTable;

use crate::framework::{LogDrops, LogLevel, LogLine, answers};
use crate::model::Snapshot;

/// Table entry behind a guest's `borrow<snapshot>`; the data is
/// [`HostState::snapshot`].
#[derive(Debug)]
pub struct SnapshotHandle;

/// What one call may still log.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogBudget {
    /// Lines left in this call.
    pub lines: u64,
    /// Bytes left in this call (the per-call cap, or less when the run's
    /// budget is nearly spent).
    pub bytes: u64,
}

/// A plugin store's state.
#[derive(Default)]
pub struct HostState {
    /// Handles given to the guest during a call.
    pub table: ResourceTable,
    /// The snapshot, present only while a call runs.
    pub snapshot: Option<Snapshot>,
    /// Lines the plugin logged in this call, within `budget`.
    pub logs: Vec<LogLine>,
    /// What the call may still log.
    pub budget: LogBudget,
    /// What the call logged beyond its budget.
    pub dropped: LogDrops,
    /// The last panic message the SDK logged (kept even when the log is
    /// over its caps, cut to a reason's length), to explain a trap.
    pub panic: Option<String>,
    /// Cap on the instance's linear memory, in bytes (0: no instance may
    /// have memory).
    pub memory_limit: u64,
    /// Set when the guest tried to grow its memory past `memory_limit`; the
    /// growth then traps, and this tells the host why.
    pub memory_exceeded: bool,
}

/// Most table elements an instance may have (function tables of Rust guests
/// hold a few hundred).
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl wasmtime::ResourceLimiter for HostState {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired as u64 > self.memory_limit {
            self.memory_exceeded = true;
            return Err(wasmtime::format_err!(
                "memory limit of {} bytes exceeded",
                self.memory_limit
            ));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        // A component instantiates a handful of core instances (module,
        // adapters, shims); more means something unexpected.
        32
    }

    fn memories(&self) -> usize {
        4
    }

    fn tables(&self) -> usize {
        8
    }
}

impl HostState {
    /// The snapshot lent for the call in progress.
    pub fn snap(&self) -> &Snapshot {
        self.snapshot
            .as_ref()
            .expect("the snapshot is lent to the store during every call")
    }

    /// Keeps one log line within the call's budget; counts what is dropped.
    /// Never stores more than the budget, whatever the guest sends.
    pub fn log(&mut self, level: LogLevel, mut message: String) {
        if let Some(panic) = message.strip_prefix("panic: ") {
            let mut panic = panic.to_string();
            answers::cut_text(&mut panic, answers::DEFAULT_LIMITS.reason_bytes);
            self.panic = Some(panic);
        }
        let len = message.len() as u64;
        if self.budget.lines == 0 || self.budget.bytes == 0 {
            self.dropped.lines += 1;
            self.dropped.bytes += len;
            return;
        }
        if len > self.budget.bytes {
            answers::cut_text(&mut message, self.budget.bytes as usize);
            self.dropped.bytes += len.saturating_sub(message.len() as u64);
        }
        self.budget.lines -= 1;
        self.budget.bytes = self.budget.bytes.saturating_sub(message.len() as u64);
        self.logs.push(LogLine { level, message });
    }
}
