//! A validating webhook served on loopback that denies every request it is asked about
//! with a given status code, reason and message: how a scenario's 4xx (other than 422) and
//! 5xx Deployment write failures come from the real API server.
//!
//! It serves with the API server's own certificate (issued for 127.0.0.1 by the control
//! plane's CA), so the webhook's `caBundle` is that CA.

use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A running webhook; stops when dropped.
pub struct Webhook {
    /// `https://127.0.0.1:PORT/deny`.
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Webhook {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves a webhook denying with `code`, `reason` and `message`.
pub async fn deny(dir: &str, code: u16, reason: &str, message: &str) -> Result<Webhook, String> {
    let certs = CertificateDer::pem_file_iter(format!("{dir}/apiserver.crt"))
        .and_then(|c| c.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("serving certificate: {e}"))?;
    let key = PrivateKeyDer::from_pem_file(format!("{dir}/apiserver.key"))
        .map_err(|e| format!("serving key: {e}"))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(|e| format!("TLS: {e}"))?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let status = json!({ "code": code, "reason": reason, "message": message });
    let task = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let status = status.clone();
            tokio::spawn(async move {
                if let Ok(mut tls) = acceptor.accept(socket).await {
                    while let Some(request) = read_request(&mut tls).await {
                        let body = review(&request, &status).to_string();
                        let response = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if tls.write_all(response.as_bytes()).await.is_err() {
                            break;
                        }
                    }
                }
            });
        }
    });
    Ok(Webhook {
        url: format!("https://127.0.0.1:{port}/deny"),
        task,
    })
}

/// The AdmissionReview answer: denied, with the status given.
fn review(request: &Value, status: &Value) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "response": { "uid": request["request"]["uid"], "allowed": false, "status": status }
    })
}

/// One HTTP/1.1 request's JSON body (`None` at the end of the connection).
async fn read_request<S: AsyncReadExt + Unpin>(stream: &mut S) -> Option<Value> {
    let mut buffer = Vec::new();
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
