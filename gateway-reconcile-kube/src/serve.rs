//! The binary's plain-HTTP endpoints (probes on `--health-addr`, metrics on
//! `--metrics-addr`): GET only, each path answered by a handler, HTTP/1.1 through hyper.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tracing::debug;

/// An answer: status code, `Content-Type`, body.
pub type Answer = (u16, &'static str, String);

/// Answers a path, or `None` (404).
pub type Handler = Arc<dyn Fn(&str) -> Option<Answer> + Send + Sync>;

/// Binds `addr` (at start, so that a taken port stops the process at once).
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}

/// Serves `handler` on `listener` until the future is dropped.
pub async fn serve(listener: TcpListener, handler: Handler) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                debug!(%error, "accept failed");
                // A transient accept error (out of descriptors): do not spin.
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let handler = handler.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let answer = answer(&handler, request.method(), request.uri().path());
                async move { Ok::<_, Infallible>(answer) }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                debug!(%peer, %error, "connection ended");
            }
        });
    }
}

fn answer(handler: &Handler, method: &Method, path: &str) -> Response<Full<Bytes>> {
    let (code, content_type, body) = if method != Method::GET && method != Method::HEAD {
        (405, "text/plain", "only GET\n".to_owned())
    } else {
        handler(path).unwrap_or((404, "text/plain", "not found\n".to_owned()))
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() =
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(value) = http::HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(http::header::CONTENT_TYPE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(addr: SocketAddr, path: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(
                format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
            )
            .await
            .expect("write");
        let mut text = String::new();
        stream.read_to_string(&mut text).await.expect("read");
        text
    }

    #[tokio::test]
    async fn paths_are_answered_by_the_handler() {
        let listener = bind("127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let handler: Handler = Arc::new(|path| {
            (path == "/readyz").then(|| (503, "text/plain", "caches not synced\n".to_owned()))
        });
        let server = tokio::spawn(serve(listener, handler));
        let ready = get(addr, "/readyz").await;
        assert!(ready.starts_with("HTTP/1.1 503"), "{ready}");
        assert!(ready.ends_with("caches not synced\n"), "{ready}");
        assert!(get(addr, "/nope").await.starts_with("HTTP/1.1 404"));
        server.abort();
    }
}
