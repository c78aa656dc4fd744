//! Webhooks served on loopback: a validating one that denies every request it is asked
//! about with a given status code, reason and message (how a scenario's 4xx, other than 422,
//! and 5xx Deployment write failures come from the real API server), a mutating one
//! that changes every object it is asked about (how a scenario's `mutateWrites` does), and
//! a validating one that holds the answers it is told to (how a fault story makes a write
//! slow enough to kill its client while the write waits).
//!
//! It serves with the API server's own certificate (issued for 127.0.0.1 by the control
//! plane's CA), so the webhook's `caBundle` is that CA. HTTP/1.1 only (ALPN `http/1.1`: the
//! API server's client would otherwise be free to try h2, which this server does not
//! speak). Every request is read and answered within [`REQUEST_TIMEOUT`] (plus the hold
//! [`hold`] asks for), so a stalled connection ends instead of holding a task; dropping the [`Webhook`] ends the listener
//! and every connection.
//!
//! [`until_admission`] waits until admission (this webhook or any other admission object)
//! is seen to act on writes, or to stop acting.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long one request may take to arrive in full once its first byte came, and its
/// answer to be written (the API server gives the webhook `timeoutSeconds`, 5).
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// How long admission may take to start or stop acting after its webhook configuration or
/// policy is created or deleted. The API server loads admission objects asynchronously,
/// usually within a second (sometimes within milliseconds); 30 s leaves room for a loaded
/// machine.
const ADMISSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Waits until `probe` sees admission do what the caller waits for (`Ok(true)`): the probe
/// is a `dryRun` write (admission runs on dry runs; nothing is stored) that tells whether
/// the webhook or policy refused it, or, once removed, let it through. A probe rather than a
/// fixed sleep: the delay varies with the machine's load. Probes every 200 ms; an `Err` of
/// the probe ends the wait with it; past [`ADMISSION_TIMEOUT`], an error saying that
/// admission did not `what`.
pub async fn until_admission(
    what: &str,
    mut probe: impl AsyncFnMut() -> Result<bool, String>,
) -> Result<(), String> {
    let start = std::time::Instant::now();
    loop {
        if probe().await? {
            return Ok(());
        }
        if start.elapsed() > ADMISSION_TIMEOUT {
            return Err(format!(
                "admission did not {what} within {} s",
                ADMISSION_TIMEOUT.as_secs()
            ));
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// A running webhook; stops when dropped.
pub struct Webhook {
    /// `https://127.0.0.1:PORT/deny` or `.../mutate`.
    pub url: String,
    task: tokio::task::JoinHandle<()>,
    calls: Arc<AtomicU64>,
}

impl Webhook {
    /// How many requests it has answered.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves a webhook denying with `code`, `reason` and `message`.
pub async fn deny(dir: &str, code: u16, reason: &str, message: &str) -> Result<Webhook, String> {
    let status = json!({ "code": code, "reason": reason, "message": message });
    serve(dir, "deny", move |request| {
        (review(request, &status), Duration::ZERO)
    })
    .await
}

/// Serves a validating webhook that answers each request after `decide(request)` says how
/// long to hold it: `(None, hold)` allows it, `(Some(message), hold)` denies it (403) with
/// `message`.
#[allow(dead_code)] // tests/faults.rs serves it; the replay does not
pub async fn hold(
    dir: &str,
    decide: impl Fn(&Value) -> (Option<String>, Duration) + Send + Sync + 'static,
) -> Result<Webhook, String> {
    serve(dir, "hold", move |request| {
        let (denied, hold) = decide(request);
        let answer = match denied {
            Some(message) => review(
                request,
                &json!({ "code": 403, "reason": "Forbidden", "message": message }),
            ),
            None => json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                            "response": { "uid": request["request"]["uid"], "allowed": true } }),
        };
        (answer, hold)
    })
    .await
}

/// Serves a mutating webhook that changes every object it is asked about into
/// `change(object)`: the answer allows it with a JSON patch replacing its `metadata` and
/// `spec` with the changed ones.
pub async fn mutate(
    dir: &str,
    change: impl Fn(&Value) -> Value + Send + Sync + 'static,
) -> Result<Webhook, String> {
    serve(dir, "mutate", move |request| {
        let object = &request["request"]["object"];
        let changed = change(object);
        let patch: Vec<Value> = ["metadata", "spec"]
            .into_iter()
            .filter(|key| changed.get(key) != object.get(key))
            .map(|key| json!({ "op": "add", "path": format!("/{key}"), "value": changed[key] }))
            .collect();
        let mut response = json!({ "uid": request["request"]["uid"], "allowed": true });
        if !patch.is_empty() {
            response["patchType"] = "JSONPatch".into();
            response["patch"] = base64(Value::Array(patch).to_string().as_bytes()).into();
        }
        let answer = json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response });
        (answer, Duration::ZERO)
    })
    .await
}

/// Serves AdmissionReview requests at `https://127.0.0.1:PORT/PATH`, answering each with
/// `answer(request)`: the answer, sent after the hold it names.
async fn serve(
    dir: &str,
    path: &str,
    answer: impl Fn(&Value) -> (Value, Duration) + Send + Sync + 'static,
) -> Result<Webhook, String> {
    let answer = Arc::new(answer);
    let calls = Arc::new(AtomicU64::new(0));
    let counted = calls.clone();
    let certs = CertificateDer::pem_file_iter(format!("{dir}/apiserver.crt"))
        .and_then(|c| c.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("serving certificate: {e}"))?;
    let key = PrivateKeyDer::from_pem_file(format!("{dir}/apiserver.key"))
        .map_err(|e| format!("serving key: {e}"))?;
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(|e| format!("TLS: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let task = tokio::spawn(async move {
        // Dropped with the listener's task: aborts every connection.
        let mut connections = tokio::task::JoinSet::new();
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let answer = answer.clone();
            let counted = counted.clone();
            connections.spawn(async move {
                let Ok(Ok(mut tls)) =
                    tokio::time::timeout(REQUEST_TIMEOUT, acceptor.accept(socket)).await
                else {
                    return;
                };
                while let Some(request) = read_request(&mut tls).await {
                    let (body, hold) = answer(&request);
                    let body = body.to_string();
                    counted.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(hold).await;
                    let response = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let written =
                        tokio::time::timeout(REQUEST_TIMEOUT, tls.write_all(response.as_bytes()))
                            .await;
                    if !matches!(written, Ok(Ok(()))) {
                        break;
                    }
                }
            });
            // Reap the connections that ended.
            while connections.try_join_next().is_some() {}
        }
    });
    Ok(Webhook {
        url: format!("https://127.0.0.1:{port}/{path}"),
        task,
        calls,
    })
}

/// The control plane's CA (`ca.crt` in `dir`), base64-encoded: the `caBundle` of a
/// webhook that [`deny`] serves.
pub fn ca_bundle(dir: &str) -> Result<String, String> {
    let ca = std::fs::read(format!("{dir}/ca.crt")).map_err(|e| format!("CA: {e}"))?;
    Ok(base64(&ca))
}

/// The AdmissionReview answer: denied, with the status given.
fn review(request: &Value, status: &Value) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "response": { "uid": request["request"]["uid"], "allowed": false, "status": status }
    })
}

/// One HTTP/1.1 request's JSON body (`None` at the end of the connection, or when the
/// request does not arrive in full within [`REQUEST_TIMEOUT`] of its first byte). An idle
/// kept-alive connection waits for its next request without a bound.
async fn read_request<S: AsyncReadExt + Unpin>(stream: &mut S) -> Option<Value> {
    let mut chunk = [0u8; 8192];
    let n = stream.read(&mut chunk).await.ok()?;
    if n == 0 {
        return None;
    }
    let mut buffer = chunk[..n].to_vec();
    tokio::time::timeout(REQUEST_TIMEOUT, read_rest(stream, &mut buffer))
        .await
        .ok()
        .flatten()
}

/// Reads the rest of the request whose first bytes are in `buffer`; its body as JSON.
async fn read_rest<S: AsyncReadExt + Unpin>(stream: &mut S, buffer: &mut Vec<u8>) -> Option<Value> {
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let headers = String::from_utf8_lossy(&buffer[..header_end]).to_lowercase();
    let length: usize = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    serde_json::from_slice(&buffer[header_end..header_end + length]).ok()
}

/// Standard base64 with padding (for `caBundle`).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
