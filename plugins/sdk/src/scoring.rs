//! Scoring rules shared by plugins: kube-scheduler's `NodeResourcesFit`
//! most-allocated strategy.

/// The highest score of a node or placement.
pub const MAX_SCORE: u64 = 100;

/// One resource as a scoring strategy sees it: what is (or would be)
/// requested, what is allocatable, and the resource's weight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceUse {
    /// Requests of the pods bound or assumed there, plus the pod being scored.
    pub requested: u128,
    /// Allocatable amount.
    pub allocatable: u128,
    /// The resource's weight in the strategy (`scoringStrategy.resources[].weight`).
    pub weight: u64,
}

/// `NodeResourcesFit`'s `MostAllocated` strategy, in `0 ..= 100`: per
/// resource `requested * 100 / allocatable` (integer, requested capped at
/// allocatable), weighted mean (integer) over the resources with
/// `allocatable > 0`; 0 when there is none or all their weights are 0.
///
/// ```
/// use wasched_sdk::scoring::{ResourceUse, most_allocated};
/// let gpu = ResourceUse { requested: 6, allocatable: 8, weight: 3 };
/// let cpu = ResourceUse { requested: 1, allocatable: 4, weight: 1 };
/// assert_eq!(most_allocated(&[gpu, cpu]), (75 * 3 + 25) / 4);
/// ```
pub fn most_allocated(resources: &[ResourceUse]) -> u64 {
    // 64-bit sums when the weights allow (always, in practice): 128-bit
    // multiplication and division are library calls, above all in wasm.
    let (mut sum, mut weights) = (0u64, 0u64);
    for r in resources.iter().filter(|r| r.allocatable > 0) {
        let added = share(r)
            .checked_mul(r.weight)
            .and_then(|x| sum.checked_add(x))
            .zip(weights.checked_add(r.weight));
        match added {
            Some((s, w)) => (sum, weights) = (s, w),
            None => return most_allocated_wide(resources),
        }
    }
    if weights == 0 {
        return 0;
    }
    (sum / weights).min(MAX_SCORE)
}

/// One resource's columns for [`most_allocated_over`]: the pod's request,
/// and per node (indexed by node id) what is requested and allocatable.
#[derive(Clone, Copy, Debug)]
pub struct ResourceColumns<'a> {
    /// The pod's request.
    pub request: u64,
    /// Requests of the pods bound or assumed on each node.
    pub requested: &'a [u64],
    /// Allocatable amount on each node.
    pub allocatable: &'a [u64],
    /// The resource's weight.
    pub weight: u64,
}

/// [`most_allocated`] of one pod on each of `nodes`, column by column:
/// the same scores, in 64-bit arithmetic over whole columns (a loop wasm
/// runs fast, with no per-node list), falling back to [`most_allocated`]
/// for a node where 64 bits do not hold. (A saturated `requested` is
/// exact here: it is capped at `allocatable` either way.)
pub fn most_allocated_over(columns: &[ResourceColumns<'_>], nodes: &[u32]) -> alloc::vec::Vec<u64> {
    let mut sums = alloc::vec![0u64; nodes.len()];
    let mut weights = alloc::vec![0u64; nodes.len()];
    let mut wide = alloc::vec![false; nodes.len()];
    for c in columns {
        for (i, &node) in nodes.iter().enumerate() {
            let allocatable = c.allocatable.get(node as usize).copied().unwrap_or(0);
            if allocatable == 0 {
                continue;
            }
            let requested = c.requested.get(node as usize).copied().unwrap_or(0);
            let used = requested.saturating_add(c.request).min(allocatable);
            let added = (used <= u64::MAX / MAX_SCORE)
                .then(|| used * MAX_SCORE / allocatable)
                .and_then(|share| share.checked_mul(c.weight))
                .and_then(|x| sums[i].checked_add(x))
                .zip(weights[i].checked_add(c.weight));
            match added {
                Some((sum, weight)) => (sums[i], weights[i]) = (sum, weight),
                None => wide[i] = true,
            }
        }
    }
    nodes
        .iter()
        .enumerate()
        .map(|(i, &node)| {
            if wide[i] {
                let at =
                    |column: &[u64]| u128::from(column.get(node as usize).copied().unwrap_or(0));
                let uses: alloc::vec::Vec<ResourceUse> = columns
                    .iter()
                    .map(|c| ResourceUse {
                        requested: at(c.requested) + u128::from(c.request),
                        allocatable: at(c.allocatable),
                        weight: c.weight,
                    })
                    .collect();
                most_allocated(&uses)
            } else {
                sums[i]
                    .checked_div(weights[i])
                    .map_or(0, |score| score.min(MAX_SCORE))
            }
        })
        .collect()
}

/// [`most_allocated`] in 128-bit arithmetic, for weights too large for 64.
fn most_allocated_wide(resources: &[ResourceUse]) -> u64 {
    let (sum, weights) =
        resources
            .iter()
            .filter(|r| r.allocatable > 0)
            .fold((0u128, 0u128), |(sum, weights), r| {
                let weight = u128::from(r.weight);
                (sum + u128::from(share(r)) * weight, weights + weight)
            });
    if weights == 0 {
        return 0;
    }
    u64::try_from(sum / weights).map_or(MAX_SCORE, |score| score.min(MAX_SCORE))
}

/// `requested * 100 / allocatable` (requested capped at allocatable, so at
/// most 100) for `allocatable > 0`. In 64-bit arithmetic when the amounts
/// allow it: 128-bit division is a slow library call, above all in wasm.
fn share(r: &ResourceUse) -> u64 {
    let used = r.requested.min(r.allocatable);
    match (u64::try_from(used), u64::try_from(r.allocatable)) {
        (Ok(used), Ok(allocatable)) if used <= u64::MAX / MAX_SCORE => {
            used * MAX_SCORE / allocatable
        }
        // used ≤ allocatable, so past u128::MAX / 100 dividing first
        // loses nothing that shows in a score of 0..=100.
        _ => match used.checked_mul(u128::from(MAX_SCORE)) {
            Some(scaled) => (scaled / r.allocatable) as u64,
            None => {
                (used / (r.allocatable / u128::from(MAX_SCORE))).min(u128::from(MAX_SCORE)) as u64
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column form gives exactly the per-node scores, small amounts
    /// and amounts past 64 bits alike.
    #[test]
    fn columns_score_as_nodes_do() {
        let big = u64::MAX;
        let requested = [0, 3, 9, big / 2, big, 7, big / 50, 0];
        let allocatable = [8, 8, 8, big, big, 0, big, 5];
        let nodes: alloc::vec::Vec<u32> = (0..8).collect();
        for (request, weight) in [(0, 1), (2, 3), (big, 1), (1, u64::MAX / 2)] {
            let columns = [
                ResourceColumns {
                    request,
                    requested: &requested,
                    allocatable: &allocatable,
                    weight,
                },
                ResourceColumns {
                    request: 1,
                    requested: &allocatable,
                    allocatable: &requested,
                    weight: 1,
                },
            ];
            let expected: alloc::vec::Vec<u64> = nodes
                .iter()
                .map(|&n| {
                    let uses: alloc::vec::Vec<ResourceUse> = columns
                        .iter()
                        .map(|c| ResourceUse {
                            requested: u128::from(c.requested[n as usize]) + u128::from(c.request),
                            allocatable: u128::from(c.allocatable[n as usize]),
                            weight: c.weight,
                        })
                        .collect();
                    most_allocated(&uses)
                })
                .collect();
            assert_eq!(
                most_allocated_over(&columns, &nodes),
                expected,
                "{request} {weight}"
            );
        }
    }

    #[test]
    fn shares_are_exact_in_either_width() {
        let r = |requested: u128, allocatable: u128| ResourceUse {
            requested,
            allocatable,
            weight: 1,
        };
        assert_eq!(share(&r(3, 8)), 37);
        assert_eq!(share(&r(9, 8)), 100);
        let big = u128::from(u64::MAX) * 4;
        assert_eq!(share(&r(big / 2, big)), 50);
        assert_eq!(
            share(&r(u128::from(u64::MAX / 50), u128::from(u64::MAX))),
            1
        );
        assert_eq!(most_allocated(&[r(0, 0)]), 0);
        assert_eq!(share(&r(u128::MAX / 2, u128::MAX)), 50);
        assert_eq!(share(&r(u128::MAX, u128::MAX)), 100);
        let heavy = |requested, weight| ResourceUse {
            requested,
            allocatable: 100,
            weight,
        };
        for uses in [
            vec![heavy(30, 1), heavy(90, 3)],
            vec![heavy(30, u64::MAX / 2), heavy(90, u64::MAX / 2)],
        ] {
            assert_eq!(
                most_allocated(&uses),
                most_allocated_wide(&uses),
                "{uses:?}"
            );
        }
        assert_eq!(
            most_allocated(&[heavy(30, u64::MAX / 2), heavy(90, u64::MAX / 2)]),
            60
        );
    }
}
