//! The watches' initial lists: streaming lists where the API server serves them, paged
//! LISTs where it does not.
//!
//! A streaming list (KEP-3157, "watch-list") is one `watch` with `sendInitialEvents=true`:
//! the server streams the objects one by one from its watch cache, then a bookmark that
//! ends the list, and the same request goes on as the watch. Against paged LISTs (500
//! objects a page, each page a response held whole while it is decoded, then one more
//! request for the watch) it makes one request per watch and never holds a page. The
//! server serves it from Kubernetes 1.32 on by default (the `WatchList` feature; 1.27 to
//! 1.31 only with the feature gate on); elsewhere it refuses the request (422, "sendInitialEvents is
//! forbidden for watch unless the WatchList feature gate is enabled", or, before 1.27,
//! `resourceVersionMatch` on a watch). [`watcher`] then falls back to paged LISTs for
//! that watch, as client-go's reflector does, and says so once in the log.
//!
//! The refusal is told apart by its message; the metadata-only watch's refusal does not
//! decode as a status (kube-client reports a decoding error), so the watches of one
//! controller share what they learnt ([`StreamingLists`]): once one was refused, a watch
//! that has had nothing but errors falls back too.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use futures::{Stream, StreamExt, stream::BoxStream};
use kube::Api;
use kube::runtime::watcher::{self, Event};
use serde::de::DeserializeOwned;
use tracing::warn;

/// Whether the API server serves streaming lists, as the watches of one controller found.
#[derive(Debug, Default)]
pub(crate) struct StreamingLists(AtomicU8);

const UNKNOWN: u8 = 0;
const SERVED: u8 = 1;
const REFUSED: u8 = 2;

impl StreamingLists {
    fn refused(&self) -> bool {
        self.0.load(Ordering::Relaxed) == REFUSED
    }

    fn learn(&self, served: bool) {
        let value = if served { SERVED } else { REFUSED };
        let _ = self
            .0
            .compare_exchange(UNKNOWN, value, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// kube-runtime's watcher of `api` with `config`, its initial lists streamed when
/// `streaming` is given and the server serves them (see the module documentation).
pub(crate) fn watcher<K>(
    api: Api<K>,
    config: watcher::Config,
    streaming: Option<Arc<StreamingLists>>,
) -> impl Stream<Item = watcher::Result<Event<K>>> + Send + 'static
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let Some(learnt) = streaming else {
        return watcher::watcher(api, config).boxed();
    };
    let streamed = watcher::watcher(api.clone(), config.clone().streaming_lists()).boxed();
    let state = State::Streaming {
        stream: streamed,
        fallback: Some(Box::new((api, config))),
    };
    futures::stream::unfold(state, move |state| {
        let learnt = learnt.clone();
        async move {
            match state {
                State::Streaming {
                    mut stream,
                    fallback,
                } => {
                    let item = stream.next().await?;
                    let refused = match &item {
                        Err(error) if not_served(error) => {
                            learnt.learn(false);
                            true
                        }
                        Err(_) => learnt.refused(),
                        Ok(_) => false,
                    };
                    match (&item, fallback) {
                        (Err(error), Some(fallback)) if refused => {
                            let (api, config) = *fallback;
                            warn!(resource = %K::plural(&()), %error,
                              "streaming lists not served: paged LISTs for this watch");
                            let mut listing = watcher::watcher(api, config).boxed();
                            let item = listing.next().await?;
                            Some((item, State::Listing(listing)))
                        }
                        // Once the server answered the watch, it serves streaming lists.
                        (Ok(_), _) => {
                            learnt.learn(true);
                            Some((
                                item,
                                State::Streaming {
                                    stream,
                                    fallback: None,
                                },
                            ))
                        }
                        (Err(_), fallback) => Some((item, State::Streaming { stream, fallback })),
                    }
                }
                State::Listing(mut stream) => {
                    let item = stream.next().await?;
                    Some((item, State::Listing(stream)))
                }
            }
        }
    })
    .boxed()
}

enum State<K> {
    /// Streaming lists, with what a fallback to paged LISTs needs until the server has
    /// answered one.
    Streaming {
        stream: BoxStream<'static, watcher::Result<Event<K>>>,
        fallback: Option<Box<(Api<K>, watcher::Config)>>,
    },
    /// Paged LISTs.
    Listing(BoxStream<'static, watcher::Result<Event<K>>>),
}

/// Whether the server refused a streaming list as such: a 422 or 400 about
/// `sendInitialEvents` or `resourceVersionMatch` (never an RBAC refusal or an outage).
/// kube-client reads a watch's answer as a stream of events whatever its HTTP status, so
/// the refusal comes as the stream's first item (`WatchFailed`), or as the start's.
fn not_served(error: &watcher::Error) -> bool {
    match error {
        watcher::Error::WatchStartFailed(kube::Error::Api(status))
        | watcher::Error::WatchFailed(kube::Error::Api(status)) => {
            matches!(status.code, 400 | 422)
                && (status.message.contains("sendInitialEvents")
                    || status.message.contains("resourceVersionMatch"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::ResourceExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use crate::cached::GatewayConfiguration;

    /// A plain-HTTP stand-in API server that refuses streaming lists as a server without
    /// the `WatchList` feature does, and answers a LIST with one object; every other
    /// request (a watch) is held open. Returns its URL and the request lines it got.
    async fn without_watch_list() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listener");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut buffer = vec![0u8; 8192];
                    let mut read = Vec::new();
                    while let Ok(n) = socket.read(&mut buffer).await {
                        if n == 0 {
                            return;
                        }
                        read.extend_from_slice(&buffer[..n]);
                        let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") else {
                            continue;
                        };
                        let head = String::from_utf8_lossy(&read[..end]).to_string();
                        read.drain(..end + 4);
                        let line = head.lines().next().unwrap_or_default().to_owned();
                        log.lock().expect("lock").push(line.clone());
                        let (code, body) = if line.contains("sendInitialEvents=true") {
                            (422, r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled","reason":"Invalid","code":422}"#.to_owned())
                        } else if line.contains("watch=true") {
                            // A watch: held open, nothing sent.
                            futures::future::pending::<()>().await;
                            unreachable!()
                        } else {
                            (200, r#"{"kind":"GatewayConfigurationList","apiVersion":"meridio-2.nordix.org/v1alpha1","metadata":{"resourceVersion":"5"},"items":[{"apiVersion":"meridio-2.nordix.org/v1alpha1","kind":"GatewayConfiguration","metadata":{"name":"conf","namespace":"ns","resourceVersion":"4"},"spec":{}}]}"#.to_owned())
                        };
                        let answer = format!(
                            "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if socket.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (url, seen)
    }

    #[tokio::test]
    async fn a_server_without_streaming_lists_is_listed_with_pages() {
        let (url, seen) = without_watch_list().await;
        let client =
            kube::Client::try_from(kube::Config::new(url.parse().expect("url"))).expect("client");
        let api = Api::<GatewayConfiguration>::namespaced(client, "ns");
        let events: Vec<_> = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            watcher(api, watcher::Config::default(), Some(Arc::default()))
                .take(3)
                .collect::<Vec<_>>(),
        )
        .await
        .expect("the list came");
        let names: Vec<String> = events
            .iter()
            .map(|event| match event {
                Ok(Event::Init) => "Init".to_owned(),
                Ok(Event::InitApply(object)) => format!("InitApply {}", object.name_any()),
                Ok(Event::InitDone) => "InitDone".to_owned(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(names, ["Init", "InitApply conf", "InitDone"]);
        let seen = seen.lock().expect("lock").clone();
        assert!(seen[0].contains("sendInitialEvents=true"), "{seen:#?}");
        assert!(
            seen[1].starts_with("GET ") && !seen[1].contains("watch=true"),
            "{seen:#?}"
        );
    }
}
