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
/// and per node (by position, as `node-resources` answers) what is
/// requested and allocatable.
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

/// [`most_allocated`] of one pod on each of `nodes` nodes, column by
/// column: node `i`'s amounts are at position `i` of every column (a
/// column shorter than `nodes` has nothing past its end). The same scores
/// as [`most_allocated`] node by node; when the amounts and weights allow
/// (always, in practice: see [`narrow_columns`]), in a loop without a
/// branch per node, which wasm runs almost as fast as native code.
pub fn most_allocated_over(columns: &[ResourceColumns<'_>], nodes: usize) -> alloc::vec::Vec<u64> {
    match narrow_columns(columns, nodes) {
        Some(narrow) => most_allocated_narrow(columns, &narrow, nodes),
        None => most_allocated_by_node(columns, nodes),
    }
}

/// [`most_allocated`] node by node, exact on any amounts and weights.
fn most_allocated_by_node(columns: &[ResourceColumns<'_>], nodes: usize) -> alloc::vec::Vec<u64> {
    (0..nodes)
        .map(|i| {
            let at = |column: &[u64]| u128::from(column.get(i).copied().unwrap_or(0));
            let uses: alloc::vec::Vec<ResourceUse> = columns
                .iter()
                .map(|c| ResourceUse {
                    requested: at(c.requested) + u128::from(c.request),
                    allocatable: at(c.allocatable),
                    weight: c.weight,
                })
                .collect();
            most_allocated(&uses)
        })
        .collect()
}

/// Whether [`most_allocated_narrow`] is exact on these columns, and if so,
/// for each column whether its shares divide in 32 bits. It is exact when
/// each column has both amounts for every node, no allocatable amount
/// overflows when multiplied by [`MAX_SCORE`] (a used amount is capped at
/// it), and the weights' sum, times [`MAX_SCORE`], stays within 32 bits.
fn narrow_columns(columns: &[ResourceColumns<'_>], nodes: usize) -> Option<alloc::vec::Vec<bool>> {
    let weights = columns
        .iter()
        .try_fold(0u64, |sum, c| sum.checked_add(c.weight))?;
    if weights > SHARE_32 {
        return None;
    }
    columns
        .iter()
        .map(|c| {
            if c.requested.len() < nodes || c.allocatable.len() < nodes {
                return None;
            }
            let largest = largest(&c.allocatable[..nodes]);
            (largest <= u64::MAX / MAX_SCORE).then_some(largest <= SHARE_32)
        })
        .collect()
}

/// The largest amount of `column` (0 if empty), four at a time: one pass
/// that wasm runs in a quarter of the rounds.
fn largest(column: &[u64]) -> u64 {
    let rounds = column.chunks_exact(4);
    let rest = rounds.remainder().iter().copied().max().unwrap_or(0);
    let (mut a, mut b, mut c, mut d) = (0, 0, 0, 0);
    for round in rounds {
        a = u64::max(a, round[0]);
        b = u64::max(b, round[1]);
        c = u64::max(c, round[2]);
        d = u64::max(d, round[3]);
    }
    a.max(b).max(c).max(d).max(rest)
}

/// The largest amount that, times [`MAX_SCORE`], stays within 32 bits: the
/// bound on a column's allocatable amounts for 32-bit divisions, and on
/// the sum of the weights for the packed sums (a share is at most
/// [`MAX_SCORE`]).
const SHARE_32: u64 = u32::MAX as u64 / MAX_SCORE;

/// [`most_allocated_over`] on columns [`narrow_columns`] accepts (`narrow`:
/// whether each column's shares divide in 32 bits). Per node
/// one word holds the weighted shares' sum in its high half and the
/// weights' sum in its low half (both stay within 32 bits, so neither
/// carries into the other); a column adds to both without a branch (a node
/// without the resource adds nothing); the score is their quotient (0
/// where no weight counted, as the sum is 0 there too).
///
/// A division is most of the cost, and a 64-bit one is several times a
/// 32-bit one on common x86 cores. Native code takes the 32-bit one where
/// the operands allow, checking per division; wasm compilers do not. So a
/// column whose amounts all fit divides in 32 bits throughout, as does
/// the mean.
fn most_allocated_narrow(
    columns: &[ResourceColumns<'_>],
    narrow: &[bool],
    nodes: usize,
) -> alloc::vec::Vec<u64> {
    let mut sums = alloc::vec![0u64; nodes];
    for (i, (c, &narrow)) in columns.iter().zip(narrow).enumerate() {
        // The last column's pass also takes the quotient.
        if i + 1 < columns.len() {
            add_column::<false>(&mut sums, c, narrow);
        } else {
            add_column::<true>(&mut sums, c, narrow);
        }
    }
    sums
}

/// Adds one column's weighted shares and weight to the nodes' sums (see
/// [`most_allocated_narrow`]), then, if `FINAL`, turns each sum into its
/// score. The shares divide in 32 bits if `narrow` (the column's amounts
/// allow it).
fn add_column<const FINAL: bool>(sums: &mut [u64], c: &ResourceColumns<'_>, narrow: bool) {
    let nodes = sums.len();
    let (requested, allocatable) = (&c.requested[..nodes], &c.allocatable[..nodes]);
    let (request, weight) = (c.request, c.weight);
    let add = |sum: &mut u64, allocatable: u64, share: u64| {
        let counted = u64::from(allocatable != 0) * weight;
        *sum += counted * (share << 32 | 1);
        if FINAL {
            let (shares, weights) = ((*sum >> 32) as u32, *sum as u32);
            *sum = u64::from(shares / weights.max(1)).min(MAX_SCORE);
        }
    };
    let used =
        |requested: u64, allocatable: u64| requested.saturating_add(request).min(allocatable);
    if narrow {
        four_a_round(
            sums,
            requested,
            allocatable,
            |sum, requested, allocatable| {
                let used = used(requested, allocatable) as u32;
                let share = used * MAX_SCORE as u32 / (allocatable as u32).max(1);
                add(sum, allocatable, u64::from(share));
            },
        );
    } else {
        four_a_round(
            sums,
            requested,
            allocatable,
            |sum, requested, allocatable| {
                let share = used(requested, allocatable) * MAX_SCORE / allocatable.max(1);
                add(sum, allocatable, share);
            },
        );
    }
}

/// Calls `body(&mut sums[i], a[i], b[i])` for every node `i` (`a` and `b`
/// at least as long as `sums`), four nodes a round: a wasm loop pays its
/// fuel and interruption checks per round, not per node, and walks its
/// slices by pointer.
#[inline(always)]
fn four_a_round(sums: &mut [u64], a: &[u64], b: &[u64], mut body: impl FnMut(&mut u64, u64, u64)) {
    let (a, b) = (&a[..sums.len()], &b[..sums.len()]);
    let mut rounds = sums.chunks_exact_mut(4);
    let (mut a4, mut b4) = (a.chunks_exact(4), b.chunks_exact(4));
    for ((sum, a), b) in (&mut rounds).zip(&mut a4).zip(&mut b4) {
        body(&mut sum[0], a[0], b[0]);
        body(&mut sum[1], a[1], b[1]);
        body(&mut sum[2], a[2], b[2]);
        body(&mut sum[3], a[3], b[3]);
    }
    let rest = rounds.into_remainder().iter_mut();
    for ((sum, &a), &b) in rest.zip(a4.remainder()).zip(b4.remainder()) {
        body(sum, a, b);
    }
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

    /// The column form gives exactly the per-node scores on amounts past
    /// 64 bits and on weights past the packed sums' bound (the exact path).
    #[test]
    fn columns_score_as_nodes_do() {
        let big = u64::MAX;
        let requested = [0, 3, 9, big / 2, big, 7, big / 50, 0];
        let allocatable = [8, 8, 8, big, big, 0, big, 5];
        let nodes: alloc::vec::Vec<usize> = (0..8).collect();
        for (request, weight) in [(0, 1), (2, 3), (big, 1), (1, u64::MAX / 2), (1, 100)] {
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
                            requested: u128::from(c.requested[n]) + u128::from(c.request),
                            allocatable: u128::from(c.allocatable[n]),
                            weight: c.weight,
                        })
                        .collect();
                    most_allocated(&uses)
                })
                .collect();
            assert_eq!(
                most_allocated_over(&columns, nodes.len()),
                expected,
                "{request} {weight}"
            );
        }
    }

    /// Scores node by node, the reference for the column forms.
    fn per_node(columns: &[ResourceColumns<'_>], nodes: usize) -> alloc::vec::Vec<u64> {
        most_allocated_by_node(columns, nodes)
    }

    /// The branch-free loop gives the node-by-node scores on every input it
    /// accepts (zero allocatable, over-requested, saturated requests,
    /// amounts at its 32- and 64-bit bounds, weights at the packed sums'
    /// bound), and a short column or a weight past that bound sends the
    /// score to the exact path.
    #[test]
    fn the_narrow_loop_scores_as_nodes_do() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        let edge = u64::MAX / MAX_SCORE;
        for round in 0..50 {
            let nodes = 1 + next(300) as usize;
            let bound = [9, 1 << 20, SHARE_32, SHARE_32 + 1, edge][round % 5];
            let mut column = |zero_every: u64| -> alloc::vec::Vec<u64> {
                (0..nodes)
                    .map(|_| match next(zero_every) {
                        0 => 0,
                        1 => bound,
                        _ => next(bound + 1),
                    })
                    .collect()
            };
            let (alloc_a, req_a, alloc_b, req_b) = (column(5), column(4), column(3), column(6));
            let weight_a = 1 + next(100);
            // Now and then weights at the packed sums' bound, or past it.
            let weight_b = match round % 7 {
                3 => SHARE_32 - weight_a,
                5 => SHARE_32,
                _ => 1 + next(100),
            };
            let columns = [
                ResourceColumns {
                    request: next(bound),
                    requested: &req_a,
                    allocatable: &alloc_a,
                    weight: weight_a,
                },
                ResourceColumns {
                    request: next(3),
                    requested: &req_b,
                    allocatable: &alloc_b,
                    weight: weight_b,
                },
            ];
            assert_eq!(
                narrow_columns(&columns, nodes).is_some(),
                round % 7 != 5,
                "round {round}"
            );
            assert_eq!(
                most_allocated_over(&columns, nodes),
                per_node(&columns, nodes),
                "round {round}"
            );
            // One column only (its pass is also the last), and none.
            let single = [columns[1]];
            assert_eq!(
                most_allocated_over(&single, nodes),
                per_node(&single, nodes)
            );
            assert_eq!(most_allocated_over(&[], nodes), alloc::vec![0; nodes]);
            let short = [ResourceColumns {
                requested: &req_a[..nodes - 1],
                ..columns[0]
            }];
            assert!(narrow_columns(&short, nodes).is_none());
            assert_eq!(most_allocated_over(&short, nodes), per_node(&short, nodes));
        }
        // Requests that saturate: capped at the allocatable amount.
        let saturated = [ResourceColumns {
            request: 2,
            requested: &[u64::MAX, u64::MAX - 1, 5, u64::MAX],
            allocatable: &[8, 8, 8, 0],
            weight: 3,
        }];
        assert!(narrow_columns(&saturated, 4).is_some());
        assert_eq!(most_allocated_over(&saturated, 4), [100, 100, 87, 0]);
        assert_eq!(per_node(&saturated, 4), [100, 100, 87, 0]);
        let over = [ResourceColumns {
            request: 0,
            requested: &[1],
            allocatable: &[edge + 1],
            weight: 1,
        }];
        assert!(narrow_columns(&over, 1).is_none());
        assert_eq!(most_allocated_over(&over, 1), [0]);
    }

    #[test]
    fn the_largest_amount_is_found_in_every_lane_and_the_rest() {
        assert_eq!(largest(&[]), 0);
        for len in 1..=9 {
            for at in 0..len {
                let mut column = alloc::vec![1u64; len];
                column[at] = 7;
                assert_eq!(largest(&column), 7, "{len} {at}");
            }
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
