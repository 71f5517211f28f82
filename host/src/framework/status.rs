//! kube-scheduler's status vocabulary: the same types plugins answer in
//! (`wasched_sdk`), so that host and plugins share one definition.

pub use wasched_sdk::{Code, Status};
