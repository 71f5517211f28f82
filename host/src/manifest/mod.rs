//! Reading snapshots written as ordinary Kubernetes manifests.
//!
//! Accepts what `kubectl get ... -o yaml|json` prints: multi-document YAML,
//! JSON, `List` / `*List` objects with `items`, and single objects, from
//! several files. Every object is parsed into its k8s-openapi type
//! (`v1_37`); an error names the file, the object and the field.

pub mod dialect;
pub mod jobs;
mod load;
pub mod quantity;

pub use jobs::expand as expand_jobs;
pub use load::{Manifests, Object, ObjectRef, load_files, load_str};
