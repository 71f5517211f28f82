//! Reading snapshots written as ordinary Kubernetes manifests.
//!
//! Accepts what `kubectl get ... -o yaml|json` prints: multi-document YAML,
//! JSON, `List` / `*List` objects with `items`, and single objects, from
//! several files. Every object is parsed into its k8s-openapi type
//! (`v1_37`); an error names the file, the object and the field, and an
//! unknown field is named as the API server's strict field validation
//! names it ([`fields`]). Names and namespaces are completed as the API
//! server and kubectl complete them ([`names`]).

pub mod depth;
pub mod dialect;
pub mod fields;
pub mod kai;
mod load;
pub mod names;
pub mod prune;
pub mod quantity;
mod stream;
pub mod versions;
pub mod workloads;

pub use fields::FieldValidation;
pub use load::{Manifests, Object, ObjectRef, STDIN, load_files, load_str};
pub use names::DEFAULT_SCHEDULER_NAME;
pub use workloads::{ControllerKind, ControllerOptions, WithoutPods, expand as expand_workloads};
