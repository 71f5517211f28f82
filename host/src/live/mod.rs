//! Live clusters, through kube-rs, read-only: a snapshot read from an API
//! server (`simulate --kubeconfig`), and `wasched shadow`, which watches a
//! cluster and reports what the plugins would decide for its pending pods
//! and where its scheduler decided otherwise. Nothing here writes to a
//! cluster: the one live writer is upstream's kube-scheduler, with or
//! without wasched's components (`kube/`).
//!
//! - [`kinds`] knows which modelled kinds the server serves, and how each
//!   becomes a manifest [`Object`];
//! - [`store`] keeps the watched objects current;
//! - [`predictions`] holds the shadow's predictions against what the
//!   scheduler did;
//! - [`shadow`] is the loop; [`endpoints`] its HTTP endpoints; [`logging`]
//!   its log lines.

pub mod endpoints;
pub mod gates;
pub mod kinds;
pub mod logging;
pub mod predictions;
pub mod shadow;
pub mod store;

use std::path::Path;

use anyhow::{Context, Result};
use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::manifest::{Manifests, Object};
use kinds::Served;

/// How objects read from a server are named in messages (the "file" of an
/// [`ObjectRef`](crate::manifest::ObjectRef)).
pub const ORIGIN: &str = "cluster";

/// A client for the cluster of `kubeconfig`, else of `KUBECONFIG`,
/// `~/.kube/config` or the pod's service account (in-cluster).
pub async fn connect(kubeconfig: Option<&Path>) -> Result<Client> {
    let config = match kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path)
                .with_context(|| format!("{}: cannot read the kubeconfig", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                .await
                .with_context(|| format!("{}: not a usable kubeconfig", path.display()))?
        }
        None => kube::Config::infer().await.context(
            "no kubeconfig (--kubeconfig, KUBECONFIG, ~/.kube/config) and not in a cluster",
        )?,
    };
    Client::try_from(config).context("cannot build a Kubernetes client")
}

/// Reads every modelled object the server serves into manifests, as a
/// snapshot file would hold them (`simulate --kubeconfig`); the kinds it
/// does not serve are noted.
pub async fn read_manifests(client: &Client) -> Result<Manifests> {
    let served = Served::discover(client).await?;
    let mut manifests = Manifests::default();
    manifests.notes.extend(served.notes());
    for object in kinds::list_all(client, &served).await? {
        manifests.objects.push((kinds::origin(&object), object));
    }
    manifests
        .objects
        .sort_by(|a, b| (kind_rank(&a.1), &a.0.name).cmp(&(kind_rank(&b.1), &b.0.name)));
    Ok(manifests)
}

/// [`read_manifests`] from the cluster of `kubeconfig`, on a runtime of
/// its own (`simulate --kubeconfig`).
pub fn read_cluster(kubeconfig: &Path) -> Result<Manifests> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime
        .block_on(async {
            let client = connect(Some(kubeconfig)).await?;
            read_manifests(&client).await
        })
        .with_context(|| format!("reading the cluster of {}", kubeconfig.display()))
}

/// Orders kinds as a dump lists them (priority classes first).
fn kind_rank(object: &Object) -> u8 {
    match object {
        Object::PriorityClass(_) => 0,
        Object::Node(_) => 1,
        Object::Workload(_) => 2,
        Object::CompositePodGroup(_) => 3,
        Object::PodGroup(_) => 4,
        Object::PodDisruptionBudget(_) => 5,
        Object::Job(_) | Object::Controller(_) => 6,
        Object::Pod(_) => 7,
    }
}
