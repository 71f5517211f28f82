//! Leader election on a Lease of the scheduler's own (as kube-scheduler
//! elects on `kube-system/kube-scheduler`): only the holder schedules; one
//! that loses the lease exits, so that two never act at once.
//! kube-lease-manager keeps the Lease (server-side apply: `create`, `get`,
//! `patch` on its name); lease 15 s, renewed 5 s before it expires, as
//! kube-scheduler's 15 s lease and 10 s renew deadline.

use anyhow::{Context, Result};
use kube::Client;
use kube_lease_manager::{LeaseManagerBuilder, LeaseParams};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Seconds a lease is valid after its last renewal.
pub const LEASE_SECONDS: u64 = 15;
/// Seconds before expiry the holder renews.
pub const RENEW_BEFORE_SECONDS: u64 = 5;

/// Where the Lease is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseOptions {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

/// A held lease: whether it is still held, and the task that keeps it.
pub struct Leadership {
    held: watch::Receiver<bool>,
    keeper: JoinHandle<kube_lease_manager::Result<kube_lease_manager::LeaseManager>>,
    /// This instance's holder identity.
    pub identity: String,
}

/// This process's holder identity: the pod's name (`POD_NAME`) or the
/// host's, and a random suffix, as kube-scheduler's `hostname_uuid`.
pub fn identity() -> String {
    let host = std::env::var("POD_NAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "wasched".into());
    format!("{host}_{:016x}", rand::random::<u64>())
}

/// Waits until this process holds the lease.
pub async fn acquire(client: Client, lease: &LeaseOptions) -> Result<Leadership> {
    let identity = identity();
    let manager = LeaseManagerBuilder::new(client, &lease.name)
        .with_namespace(&lease.namespace)
        .with_parameters(LeaseParams::new(
            identity.clone(),
            LEASE_SECONDS,
            RENEW_BEFORE_SECONDS,
        ))
        .build()
        .await
        .with_context(|| format!("cannot use the Lease {}/{}", lease.namespace, lease.name))?;
    let (mut held, keeper) = manager.watch().await;
    while !*held.borrow_and_update() {
        held.changed()
            .await
            .context("the lease keeper stopped before the lease was held")?;
    }
    Ok(Leadership {
        held,
        keeper,
        identity,
    })
}

/// Resolves when the lease `held` tells of is no longer held.
pub async fn lost(held: &mut watch::Receiver<bool>) {
    while *held.borrow_and_update() {
        if held.changed().await.is_err() {
            return;
        }
    }
}

impl Leadership {
    /// Whether the lease is held, as it changes.
    pub fn watch(&self) -> watch::Receiver<bool> {
        self.held.clone()
    }

    /// Gives the lease up (on shutdown), so that another instance need not
    /// wait for it to expire.
    pub async fn release(self) {
        drop(self.held);
        let _ = self.keeper.await;
    }
}
