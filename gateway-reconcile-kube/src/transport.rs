//! The tower layers of the controller's client, closest to the wire, in this order from
//! the caller's side: the client-side rate limit (which also honours `Retry-After`), the
//! leader's write gate, and the request metrics. See [`crate::controller::client_with`].
//!
//! - **Rate limit**: a token bucket of `--qps` tokens a second holding at most `--burst`
//!   (client-go's `flowcontrol` limiter, whose defaults controller-runtime raises to 20 and
//!   30). Every request, each repeat of a refused one included, takes a token; a watch takes
//!   one when it starts.
//! - **`Retry-After`**: an answer 429 or 503 carrying it holds every next request of the
//!   client until then (at most [`MAX_RETRY_AFTER`]): the server said when it can take more.
//! - **Write gate**: a request that is not a read fails in the process, never sent, while
//!   [`Leadership::may_write`] is false (a standby, or a leader past its renew deadline).
//! - **Metrics**: each request sent, by verb, resource and code.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Method, Request, Response};
use tokio::time::{Instant, Sleep};
use tower::{BoxError, Layer, Service};

use crate::leader::Leadership;
use crate::metrics::Metrics;

/// The longest wait a `Retry-After` answer imposes on the client.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A request as `(verb, resource)` in the API server's audit terms: `get`, `list`,
/// `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`; the resource with
/// its subresource (`gateways/status`). Anything else is `("other", path)`.
pub fn classify(method: &Method, path: &str, query: Option<&str>) -> (&'static str, String) {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    // /api/v1/... or /apis/GROUP/VERSION/...
    let rest = match segments.as_slice() {
        ["api", _version, rest @ ..] => rest,
        ["apis", _group, _version, rest @ ..] => rest,
        _ => return ("other", path.to_owned()),
    };
    let rest = match rest {
        ["namespaces", _ns, tail @ ..] if !tail.is_empty() => tail,
        other => other,
    };
    let (resource, name, subresource) = match rest {
        [] => return ("other", path.to_owned()),
        [resource] => (*resource, None, None),
        [resource, name] => (*resource, Some(*name), None),
        [resource, name, sub, ..] => (*resource, Some(*name), Some(*sub)),
    };
    let watch = query.is_some_and(|q| {
        q.split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1")
    });
    let verb = match *method {
        Method::GET if watch => "watch",
        Method::GET if name.is_some() => "get",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if name.is_some() => "delete",
        Method::DELETE => "deletecollection",
        _ => "other",
    };
    let resource = match subresource {
        Some(sub) => format!("{resource}/{sub}"),
        None => resource.to_owned(),
    };
    (verb, resource)
}

/// Whether a request only reads.
fn is_read(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Counts each request sent to the API server in [`Metrics`].
#[derive(Clone)]
pub struct RequestMetricsLayer(pub Arc<Metrics>);

impl<S> Layer<S> for RequestMetricsLayer {
    type Service = RequestMetrics<S>;
    fn layer(&self, inner: S) -> Self::Service {
        RequestMetrics {
            inner,
            metrics: self.0.clone(),
        }
    }
}

/// See [`RequestMetricsLayer`].
pub struct RequestMetrics<S> {
    inner: S,
    metrics: Arc<Metrics>,
}

impl<S, B, R> Service<Request<B>> for RequestMetrics<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    R: Send + 'static,
{
    type Response = Response<R>;
    type Error = BoxError;
    type Future = BoxFuture<Result<Response<R>, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let (verb, resource) = classify(
            request.method(),
            request.uri().path(),
            request.uri().query(),
        );
        let metrics = self.metrics.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await.map_err(Into::into);
            let code = answer.as_ref().ok().map(|r| r.status().as_u16());
            metrics.api_request(verb, &resource, code);
            answer
        })
    }
}

/// The write gate (see the module docs).
#[derive(Clone)]
pub struct WriteGateLayer {
    /// Whether writes may go out now.
    pub leadership: Leadership,
    /// Where refusals are counted.
    pub metrics: Arc<Metrics>,
}

impl<S> Layer<S> for WriteGateLayer {
    type Service = WriteGate<S>;
    fn layer(&self, inner: S) -> Self::Service {
        WriteGate {
            inner,
            gate: self.clone(),
        }
    }
}

/// See [`WriteGateLayer`].
pub struct WriteGate<S> {
    inner: S,
    gate: WriteGateLayer,
}

/// A write the gate kept in the process.
#[derive(Debug, thiserror::Error)]
#[error("{method} {path} not sent: this process does not hold the leader lease")]
pub struct NotLeader {
    method: Method,
    path: String,
}

impl<S, B, R> Service<Request<B>> for WriteGate<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    R: Send + 'static,
{
    type Response = Response<R>;
    type Error = BoxError;
    type Future = BoxFuture<Result<Response<R>, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // Checked right before the request leaves, after any rate-limit wait.
        if !is_read(request.method()) && !self.gate.leadership.may_write() {
            self.gate.metrics.write_refused();
            let refused = NotLeader {
                method: request.method().clone(),
                path: request.uri().path().to_owned(),
            };
            return Box::pin(std::future::ready(Err(refused.into())));
        }
        let answer = self.inner.call(request);
        Box::pin(async move { answer.await.map_err(Into::into) })
    }
}

/// A token bucket, and the time a `Retry-After` holds requests until.
#[derive(Debug)]
pub struct Bucket {
    qps: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
    hold_until: Option<Instant>,
}

impl Bucket {
    /// A full bucket of `burst` tokens refilled at `qps` a second.
    pub fn new(qps: f64, burst: u32, now: Instant) -> Bucket {
        let burst = f64::from(burst.max(1));
        Bucket {
            qps,
            burst,
            tokens: burst,
            last: now,
            hold_until: None,
        }
    }

    /// Takes a token for a request at `now`; the wait before it may be sent. A token may
    /// be taken ahead (the balance goes negative): requests leave in the order they came.
    pub fn reserve(&mut self, now: Instant) -> Duration {
        let held = self
            .hold_until
            .map(|until| until.saturating_duration_since(now))
            .unwrap_or_default();
        if !self.qps.is_finite() {
            return held;
        }
        let refill = now.saturating_duration_since(self.last).as_secs_f64() * self.qps;
        self.tokens = (self.tokens + refill).min(self.burst);
        self.last = now;
        self.tokens -= 1.0;
        let wait = if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / self.qps)
        };
        wait.max(held)
    }

    /// The server asked for `after` of quiet (at most [`MAX_RETRY_AFTER`]).
    pub fn hold(&mut self, now: Instant, after: Duration) {
        let until = now + after.min(MAX_RETRY_AFTER);
        self.hold_until = Some(self.hold_until.map_or(until, |u| u.max(until)));
    }
}

/// The client-side rate limit (see the module docs); `qps` ≤ 0 sends at once.
#[derive(Clone)]
pub struct RateLimitLayer {
    bucket: Arc<Mutex<Bucket>>,
}

impl RateLimitLayer {
    /// `qps` requests a second after a burst of `burst`; `qps` ≤ 0 (or not finite): no
    /// limit, but `Retry-After` is still honoured.
    pub fn new(qps: f32, burst: u32) -> Self {
        let qps = f64::from(qps);
        let (qps, burst) = if qps.is_finite() && qps > 0.0 {
            (qps, burst)
        } else {
            (f64::INFINITY, u32::MAX)
        };
        RateLimitLayer {
            bucket: Arc::new(Mutex::new(Bucket::new(qps, burst, Instant::now()))),
        }
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimit<S>;
    fn layer(&self, inner: S) -> Self::Service {
        RateLimit {
            inner,
            bucket: self.bucket.clone(),
            state: Permit::None,
        }
    }
}

enum Permit {
    None,
    Waiting(Pin<Box<Sleep>>),
    Granted,
}

/// See [`RateLimitLayer`]. Meant below a `Buffer`, which drives `poll_ready` for every
/// request in turn (tower's own `RateLimit` is used the same way).
pub struct RateLimit<S> {
    inner: S,
    bucket: Arc<Mutex<Bucket>>,
    state: Permit,
}

/// The `Retry-After` of an answer asking the client to slow down, in seconds.
fn retry_after<R>(response: &Response<R>) -> Option<Duration> {
    let code = response.status().as_u16();
    if code != 429 && code != 503 {
        return None;
    }
    let value = response.headers().get(http::header::RETRY_AFTER)?;
    let seconds: u64 = value.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(seconds))
}

impl<S, B, R> Service<Request<B>> for RateLimit<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    R: Send + 'static,
{
    type Response = Response<R>;
    type Error = BoxError;
    type Future = BoxFuture<Result<Response<R>, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        loop {
            match &mut self.state {
                Permit::None => {
                    let wait = self
                        .bucket
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .reserve(Instant::now());
                    self.state = if wait.is_zero() {
                        Permit::Granted
                    } else {
                        Permit::Waiting(Box::pin(tokio::time::sleep(wait)))
                    };
                }
                Permit::Waiting(sleep) => {
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    self.state = Permit::Granted;
                }
                Permit::Granted => return self.inner.poll_ready(cx).map_err(Into::into),
            }
        }
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        self.state = Permit::None;
        let bucket = self.bucket.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await.map_err(Into::into)?;
            if let Some(after) = retry_after(&answer) {
                bucket
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .hold(Instant::now(), after);
            }
            Ok(answer)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_named_as_the_audit_log_names_them() {
        let get = Method::GET;
        let cases = [
            (
                Method::PATCH,
                "/apis/gateway.networking.k8s.io/v1/namespaces/ns/gateways/gw/status",
                None,
                ("patch", "gateways/status"),
            ),
            (
                get.clone(),
                "/apis/apps/v1/deployments",
                Some("watch=true&resourceVersion=5"),
                ("watch", "deployments"),
            ),
            (
                get.clone(),
                "/apis/apps/v1/namespaces/ns/deployments",
                Some("limit=500"),
                ("list", "deployments"),
            ),
            (
                get.clone(),
                "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l",
                None,
                ("get", "leases"),
            ),
            (
                Method::PUT,
                "/apis/apps/v1/namespaces/ns/deployments/d",
                None,
                ("update", "deployments"),
            ),
            (
                Method::POST,
                "/apis/events.k8s.io/v1/namespaces/ns/events",
                None,
                ("create", "events"),
            ),
            (
                get.clone(),
                "/api/v1/namespaces/ns",
                None,
                ("get", "namespaces"),
            ),
            (
                get.clone(),
                "/api/v1/namespaces",
                None,
                ("list", "namespaces"),
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/ns/pods",
                None,
                ("deletecollection", "pods"),
            ),
        ];
        for (method, path, query, (verb, resource)) in cases {
            assert_eq!(
                classify(&method, path, query),
                (verb, resource.to_owned()),
                "{method} {path}"
            );
        }
        assert_eq!(
            classify(&get, "/version", None),
            ("other", "/version".into())
        );
    }

    #[test]
    fn the_bucket_lets_a_burst_through_then_paces_requests() {
        let start = Instant::now();
        let mut bucket = Bucket::new(20.0, 30, start);
        for i in 0..30 {
            assert_eq!(
                bucket.reserve(start),
                Duration::ZERO,
                "request {i} of the burst"
            );
        }
        // The 31st waits one token (50 ms at 20 qps), the 32nd two.
        assert_eq!(bucket.reserve(start), Duration::from_millis(50));
        assert_eq!(bucket.reserve(start), Duration::from_millis(100));
        // A second later 20 tokens came back, two of them already taken ahead.
        let later = start + Duration::from_secs(1);
        for _ in 0..18 {
            assert_eq!(bucket.reserve(later), Duration::ZERO);
        }
        assert!(bucket.reserve(later) > Duration::ZERO);
    }

    #[test]
    fn retry_after_holds_every_request_until_then() {
        let start = Instant::now();
        let mut bucket = Bucket::new(f64::INFINITY, u32::MAX, start);
        assert_eq!(bucket.reserve(start), Duration::ZERO);
        bucket.hold(start, Duration::from_secs(3));
        assert_eq!(bucket.reserve(start), Duration::from_secs(3));
        assert_eq!(
            bucket.reserve(start + Duration::from_secs(1)),
            Duration::from_secs(2)
        );
        assert_eq!(
            bucket.reserve(start + Duration::from_secs(3)),
            Duration::ZERO
        );
        // Bounded whatever the server says.
        bucket.hold(start, Duration::from_secs(3600));
        assert_eq!(bucket.reserve(start), MAX_RETRY_AFTER);
    }

    #[test]
    fn retry_after_is_read_from_429_and_503_only() {
        let answer = |code: u16, header: Option<&str>| {
            let mut builder = Response::builder().status(code);
            if let Some(h) = header {
                builder = builder.header("Retry-After", h);
            }
            builder.body(()).expect("response")
        };
        assert_eq!(
            retry_after(&answer(429, Some("2"))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(&answer(503, Some(" 7 "))),
            Some(Duration::from_secs(7))
        );
        assert_eq!(retry_after(&answer(500, Some("2"))), None);
        assert_eq!(retry_after(&answer(429, None)), None);
        // An HTTP date is not followed (the API server sends seconds).
        assert_eq!(
            retry_after(&answer(429, Some("Wed, 21 Oct 2015 07:28:00 GMT"))),
            None
        );
    }
}
