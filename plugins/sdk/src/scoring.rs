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
    let max = u128::from(MAX_SCORE);
    let (sum, weights) = resources
        .iter()
        .filter(|r| r.allocatable > 0)
        .fold((0u128, 0u128), |(sum, weights), r| {
            let used = r.requested.min(r.allocatable);
            let weight = u128::from(r.weight);
            (sum + used * max / r.allocatable * weight, weights + weight)
        });
    if weights == 0 {
        return 0;
    }
    u64::try_from(sum / weights).map_or(MAX_SCORE, |score| score.min(MAX_SCORE))
}
