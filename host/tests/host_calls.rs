//! What a plugin asks of the host is bounded and paid for: lists of ids
//! longer than the snapshot are refused as `unknown` before the host
//! allocates anything for them (checked with this binary's allocation
//! counter), and the host work a call causes is charged to the plugin's
//! fuel, so that a component cannot make the host work for free within its
//! own bounds.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use wasched::Outcome;
use wasched::config::{FailurePolicy, PluginSettings};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// The counters are process-wide: the tests run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

// SAFETY: every call is passed to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: as the caller promised.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as the caller promised.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A cluster of `nodes` nodes and PodGroup team/bad with one pod.
fn snapshot(nodes: usize) -> wasched::Snapshot {
    let mut yaml = String::new();
    for i in 0..nodes {
        yaml.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{i}, labels: {{kubernetes.io/hostname: node-{i}, rack: r{}}}}}\nspec: {{}}\nstatus: {{allocatable: {{cpu: \"8\", memory: \"64Gi\", pods: \"110\"}}}}\n",
            i % 8
        ));
    }
    yaml.push_str(
        "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: bad, namespace: team}\nspec: {schedulingPolicy: {gang: {minCount: 1}}}\n\
         ---\napiVersion: v1\nkind: Pod\nmetadata: {name: bad-0, namespace: team}\nspec:\n  schedulingGroup: {podGroupName: bad}\n  containers: [{name: main, image: busybox, resources: {requests: {cpu: \"1\"}}}]\n",
    );
    let dir = common::tempdir("host-calls");
    let path = dir.join(format!("cluster-{nodes}.yaml"));
    std::fs::write(&path, yaml).unwrap();
    wasched::read_snapshot(&[path]).unwrap()
}

/// Runs `snapshot` with `Hostile` misbehaving at filter as `misbehave`;
/// the outcome and the peak of heap bytes in use during the run, over what
/// was in use before it.
fn run(
    mut snapshot: wasched::Snapshot,
    misbehave: &str,
    fuel: u64,
    memory: u64,
) -> (Outcome, usize) {
    let settings = PluginSettings {
        failure_policy: FailurePolicy::Fail,
        fuel,
        timeout: Duration::from_secs(30),
        memory_limit: memory,
        args: format!(r#"{{"point": "filter", "misbehave": "{misbehave}"}}"#),
        ..PluginSettings::default()
    };
    let mut plugins = common::hostile_plugins(settings);
    let before = IN_USE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let outcome = wasched::scheduler::run(
        &mut snapshot,
        &mut plugins,
        wasched::scheduler::RunOptions::default(),
    );
    let peak = PEAK.load(Ordering::SeqCst).saturating_sub(before);
    (outcome, peak)
}

#[test]
fn sixteen_million_duplicate_node_ids_are_refused_before_the_host_allocates_for_them() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The fixture holds the 16 M ids (64 MiB) in its own memory.
    let (outcome, peak) = run(snapshot(4), "duplicate-ids", 1_000_000_000, 160 << 20);
    // The fixture answers neutrally only if the host refused all three
    // lists (nodes-facts, group-nodes-by-label, node-resources).
    assert_eq!(
        common::bound(&outcome).len(),
        1,
        "team/bad-0 is bound: {outcome:#?}"
    );
    // Reading even one of the lists would have taken 64 MiB of the host's
    // heap, and answering it gigabytes.
    assert!(
        peak < 16 << 20,
        "the host's heap grew by {peak} bytes during the run"
    );
}

#[test]
fn host_work_is_charged_to_the_plugin_that_asked_for_it() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 2,000 nodes: each call copies a column of 2,000 amounts for the
    // plugin (32,000 fuel at 16 per element), while the guest's own work
    // per call is a few hundred instructions.
    let fuel = 20_000_000;
    let cheap = 100; // 3.2 M fuel of host work: within the budget.
    let (outcome, _) = run(
        snapshot(2000),
        &format!("host-work:{cheap}"),
        fuel,
        16 << 20,
    );
    assert_eq!(common::bound(&outcome).len(), 1, "{outcome:#?}");
    let costly = 1000; // 32 M fuel of host work: over it.
    let (outcome, _) = run(
        snapshot(2000),
        &format!("host-work:{costly}"),
        fuel,
        16 << 20,
    );
    assert!(common::bound(&outcome).is_empty(), "{outcome:#?}");
    let reason = common::reason(&outcome, "team/bad-0");
    assert!(
        reason.contains("plugin Hostile: exceeded its CPU budget of 20000000 fuel"),
        "{reason}"
    );
    assert_eq!(wasched::runtime::HOST_FUEL_PER_ELEMENT, 16);
}
