//! The controller's client: a short retry budget, and below it the layers of
//! `transport` (rate limit, write gate, request metrics).

use std::sync::Arc;
use std::time::Duration;

use kube::Client;

use crate::leader::Leadership;
use crate::metrics::Metrics;
use crate::transport;

/// How many times the controller's client repeats a request the API server answered with
/// 429, 503 or 504, before the answer reaches the caller (see [`client`]).
pub const CLIENT_RETRIES: u32 = 3;

/// The first wait before such a repeat; each next one doubles (with jitter), so the three
/// take well under a second in all.
pub const CLIENT_RETRY_DELAY: Duration = Duration::from_millis(50);

/// The client [`run`](super::run()) is meant for: `config` with a short retry budget instead of
/// kube-rs's default one. Call it inside a Tokio runtime (the retry needs a buffer task).
///
/// kube-rs retries a 429, 503 or 504 answer by default up to 15 times, with a backoff
/// doubling from 5 ms, inside the request. A Deployment write the API server keeps
/// refusing with a 503 (an admission webhook that is down, an overloaded server) would
/// reach the core only minutes later, all the while holding the Gateway's reconcile, and
/// the Gateway's status would say nothing: on a real kube-apiserver one such write was
/// sent 16 times over five minutes. Here such an answer is repeated [`CLIENT_RETRIES`]
/// times from [`CLIENT_RETRY_DELAY`] on: a passing blip (a 429 from API Priority and
/// Fairness) is absorbed without a status write, and a lasting failure reaches the core
/// within a second and gets the core's answer: `ApplyFailed`, its own backoff, `Degraded`
/// after `degradedAfter`. A refused list or watch is retried with the watcher's backoff.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let client = gateway_reconcile_kube::controller::client(kube::Config::infer().await?)?;
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
///
/// This is [`client_with`] with [`ClientOptions::default`]: controller-runtime's rate
/// limit, no write gate, metrics into a registry of its own.
pub fn client(config: kube::Config) -> Result<Client, kube::Error> {
    client_with(config, ClientOptions::default())
}

/// What the controller's client is built with besides the kubeconfig.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Requests a second after the burst (`--qps`; ≤ 0: no limit).
    pub qps: f32,
    /// Requests that may go at once (`--burst`).
    pub burst: u32,
    /// Where the requests are counted.
    pub metrics: Arc<Metrics>,
    /// Writes go out only while this process may write (the leader's write gate).
    pub leadership: Leadership,
    /// The `User-Agent` of every request (the audit log's `userAgent`).
    pub user_agent: Option<String>,
}

/// No client-side rate limit by default (`≤ 0`), as controller-runtime's `GetConfig` since
/// it relies on the API server's priority and fairness (v0.23, Meridio-2's, sets `QPS = -1`
/// when none is given). The older 20 a second paced a start of 1,000 Gateways (3,000
/// writes) to 149 s against 12 s without. `--qps` and `--burst` set one.
pub const DEFAULT_QPS: f32 = 0.0;
/// The burst of a client-side rate limit, when `--qps` sets one (client-go's 20/30 pair).
pub const DEFAULT_BURST: u32 = 30;

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            qps: DEFAULT_QPS,
            burst: DEFAULT_BURST,
            metrics: Arc::default(),
            leadership: Leadership::always(),
            user_agent: None,
        }
    }
}

/// The controller's client: the short retry budget of [`client`], and below it (each
/// repeat passes through them) the layers of `transport`: the rate limit, which
/// also honours `Retry-After`, the write gate of `options.leadership`, the request metrics.
pub fn client_with(
    mut config: kube::Config,
    options: ClientOptions,
) -> Result<Client, kube::Error> {
    use kube::client::ClientBuilder;
    use kube::client::retry::RetryPolicy;
    config.default_retry = false;
    if let Some(agent) = &options.user_agent {
        let agent =
            http::HeaderValue::from_str(agent).map_err(|e| kube::Error::Service(Box::new(e)))?;
        config.headers.push((http::header::USER_AGENT, agent));
    }
    let policy = RetryPolicy::new(
        CLIENT_RETRY_DELAY,
        CLIENT_RETRY_DELAY * 8,
        CLIENT_RETRIES,
        // The rate limit below holds the repeats for a `Retry-After` (bounded): the policy
        // itself would wait as long as the server says.
        false,
    )
    .map_err(|e| kube::Error::Service(e.into()))?;
    Ok(ClientBuilder::try_from(config)?
        .with_layer(&transport::RequestMetricsLayer(options.metrics.clone()))
        .with_layer(&transport::WriteGateLayer {
            leadership: options.leadership.clone(),
            metrics: options.metrics.clone(),
        })
        .with_layer(&transport::RateLimitLayer::new(options.qps, options.burst))
        // `Retry` needs a service it can clone; kube's boxed stack is not.
        .with_layer(&tower::buffer::BufferLayer::new(1024))
        .with_layer(&tower::retry::RetryLayer::new(policy))
        .build())
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use k8s_openapi::api::apps::v1::Deployment;
    use kube::api::{Api, DynamicObject};

    use super::{CLIENT_RETRIES, ClientOptions, client, client_with};
    use crate::controller::context::deployment_resource;
    use crate::leader::Leadership;
    use crate::metrics::Metrics;

    /// A plain-HTTP server on loopback that answers every request with `code` and counts
    /// the requests: a stand-in API server for the client's retry budget.
    pub(in crate::controller) async fn answering(
        code: u16,
    ) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        answering_with(code, "").await
    }

    /// [`answering`], with `headers` (each ending in CRLF) added to every answer.
    async fn answering_with(
        code: u16,
        headers: &'static str,
    ) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        let body = format!(
            r#"{{"kind":"Status","apiVersion":"v1","status":"Failure","message":"down","reason":"ServiceUnavailable","code":{code}}}"#
        );
        serving(code, headers, body).await
    }

    /// A plain-HTTP server on loopback that answers every request with `code`, `headers`
    /// (each ending in CRLF) and the JSON `body`, and counts the requests.
    pub(in crate::controller) async fn serving(
        code: u16,
        headers: &'static str,
        body: String,
    ) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listener");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = requests.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (counted, body) = (counted.clone(), body.clone());
                tokio::spawn(async move {
                    let mut buffer = [0u8; 4096];
                    // A GET has no body: each read that ends its headers is one request.
                    let mut seen = Vec::new();
                    while let Ok(n) = socket.read(&mut buffer).await {
                        if n == 0 {
                            return;
                        }
                        seen.extend_from_slice(&buffer[..n]);
                        while let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                            seen.drain(..at + 4);
                            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            let answer = format!(
                                "HTTP/1.1 {code} Unavailable\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{body}",
                                body.len()
                            );
                            if socket.write_all(answer.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        (url, requests)
    }

    #[tokio::test]
    async fn the_client_repeats_a_503_three_times_then_answers() {
        let (url, requests) = answering(503).await;
        let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
        let api: Api<Deployment> = Api::namespaced(client, "red");
        let started = std::time::Instant::now();
        let answer = api.get("sllbr-gw").await;
        let took = started.elapsed();
        assert!(
            matches!(&answer, Err(kube::Error::Api(s)) if s.code == 503),
            "{answer:?}"
        );
        assert_eq!(
            requests.load(std::sync::atomic::Ordering::SeqCst),
            1 + CLIENT_RETRIES as usize
        );
        // The budget's waits add up to well under a second (kube-rs's default: minutes);
        // the bound leaves room for a loaded machine.
        assert!(took < Duration::from_secs(5), "{took:?}");
    }

    #[tokio::test]
    async fn the_client_does_not_repeat_other_failures() {
        let (url, requests) = answering(500).await;
        let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
        let api: Api<Deployment> = Api::namespaced(client, "red");
        let answer = api.get("sllbr-gw").await;
        assert!(
            matches!(&answer, Err(kube::Error::Api(s)) if s.code == 500),
            "{answer:?}"
        );
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    fn options(leadership: Leadership, metrics: Arc<Metrics>) -> ClientOptions {
        ClientOptions {
            metrics,
            leadership,
            ..ClientOptions::default()
        }
    }

    #[tokio::test]
    async fn a_write_without_the_lease_is_never_sent_and_reads_still_are() {
        let (url, requests) = answering(404).await;
        let metrics = Arc::new(Metrics::new());
        let client = client_with(
            kube::Config::new(url.parse().expect("url")),
            options(Leadership::candidate(), metrics.clone()),
        )
        .expect("client");
        let api: Api<DynamicObject> = Api::namespaced_with(client, "red", &deployment_resource());
        let body: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "sllbr-gw" }
        }))
        .expect("a Deployment");
        let refused = api.create(&Default::default(), &body).await;
        assert!(
            matches!(&refused, Err(kube::Error::Service(e)) if e.to_string().contains("does not hold the leader lease")),
            "{refused:?}"
        );
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 0);
        let read = api.get("sllbr-gw").await;
        assert!(
            matches!(&read, Err(kube::Error::Api(s)) if s.code == 404),
            "{read:?}"
        );
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 1);
        let text = metrics.encode();
        assert!(
            text.contains("gateway_reconcile_leader_write_refusals_total 1"),
            "{text}"
        );
        assert!(
            text.contains(r#"gateway_reconcile_api_requests_total{verb="get",resource="deployments",code="404"} 1"#),
            "{text}"
        );
    }

    #[tokio::test]
    async fn the_client_waits_the_servers_retry_after_between_repeats() {
        let (url, requests) = answering_with(429, "Retry-After: 1\r\n").await;
        let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
        let api: Api<Deployment> = Api::namespaced(client, "red");
        let started = std::time::Instant::now();
        let answer = api.get("sllbr-gw").await;
        let took = started.elapsed();
        assert!(
            matches!(&answer, Err(kube::Error::Api(s)) if s.code == 429),
            "{answer:?}"
        );
        assert_eq!(
            requests.load(std::sync::atomic::Ordering::SeqCst),
            1 + CLIENT_RETRIES as usize
        );
        // Three repeats, each held a second (without it: well under a second in all).
        assert!(took >= Duration::from_secs(3), "{took:?}");
    }

    #[tokio::test]
    async fn the_client_paces_requests_past_its_burst() {
        let (url, requests) = answering(404).await;
        let client = client_with(
            kube::Config::new(url.parse().expect("url")),
            ClientOptions {
                qps: 10.0,
                burst: 2,
                ..ClientOptions::default()
            },
        )
        .expect("client");
        let api: Api<Deployment> = Api::namespaced(client, "red");
        let started = std::time::Instant::now();
        for _ in 0..6 {
            let _ = api.get("sllbr-gw").await;
        }
        let took = started.elapsed();
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 6);
        // Two at once, then one every 100 ms.
        assert!(took >= Duration::from_millis(390), "{took:?}");
    }
}
