//! What a plugin's store holds: the snapshot lent for one call, the log
//! lines of the call (within the plugin's caps), the host work the call has
//! caused (charged to its fuel), and the memory limiter.
//!
//! The snapshot is moved into the store for the duration of one call
//! ([`HostState::snapshot`]) and moved back afterwards, so host functions read
//! it without copying or locking; the guest sees it through a
//! `borrow<snapshot>` handle that is removed from the table after the call.
//! The host side of the imports is in `contract_v0_3` (and `contract_v0_1` for
//! old components).

use wasmtime::component::ResourceTable;

use crate::config::StoreLimits;
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
    /// Cap on the instance's linear memories together, in bytes (0: no
    /// instance may have memory).
    pub memory_limit: u64,
    /// Bytes of linear memory the instance holds, all its memories together.
    pub memory_used: u64,
    /// The growth last approved, taken back if wasmtime then fails it.
    pub memory_approved: u64,
    /// Host work done for the guest since it last ran, in fuel units
    /// ([`HostState::charge`]); taken from its fuel when the host call
    /// returns.
    pub host_work: u64,
    /// Set when the guest tried to grow its memory past `memory_limit`; the
    /// growth then traps, and this tells the host why.
    pub memory_exceeded: bool,
    /// What the instance may define: core instances, memories, tables.
    pub wasm_limits: StoreLimits,
}

impl wasmtime::ResourceLimiter for HostState {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // One limit for all memories together: a component may have
        // several, and each alone within the limit is not enough.
        let growth = (desired as u64).saturating_sub(current as u64);
        let used = self.memory_used.saturating_add(growth);
        if used > self.memory_limit {
            self.memory_exceeded = true;
            return Err(wasmtime::format_err!(
                "memory limit of {} bytes exceeded",
                self.memory_limit
            ));
        }
        self.memory_used = used;
        self.memory_approved = growth;
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        // Approved, then refused past the memory's own maximum: the bytes
        // were never added (`memory.grow` returns -1 to the guest).
        self.memory_used = self.memory_used.saturating_sub(self.memory_approved);
        self.memory_approved = 0;
        Ok(())
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= self.wasm_limits.table_elements)
    }

    fn instances(&self) -> usize {
        self.wasm_limits.instances
    }

    fn memories(&self) -> usize {
        self.wasm_limits.memories
    }

    fn tables(&self) -> usize {
        self.wasm_limits.tables
    }
}

/// Fuel charged per element a host call reads or returns for the guest (an
/// id, an amount, a label, a taint, a node's facts): what the host does per
/// element (copying, allocating, converting) is worth a few dozen wasm
/// instructions, so that a component cannot make the host work for free.
pub const HOST_FUEL_PER_ELEMENT: u64 = 16;

impl HostState {
    /// The snapshot lent for the call in progress.
    pub fn snap(&self) -> &Snapshot {
        super::faults::strike();
        self.snapshot
            .as_ref()
            .expect("the snapshot is lent to the store during every call")
    }

    /// Records host work done for the guest: `elements` read or returned,
    /// at [`HOST_FUEL_PER_ELEMENT`] each. The plugin's store takes it from
    /// the guest's fuel when the host call returns (running out traps as
    /// any other fuel exhaustion).
    pub fn charge(&mut self, elements: usize) {
        let fuel = (elements as u64).saturating_mul(HOST_FUEL_PER_ELEMENT);
        self.host_work = self.host_work.saturating_add(fuel);
    }

    /// `list`, with the work of handing it to the guest charged.
    pub fn charged<T>(&mut self, list: Vec<T>) -> Vec<T> {
        self.charge(list.len());
        list
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

#[cfg(test)]
mod tests {
    use wasmtime::ResourceLimiter;

    use super::*;

    #[test]
    fn one_memory_limit_covers_all_of_an_instances_memories() {
        let mut state = HostState {
            memory_limit: 64 << 20,
            ..HostState::default()
        };
        // Two memories of 40 MiB: each alone is within the limit.
        assert!(state.memory_growing(0, 40 << 20, None).unwrap());
        assert!(state.memory_growing(0, 40 << 20, None).is_err());
        assert!(state.memory_exceeded);
        // Growing the first by what is left is allowed.
        assert!(state.memory_growing(40 << 20, 64 << 20, None).unwrap());
        assert_eq!(state.memory_used, 64 << 20);
        // A growth approved and then failed by wasmtime is not counted.
        state.memory_limit = 128 << 20;
        assert!(state.memory_growing(64 << 20, 80 << 20, None).unwrap());
        state
            .memory_grow_failed(wasmtime::format_err!("past the maximum"))
            .unwrap();
        assert_eq!(state.memory_used, 64 << 20);
    }

    #[test]
    fn host_work_is_counted_per_element() {
        let mut state = HostState::default();
        state.charge(3);
        state.charge(usize::MAX);
        assert_eq!(state.host_work, u64::MAX);
    }
}
