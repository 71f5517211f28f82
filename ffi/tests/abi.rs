//! wasched's runtime through its C ABI, called as the Go plugin calls it:
//! components loaded with their configuration, a view kept by change
//! (informer objects, nodes' pods as `NodeInfo` lists them, assumed pods
//! included), each extension point asked by name, hostile components
//! contained, bad input refused with a message naming it, and nothing
//! left alive after teardown.

use std::ptr;
use std::sync::Mutex;

use serde_json::{Value, json};
use wasched_ffi::*;

/// The live counters are process-wide: tests that check them run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

struct Handles {
    runtime: *mut WaschedRuntime,
    view: *mut WaschedView,
    plugins: Vec<*mut WaschedPlugin>,
}

impl Handles {
    fn new() -> Handles {
        let mut error = WaschedBuffer::EMPTY;
        let runtime = wasched_runtime_new(&mut error);
        assert!(!runtime.is_null(), "{}", take(error));
        // SAFETY: no options; error is writable.
        let view = unsafe { wasched_view_new(ptr::null(), 0, &mut error) };
        assert!(!view.is_null(), "{}", take(error));
        Handles {
            runtime,
            view,
            plugins: Vec::new(),
        }
    }

    fn load(&mut self, spec: Value) -> Result<*mut WaschedPlugin, String> {
        let spec = spec.to_string();
        let mut error = WaschedBuffer::EMPTY;
        // SAFETY: live runtime, readable spec, writable error.
        let plugin =
            unsafe { wasched_plugin_load(self.runtime, spec.as_ptr(), spec.len(), &mut error) };
        if plugin.is_null() {
            return Err(take(error));
        }
        self.plugins.push(plugin);
        Ok(plugin)
    }

    fn upsert(&self, kind: &str, object: Value) -> Result<(), String> {
        let json = object.to_string();
        let mut error = WaschedBuffer::EMPTY;
        // SAFETY: live view, readable texts, writable error.
        let rc = unsafe {
            wasched_view_upsert(
                self.view,
                kind.as_ptr(),
                kind.len(),
                json.as_ptr(),
                json.len(),
                &mut error,
            )
        };
        if rc == 0 { Ok(()) } else { Err(take(error)) }
    }

    fn delete(&self, kind: &str, key: &str) {
        let mut error = WaschedBuffer::EMPTY;
        // SAFETY: live view, readable texts, writable error.
        let rc = unsafe {
            wasched_view_delete(
                self.view,
                kind.as_ptr(),
                kind.len(),
                key.as_ptr(),
                key.len(),
                &mut error,
            )
        };
        assert_eq!(rc, 0, "{}", take(error));
    }

    /// `wasched_view_set_node`: its code and error text when not 0.
    fn set_node(&self, name: &str, state: Value) -> Result<(), (i32, String)> {
        let json = state.to_string();
        let mut error = WaschedBuffer::EMPTY;
        // SAFETY: live view, readable texts, writable error.
        let rc = unsafe {
            wasched_view_set_node(
                self.view,
                name.as_ptr(),
                name.len(),
                json.as_ptr(),
                json.len(),
                &mut error,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err((rc, take(error)))
        }
    }

    fn call(&self, plugin: *mut WaschedPlugin, request: Value) -> Result<Value, String> {
        let request = request.to_string();
        let mut response = WaschedBuffer::EMPTY;
        let mut error = WaschedBuffer::EMPTY;
        // SAFETY: live plugin and view, readable request, writable buffers.
        let rc = unsafe {
            wasched_call(
                plugin,
                self.view,
                request.as_ptr(),
                request.len(),
                &mut response,
                &mut error,
            )
        };
        if rc != 0 {
            return Err(take(error));
        }
        Ok(serde_json::from_str(&take(response)).expect("responses are JSON"))
    }
}

impl Drop for Handles {
    fn drop(&mut self) {
        // SAFETY: each handle was made above and is freed once.
        unsafe {
            for plugin in self.plugins.drain(..) {
                wasched_plugin_free(plugin);
            }
            wasched_view_free(self.view);
            wasched_runtime_free(self.runtime);
        }
    }
}

/// The text of a buffer, freed.
fn take(buffer: WaschedBuffer) -> String {
    // SAFETY: the buffer came from the library and is freed right after.
    let text = String::from_utf8(unsafe { buffer.as_slice() }.to_vec()).unwrap();
    // SAFETY: freed once.
    unsafe { wasched_buffer_free(buffer) };
    text
}

/// A node as Go's `encoding/json` writes one (no apiVersion/kind).
fn node(name: &str, cpu: &str, gpus: u32) -> Value {
    json!({
        "metadata": {"name": name, "uid": format!("uid-{name}"), "labels": {"kubernetes.io/hostname": name, "rack": if name < "n2" {"r1"} else {"r2"}}},
        "spec": {},
        "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110", "nvidia.com/gpu": gpus.to_string()}}
    })
}

fn pod(name: &str, group: Option<&str>, cpu: &str, gpus: u32) -> Value {
    let mut spec = json!({
        "containers": [{"name": "main", "image": "busybox",
            "resources": {"requests": {"cpu": cpu, "memory": "1Gi", "nvidia.com/gpu": gpus.to_string()},
                          "limits": {"nvidia.com/gpu": gpus.to_string()}}}]
    });
    if let Some(group) = group {
        spec["schedulingGroup"] = json!({"podGroupName": group});
    }
    json!({
        "metadata": {"name": name, "namespace": "team", "uid": format!("uid-{name}"), "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": spec,
        "status": {"phase": "Pending"}
    })
}

fn gang(name: &str, min: u32, topology: Option<&str>) -> Value {
    let mut spec = json!({"schedulingPolicy": {"gang": {"minCount": min}}});
    if let Some(key) = topology {
        spec["schedulingConstraints"] = json!({"topology": [{"key": key}]});
    }
    json!({
        "metadata": {"name": name, "namespace": "team", "uid": format!("uid-{name}"), "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": spec
    })
}

/// The Hostile fixture component's path.
fn hostile_component() -> String {
    format!("{}/hostile.wasm", wasched::runtime::FIXTURE_DIR)
}

/// Runs `test` on fresh handles, one test at a time, and checks that
/// every object and byte the library handed out is freed afterwards.
fn leak_checked(test: impl FnOnce(&mut Handles)) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = (wasched_live_objects(), wasched_live_bytes());
    {
        let mut h = Handles::new();
        test(&mut h);
    }
    assert_eq!((wasched_live_objects(), wasched_live_bytes()), before);
}

/// Nodes n1 and n2 (8 CPUs each), and gang team/ring of two 1-CPU pods.
fn two_nodes_and_a_ring(h: &Handles) {
    for n in ["n1", "n2"] {
        h.upsert("Node", node(n, "8", 0)).unwrap();
    }
    h.upsert("PodGroup", gang("ring", 2, None)).unwrap();
    for i in 0..2 {
        h.upsert("Pod", pod(&format!("ring-{i}"), Some("ring"), "1", 0))
            .unwrap();
    }
}

fn code(response: &Value) -> &str {
    response["status"]["code"].as_str().unwrap()
}

#[test]
fn the_gang_plugin_holds_and_admits_a_group_as_its_members_arrive() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = (wasched_live_objects(), wasched_live_bytes());
    {
        let mut h = Handles::new();
        let gang_plugin = h.load(json!({"name": "WaschedGangScheduling"})).unwrap();
        for n in ["n1", "n2"] {
            h.upsert("Node", node(n, "8", 0)).unwrap();
        }
        h.upsert("PodGroup", gang("trainer", 2, None)).unwrap();
        h.upsert("Pod", pod("trainer-0", Some("trainer"), "1", 0))
            .unwrap();
        let unit = json!({"podGroup": "team/trainer"});
        let held = h
            .call(gang_plugin, json!({"point": "pre-enqueue", "unit": unit}))
            .unwrap();
        assert_eq!(code(&held), "UnschedulableAndUnresolvable", "{held}");
        h.upsert("Pod", pod("trainer-1", Some("trainer"), "1", 0))
            .unwrap();
        let queued = h
            .call(gang_plugin, json!({"point": "pre-enqueue", "unit": unit}))
            .unwrap();
        assert_eq!(code(&queued), "Success", "{queued}");

        let permit = |scheduled: u32, remaining: u32| {
            h.call(
                gang_plugin,
                json!({"point": "permit", "unit": unit, "progress": {"scheduled": scheduled, "remaining": remaining}}),
            )
            .unwrap()
        };
        assert_eq!(code(&permit(1, 1)), "Wait");
        assert_eq!(code(&permit(2, 0)), "Success");
        assert_eq!(code(&permit(0, 1)), "Unschedulable");

        // The plugin says what it is; a point it lacks is the caller's error.
        // SAFETY: a live plugin.
        let info: Value =
            serde_json::from_str(&take(unsafe { wasched_plugin_info(gang_plugin) })).unwrap();
        assert_eq!(info["name"], "WaschedGangScheduling");
        assert_eq!(info["contract"], "0.3.0");
        assert_eq!(info["points"], json!(["pre-enqueue", "permit"]));
        let wrong = h
            .call(
                gang_plugin,
                json!({"point": "filter", "pod": "team/trainer-0"}),
            )
            .unwrap_err();
        assert_eq!(
            wrong,
            "plugin WaschedGangScheduling does not implement filter"
        );
        let unknown = h
            .call(
                gang_plugin,
                json!({"point": "pre-enqueue", "unit": {"podGroup": "team/nope"}}),
            )
            .unwrap_err();
        assert_eq!(unknown, "PodGroup team/nope is not in the view");

        // A member deleted: held again.
        h.delete("Pod", "team/trainer-1");
        let held = h
            .call(gang_plugin, json!({"point": "pre-enqueue", "unit": unit}))
            .unwrap();
        assert_eq!(code(&held), "UnschedulableAndUnresolvable", "{held}");
    }
    assert_eq!((wasched_live_objects(), wasched_live_bytes()), before);
}

#[test]
fn filter_and_score_see_the_pods_a_node_info_lists_assumed_ones_included() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = (wasched_live_objects(), wasched_live_bytes());
    {
        let mut h = Handles::new();
        let binpack = h
            .load(json!({"name": "WaschedGpuBinPacking", "config": {"args": {"reserveForRequesters": true}}}))
            .unwrap();
        for n in ["n1", "n2", "n3"] {
            h.upsert("Node", node(n, "8", 4)).unwrap();
        }
        h.upsert("Pod", pod("solo", None, "1", 2)).unwrap();
        let scores = |h: &Handles| {
            let r = h
                .call(
                    binpack,
                    json!({"point": "score", "pod": "team/solo", "nodes": ["n3", "n1", "n2"]}),
                )
                .unwrap();
            assert_eq!(code(&r), "Success", "{r}");
            r["scores"].clone()
        };
        let even = scores(&h);
        assert_eq!(even[0], even[1]);
        assert_eq!(even[1], even[2]);

        // n2's NodeInfo now lists an assumed pod using 2 GPUs: bin-packing
        // prefers it; the node names come back in the view's order.
        let mut assumed = pod("busy", None, "1", 2);
        assumed["spec"]["nodeName"] = json!("n2");
        h.set_node("n2", json!({"pods": [assumed]})).unwrap();
        let packed = scores(&h);
        assert!(packed[1].as_i64() > packed[0].as_i64(), "{packed}");
        assert_eq!(packed[0], packed[2]);

        // With the pod gone from n2 (forgotten), the scores are even again.
        h.set_node("n2", json!({"pods": []})).unwrap();
        assert_eq!(scores(&h), even);

        // Filter: a pod asking no GPU is kept off GPU nodes (the plugin's
        // `reserveForRequesters`); rejections are grouped by reason and
        // name the nodes.
        h.upsert("Pod", pod("cpu-only", None, "1", 0)).unwrap();
        let r = h
            .call(binpack, json!({"point": "filter", "pod": "team/cpu-only"}))
            .unwrap();
        assert_eq!(
            r["rejections"][0]["reason"],
            "node(s) had nvidia.com/gpu reserved for pods that request it"
        );
        assert_eq!(code(&r), "Unschedulable", "{r}");
        let mut rejected: Vec<String> = r["rejections"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| {
                g["nodes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap().to_string())
            })
            .collect();
        rejected.sort();
        assert_eq!(rejected, ["n1", "n2", "n3"]);
    }
    assert_eq!((wasched_live_objects(), wasched_live_bytes()), before);
}

#[test]
fn topology_placements_come_back_by_node_name() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = Handles::new();
    let topology = h.load(json!({"name": "WaschedTopologyPlacement"})).unwrap();
    for n in ["n1", "n2", "n3"] {
        h.upsert("Node", node(n, "8", 0)).unwrap();
    }
    h.upsert("PodGroup", gang("ring", 2, Some("rack"))).unwrap();
    for i in 0..2 {
        h.upsert("Pod", pod(&format!("ring-{i}"), Some("ring"), "1", 0))
            .unwrap();
    }
    let r = h
        .call(
            topology,
            json!({"point": "placement-generate", "unit": {"podGroup": "team/ring"}, "parent": {"name": "cluster"}}),
        )
        .unwrap();
    assert_eq!(code(&r), "Success", "{r}");
    let placements: Vec<(String, Value)> = r["placements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["domain"][1].as_str().unwrap().to_string(),
                p["nodes"].clone(),
            )
        })
        .collect();
    assert_eq!(
        placements,
        [
            ("r1".to_string(), json!(["n1"])),
            ("r2".to_string(), json!(["n2", "n3"]))
        ]
    );
}

#[test]
fn a_hostile_component_is_contained_and_named_and_the_next_call_works() {
    leak_checked(|h| {
        let hostile = hostile_component();
        for n in ["n1", "n2"] {
            h.upsert("Node", node(n, "8", 0)).unwrap();
        }
        h.upsert("PodGroup", gang("bad", 1, None)).unwrap();
        h.upsert("PodGroup", gang("good", 1, None)).unwrap();
        h.upsert("Pod", pod("bad-0", Some("bad"), "1", 0)).unwrap();
        h.upsert("Pod", pod("good-0", Some("good"), "1", 0))
            .unwrap();
        for (misbehave, cause) in [
            ("loop", "cpu"),
            ("alloc", "memory"),
            ("recurse", "stack"),
            ("panic", "trap"),
        ] {
            for policy in ["Fail", "Ignore"] {
                let plugin = h
                    .load(json!({
                        "name": "Hostile",
                        "component": hostile,
                        "config": {"failurePolicy": policy, "fuel": 20_000_000, "memoryLimit": "16Mi",
                                   "args": {"point": "filter", "misbehave": misbehave}}
                    }))
                    .unwrap();
                let r = h
                    .call(plugin, json!({"point": "filter", "pod": "team/bad-0"}))
                    .unwrap();
                let expected = if policy == "Fail" { "Error" } else { "Skip" };
                assert_eq!(code(&r), expected, "{misbehave}: {r}");
                assert_eq!(r["failure"]["plugin"], "Hostile");
                assert_eq!(r["failure"]["cause"], cause, "{r}");
                assert!(
                    r["status"]["reason"]
                        .as_str()
                        .unwrap()
                        .starts_with("plugin Hostile: "),
                    "{r}"
                );
                // The same instance pool answers the next pod.
                let ok = h
                    .call(plugin, json!({"point": "filter", "pod": "team/good-0"}))
                    .unwrap();
                assert_eq!(code(&ok), "Success", "{misbehave} then good: {ok}");
            }
        }
    });
}

#[test]
fn a_placement_is_scored_with_its_assignments_assumed_and_preemption_asks_by_name() {
    leak_checked(|h| {
        let hostile = hostile_component();
        two_nodes_and_a_ring(h);
        let mut running = pod("old", None, "1", 0);
        running["spec"]["nodeName"] = json!("n2");
        running["status"]["phase"] = json!("Running");
        h.upsert("Pod", running).unwrap();
        let counter = h
            .load(json!({"name": "Hostile", "component": hostile,
                         "config": {"args": {"point": "placement-score", "misbehave": "count"}}}))
            .unwrap();
        let score = |assignments: Value| {
            let r = h
                .call(
                    counter,
                    json!({"point": "placement-score", "unit": {"podGroup": "team/ring"},
                           "placement": {"name": "all"}, "assignments": assignments}),
                )
                .unwrap();
            assert_eq!(code(&r), "Success", "{r}");
            r["score"].as_i64().unwrap()
        };
        // The running pod, then it and the two assigned ones; the
        // assumption does not outlive the call.
        assert_eq!(score(json!([])), 1);
        assert_eq!(
            score(json!([["team/ring-0", "n1"], ["team/ring-1", "n2"]])),
            3
        );
        assert_eq!(score(json!([])), 1);

        let neutral = h
            .load(json!({"name": "Hostile", "component": hostile}))
            .unwrap();
        let victim = json!({"pods": ["team/old"], "priority": 0, "startTime": 0});
        let r = h
            .call(
                neutral,
                json!({"point": "order-victims", "preemptor": {"podGroup": "team/ring"},
                       "units": [victim, {"pods": ["team/old"], "priority": 1}]}),
            )
            .unwrap();
        assert_eq!(r["order"], json!([0, 1]), "{r}");
        let r = h
            .call(
                neutral,
                json!({"point": "select-candidate", "preemptor": {"podGroup": "team/ring"},
                       "candidates": [{"domain": "cluster", "victims": [victim],
                                       "assignments": [["team/ring-0", "n2"]]}]}),
            )
            .unwrap();
        assert_eq!(r["candidate"], json!(0), "{r}");
        let r = h
            .call(
                neutral,
                json!({"point": "select-candidate", "preemptor": {"podGroup": "team/ring"},
                       "candidates": [{"domain": "cluster", "victims": [{"pods": ["team/gone"], "priority": 0}]}]}),
            )
            .unwrap_err();
        assert!(r.contains("team/gone"), "{r}");
    });
}

#[test]
fn members_that_come_before_their_pod_group_count_once_it_comes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = Handles::new();
    let plugin = h.load(json!({"name": "WaschedGangScheduling"})).unwrap();
    h.upsert("Node", node("n1", "8", 0)).unwrap();
    // Informers deliver in no particular order across kinds.
    for i in 0..2 {
        h.upsert("Pod", pod(&format!("late-{i}"), Some("late"), "1", 0))
            .unwrap();
    }
    h.upsert("PodGroup", gang("late", 2, None)).unwrap();
    let r = h
        .call(
            plugin,
            json!({"point": "pre-enqueue", "unit": {"podGroup": "team/late"}}),
        )
        .unwrap();
    assert_eq!(code(&r), "Success", "{r}");
}

#[test]
fn bad_input_is_refused_with_a_message_naming_it() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = (wasched_live_objects(), wasched_live_bytes());
    {
        let mut h = Handles::new();
        let mut broken = pod("broken", None, "1", 0);
        broken["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("lots");
        let e = h.upsert("Pod", broken).unwrap_err();
        assert!(e.contains("team/broken") && e.contains("cpu"), "{e}");
        let e = h
            .upsert(
                "Pod",
                json!({"metadata": {"name": "x", "namespace": "team"}, "spec": {"containers": 7}}),
            )
            .unwrap_err();
        assert!(e.starts_with("Pod team/x: field spec.containers"), "{e}");
        let e = h.upsert("Secret", json!({})).unwrap_err();
        assert!(e.starts_with("unknown kind \"Secret\""), "{e}");
        let e = h
            .upsert("Pod", json!({"kind": "Node", "metadata": {"name": "x"}}))
            .unwrap_err();
        assert_eq!(e, "Pod x: field kind: expected Pod, found Node");

        let e = h.load(json!({"name": "Nope"})).unwrap_err();
        assert!(e.starts_with("no bundled component is called Nope"), "{e}");
        let e = h
            .load(json!({"name": "WaschedGangScheduling", "component": "/nonexistent.wasm"}))
            .unwrap_err();
        assert!(e.starts_with("/nonexistent.wasm: cannot read"), "{e}");
        let not_wasm =
            std::env::temp_dir().join(format!("wasched-ffi-{}.wasm", std::process::id()));
        std::fs::write(&not_wasm, b"not a component").unwrap();
        let e = h
            .load(json!({"name": "WaschedGangScheduling", "component": not_wasm}))
            .unwrap_err();
        std::fs::remove_file(&not_wasm).unwrap();
        assert!(e.starts_with(&format!("{}:", not_wasm.display())), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
        let e = h
            .load(json!({"name": "WaschedGangScheduling", "config": {"fuel": "lots"}}))
            .unwrap_err();
        assert!(
            e.contains("pluginConfig[WaschedGangScheduling].args.fuel"),
            "{e}"
        );
        let e = h
            .load(json!({"name": "WaschedGangScheduling", "config": {"args": {"bogus": 1}}}))
            .unwrap_err();
        assert!(e.contains("bogus"), "{e}");

        let gang_plugin = h.load(json!({"name": "WaschedGangScheduling"})).unwrap();
        let e = h
            .call(gang_plugin, json!({"point": "pre-enqueue"}))
            .unwrap_err();
        assert!(e.starts_with("request: "), "{e}");
        let e = h
            .call(gang_plugin, json!({"point": "nowhere"}))
            .unwrap_err();
        assert!(e.starts_with("request: "), "{e}");
    }
    assert_eq!((wasched_live_objects(), wasched_live_bytes()), before);
}

#[test]
fn the_bundled_names_are_what_the_components_call_themselves() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = Handles::new();
    let bundled: serde_json::Value =
        serde_json::from_str(&take(wasched_ffi::wasched_bundled())).unwrap();
    let bundled = bundled.as_array().unwrap();
    assert_eq!(
        bundled.len(),
        wasched::runtime::bundled_plugins().len(),
        "every bundled component is listed"
    );
    for entry in bundled {
        let name = entry["name"].as_str().unwrap();
        h.load(json!({"name": name})).unwrap();
        assert!(entry["onByDefault"].is_boolean(), "{entry}");
    }
    let off: Vec<&str> = bundled
        .iter()
        .filter(|e| e["onByDefault"] == false)
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        off,
        [
            "WaschedGpuBinPacking",
            "WaschedTaintToleration",
            "WaschedTeamGpuIsolation"
        ]
    );
}

#[test]
fn the_informers_bound_pods_stand_for_a_node_until_its_node_info_is_set() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = Handles::new();
    let gang_plugin = h.load(json!({"name": "WaschedGangScheduling"})).unwrap();
    for n in ["n1", "n2"] {
        h.upsert("Node", node(n, "8", 0)).unwrap();
    }
    // A gang of 3 with two members already running (the informer says so)
    // and one pending: PreEnqueue, before any cycle set a node, counts all.
    h.upsert("PodGroup", gang("resumed", 3, None)).unwrap();
    for i in 0..2 {
        let mut running = pod(&format!("resumed-{i}"), Some("resumed"), "1", 0);
        running["spec"]["nodeName"] = json!("n1");
        h.upsert("Pod", running).unwrap();
    }
    h.upsert("Pod", pod("resumed-2", Some("resumed"), "1", 0))
        .unwrap();
    let unit = json!({"podGroup": "team/resumed"});
    let ask = |h: &Handles| {
        let r = h
            .call(gang_plugin, json!({"point": "pre-enqueue", "unit": unit}))
            .unwrap();
        code(&r).to_string()
    };
    assert_eq!(ask(&h), "Success");
    // n1's NodeInfo is set and lists only one of them: the view follows it.
    let mut listed = pod("resumed-0", Some("resumed"), "1", 0);
    listed["spec"]["nodeName"] = json!("n1");
    h.set_node("n1", json!({"pods": [listed]})).unwrap();
    assert_eq!(ask(&h), "UnschedulableAndUnresolvable");
    // Listed again in full: admitted again.
    let mut other = pod("resumed-1", Some("resumed"), "1", 0);
    other["spec"]["nodeName"] = json!("n1");
    h.set_node("n1", json!({"pods": [listed, other]})).unwrap();
    assert_eq!(ask(&h), "Success");
}

#[test]
fn a_node_set_again_keeps_the_pods_it_names_by_key_and_refuses_a_key_it_never_listed() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = Handles::new();
    let gang_plugin = h.load(json!({"name": "WaschedGangScheduling"})).unwrap();
    h.upsert("Node", node("n1", "8", 0)).unwrap();
    h.upsert("PodGroup", gang("kept", 2, None)).unwrap();
    let mut members = Vec::new();
    for i in 0..2 {
        let mut running = pod(&format!("kept-{i}"), Some("kept"), "1", 0);
        running["spec"]["nodeName"] = json!("n1");
        h.upsert("Pod", running.clone()).unwrap();
        members.push(running);
    }
    let unit = json!({"podGroup": "team/kept"});
    let ask = |h: &Handles| {
        let r = h
            .call(gang_plugin, json!({"point": "pre-enqueue", "unit": unit}))
            .unwrap();
        code(&r).to_string()
    };
    h.set_node("n1", json!({"pods": members})).unwrap();
    assert_eq!(ask(&h), "Success");
    // Both kept by key: nothing changes.
    h.set_node("n1", json!({"kept": ["team/kept-0", "team/kept-1"]}))
        .unwrap();
    assert_eq!(ask(&h), "Success");
    // One kept, the other no longer listed: it leaves the node.
    h.set_node("n1", json!({"kept": ["team/kept-0"]})).unwrap();
    assert_eq!(ask(&h), "UnschedulableAndUnresolvable");
    // Listed whole again beside the kept one: back.
    h.set_node("n1", json!({"kept": ["team/kept-0"], "pods": [members[1]]}))
        .unwrap();
    assert_eq!(ask(&h), "Success");
    // A key the node never listed is refused by name; the rest applies.
    let e = h
        .set_node(
            "n1",
            json!({"kept": ["team/kept-0", "team/nobody"], "pods": [members[1]]}),
        )
        .unwrap_err();
    assert_eq!(
        e,
        (
            1,
            "node n1: pod team/nobody is kept but was not listed there".into()
        )
    );
    assert_eq!(ask(&h), "Success");

    // A pod that moved to n2 and left it again is back on n1, which kept
    // it all along.
    h.set_node("n2", json!({"pods": [members[1]]})).unwrap();
    h.set_node("n2", json!({"pods": []})).unwrap();
    assert_eq!(counts(&h)["placed"], 1, "{}", counts(&h));
    h.set_node("n1", json!({"kept": ["team/kept-0", "team/kept-1"]}))
        .unwrap();
    assert_eq!(counts(&h)["placed"], 2, "{}", counts(&h));

    // Listed whole but refused by the model (its PriorityClass is
    // unknown): code 2, the listing stands, so it is kept next time.
    let mut stray = pod("stray", None, "1", 0);
    stray["spec"]["nodeName"] = json!("n1");
    stray["spec"]["priorityClassName"] = json!("missing");
    let (rc, why) = h
        .set_node(
            "n1",
            json!({"kept": ["team/kept-0", "team/kept-1"], "pods": [stray]}),
        )
        .unwrap_err();
    assert_eq!(rc, 2, "{why}");
    assert!(why.contains("missing"), "{why}");
    h.set_node(
        "n1",
        json!({"kept": ["team/kept-0", "team/kept-1", "team/stray"]}),
    )
    .unwrap();
}

#[test]
fn pods_a_node_no_longer_lists_leave_together_and_one_listed_again_stays() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let h = Handles::new();
    for n in ["n1", "n2"] {
        h.upsert("Node", node(n, "8", 0)).unwrap();
    }
    let mut pods = Vec::new();
    for name in ["a", "b", "c"] {
        let mut p = pod(name, None, "1", 0);
        p["spec"]["nodeName"] = json!("n1");
        pods.push(p);
    }
    h.set_node("n1", json!({"pods": pods})).unwrap();
    assert_eq!(counts(&h)["placed"], 3, "{}", counts(&h));
    // Two leave; one of them is listed again before the view is read.
    h.set_node("n1", json!({"kept": ["team/a"]})).unwrap();
    h.set_node("n1", json!({"kept": ["team/a"], "pods": [pods[1]]}))
        .unwrap();
    assert_eq!(counts(&h)["placed"], 2, "{}", counts(&h));
    assert_eq!(counts(&h)["pods"], 2, "{}", counts(&h));

    // A pod that moved to n2 and back to n1 stays on n1 when n2 goes.
    h.set_node("n2", json!({"pods": [pods[0]]})).unwrap();
    h.set_node("n1", json!({"kept": ["team/a", "team/b"]}))
        .unwrap();
    h.delete("Node", "n2");
    assert_eq!(counts(&h)["placed"], 2, "{}", counts(&h));

    // A pod refused only for what a leaving pod still holds (the
    // resource columns only it names: 128 at most) is taken once that
    // pod is out. n1's pods ask cpu, memory and nvidia.com/gpu; the nodes
    // add pods: 4 columns, and `wide` names 124 more.
    let mut wide = pod("wide", None, "1", 0);
    for i in 0..124 {
        for side in ["requests", "limits"] {
            wide["spec"]["containers"][0]["resources"][side][format!("example.com/a{i}")] =
                json!("1");
        }
    }
    wide["spec"]["nodeName"] = json!("n1");
    h.set_node("n1", json!({"kept": ["team/a", "team/b"], "pods": [wide]}))
        .unwrap();
    let mut narrow = pod("narrow", None, "1", 0);
    for side in ["requests", "limits"] {
        narrow["spec"]["containers"][0]["resources"][side]["example.com/b"] = json!("1");
    }
    narrow["spec"]["nodeName"] = json!("n1");
    h.set_node(
        "n1",
        json!({"kept": ["team/a", "team/b"], "pods": [narrow]}),
    )
    .unwrap();
    assert_eq!(counts(&h)["placed"], 3, "{}", counts(&h));
}

#[test]
fn nominated_and_assumed_members_of_a_gang_count_as_pending_at_pre_enqueue() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = Handles::new();
    let gang_plugin = h.load(json!({"name": "WaschedGangScheduling"})).unwrap();
    for n in ["n1", "n2"] {
        h.upsert("Node", node(n, "8", 0)).unwrap();
    }
    h.upsert("PodGroup", gang("pre", 2, None)).unwrap();
    for i in 0..2 {
        let mut nominated = pod(&format!("pre-{i}"), Some("pre"), "1", 0);
        nominated["status"]["nominatedNodeName"] = json!("n1");
        h.upsert("Pod", nominated).unwrap();
    }
    let r = h
        .call(
            gang_plugin,
            json!({"point": "pre-enqueue", "unit": {"podGroup": "team/pre"}}),
        )
        .unwrap();
    assert_eq!(code(&r), "Success", "{r}");
}

/// The view's counts (`wasched_view_counts`).
fn counts(h: &Handles) -> Value {
    // SAFETY: a live view.
    let counts = take(unsafe { wasched_view_counts(h.view) });
    serde_json::from_str(&counts).unwrap()
}

/// A plugin's pool: instances alive and idle.
fn instances(plugin: *mut WaschedPlugin) -> Value {
    // SAFETY: a live plugin.
    let info: Value = serde_json::from_str(&take(unsafe { wasched_plugin_info(plugin) })).unwrap();
    info["instances"].clone()
}

/// Nodes n1 and n2 and gang team/ring (see [`two_nodes_and_a_ring`]), with
/// the hostile fixture loaded to answer placement-score with the number of
/// pods on the placement's nodes; `config` adds to its pluginConfig args.
fn ring_counter(h: &mut Handles, mut config: Value) -> *mut WaschedPlugin {
    two_nodes_and_a_ring(h);
    config["args"] = json!({"point": "placement-score", "misbehave": "count"});
    h.load(json!({"name": "Hostile", "component": hostile_component(), "config": config}))
        .unwrap()
}

/// Handles shared by the threads of one test (the library makes every
/// function safe to call from any thread).
struct Shared<'a>(&'a Handles, *mut WaschedPlugin);
// SAFETY: the library's handles may be used from any thread.
unsafe impl Sync for Shared<'_> {}

#[test]
fn a_panic_inside_a_call_leaves_nothing_behind_and_a_thousand_calls_after_it_answer() {
    leak_checked(|h| {
        // The breaker stays closed, so that every call runs the component.
        let counter = ring_counter(h, json!({"circuitBreaker": {"failures": 0}}));
        let request = json!({"point": "placement-score", "unit": {"podGroup": "team/ring"},
                             "placement": {"name": "all"},
                             "assignments": [["team/ring-0", "n1"], ["team/ring-1", "n2"]]});
        let before = counts(h);
        assert_eq!(before["placed"], 0, "{before}");

        // The panic strikes in the middle of the call: the pool's instance
        // taken, the assignments assumed, the snapshot lent to the store.
        // More panics than the pool has instances: a slot that leaked with
        // each would leave the pool empty for ever.
        for _ in 0..=wasched_ffi::pool::DEFAULT_POOL_SIZE {
            wasched_test_inject_panic();
            let error = h.call(counter, request.clone()).unwrap_err();
            assert!(
                error.contains("internal error in wasched") && error.contains("injected fault"),
                "{error}"
            );
            assert_eq!(counts(h), before, "the call's assumptions were rolled back");
            let info = instances(counter);
            assert_eq!(info["alive"], info["idle"], "no slot leaked: {info}");
        }

        // Many more calls from many threads than the pool has instances,
        // each seeing the two assigned pods and nothing else assumed.
        let shared = Shared(h, counter);
        let answered = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    let Shared(h, counter) = &shared;
                    for _ in 0..125 {
                        let r = h.call(*counter, request.clone()).unwrap();
                        assert_eq!(code(&r), "Success", "{r}");
                        assert_eq!(r["score"], 2, "{r}");
                        answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(answered.into_inner(), 1000);
        assert_eq!(counts(h), before);
        let info = instances(counter);
        assert_eq!(info["alive"], info["idle"], "{info}");
    });
}

#[test]
fn a_call_in_flight_holds_back_neither_the_views_updates_nor_other_calls() {
    leak_checked(|h| {
        let counter = ring_counter(h, json!({"timeout": "60s"}));
        let score = |assignments: Value| {
            json!({"point": "placement-score", "unit": {"podGroup": "team/ring"},
                   "placement": {"name": "all"}, "assignments": assignments})
        };
        let shared = Shared(h, counter);
        // However the test ends, no later call stays held.
        struct Release;
        impl Drop for Release {
            fn drop(&mut self) {
                wasched_test_release_held();
            }
        }
        let _release = Release;
        std::thread::scope(|scope| {
            // Call A stops inside its component's run, its two pods assumed.
            wasched_test_hold_next_host_call();
            let held = scope.spawn(|| {
                let Shared(h, counter) = &shared;
                h.call(
                    *counter,
                    score(json!([["team/ring-0", "n1"], ["team/ring-1", "n2"]])),
                )
            });
            assert_eq!(
                wasched_test_wait_held(60_000),
                1,
                "call A never reached a host call"
            );

            // Meanwhile: the informers add a pod bound to n1 and a node, and
            // call B of the same component answers on the view as it is now.
            let (done, finished) = std::sync::mpsc::channel();
            let (shared, score) = (&shared, &score);
            scope.spawn(move || {
                let Shared(h, counter) = &shared;
                let mut bound = pod("other", None, "1", 0);
                bound["spec"]["nodeName"] = json!("n1");
                bound["status"]["phase"] = json!("Running");
                h.upsert("Pod", bound).unwrap();
                h.upsert("Node", node("n3", "8", 0)).unwrap();
                let b = h.call(*counter, score(json!([]))).unwrap();
                let during = (counts(h), instances(*counter));
                done.send((b, during)).unwrap();
            });
            let outcome = finished.recv_timeout(std::time::Duration::from_secs(120));
            wasched_test_release_held();
            let (b, (view, pool)) =
                outcome.expect("an update or another call waited for the call in flight");
            // B sees the new pod and none of A's assumptions.
            assert_eq!(code(&b), "Success", "{b}");
            assert_eq!(b["score"], 1, "{b}");
            assert_eq!(view["nodes"], 3, "{view}");
            // A kept its instance; B had one of its own.
            assert_eq!(pool, json!({"alive": 2, "idle": 1}));

            // A answers on the view as it was when it started: its own two
            // pods, not the one added while it ran.
            let a = held.join().unwrap().unwrap();
            assert_eq!(code(&a), "Success", "{a}");
            assert_eq!(a["score"], 2, "{a}");
        });
        // Nothing A or B assumed stayed in the view.
        assert_eq!(counts(h)["placed"], 1);
        let info = instances(counter);
        assert_eq!(info["alive"], info["idle"], "{info}");
    });
}

#[test]
fn a_component_asking_about_16m_duplicate_node_ids_is_refused_as_unknown() {
    leak_checked(|h| {
        let hostile = hostile_component();
        for n in ["n1", "n2"] {
            h.upsert("Node", node(n, "8", 0)).unwrap();
        }
        h.upsert("PodGroup", gang("bad", 1, None)).unwrap();
        h.upsert("Pod", pod("bad-0", Some("bad"), "1", 0)).unwrap();
        // The fixture needs 64 MiB of its own for the ids.
        let plugin = h
            .load(json!({"name": "Hostile", "component": hostile,
                         "config": {"memoryLimit": "160Mi", "fuel": 1_000_000_000u64,
                                    "args": {"point": "filter", "misbehave": "duplicate-ids"}}}))
            .unwrap();
        let r = h
            .call(plugin, json!({"point": "filter", "pod": "team/bad-0"}))
            .unwrap();
        // Neutral: the host refused each of the three lists.
        assert_eq!(code(&r), "Success", "{r}");
        assert!(r.get("failure").is_none(), "{r}");
    });
}

#[test]
fn a_component_that_keeps_failing_is_not_called_until_its_breaker_cools_down() {
    leak_checked(|h| {
        let hostile = hostile_component();
        for n in ["n1", "n2"] {
            h.upsert("Node", node(n, "8", 0)).unwrap();
        }
        for g in ["bad", "good"] {
            h.upsert("PodGroup", gang(g, 1, None)).unwrap();
            h.upsert("Pod", pod(&format!("{g}-0"), Some(g), "1", 0))
                .unwrap();
        }
        let plugin = h
            .load(json!({"name": "Hostile", "component": hostile,
                         "config": {"failurePolicy": "Ignore",
                                    "circuitBreaker": {"failures": 3, "window": "1m", "coolDown": "300ms"},
                                    "args": {"point": "filter", "misbehave": "panic"}}}))
            .unwrap();
        let filter = |pod: &str| {
            h.call(plugin, json!({"point": "filter", "pod": pod}))
                .unwrap()
        };
        for i in 1..=3 {
            let r = filter("team/bad-0");
            assert_eq!(code(&r), "Skip", "{r}");
            assert_eq!(r["failure"]["cause"], "trap", "{r}");
            let opened = if i == 3 { json!("opened") } else { Value::Null };
            assert_eq!(r["breaker"], opened, "call {i}: {r}");
        }
        // Open: answered per the failure policy without calling it, even
        // for the pod it would have answered.
        for pod in ["team/bad-0", "team/good-0"] {
            let r = filter(pod);
            assert_eq!(code(&r), "Skip", "{r}");
            assert_eq!(r["failure"]["cause"], "circuit-open", "{r}");
            let reason = r["status"]["reason"].as_str().unwrap();
            assert!(
                reason.starts_with("plugin Hostile: circuit breaker open after 3 failures within 60s; not called for another "),
                "{reason}"
            );
        }
        // A request naming what the view lacks is the caller's error,
        // breaker open or not.
        let error = h
            .call(plugin, json!({"point": "filter", "pod": "team/nobody"}))
            .unwrap_err();
        assert!(error.contains("team/nobody"), "{error}");
        // After the cool-down one trial: it fails, and the breaker opens
        // again; the next trial succeeds and closes it.
        std::thread::sleep(std::time::Duration::from_millis(350));
        let r = filter("team/bad-0");
        assert_eq!(
            (r["failure"]["cause"].clone(), r["breaker"].clone()),
            (json!("trap"), json!("reopened")),
            "{r}"
        );
        assert_eq!(filter("team/good-0")["failure"]["cause"], "circuit-open");
        std::thread::sleep(std::time::Duration::from_millis(350));
        let r = filter("team/good-0");
        assert_eq!(code(&r), "Success", "{r}");
        assert_eq!(r["breaker"], "closed", "{r}");
        assert_eq!(code(&filter("team/good-0")), "Success");
    });
}
