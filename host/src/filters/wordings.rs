//! Diagnoses worded once per run: searches that find no node repeat the
//! same rejections over the same number of nodes (the next gang of a
//! shape trying the same racks), and wording one takes thousands of
//! instructions where looking it up takes tens.

use super::Diagnosis;
use crate::model::Snapshot;

/// Diagnoses a run has worded kept at once; past it they are forgotten
/// and wording starts again (a long run's memory stays bounded).
pub const WORDINGS_KEPT: usize = 1 << 12;

/// [`Diagnosis::render`] remembered by diagnosis, for one run: the
/// wording depends on the diagnosis and on the snapshot's taint texts and
/// resource names, which a run does not change.
#[derive(Debug, Default)]
pub struct Wordings {
    by_diagnosis: rustc_hash::FxHashMap<Diagnosis, String>,
}

impl Wordings {
    /// `diagnosis` worded as [`Diagnosis::render`] words it over
    /// `snapshot`.
    pub fn render(&mut self, diagnosis: Diagnosis, snapshot: &Snapshot) -> String {
        if let Some(text) = self.by_diagnosis.get(&diagnosis) {
            return text.clone();
        }
        let text = diagnosis.render(snapshot);
        if self.by_diagnosis.len() >= WORDINGS_KEPT {
            self.by_diagnosis.clear();
        }
        self.by_diagnosis.insert(diagnosis, text.clone());
        text
    }

    /// How many diagnoses are kept worded.
    pub fn len(&self) -> usize {
        self.by_diagnosis.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.by_diagnosis.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::{WORDINGS_KEPT, Wordings};
    use crate::filters::{Diagnosis, Rejection};

    #[test]
    fn a_diagnosis_reads_as_rendered_and_the_kept_ones_are_bounded() {
        let snapshot = crate::model::Snapshot::default();
        let mut wordings = Wordings::default();
        for total in 0..WORDINGS_KEPT + 10 {
            let mut diagnosis = Diagnosis::over(total + 1);
            diagnosis.reject(Rejection::Unschedulable);
            diagnosis.reject(Rejection::NodeAffinity);
            diagnosis.add("a plugin said no");
            let rendered = diagnosis.render(&snapshot);
            assert_eq!(wordings.render(diagnosis.clone(), &snapshot), rendered);
            // Asked again: the kept wording, the same text.
            assert_eq!(wordings.render(diagnosis, &snapshot), rendered);
            assert!(wordings.len() <= WORDINGS_KEPT);
        }
        assert_eq!(
            wordings.len(),
            10,
            "forgotten at the bound, then kept again"
        );
        assert!(!wordings.is_empty());
    }
}
