//! Field validation as the API server's strict field validation does it:
//! a field the object's type does not have is named (`unknown field
//! "spec.containers[0].resource"`), and a required field that is absent is
//! said to be missing rather than read as zero.
//!
//! k8s-openapi's types ignore unknown fields and default absent required
//! ones, so both are found around its deserialisation: unknown fields
//! through [`serde_ignored`], which sees every value the type skips;
//! missing ones by serialising the typed object back (k8s-openapi writes a
//! required field always and an optional one only when set) and naming
//! the keys that the input lacked.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{Result, anyhow};
use serde_json::Value;

use super::load::ObjectRef;

/// How unknown fields are treated (`--strict`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Named in a warning; the object is read without them (the API
    /// server's `Warn`, kubectl's default).
    #[default]
    Warn,
    /// Refused with the object (the API server's `Strict`).
    Strict,
}

/// Unknown fields found while reading, by kind and path: how many objects
/// had each and the first of them (a dump from a newer cluster repeats one
/// new field on every object of a kind).
#[derive(Debug, Default, Clone)]
pub struct UnknownFields(BTreeMap<(String, String), (usize, ObjectRef)>);

impl UnknownFields {
    /// Adds what `later`, met after everything so far, counted: its first
    /// objects count as first only where nothing came before.
    pub fn merge(&mut self, later: UnknownFields) {
        for (path, (count, first)) in later.0 {
            self.0.entry(path).or_insert((0, first)).0 += count;
        }
    }

    /// One warning per kind and path: the first object that had it, and
    /// how many more did.
    pub fn warnings(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|((kind, path), (count, first))| match count {
                1 => format!("{first}: unknown field {path:?}"),
                _ => format!(
                    "{first}: unknown field {path:?} (and in {} more {kind} object(s))",
                    count - 1
                ),
            })
            .collect()
    }
}

/// Deserialises `value` into a k8s-openapi type, naming the failing field
/// on error. Unknown fields are counted in `unknown_fields` (or refused
/// under [`FieldValidation::Strict`]); with `check_required`, an absent
/// required field is an error.
pub fn parse<T>(
    origin: &ObjectRef,
    value: Value,
    validation: FieldValidation,
    check_required: bool,
    unknown_fields: &mut UnknownFields,
) -> Result<Box<T>>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    parse_at(
        origin,
        "",
        value,
        validation,
        check_required,
        unknown_fields,
    )
}

/// [`parse`] of a part of an object, `at` its path (`spec.template`), which
/// every field named is prefixed with.
pub fn parse_at<T>(
    origin: &ObjectRef,
    at: &str,
    value: Value,
    validation: FieldValidation,
    check_required: bool,
    unknown_fields: &mut UnknownFields,
) -> Result<Box<T>>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let within = |path: String| match (at.is_empty(), path.is_empty()) {
        (true, _) => path,
        (false, true) => at.to_string(),
        (false, false) if path.starts_with('[') => format!("{at}{path}"),
        (false, false) => format!("{at}.{path}"),
    };
    let input = check_required.then(|| value.clone());
    let mut unknown = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| unknown.push(within(path_text(&path)));
    let typed: T =
        serde_path_to_error::deserialize(serde_ignored::Deserializer::new(value, &mut record))
            .map_err(|e| {
                let path = e.path().to_string();
                let path = if path == "." {
                    if at.is_empty() {
                        "(object)".to_string()
                    } else {
                        at.to_string()
                    }
                } else {
                    within(path)
                };
                anyhow!("{origin}: field {path}: {}", e.into_inner())
            })?;
    let named: Vec<String> = unknown
        .iter()
        .map(|p| format!("unknown field {p:?}"))
        .collect();
    if let Some(input) = input {
        let written = serde_json::to_value(&typed)
            .map_err(|e| anyhow!("{origin}: cannot be written back: {e}"))?;
        let mut missing = Vec::new();
        missing_fields(&input, &written, &mut at.to_string(), &mut missing);
        if let Some(first) = missing.first() {
            let given = if named.is_empty() {
                String::new()
            } else {
                format!(" ({})", named.join(", "))
            };
            return Err(anyhow!(
                "{origin}: field {first}: required field is missing{given}"
            ));
        }
    }
    if !named.is_empty() {
        match validation {
            FieldValidation::Strict => {
                return Err(anyhow!("{origin}: {} (--strict)", named.join(", ")));
            }
            FieldValidation::Warn => {
                for path in unknown {
                    unknown_fields
                        .0
                        .entry((origin.kind.clone(), path))
                        .or_insert((0, origin.clone()))
                        .0 += 1;
                }
            }
        }
    }
    Ok(Box::new(typed))
}

/// `spec.containers[0].resource` for serde_ignored's path.
fn path_text(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    fn write(path: &Path<'_>, out: &mut String) {
        match path {
            Path::Root => {}
            Path::Seq { parent, index } => {
                write(parent, out);
                let _ = write!(out, "[{index}]");
            }
            Path::Map { parent, key } => {
                write(parent, out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Path::Some { parent }
            | Path::NewtypeStruct { parent }
            | Path::NewtypeVariant { parent } => write(parent, out),
        }
    }
    let mut out = String::new();
    write(path, &mut out);
    out
}

/// The paths of keys that `written` (the typed object serialised back)
/// has and `input` lacks: the required fields the input left out. Only
/// objects are compared key by key; lists item by item.
fn missing_fields(input: &Value, written: &Value, path: &mut String, out: &mut Vec<String>) {
    match (input, written) {
        (Value::Object(input), Value::Object(written)) => {
            for (key, value) in written {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                match input.get(key) {
                    // A string written empty is one Go leaves out when
                    // empty (`name` of a LocalObjectReference, say), which
                    // k8s-openapi types as required: not reported.
                    None | Some(Value::Null) if value.as_str() == Some("") => {}
                    None | Some(Value::Null) => out.push(path.clone()),
                    Some(given) => missing_fields(given, value, path, out),
                }
                path.truncate(len);
            }
        }
        (Value::Array(input), Value::Array(written)) => {
            for (index, (given, value)) in input.iter().zip(written).enumerate() {
                let len = path.len();
                let _ = write!(path, "[{index}]");
                missing_fields(given, value, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::api::scheduling::v1beta1::PodGroup;

    fn origin(kind: &str) -> ObjectRef {
        ObjectRef {
            file: "snap.yaml".into(),
            kind: kind.into(),
            name: "ns/x".into(),
        }
    }

    fn yaml(text: &str) -> Value {
        serde_norway::from_str(text).unwrap()
    }

    #[test]
    fn unknown_fields_are_named_as_the_api_server_names_them() {
        let pod = yaml(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: ns, labelz: {a: b}}\n\
             spec:\n  containers:\n  - name: c\n    resource: {requests: {nvidia.com/gpu: 64}}\n",
        );
        let mut unknown = UnknownFields::default();
        let parsed: Box<Pod> = parse(
            &origin("Pod"),
            pod.clone(),
            FieldValidation::Warn,
            false,
            &mut unknown,
        )
        .unwrap();
        assert!(parsed.spec.unwrap().containers[0].resources.is_none());
        assert_eq!(
            unknown.warnings(),
            [
                "snap.yaml: Pod ns/x: unknown field \"metadata.labelz\"",
                "snap.yaml: Pod ns/x: unknown field \"spec.containers[0].resource\"",
            ]
        );
        let error = parse::<Pod>(
            &origin("Pod"),
            pod,
            FieldValidation::Strict,
            false,
            &mut UnknownFields::default(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "snap.yaml: Pod ns/x: unknown field \"metadata.labelz\", unknown field \
             \"spec.containers[0].resource\" (--strict)"
        );
    }

    #[test]
    fn a_missing_required_field_is_said_missing_not_read_as_zero() {
        let group = yaml(
            "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: x, namespace: ns}\n\
             spec: {schedulingPolicy: {gang: {minCont: 4}}}\n",
        );
        let error = parse::<PodGroup>(
            &origin("PodGroup"),
            group,
            FieldValidation::Warn,
            true,
            &mut UnknownFields::default(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "snap.yaml: PodGroup ns/x: field spec.schedulingPolicy.gang.minCount: required field \
             is missing (unknown field \"spec.schedulingPolicy.gang.minCont\")"
        );
        // Everything present, nothing said; null counts as absent.
        let mut unknown = UnknownFields::default();
        let good = yaml(
            "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n\
             metadata: {name: x, namespace: ns, creationTimestamp: null}\n\
             spec: {schedulingPolicy: {gang: {minCount: 4}}}\n",
        );
        parse::<PodGroup>(
            &origin("PodGroup"),
            good,
            FieldValidation::Strict,
            true,
            &mut unknown,
        )
        .unwrap();
        assert!(unknown.warnings().is_empty());
    }

    #[test]
    fn one_unknown_field_on_many_objects_is_one_warning() {
        let mut unknown = UnknownFields::default();
        for name in ["a", "b", "c"] {
            let pod = yaml(&format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec: {{newField: 1, containers: []}}\n"
            ));
            let mut at = origin("Pod");
            at.name = format!("ns/{name}");
            parse::<Pod>(&at, pod, FieldValidation::Warn, false, &mut unknown).unwrap();
        }
        assert_eq!(
            unknown.warnings(),
            ["snap.yaml: Pod ns/a: unknown field \"spec.newField\" (and in 2 more Pod object(s))"]
        );
    }
}
