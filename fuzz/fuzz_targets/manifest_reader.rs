//! The manifest reader and snapshot builder on arbitrary bytes: text in
//! any dialect, Jobs, Lists. Reading may fail with an error, never panic;
//! a snapshot that builds is also scheduled with no plugins.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wasched::manifest::{Manifests, expand_jobs, load_str};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut manifests = Manifests::default();
    if load_str(&mut manifests, "fuzz.yaml", text).is_err() || expand_jobs(&mut manifests).is_err() {
        return;
    }
    if let Ok(mut snapshot) = wasched::Snapshot::build(&manifests) {
        let _ = wasched::scheduler::run(&mut snapshot, &mut wasched::PluginSet::default(), wasched::scheduler::RunOptions::default());
    }
});
