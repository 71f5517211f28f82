//! Checks on what comes from a plugin: the file at load time, and every
//! answer before the host acts on it. Pure functions, so that they can be
//! fuzzed; a violation becomes the plugin's error, never a host panic.

use std::collections::HashSet;

use crate::snapshot::NodeId;

/// Highest score a `score` or `placement-score` plugin may give
/// (kube-scheduler's `MaxNodeScore`).
pub const MAX_SCORE: i64 = 100;

/// A candidate node set for a group, host side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Display name (`cluster`, `rack=r1`).
    pub name: String,
    /// Nodes, ascending, without duplicates.
    pub nodes: Vec<NodeId>,
}

/// A node a filter plugin rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRejection {
    /// The node.
    pub node: NodeId,
    /// Why.
    pub reason: String,
}

/// Tells a component from other files by its header: a WebAssembly
/// component, not a core module or something else.
pub fn binary_kind(bytes: &[u8]) -> Result<(), String> {
    const COMPONENT: [u8; 4] = [0x0d, 0x00, 0x01, 0x00];
    const CORE_MODULE: [u8; 4] = [0x01, 0x00, 0x00, 0x00];
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err("not a WebAssembly file".into());
    }
    match &bytes[4..8] {
        v if v == COMPONENT => Ok(()),
        v if v == CORE_MODULE => Err("a core wasm module, not a component: build the plugin for wasm32-wasip2 (or wrap it with `wasm-tools component new`)".into()),
        _ => Err(format!("unsupported WebAssembly version/layer {:02x?}", &bytes[4..8])),
    }
}

/// `filter`'s rejections: each must name a candidate, at most once.
pub fn rejections(
    candidates: &[NodeId],
    rejected: impl IntoIterator<Item = (NodeId, String)>,
) -> Result<Vec<NodeRejection>, String> {
    let mut seen = HashSet::new();
    rejected
        .into_iter()
        .map(|(node, reason)| {
            if candidates.binary_search(&node).is_err() {
                return Err(format!("node {node} was not a candidate"));
            }
            if !seen.insert(node) {
                return Err(format!("node {node} rejected twice"));
            }
            Ok(NodeRejection { node, reason })
        })
        .collect()
}

/// `score`'s answer: one score in `0..=MAX_SCORE` per candidate.
pub fn scores(candidates: usize, scores: &[i64]) -> Result<(), String> {
    if scores.len() != candidates {
        return Err(format!("{} scores for {candidates} nodes", scores.len()));
    }
    scores.iter().try_for_each(|&s| score(s))
}

/// One score in `0..=MAX_SCORE`.
pub fn score(score: i64) -> Result<(), String> {
    if (0..=MAX_SCORE).contains(&score) {
        Ok(())
    } else {
        Err(format!("score {score} outside 0..={MAX_SCORE}"))
    }
}

/// `placement-generate`'s answer: placements within `parent`, with unique
/// names; nodes are sorted and de-duplicated.
pub fn placements(
    parent: &Placement,
    generated: impl IntoIterator<Item = (String, Vec<NodeId>)>,
) -> Result<Vec<Placement>, String> {
    let mut names = HashSet::new();
    generated
        .into_iter()
        .map(|(name, mut nodes)| {
            nodes.sort_unstable();
            nodes.dedup();
            if let Some(bad) = nodes
                .iter()
                .find(|n| parent.nodes.binary_search(n).is_err())
            {
                return Err(format!(
                    "placement {name} has node {bad} outside its parent {}",
                    parent.name
                ));
            }
            if !names.insert(name.clone()) {
                return Err(format!("placement name {name} used twice"));
            }
            Ok(Placement { name, nodes })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_kinds() {
        assert_eq!(
            binary_kind(b"hello world").unwrap_err(),
            "not a WebAssembly file"
        );
        assert!(
            binary_kind(b"\0asm\x01\0\0\0")
                .unwrap_err()
                .starts_with("a core wasm module, not a component")
        );
        assert!(binary_kind(b"\0asm\x0d\0\x01\0").is_ok());
        assert!(
            binary_kind(b"\0asm\x02\0\0\0")
                .unwrap_err()
                .starts_with("unsupported WebAssembly version")
        );
        assert!(binary_kind(b"\0asm").is_err());
    }

    #[test]
    fn answers_are_checked() {
        let candidates = [1, 3, 5];
        assert!(rejections(&candidates, [(3, "x".to_string())]).is_ok());
        assert_eq!(
            rejections(&candidates, [(2, String::new())]).unwrap_err(),
            "node 2 was not a candidate"
        );
        assert_eq!(
            rejections(&candidates, [(1, String::new()), (1, String::new())]).unwrap_err(),
            "node 1 rejected twice"
        );
        assert_eq!(scores(3, &[0, 50]).unwrap_err(), "2 scores for 3 nodes");
        assert_eq!(
            scores(2, &[0, 101]).unwrap_err(),
            "score 101 outside 0..=100"
        );
        assert_eq!(score(-1).unwrap_err(), "score -1 outside 0..=100");
        let parent = Placement {
            name: "cluster".into(),
            nodes: vec![0, 1, 2],
        };
        let ok = placements(&parent, [("a".to_string(), vec![2, 0, 2])]).unwrap();
        assert_eq!(ok[0].nodes, [0, 2]);
        assert!(
            placements(&parent, [("a".to_string(), vec![7])])
                .unwrap_err()
                .contains("node 7 outside its parent cluster")
        );
        assert_eq!(
            placements(
                &parent,
                [("a".to_string(), vec![]), ("a".to_string(), vec![])]
            )
            .unwrap_err(),
            "placement name a used twice"
        );
    }
}
