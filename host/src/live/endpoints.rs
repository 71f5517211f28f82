//! `serve`'s HTTP endpoints, as kube-scheduler serves them: `/healthz` and
//! `/livez` (the process answers), `/readyz` (every watched kind has been
//! listed once) and `/metrics` (Prometheus text: the names
//! `simulate --metrics` writes, accumulated over the passes, plus the
//! loop's own); over HTTPS when given a certificate.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use super::actions::Applied;
use super::kinds::Kind;
use super::store::Shared;
use crate::Outcome;
use crate::metrics::RunMetrics;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AttemptLabels {
    result: String,
    profile: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    queue: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TableLabels {
    table: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GateLabels {
    gate: String,
}

/// The loop's metrics.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    profile: String,
    runs: RunMetrics,
    attempts: Family<AttemptLabels, Counter>,
    entities: Counter,
    passes: Counter,
    wakeups: Counter,
    pass_seconds: Histogram,
    api_errors: Family<OperationLabels, Counter>,
    events_dropped: Counter,
    pending: Family<QueueLabels, Gauge>,
    objects: Family<KindLabels, Gauge>,
    state: Family<TableLabels, Gauge>,
    gates: Family<GateLabels, Gauge>,
    bindings: Counter,
    victims: Counter,
}

impl Metrics {
    /// The metrics of the scheduler `profile` (its name).
    pub fn new(profile: &str) -> Self {
        let mut registry = Registry::default();
        let runs = RunMetrics::register(&mut registry);
        let metrics = Self {
            profile: profile.into(),
            runs,
            attempts: Family::default(),
            entities: Counter::default(),
            passes: Counter::default(),
            wakeups: Counter::default(),
            pass_seconds: Histogram::new(exponential_buckets(0.001, 2.0, 16)),
            api_errors: Family::default(),
            events_dropped: Counter::default(),
            pending: Family::default(),
            objects: Family::default(),
            state: Family::default(),
            gates: Family::default(),
            bindings: Counter::default(),
            victims: Counter::default(),
            registry: Arc::new(Registry::default()),
        };
        registry.register(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result (upstream name)",
            metrics.attempts.clone(),
        );
        registry.register(
            "wasched_serve_entity_attempts",
            "Queued entities (PodGroups, CompositePodGroup trees, lone pods) tried by a pass",
            metrics.entities.clone(),
        );
        registry.register(
            "wasched_serve_passes",
            "Scheduling passes run",
            metrics.passes.clone(),
        );
        registry.register(
            "wasched_serve_wakeups",
            "Times the loop woke to look for due entities (a change, a backoff's end)",
            metrics.wakeups.clone(),
        );
        registry.register(
            "wasched_serve_pass_duration_seconds",
            "Wall-clock time of one pass: model, cycle and API calls",
            metrics.pass_seconds.clone(),
        );
        registry.register(
            "wasched_serve_api_errors",
            "API calls that failed, by operation",
            metrics.api_errors.clone(),
        );
        registry.register(
            "wasched_serve_events_dropped",
            "Events not posted because the event budget was spent",
            metrics.events_dropped.clone(),
        );
        registry.register(
            "scheduler_pending_pods",
            "Entities waiting, by queue: unschedulable (backoff or no change yet), gated (waiting for victims) (upstream name; wasched counts entities)",
            metrics.pending.clone(),
        );
        registry.register(
            "wasched_serve_model_objects",
            "Objects in the watched model, by kind",
            metrics.objects.clone(),
        );
        registry.register(
            "wasched_serve_state_entries",
            "Entries of the loop's own tables (backoff, overlay, identity, reports), which must not grow with churn",
            metrics.state.clone(),
        );
        registry.register(
            "wasched_serve_api_feature_enabled",
            "The API server's feature gates that drop fields wasched reads when off (1 on, 0 off; absent when the server does not say)",
            metrics.gates.clone(),
        );
        registry.register(
            "wasched_serve_bindings",
            "Pods bound",
            metrics.bindings.clone(),
        );
        registry.register(
            "wasched_serve_preemption_victims",
            "Pods deleted as victims of preemption",
            metrics.victims.clone(),
        );
        Self {
            registry: Arc::new(registry),
            ..metrics
        }
    }

    /// The text `/metrics` serves.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String cannot fail");
        text
    }

    /// A pass's decisions over `entities` entities tried.
    pub fn record(&self, outcome: &Outcome, entities: usize) {
        self.runs.record(outcome);
        self.entities.inc_by(entities as u64);
        let attempts = |result: &str, n: usize| {
            self.attempts
                .get_or_create(&AttemptLabels {
                    result: result.into(),
                    profile: self.profile.clone(),
                })
                .inc_by(n as u64);
        };
        attempts("scheduled", outcome.placements.len());
        attempts("unschedulable", outcome.unschedulable.len());
    }

    /// What the API calls of a pass did.
    pub fn applied(&self, applied: &Applied) {
        self.bindings.inc_by(applied.bound.len() as u64);
        self.victims.inc_by(applied.evicted.len() as u64);
        self.events_dropped.inc_by(applied.events_dropped);
    }

    /// A failed API call (or model build).
    pub fn api_error(&self, operation: &str) {
        self.api_errors
            .get_or_create(&OperationLabels {
                operation: operation.into(),
            })
            .inc();
    }

    /// The loop woke for a change or a backoff's end (whether or not
    /// anything was due).
    pub fn wakeup(&self) {
        self.wakeups.inc();
    }

    /// A pass finished.
    pub fn pass(&self, took: Duration) {
        self.passes.inc();
        self.pass_seconds.observe(took.as_secs_f64());
    }

    /// Entities waiting after a pass was planned.
    pub fn queue(&self, unschedulable: usize, gated: usize) {
        for (queue, n) in [("unschedulable", unschedulable), ("gated", gated)] {
            self.pending
                .get_or_create(&QueueLabels {
                    queue: queue.into(),
                })
                .set(n as i64);
        }
    }

    /// The model's size.
    pub fn model_size(&self, counts: &BTreeMap<Kind, usize>) {
        for (kind, n) in counts {
            self.objects
                .get_or_create(&KindLabels {
                    kind: kind.name().into(),
                })
                .set(*n as i64);
        }
    }

    /// The API server's gates of [`super::gates::DROPPING`] it listed.
    pub fn gates(&self, enabled: &BTreeMap<String, bool>) {
        for gate in super::gates::DROPPING {
            if let Some(&on) = enabled.get(gate.name) {
                self.gates
                    .get_or_create(&GateLabels {
                        gate: gate.name.into(),
                    })
                    .set(i64::from(on));
            }
        }
    }

    /// The sizes of the loop's own tables (they must not grow with churn).
    pub fn state(&self, tables: &[(&str, usize)]) {
        for (table, n) in tables {
            self.state
                .get_or_create(&TableLabels {
                    table: (*table).into(),
                })
                .set(*n as i64);
        }
    }
}

/// A serving certificate and its key, PEM files (`--tls-cert-file`,
/// `--tls-private-key-file`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    /// The certificate chain.
    pub cert: PathBuf,
    /// The private key.
    pub key: PathBuf,
}

impl Tls {
    /// The acceptor for these files; a file that cannot be read or used is
    /// an error naming it.
    pub fn acceptor(&self) -> Result<TlsAcceptor> {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&self.cert)
            .and_then(|certs| certs.collect::<Result<_, _>>())
            .map_err(|e| anyhow!("{}: not a PEM certificate: {e}", self.cert.display()))?;
        if certs.is_empty() {
            bail!("{}: no certificate in it", self.cert.display());
        }
        let key = PrivateKeyDer::from_pem_file(&self.key)
            .map_err(|e| anyhow!("{}: not a PEM private key: {e}", self.key.display()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
            .with_context(|| {
                format!(
                    "{} and {}: not a usable certificate and key",
                    self.cert.display(),
                    self.key.display()
                )
            })?;
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

/// Serves the endpoints on `address`, over TLS with `tls` when given;
/// returns the address bound (port 0 picks a free one).
pub async fn serve(
    address: SocketAddr,
    tls: Option<TlsAcceptor>,
    shared: Arc<Shared>,
    metrics: Metrics,
) -> Result<SocketAddr> {
    let acceptor = tls;
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen on {address}"))?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (shared, metrics) = (shared.clone(), metrics.clone());
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let response = respond(&request, &shared, &metrics);
                    async move { Ok::<_, Infallible>(response) }
                });
                let http = http1::Builder::new();
                let _ = match acceptor {
                    None => http.serve_connection(TokioIo::new(stream), service).await,
                    Some(acceptor) => match acceptor.accept(stream).await {
                        Ok(stream) => http.serve_connection(TokioIo::new(stream), service).await,
                        Err(_) => return, // a failed handshake: nothing to answer
                    },
                };
            });
        }
    });
    Ok(bound)
}

fn respond<B>(request: &Request<B>, shared: &Shared, metrics: &Metrics) -> Response<Full<Bytes>> {
    let (status, body) = match request.uri().path() {
        "/healthz" | "/livez" => (StatusCode::OK, "ok".to_string()),
        "/readyz" => {
            if shared.lock().ready() {
                (StatusCode::OK, "ok".to_string())
            } else {
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "not ready: the watched kinds have not all been listed".to_string(),
                )
            }
        }
        "/metrics" => (StatusCode::OK, metrics.encode()),
        _ => (StatusCode::NOT_FOUND, "not found".to_string()),
    };
    Response::builder()
        .status(status)
        .header("content-type", "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}
