//! PodDisruptionBudgets (`policy/v1`) as preemption sees them: which pods a
//! budget protects and how many of them may be disrupted now.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::PodId;

/// Index of a PodDisruptionBudget; budgets are sorted by `namespace/name`.
pub type BudgetId = u32;

/// One PodDisruptionBudget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisruptionBudget {
    /// `namespace/name`.
    pub key: String,
    /// The pods its selector matches (same namespace), ascending.
    pub pods: Vec<PodId>,
    /// `status.disruptionsAllowed` when the snapshot has it, else computed
    /// by [`disruptions_allowed`].
    pub disruptions_allowed: u32,
}

/// How many of `expected` matching pods, `healthy` of them running, may be
/// disrupted (the disruption controller's rule): `minAvailable` asks for that
/// many healthy pods, `maxUnavailable` allows that many of `expected` to be
/// missing; percentages round up. Neither field: nothing is protected.
pub fn disruptions_allowed(
    min_available: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
    expected: u32,
    healthy: u32,
) -> Result<u32, String> {
    let scaled = |value: &IntOrString, field: &str| -> Result<u32, String> {
        match value {
            IntOrString::Int(n) => u32::try_from(*n)
                .map_err(|_| format!("field spec.{field}: must be non-negative, got {n}")),
            IntOrString::String(text) => {
                let percent = text
                    .strip_suffix('%')
                    .and_then(|p| p.parse::<u64>().ok())
                    .filter(|p| *p <= 100)
                    .ok_or_else(|| {
                        format!("field spec.{field}: {text:?} is not an integer or a percentage 0%..100%")
                    })?;
                Ok((percent * u64::from(expected)).div_ceil(100) as u32)
            }
        }
    };
    let desired_healthy = match (min_available, max_unavailable) {
        (Some(_), Some(_)) => {
            return Err("spec: minAvailable and maxUnavailable are mutually exclusive".into());
        }
        (Some(min), None) => scaled(min, "minAvailable")?,
        (None, Some(max)) => expected.saturating_sub(scaled(max, "maxUnavailable")?),
        (None, None) => 0,
    };
    Ok(healthy.saturating_sub(desired_healthy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disruption_controller_rule() {
        let int = |n| IntOrString::Int(n);
        let pct = |p: &str| IntOrString::String(p.into());
        let cases = [
            (Some(int(2)), None, 4, 4, 2),
            (Some(int(2)), None, 4, 2, 0),
            (Some(int(5)), None, 4, 4, 0),
            (Some(pct("50%")), None, 3, 3, 1), // ceil(1.5) = 2 must stay
            (None, Some(int(1)), 4, 4, 1),
            (None, Some(int(1)), 4, 3, 0),
            (None, Some(pct("25%")), 5, 5, 2), // ceil(1.25) = 2 may go
            (None, None, 3, 3, 3),
        ];
        for (min, max, expected, healthy, allowed) in cases {
            assert_eq!(
                disruptions_allowed(min.as_ref(), max.as_ref(), expected, healthy).unwrap(),
                allowed,
                "{min:?} {max:?} {expected} {healthy}"
            );
        }
        assert!(
            disruptions_allowed(Some(&pct("lots")), None, 1, 1)
                .unwrap_err()
                .contains("minAvailable")
        );
        assert!(disruptions_allowed(Some(&int(-1)), None, 1, 1).is_err());
    }
}
