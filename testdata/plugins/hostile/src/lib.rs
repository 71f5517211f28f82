//! Test fixture `Hostile`: a plugin that implements every extension point
//! and misbehaves on demand, to prove the host's sandbox bounds.
//!
//! Args (JSON, read with plain string matching to stay dependency-free):
//! `{"point": "<extension point>", "misbehave": "<what>"}`. It misbehaves
//! only at `point`, and only for pods and PodGroups whose PodGroup name
//! contains `bad`, so that other entities in the same run show that the
//! host carries on unaffected. `misbehave` is one of:
//!
//! - `loop`: spin forever (CPU bound);
//! - `alloc`: allocate 1 MiB chunks forever (memory cap);
//! - `recurse`: recurse without end (stack overflow);
//! - `panic`: panic (trap);
//! - `invalid`: answer outside the contract (unknown node, score 1000,
//!   placement node outside its parent);
//! - `work:<MiB>`: allocate and touch that many MiB and spin 1M iterations,
//!   then answer normally (bounds obeyed by a plugin within them).
//!
//! Otherwise it answers neutrally: success, no rejections, zero scores, and
//! `skip` for placements — except that with `point` = `placement-score` it
//! splits the cluster in two placements so that scoring happens at all.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

#[cfg(target_arch = "wasm32")]
mod component {
    use alloc::string::{String, ToString};
    use alloc::vec;
    use alloc::vec::Vec;
    use wasched_sdk::cluster::Snapshot;
    use wasched_sdk::extension_host::exports::wasched::scheduler::{
        filter, permit, placement_generate, placement_score, plugin, pod_group_post_filter,
        pre_enqueue, score,
    };
    use wasched_sdk::types::{
        Assignment, Code, NodeId, NodeRejection, Placement, PlacementProgress, PodGroup,
        PodGroupId, PodId, PostFilterResult, Status,
    };

    struct Hostile;

    struct Args {
        point: String,
        misbehave: String,
    }

    static mut ARGS: Option<Args> = None;

    fn args() -> &'static Args {
        // SAFETY: wasm32 components are single-threaded; ARGS is written
        // once in `configure` before any extension point is called.
        unsafe { (*core::ptr::addr_of!(ARGS)).as_ref().expect("configured") }
    }

    fn field(json: &str, key: &str) -> String {
        let pattern = alloc::format!("\"{key}\"");
        let Some(at) = json.find(&pattern) else {
            return String::new();
        };
        let rest = &json[at + pattern.len()..];
        let rest = rest
            .trim_start()
            .trim_start_matches(':')
            .trim_start()
            .trim_start_matches('"');
        rest.split('"').next().unwrap_or_default().to_string()
    }

    fn ok() -> Status {
        Status {
            code: Code::Success,
            reason: String::new(),
        }
    }

    fn group_is_bad(snapshot: &Snapshot, group: Option<PodGroupId>) -> bool {
        group
            .and_then(|g| snapshot.pod_group(g))
            .is_some_and(|g| g.name.contains("bad"))
    }

    fn pod_is_bad(snapshot: &Snapshot, pod: PodId) -> bool {
        group_is_bad(snapshot, snapshot.pod(pod).and_then(|p| p.group))
    }

    #[inline(never)]
    fn recurse(depth: u64, keep: &mut [u64; 64]) -> u64 {
        keep[(depth % 64) as usize] = depth;
        if core::hint::black_box(depth) == u64::MAX {
            return 0;
        }
        recurse(depth + 1, keep) + keep[0]
    }

    /// Misbehaves if this is the configured point and the entity is bad.
    /// Returns true if the caller should answer invalidly.
    fn act(point: &str, bad: bool) -> bool {
        let args = args();
        if args.point != point || !bad {
            return false;
        }
        match args.misbehave.as_str() {
            "loop" => loop {
                core::hint::black_box(0u64);
            },
            "alloc" => loop {
                // Leaked, so the memory stays in use.
                core::hint::black_box(vec![1u8; 1 << 20].leak());
            },
            "recurse" => {
                let mut keep = [0u64; 64];
                core::hint::black_box(recurse(0, &mut keep));
                false
            }
            "panic" => panic!("hostile plugin panics at {point}"),
            "invalid" => true,
            work if work.starts_with("work:") => {
                let mib: usize = work[5..].parse().unwrap_or(1);
                let chunk = vec![7u8; mib << 20];
                let mut sum = 0u64;
                for i in 0..1_000_000u64 {
                    sum = sum.wrapping_add(i ^ u64::from(chunk[(i as usize) % chunk.len()]));
                }
                core::hint::black_box(sum);
                false
            }
            _ => false,
        }
    }

    impl plugin::Guest for Hostile {
        fn name() -> String {
            "Hostile".to_string()
        }

        fn configure(args: String) -> Result<(), String> {
            let parsed = Args {
                point: field(&args, "point"),
                misbehave: field(&args, "misbehave"),
            };
            // SAFETY: see `args()`.
            unsafe { *core::ptr::addr_of_mut!(ARGS) = Some(parsed) };
            Ok(())
        }
    }

    impl pre_enqueue::Guest for Hostile {
        fn pre_enqueue(_snapshot: &Snapshot, group: PodGroup) -> Status {
            act("pre-enqueue", group.name.contains("bad"));
            ok()
        }
    }

    impl filter::Guest for Hostile {
        fn filter(snapshot: &Snapshot, pod: PodId, nodes: Vec<NodeId>) -> Vec<NodeRejection> {
            if act("filter", pod_is_bad(snapshot, pod)) {
                let status = Status {
                    code: Code::Unschedulable,
                    reason: "no".into(),
                };
                return vec![NodeRejection {
                    node: u32::MAX,
                    status,
                }];
            }
            let _ = nodes;
            Vec::new()
        }
    }

    impl score::Guest for Hostile {
        fn score(snapshot: &Snapshot, pod: PodId, nodes: Vec<NodeId>) -> Result<Vec<i64>, Status> {
            if act("score", pod_is_bad(snapshot, pod)) {
                return Ok(vec![1000; nodes.len()]);
            }
            Ok(vec![0; nodes.len()])
        }
    }

    impl permit::Guest for Hostile {
        fn permit(snapshot: &Snapshot, group: PodGroupId, _progress: PlacementProgress) -> Status {
            act("permit", group_is_bad(snapshot, Some(group)));
            ok()
        }
    }

    impl placement_generate::Guest for Hostile {
        fn generate_placements(
            snapshot: &Snapshot,
            group: PodGroup,
            parent: Placement,
        ) -> Result<Vec<Placement>, Status> {
            let bad = group.name.contains("bad");
            if act("placement-generate", bad) {
                return Ok(vec![Placement {
                    name: "outside".into(),
                    nodes: vec![snapshot.node_count() + 7],
                }]);
            }
            if args().point == "placement-score" {
                let (left, right) = parent.nodes.split_at(parent.nodes.len() / 2);
                return Ok(vec![
                    Placement {
                        name: "left".into(),
                        nodes: left.to_vec(),
                    },
                    Placement {
                        name: "right".into(),
                        nodes: right.to_vec(),
                    },
                ]);
            }
            Err(Status {
                code: Code::Skip,
                reason: String::new(),
            })
        }
    }

    impl placement_score::Guest for Hostile {
        fn score_placement(
            snapshot: &Snapshot,
            group: PodGroupId,
            _placement: Placement,
            _assignments: Vec<Assignment>,
        ) -> Result<i64, Status> {
            if act("placement-score", group_is_bad(snapshot, Some(group))) {
                return Ok(1000);
            }
            Ok(0)
        }
    }

    impl pod_group_post_filter::Guest for Hostile {
        fn post_filter(
            _snapshot: &Snapshot,
            _trial: &wasched_sdk::cluster::GroupTrial,
            _group: PodGroup,
        ) -> Result<PostFilterResult, Status> {
            Err(Status {
                code: Code::Unschedulable,
                reason: "Hostile does not preempt".into(),
            })
        }
    }

    wasched_sdk::extension_host::export!(Hostile);
}
