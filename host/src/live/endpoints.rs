//! The shadow's HTTP endpoints: `/healthz` and `/livez` (the process
//! answers), `/readyz` (every watched kind has been listed once),
//! `/metrics` (Prometheus text), `/decisions` (the last pass's decisions
//! and the standing predictions, JSON) and `/differences` (the latest
//! decisions of the scheduler that differ from the plugins', JSON); over
//! HTTPS when given a certificate. Connections are limited in number and
//! in time ([`Limits`]): a client that opens many, or sends nothing, cannot
//! hold the endpoints.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Serialize;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use super::kinds::Kind;
use super::predictions::Comparison;
use super::store::Shared;
use crate::Outcome;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ComparisonLabels {
    decision: String,
    agreement: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    decision: String,
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

/// The shadow's metrics.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    comparisons: Family<ComparisonLabels, Counter>,
    decisions: Family<DecisionLabels, Gauge>,
    passes: Counter,
    pass_seconds: Histogram,
    objects: Family<KindLabels, Gauge>,
    state: Family<TableLabels, Gauge>,
    gates: Family<GateLabels, Gauge>,
    refused_connections: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// The metrics, registered.
    pub fn new() -> Self {
        let metrics = Self {
            registry: Arc::new(Registry::default()),
            comparisons: Family::default(),
            decisions: Family::default(),
            passes: Counter::default(),
            pass_seconds: Histogram::new(exponential_buckets(0.001, 2.0, 16)),
            objects: Family::default(),
            state: Family::default(),
            gates: Family::default(),
            refused_connections: Counter::default(),
        };
        let mut registry = Registry::default();
        registry.register(
            "wasched_shadow_comparisons",
            "Decisions of the cluster's scheduler (bound, unschedulable, preempted) held against the plugins' prediction, by how they compare (agree, other-node, differ, not-modelled)",
            metrics.comparisons.clone(),
        );
        registry.register(
            "wasched_shadow_decisions",
            "The last pass's decisions, by kind: pods bound, nominated (preempting), pending, not modelled; victims",
            metrics.decisions.clone(),
        );
        registry.register(
            "wasched_shadow_passes",
            "Passes run (one per coalesced burst of changes)",
            metrics.passes.clone(),
        );
        registry.register(
            "wasched_shadow_pass_duration_seconds",
            "Wall-clock time of one pass: compare, model and cycle",
            metrics.pass_seconds.clone(),
        );
        registry.register(
            "wasched_shadow_model_objects",
            "Objects in the watched model, by kind",
            metrics.objects.clone(),
        );
        registry.register(
            "wasched_shadow_state_entries",
            "Entries of the shadow's own tables (predictions, identities, reports), which must not grow with churn",
            metrics.state.clone(),
        );
        registry.register(
            "wasched_shadow_api_feature_enabled",
            "The API server's feature gates that drop fields wasched reads when off (1 on, 0 off; absent when the server does not say)",
            metrics.gates.clone(),
        );
        registry.register(
            "wasched_shadow_http_connections_refused",
            "Connections to the endpoints closed at once because the connection limit was reached",
            metrics.refused_connections.clone(),
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

    /// One comparison made.
    pub fn compared(&self, comparison: &Comparison) {
        self.comparisons
            .get_or_create(&ComparisonLabels {
                decision: comparison.decision.label().into(),
                agreement: comparison.agreement.label().into(),
            })
            .inc();
    }

    /// A pass finished with these decisions (`not_modelled`: pods set aside).
    pub fn pass(&self, outcome: &Outcome, not_modelled: usize, took: Duration) {
        self.passes.inc();
        self.pass_seconds.observe(took.as_secs_f64());
        for (decision, n) in [
            ("bound", outcome.placements.len()),
            ("nominated", outcome.nominations.len()),
            ("pending", outcome.unschedulable.len()),
            ("not-modelled", not_modelled),
            ("victims", outcome.evictions.len()),
        ] {
            self.decisions
                .get_or_create(&DecisionLabels {
                    decision: decision.into(),
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

    /// The sizes of the shadow's own tables (they must not grow with churn).
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

/// What the last pass published for `/decisions` and `/differences`, as
/// JSON written once per pass.
#[derive(Debug, Default)]
pub struct Published {
    texts: Mutex<(String, String)>,
}

impl Published {
    /// Nothing published yet (both endpoints answer 503 until a pass has).
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Publishes a pass's decisions and the latest differences.
    pub fn set(&self, decisions: &impl Serialize, differences: &[Comparison]) {
        let texts = (json(decisions), json(&differences));
        *self.texts.lock().unwrap_or_else(|e| e.into_inner()) = texts;
    }

    fn get(&self) -> (String, String) {
        self.texts.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A value as pretty JSON, with a final newline.
fn json(value: &impl Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("plain data serializes");
    text.push('\n');
    text
}

/// How many connections the endpoints hold at once and how long each may
/// take: beyond the limit a connection is closed at once; a client that
/// has not sent a request's headers within `read_timeout`, or holds a
/// connection longer than `connection_timeout`, is disconnected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once.
    pub connections: usize,
    /// Time to read a request's headers (and the TLS handshake).
    pub read_timeout: Duration,
    /// Time one connection may stay open, keep-alive included.
    pub connection_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            connections: 64,
            read_timeout: Duration::from_secs(10),
            connection_timeout: Duration::from_secs(60),
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

/// Serves the endpoints on `address`, over TLS with `tls` when given,
/// within `limits`; returns the address bound (port 0 picks a free one).
pub async fn serve(
    address: SocketAddr,
    tls: Option<TlsAcceptor>,
    limits: Limits,
    shared: Arc<Shared>,
    metrics: Metrics,
    published: Arc<Published>,
) -> Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen on {address}"))?;
    let bound = listener.local_addr()?;
    let slots = Arc::new(Semaphore::new(limits.connections));
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                metrics.refused_connections.inc();
                drop(stream);
                continue;
            };
            let (shared, metrics, published) = (shared.clone(), metrics.clone(), published.clone());
            let acceptor = tls.clone();
            tokio::spawn(async move {
                let _slot = slot;
                let service = service_fn(move |request| {
                    let response = respond(&request, &shared, &metrics, &published);
                    async move { Ok::<_, Infallible>(response) }
                });
                let mut http = http1::Builder::new();
                http.timer(TokioTimer::new())
                    .header_read_timeout(limits.read_timeout);
                let connection = async {
                    match acceptor {
                        None => {
                            let _ = http.serve_connection(TokioIo::new(stream), service).await;
                        }
                        Some(acceptor) => {
                            let handshake =
                                tokio::time::timeout(limits.read_timeout, acceptor.accept(stream));
                            // A failed or slow handshake: nothing to answer.
                            if let Ok(Ok(stream)) = handshake.await {
                                let _ = http.serve_connection(TokioIo::new(stream), service).await;
                            }
                        }
                    }
                };
                let _ = tokio::time::timeout(limits.connection_timeout, connection).await;
            });
        }
    });
    Ok(bound)
}

fn respond<B>(
    request: &Request<B>,
    shared: &Shared,
    metrics: &Metrics,
    published: &Published,
) -> Response<Full<Bytes>> {
    let text = "text/plain; charset=utf-8";
    let (status, kind, body) = match request.uri().path() {
        "/healthz" | "/livez" => (StatusCode::OK, text, "ok".to_string()),
        "/readyz" => {
            if shared.lock().ready() {
                (StatusCode::OK, text, "ok".to_string())
            } else {
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    text,
                    "not ready: the watched kinds have not all been listed".to_string(),
                )
            }
        }
        "/metrics" => (StatusCode::OK, text, metrics.encode()),
        path @ ("/decisions" | "/differences") => {
            let (decisions, differences) = published.get();
            let body = if path == "/decisions" {
                decisions
            } else {
                differences
            };
            if body.is_empty() {
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    text,
                    "no pass yet: the watched kinds have not all been listed".to_string(),
                )
            } else {
                (StatusCode::OK, "application/json", body)
            }
        }
        _ => (StatusCode::NOT_FOUND, text, "not found".to_string()),
    };
    Response::builder()
        .status(status)
        .header("content-type", kind)
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Instant;

    use super::*;
    use crate::live::kinds::Served;

    /// Reads until the server closes the connection (a positive signal:
    /// the test waits for it, at most a minute).
    fn read_to_close(mut stream: TcpStream) -> String {
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let started = Instant::now();
        let mut text = Vec::new();
        let read = stream.read_to_end(&mut text);
        assert!(
            read.is_ok(),
            "not closed by the server after {:?}: {read:?}",
            started.elapsed()
        );
        String::from_utf8_lossy(&text).into_owned()
    }

    #[test]
    fn connections_beyond_the_limit_are_closed_and_a_silent_client_is_disconnected() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let limits = Limits {
            connections: 2,
            read_timeout: Duration::from_secs(2),
            connection_timeout: Duration::from_secs(60),
        };
        let metrics = Metrics::new();
        let published = Published::new();
        let shared = Shared::new(&Served { kinds: Vec::new() });
        let address = runtime
            .block_on(serve(
                ([127, 0, 0, 1], 0).into(),
                None,
                limits,
                shared,
                metrics.clone(),
                published.clone(),
            ))
            .unwrap();
        // Two clients that send nothing hold both connections; a third is
        // closed at once, without an answer.
        let silent: Vec<TcpStream> = (0..2)
            .map(|_| TcpStream::connect(address).unwrap())
            .collect();
        let third = TcpStream::connect(address).unwrap();
        assert_eq!(read_to_close(third), "");
        assert_eq!(metrics.refused_connections.get(), 1);
        // The silent clients are disconnected once the read timeout passes.
        for stream in silent {
            read_to_close(stream);
        }
        // Then the endpoints answer again; /decisions waits for a pass.
        let get = |path: &str| {
            let mut stream = TcpStream::connect(address).unwrap();
            write!(stream, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
            read_to_close(stream)
        };
        let status = |text: &str| text.split(' ').nth(1).unwrap_or_default().to_string();
        assert_eq!(status(&get("/healthz")), "200");
        assert_eq!(status(&get("/decisions")), "503");
        published.set(&serde_json::json!({"pass": 1}), &[]);
        let decisions = get("/decisions");
        assert_eq!(status(&decisions), "200", "{decisions}");
        assert!(decisions.ends_with("{\n  \"pass\": 1\n}\n"), "{decisions}");
        assert!(get("/differences").ends_with("[]\n"));
    }
}
