//! Kueue's plain-pod groups (`pkg/controller/jobs/pod`): pods labelled (or
//! annotated) `kueue.x-k8s.io/pod-group-name`, with the group's size in the
//! annotation `kueue.x-k8s.io/pod-group-total-count`. Kueue admits such a
//! group whole against its queue's quota and then lets the scheduler place
//! its pods one by one: quota admission, not a placement gang. wasched
//! reads the pods as plain pods and says so, one note per group; pods that
//! still carry Kueue's scheduling gate `kueue.x-k8s.io/admission` are held
//! by it (as any gated pod is) until Kueue admits the group.

use std::collections::BTreeMap;

use crate::manifest::load::{Manifests, Object};

/// The group name's label (and, since Kueue 0.18, annotation).
pub const GROUP_NAME: &str = "kueue.x-k8s.io/pod-group-name";
/// The group's size.
pub const TOTAL_COUNT: &str = "kueue.x-k8s.io/pod-group-total-count";
/// The scheduling gate Kueue holds its pods with.
pub const ADMISSION_GATE: &str = "kueue.x-k8s.io/admission";

/// One note per Kueue pod group of `into`.
pub fn note_groups(into: &mut Manifests) {
    // (namespace, group) → (pods, gated, total count)
    let mut groups: BTreeMap<(String, String), (usize, usize, Option<String>)> = BTreeMap::new();
    for (_, object) in &into.objects {
        let Object::Pod(pod) = object else { continue };
        let meta = &pod.metadata;
        let Some(group) = meta
            .annotations
            .as_ref()
            .and_then(|a| a.get(GROUP_NAME))
            .or_else(|| meta.labels.as_ref().and_then(|l| l.get(GROUP_NAME)))
        else {
            continue;
        };
        let namespace = meta.namespace.clone().unwrap_or_else(|| "default".into());
        let gated = pod
            .spec
            .as_ref()
            .and_then(|s| s.scheduling_gates.as_ref())
            .is_some_and(|gates| gates.iter().any(|g| g.name == ADMISSION_GATE));
        let total = meta
            .annotations
            .as_ref()
            .and_then(|a| a.get(TOTAL_COUNT))
            .cloned();
        let entry = groups
            .entry((namespace, group.clone()))
            .or_insert((0, 0, None));
        entry.0 += 1;
        entry.1 += usize::from(gated);
        if entry.2.is_none() {
            entry.2 = total;
        }
    }
    for ((namespace, group), (pods, gated, total)) in groups {
        let total = total.map_or_else(String::new, |t| format!(" of total count {t}"));
        let held = if gated > 0 {
            format!(
                "; {gated} held by the scheduling gate {ADMISSION_GATE} until Kueue admits the group"
            )
        } else {
            String::new()
        };
        into.notes.push(format!(
            "Kueue pod group {namespace}/{group}: {pods} pod(s){total} read as plain pods: \
             a quota-admission group (Kueue admits it whole), not a placement gang{held}"
        ));
    }
}
