//! Leader election on a Lease of the scheduler's own (as kube-scheduler
//! elects on `kube-system/kube-scheduler`): only the holder schedules; one
//! that loses the lease exits, so that two never act at once.
//! kube-lease-manager keeps the Lease (server-side apply: `create`, `get`,
//! `patch` on its name); lease 15 s, renewed 5 s before it expires, and the
//! holder reads it back every 2 s and gives up when it cannot confirm it
//! for 10 s, as kube-scheduler's 15 s lease and 10 s renew deadline.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::{Api, Client};
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

/// How often the holder reads the Lease back to check it still holds it.
pub const CHECK_SECONDS: u64 = 2;
/// A holder that cannot confirm its Lease for this long gives it up, as
/// client-go's renew deadline (kube-scheduler: 10 s).
pub const RENEW_DEADLINE_SECONDS: u64 = 10;

/// A held lease: whether it is still held, and the tasks that keep it.
pub struct Leadership {
    held: watch::Receiver<bool>,
    keeper: JoinHandle<kube_lease_manager::Result<kube_lease_manager::LeaseManager>>,
    guard: JoinHandle<()>,
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

/// Waits until this process holds the lease. From then on the lease counts
/// as lost as soon as the keeper says so, the Lease names another holder or
/// has expired, or it could not be read back for the renew deadline.
pub async fn acquire(client: Client, lease: &LeaseOptions) -> Result<Leadership> {
    let identity = identity();
    let manager = LeaseManagerBuilder::new(client.clone(), &lease.name)
        .with_namespace(&lease.namespace)
        .with_parameters(LeaseParams::new(
            identity.clone(),
            LEASE_SECONDS,
            RENEW_BEFORE_SECONDS,
        ))
        .build()
        .await
        .with_context(|| format!("cannot use the Lease {}/{}", lease.namespace, lease.name))?;
    let (mut kept, keeper) = manager.watch().await;
    while !*kept.borrow_and_update() {
        kept.changed()
            .await
            .context("the lease keeper stopped before the lease was held")?;
    }
    let (holds, held) = watch::channel(true);
    let api: Api<Lease> = Api::namespaced(client, &lease.namespace);
    let (name, me) = (lease.name.clone(), identity.clone());
    let guard = tokio::spawn(async move {
        let mut confirmed = Instant::now();
        let mut check = tokio::time::interval(Duration::from_secs(CHECK_SECONDS));
        loop {
            tokio::select! {
                changed = kept.changed() => {
                    if changed.is_err() || !*kept.borrow_and_update() {
                        break;
                    }
                }
                _ = check.tick() => {
                    if let Ok(lease) = api.get(&name).await {
                        if !holds_now(&lease, &me) {
                            break;
                        }
                        confirmed = Instant::now();
                    }
                    if confirmed.elapsed() > Duration::from_secs(RENEW_DEADLINE_SECONDS) {
                        break;
                    }
                }
            }
        }
        let _ = holds.send(false);
    });
    Ok(Leadership {
        held,
        keeper,
        guard,
        identity,
    })
}

/// Whether `lease` names `me` as its holder and has not expired.
fn holds_now(lease: &Lease, me: &str) -> bool {
    let Some(spec) = &lease.spec else {
        return false;
    };
    let seconds = i64::from(spec.lease_duration_seconds.unwrap_or(LEASE_SECONDS as i32));
    let fresh = spec
        .renew_time
        .as_ref()
        .is_some_and(|renewed| renewed.0 + SignedDuration::from_secs(seconds) > Timestamp::now());
    spec.holder_identity.as_deref() == Some(me) && fresh
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
        // The guard holds the keeper's last receiver: once it is gone, the
        // keeper releases the Lease and ends.
        self.guard.abort();
        let _ = self.guard.await;
        drop(self.held);
        let _ = self.keeper.await;
    }
}
