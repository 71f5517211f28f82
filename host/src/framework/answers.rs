//! Checks on what plugins answer, and caps on what they may hand the host.
//! Pure functions, so that they can be fuzzed; a violation becomes the
//! plugin's error, never a host panic.

use std::collections::HashSet;

use super::{Placement, Rejection};
use crate::model::NodeId;

/// Highest score a `score` or `placement-score` plugin may give
/// (kube-scheduler's `MaxNodeScore`).
pub const MAX_SCORE: i64 = 100;

/// Caps on everything one plugin hands the host. Reasons longer than
/// `reason_bytes` are cut; log output over the log caps is dropped; both are
/// counted and reported once per run. Longer names and lists are refused as
/// invalid answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Log lines kept per call.
    pub log_lines_per_call: u64,
    /// Log bytes kept per call (a line is cut to what is left).
    pub log_bytes_per_call: u64,
    /// Log bytes kept per run.
    pub log_bytes_per_run: u64,
    /// Bytes of a status reason.
    pub reason_bytes: usize,
    /// Bytes of a placement name.
    pub name_bytes: usize,
    /// Entries of a list in an answer (rejections, placements, victims).
    pub list_length: usize,
}

/// The defaults: generous for a well-behaved plugin, small enough that a
/// hostile one cannot make a 5,000-node run hold more than a few MiB of its
/// output.
pub const DEFAULT_LIMITS: OutputLimits = OutputLimits {
    log_lines_per_call: 64,
    log_bytes_per_call: 16 << 10,
    log_bytes_per_run: 1 << 20,
    reason_bytes: 1024,
    name_bytes: 253,
    list_length: 100_000,
};

impl Default for OutputLimits {
    fn default() -> Self {
        DEFAULT_LIMITS
    }
}

/// Cuts `text` to at most `max` bytes (at a character boundary) and marks
/// the cut; returns whether it cut.
pub fn cut_text(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    const MARK: &str = "… (cut)";
    let mut at = max.saturating_sub(MARK.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    text.push_str(MARK);
    true
}

/// `filter`'s rejections: each must name a candidate, at most once.
pub fn rejections(candidates: &[NodeId], rejected: &[Rejection]) -> Result<(), String> {
    // Candidates and the nodes seen so far as bitsets: answers reject
    // thousands of nodes.
    let mut candidate = NodeBits::of(candidates);
    for &node in rejected.iter().flat_map(|r| &r.nodes) {
        match candidate.take(node) {
            Taken::Now => {}
            Taken::Before => return Err(format!("node {node} rejected twice")),
            Taken::Never => return Err(format!("node {node} was not a candidate")),
        }
    }
    Ok(())
}

/// A set of node ids as bits.
struct NodeBits {
    words: Vec<u64>,
    taken: Vec<u64>,
}

/// What [`NodeBits::take`] found.
enum Taken {
    Now,
    Before,
    Never,
}

impl NodeBits {
    fn of(nodes: &[NodeId]) -> Self {
        let len = nodes.iter().max().map_or(0, |&n| n as usize / 64 + 1);
        let mut words = vec![0u64; len];
        for &n in nodes {
            words[n as usize / 64] |= 1 << (n % 64);
        }
        Self {
            taken: vec![0; len],
            words,
        }
    }

    fn contains(&self, n: NodeId) -> bool {
        self.words
            .get(n as usize / 64)
            .is_some_and(|w| w >> (n % 64) & 1 == 1)
    }

    /// Marks member `n` taken.
    fn take(&mut self, n: NodeId) -> Taken {
        if !self.contains(n) {
            return Taken::Never;
        }
        let (word, bit) = (n as usize / 64, 1 << (n % 64));
        if self.taken[word] & bit != 0 {
            return Taken::Before;
        }
        self.taken[word] |= bit;
        Taken::Now
    }
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
/// names of at most `max_name` bytes; nodes are sorted and de-duplicated.
pub fn placements(
    parent: &Placement,
    generated: impl IntoIterator<Item = Placement>,
    max_name: usize,
) -> Result<Vec<Placement>, String> {
    let mut names = HashSet::new();
    // The parent's nodes as a bitset: one lookup per node of the answer
    // instead of a binary search (answers cover thousands of nodes).
    let parent_nodes = NodeBits::of(&parent.nodes);
    let in_parent = |n: NodeId| parent_nodes.contains(n);
    generated
        .into_iter()
        .map(|mut placement| {
            if placement.name.len() > max_name {
                return Err(format!(
                    "a placement name of {} bytes, more than the limit of {max_name} (nameBytes)",
                    placement.name.len()
                ));
            }
            placement.nodes.sort_unstable();
            placement.nodes.dedup();
            if let Some(bad) = placement.nodes.iter().find(|&&n| !in_parent(n)) {
                return Err(format!(
                    "placement {} has node {bad} outside its parent {}",
                    placement.name, parent.name
                ));
            }
            if !names.insert(placement.name.clone()) {
                return Err(format!("placement name {} used twice", placement.name));
            }
            Ok(placement)
        })
        .collect()
}

/// `order-victims`' answer: every index `0..len` exactly once.
pub fn permutation(len: usize, order: &[u32]) -> Result<(), String> {
    let mut seen = vec![false; len];
    for &i in order {
        match seen.get_mut(i as usize) {
            None => return Err(format!("victim {i} was not a candidate")),
            Some(true) => return Err(format!("victim {i} listed twice")),
            Some(slot) => *slot = true,
        }
    }
    match seen.iter().position(|s| !s) {
        Some(missing) => Err(format!("victim {missing} missing from the order")),
        None => Ok(()),
    }
}

/// `select-candidate`'s answer: an index into the candidates.
pub fn choice(len: usize, chosen: u32) -> Result<(), String> {
    if (chosen as usize) < len {
        Ok(())
    } else {
        Err(format!("candidate {chosen} chosen out of {len}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked() {
        let candidates = [1, 3, 5];
        let group = |nodes: &[NodeId]| Rejection {
            reason: "x".into(),
            nodes: nodes.to_vec(),
        };
        assert!(rejections(&candidates, &[group(&[3]), group(&[1, 5])]).is_ok());
        assert_eq!(
            rejections(&candidates, &[group(&[2])]).unwrap_err(),
            "node 2 was not a candidate"
        );
        assert_eq!(
            rejections(&candidates, &[group(&[1]), group(&[1])]).unwrap_err(),
            "node 1 rejected twice"
        );
        assert_eq!(scores(3, &[0, 50]).unwrap_err(), "2 scores for 3 nodes");
        assert_eq!(
            scores(2, &[0, 101]).unwrap_err(),
            "score 101 outside 0..=100"
        );
        assert_eq!(score(-1).unwrap_err(), "score -1 outside 0..=100");
        let parent = Placement::cluster(3);
        let named = |name: &str, nodes: Vec<NodeId>| Placement {
            name: name.into(),
            nodes,
            domain: None,
        };
        let ok = placements(&parent, [named("a", vec![2, 0, 2])], 253).unwrap();
        assert_eq!(ok[0].nodes, [0, 2]);
        assert!(
            placements(&parent, [named("a", vec![7])], 253)
                .unwrap_err()
                .contains("node 7 outside its parent cluster")
        );
        assert_eq!(
            placements(&parent, [named("a", vec![]), named("a", vec![])], 253).unwrap_err(),
            "placement name a used twice"
        );
        assert!(
            placements(&parent, [named(&"x".repeat(300), vec![])], 253)
                .unwrap_err()
                .contains("300 bytes")
        );
    }

    #[test]
    fn victim_orders_must_be_permutations() {
        assert!(permutation(3, &[2, 0, 1]).is_ok());
        assert_eq!(
            permutation(3, &[0, 0, 1]).unwrap_err(),
            "victim 0 listed twice"
        );
        assert_eq!(
            permutation(2, &[0, 5]).unwrap_err(),
            "victim 5 was not a candidate"
        );
        assert_eq!(
            permutation(2, &[1]).unwrap_err(),
            "victim 0 missing from the order"
        );
        assert!(choice(2, 1).is_ok());
        assert_eq!(choice(2, 2).unwrap_err(), "candidate 2 chosen out of 2");
    }

    #[test]
    fn long_texts_are_cut_at_a_char_boundary() {
        let mut short = "fine".to_string();
        assert!(!cut_text(&mut short, 10));
        assert_eq!(short, "fine");
        let mut long = "é".repeat(2000);
        assert!(cut_text(&mut long, 1024));
        assert!(long.len() <= 1024, "{}", long.len());
        assert!(long.ends_with("… (cut)"));
    }
}
