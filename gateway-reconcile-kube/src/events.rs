//! The core's Events, recorded on the Gateway (`events.k8s.io/v1`) as kube-runtime's
//! recorder writes them, with their series kept in a bounded time window ([`Recorder`]).
//!
//! kube-runtime's recorder keeps every Event it wrote for six minutes, whole, and walks
//! all of them on every publish to drop the old ones: at a start that records one Event
//! per Gateway, N publishes walk up to N entries each, a cost that grows with the square
//! of the Gateways (docs/scale.md). This recorder writes the same Events (the same names,
//! bodies and series) and keeps, per repeatable Event, its name and count only, dropped in
//! the order they were last seen. A repeat is patched with its series alone
//! (`count`, `lastObservedTime`), as client-go's recorder does, instead of the whole Event
//! again, and a repeat of an Event the server no longer has (deleted, or past its Event
//! TTL) is created anew, as client-go's recorder does; the answers are not read, as
//! nothing in them is used.
//!
//! For a Gateway whose name is too long for the Event names (`NAME.HEX`, 17 characters
//! more than the object's, past the 253 an Event name may have) the Event is named by the
//! API server from the name's first characters, and each occurrence is an Event of its own.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use gateway_reconcile::events::{Event, EventType};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::Request;
use kube::runtime::events::{self, Reporter};
use serde::de::IgnoredAny;
use tracing::warn;

/// The longest note the Events API takes (1 KiB).
pub const MAX_NOTE_BYTES: usize = 1024;

/// The core's `event` as kube-runtime's, with `action` set (the Deployment verb of this
/// reconcile, or `Reconcile`) and the note cut to [`MAX_NOTE_BYTES`] on a char boundary.
pub fn to_runtime(event: &Event, action: &str) -> events::Event {
    events::Event {
        type_: match event.type_ {
            EventType::Normal => events::EventType::Normal,
            EventType::Warning => events::EventType::Warning,
        },
        reason: event.reason.clone(),
        note: Some(truncate(&event.message, MAX_NOTE_BYTES).to_owned()),
        action: action.to_owned(),
        secondary: None,
    }
}

/// How long after its last occurrence an Event's repeat still counts on it (its series)
/// rather than being written as a new Event: six minutes, as kube-runtime's and
/// client-go's recorders do.
pub const SERIES_WINDOW: SignedDuration = SignedDuration::from_mins(6);

/// Where the controller records its Events (see the module docs).
#[derive(Clone)]
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    series: Arc<Mutex<Series>>,
}

/// The longest object name an Event can be named after (253 less the `.` and 16
/// hexadecimal digits appended).
pub const MAX_RECORDER_NAME: usize = 253 - 17;

impl Recorder {
    /// A recorder writing with `client`, as `reporter`.
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Recorder {
            client,
            reporter,
            series: Arc::default(),
        }
    }

    /// Records one Event on the object `reference` names: a new Event, or, when the same
    /// Event (type, action, reason, object) was recorded within [`SERIES_WINDOW`], one more
    /// in its series.
    pub async fn publish(
        &self,
        event: &events::Event,
        reference: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let namespace = reference.namespace.as_deref().unwrap_or("default");
        let api = Api::<K8sEvent>::namespaced(self.client.clone(), namespace);
        let name = reference.name.as_deref().unwrap_or_default();
        if name.len() > MAX_RECORDER_NAME {
            return post(&api, &self.long_named(event, reference, now)).await;
        }
        let key = Key::new(event, reference);
        let repeat = lock(&self.series).repeat(&key, now);
        let written = match repeat {
            Some(repeat) => {
                let patch = serde_json::json!({ "series": EventSeries {
                    count: repeat.count,
                    last_observed_time: MicroTime(now),
                }});
                let request = Request::new(api.resource_url()).patch(
                    &repeat.name,
                    &PatchParams::default(),
                    &Patch::Merge(patch),
                );
                match crate::write::send::<_, IgnoredAny>(&api, request, "patch").await {
                    Ok(_) => repeat,
                    // The Event is gone (deleted, or past the server's Event TTL): a new
                    // one, as client-go's recorder does.
                    Err(kube::Error::Api(status)) if status.code == 404 => {
                        self.create(&api, event, reference, now).await?
                    }
                    Err(error) => return Err(error),
                }
            }
            None => self.create(&api, event, reference, now).await?,
        };
        lock(&self.series).written(key, written, now);
        Ok(())
    }

    /// Creates a new Event: the first occurrence of its series.
    async fn create(
        &self,
        api: &Api<K8sEvent>,
        event: &events::Event,
        reference: &ObjectReference,
        now: Timestamp,
    ) -> Result<Occurrence, kube::Error> {
        let created = self.generate(event, reference, now);
        post(api, &created).await?;
        let name = created.metadata.name.unwrap_or_default();
        Ok(Occurrence { name, count: 1 })
    }

    /// A new Event, named `NAME.HEX` (the object's name, then the time in nanoseconds), as
    /// kube-runtime's recorder writes it.
    fn generate(
        &self,
        event: &events::Event,
        reference: &ObjectReference,
        now: Timestamp,
    ) -> K8sEvent {
        let mut written = self.body(event, reference, now);
        written.metadata.name = Some(format!(
            "{}.{:x}",
            reference
                .name
                .as_deref()
                .unwrap_or(&self.reporter.controller),
            now.as_nanosecond()
        ));
        written
    }

    /// The Event of an object whose name is too long for `NAME.HEX`, named by the API
    /// server from the name's start (`generateName`: it keeps 58 characters and adds 5).
    /// The prefix ends with `-`: the server checks a `generateName` as a subdomain whose
    /// trailing dash the suffix completes, and refuses one that ends with `.` (shown on a
    /// real server).
    fn long_named(
        &self,
        event: &events::Event,
        reference: &ObjectReference,
        now: Timestamp,
    ) -> K8sEvent {
        let name = reference.name.as_deref().unwrap_or_default();
        let prefix = truncate(name, 57).trim_end_matches(['-', '.']);
        let mut written = self.body(event, reference, now);
        written.metadata.generate_name = Some(format!("{prefix}-"));
        written
    }

    /// An Event's body, without its name.
    fn body(&self, event: &events::Event, reference: &ObjectReference, now: Timestamp) -> K8sEvent {
        K8sEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(reference.clone()),
            note: event.note.clone(),
            metadata: ObjectMeta {
                namespace: reference.namespace.clone(),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(self.reporter.controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| self.reporter.controller.clone()),
            ),
            type_: Some(
                match event.type_ {
                    events::EventType::Normal => "Normal",
                    events::EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            related: event.secondary.clone(),
            ..K8sEvent::default()
        }
    }

    /// Records the core's `events` on the object `reference` names, with `action` (the
    /// Deployment verb of this reconcile, or `Reconcile`). An Event is informational: one
    /// the API refuses is logged, and the rest are still recorded.
    pub async fn record(&self, reference: &ObjectReference, events: &[Event], action: &str) {
        for event in events {
            let event = to_runtime(event, action);
            if let Err(error) = self.publish(&event, reference).await {
                warn!(object = ?reference.name, reason = %event.reason, %error, "Event not recorded");
            }
        }
    }
}

/// Creates `event`; the answer is not read.
async fn post(api: &Api<K8sEvent>, event: &K8sEvent) -> Result<(), kube::Error> {
    let body = serde_json::to_vec(event).map_err(kube::Error::SerdeError)?;
    let request = Request::new(api.resource_url()).create(&PostParams::default(), body);
    crate::write::send::<_, IgnoredAny>(api, request, "create")
        .await
        .map(|_| ())
}

/// The series, which no panic elsewhere can leave half-written: taken even when poisoned.
fn lock(series: &Mutex<Series>) -> std::sync::MutexGuard<'_, Series> {
    series
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What makes two Events one series: type, action, reason, the object (its reference
/// whole, `resourceVersion` included, as kube-runtime's and client-go's recorders compare
/// it) and the related object; the reporter is the recorder's own. Held as one string, each
/// part written with its length (`-` for an absent one), so that distinct keys never read
/// the same: one allocation a key, shared by the series' map and queue, held for
/// [`SERIES_WINDOW`] after every Event recorded.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key(Arc<str>);

impl Key {
    fn new(event: &events::Event, reference: &ObjectReference) -> Self {
        use std::fmt::Write;
        let mut key = String::with_capacity(160);
        let mut part = |text: Option<&str>| {
            let _ = match text {
                Some(text) => write!(key, "{}:{text}", text.len()),
                None => write!(key, "-"),
            };
        };
        part(Some(match event.type_ {
            events::EventType::Normal => "Normal",
            events::EventType::Warning => "Warning",
        }));
        part(Some(&event.action));
        part(Some(&event.reason));
        for r in std::iter::once(Some(reference)).chain([event.secondary.as_ref()]) {
            let Some(r) = r else {
                part(None);
                continue;
            };
            for field in [
                &r.api_version,
                &r.kind,
                &r.namespace,
                &r.name,
                &r.uid,
                &r.resource_version,
                &r.field_path,
            ] {
                part(field.as_deref());
            }
        }
        Key(Arc::from(key))
    }
}

/// An Event written: its name, and how many times it occurred (its series' count).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Occurrence {
    name: String,
    count: i32,
}

/// The Events recorded within [`SERIES_WINDOW`], by [`Key`]. Each write is queued with its
/// time; the queue's front is dropped once past the window, so that a publish costs the
/// Events that expired since the last one, not all of them.
#[derive(Debug, Default)]
struct Series {
    last: HashMap<Key, (Occurrence, Timestamp)>,
    queue: VecDeque<(Timestamp, Key)>,
}

impl Series {
    /// The next occurrence of `key` at `now`, when it repeats one still in the window.
    fn repeat(&mut self, key: &Key, now: Timestamp) -> Option<Occurrence> {
        self.expire(now);
        let (last, _) = self.last.get(key)?;
        Some(Occurrence {
            name: last.name.clone(),
            count: last.count.saturating_add(1),
        })
    }

    /// `key` was written as `occurrence` at `now`.
    fn written(&mut self, key: Key, occurrence: Occurrence, now: Timestamp) {
        self.last.insert(key.clone(), (occurrence, now));
        self.queue.push_back((now, key));
    }

    /// Drops the Events last seen [`SERIES_WINDOW`] ago or more. A queued write that a later
    /// one of the same key has replaced drops nothing: the later one is queued too.
    fn expire(&mut self, now: Timestamp) {
        while let Some((at, _)) = self.queue.front() {
            if now.duration_since(*at) < SERIES_WINDOW {
                break;
            }
            let Some((at, key)) = self.queue.pop_front() else {
                break;
            };
            if self.last.get(&key).is_some_and(|(_, last)| *last == at) {
                self.last.remove(&key);
            }
        }
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a char boundary.
pub fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use http_body_util::BodyExt;

    /// A request the fake API server got: method, path, content type and JSON body.
    type Seen = (String, String, String, serde_json::Value);

    /// A stand-in API server: records each request and answers `code` with `{}`.
    #[derive(Clone)]
    struct Fake {
        seen: Arc<Mutex<Vec<Seen>>>,
        code: Arc<Mutex<u16>>,
        /// The answer to a PATCH, when not `code`.
        patch_code: Arc<Mutex<Option<u16>>>,
    }

    impl tower::Service<http::Request<kube::client::Body>> for Fake {
        type Response = http::Response<http_body_util::Full<bytes::Bytes>>;
        type Error = std::convert::Infallible;
        type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: http::Request<kube::client::Body>) -> Self::Future {
            let fake = self.clone();
            Box::pin(async move {
                let (parts, body) = request.into_parts();
                let bytes = body.collect().await.expect("body").to_bytes();
                let kind = parts
                    .headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
                fake.seen.lock().expect("lock").push((
                    parts.method.to_string(),
                    parts.uri.path().to_owned(),
                    kind,
                    json,
                ));
                let code = match *fake.patch_code.lock().expect("lock") {
                    Some(code) if parts.method == http::Method::PATCH => code,
                    _ => *fake.code.lock().expect("lock"),
                };
                let body = if code < 300 {
                    "{}".to_owned()
                } else {
                    format!(
                        r#"{{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no","reason":"InternalError","code":{code}}}"#
                    )
                };
                Ok(http::Response::builder()
                    .status(code)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(http_body_util::Full::new(bytes::Bytes::from(body)))
                    .expect("response"))
            })
        }
    }

    fn recording() -> (Recorder, Fake) {
        let fake = Fake {
            seen: Arc::default(),
            code: Arc::new(Mutex::new(201)),
            patch_code: Arc::default(),
        };
        let reporter = Reporter {
            controller: "gateway-reconcile-controller".into(),
            instance: Some("pod-1".into()),
        };
        (
            Recorder::new(Client::new(fake.clone(), "default"), reporter),
            fake,
        )
    }

    fn gateway(name: &str, version: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("gateway.networking.k8s.io/v1".into()),
            kind: Some("Gateway".into()),
            namespace: Some("red".into()),
            name: Some(name.into()),
            uid: Some("u-1".into()),
            resource_version: Some(version.into()),
            ..ObjectReference::default()
        }
    }

    fn warning(reason: &str, note: &str) -> events::Event {
        events::Event {
            type_: events::EventType::Warning,
            reason: reason.into(),
            note: Some(note.into()),
            action: "Update".into(),
            secondary: None,
        }
    }

    /// Publishes an `ApplyFailed` Warning with `note` on `gw`.
    async fn apply_failed(
        recorder: &Recorder,
        gw: &ObjectReference,
        note: &str,
    ) -> Result<(), kube::Error> {
        recorder.publish(&warning("ApplyFailed", note), gw).await
    }

    #[tokio::test]
    async fn a_repeated_event_is_created_once_then_counted_by_patches_of_its_series() {
        let (recorder, fake) = recording();
        let gw = gateway("gw", "7");
        apply_failed(&recorder, &gw, "first").await.expect("create");
        apply_failed(&recorder, &gw, "second").await.expect("patch");
        apply_failed(&recorder, &gw, "third").await.expect("patch");
        // Another reason, and the same reason on another version of the object: new Events.
        recorder
            .publish(&warning("AdmissionChanged", "x"), &gw)
            .await
            .expect("create");
        recorder
            .publish(&warning("ApplyFailed", "x"), &gateway("gw", "8"))
            .await
            .expect("create");
        let seen = fake.seen.lock().expect("lock").clone();
        let verbs: Vec<(&str, &str)> = seen
            .iter()
            .map(|(m, p, _, _)| (m.as_str(), p.as_str()))
            .collect();
        let (_, _, _, created) = &seen[0];
        let name = created["metadata"]["name"]
            .as_str()
            .expect("named")
            .to_owned();
        let events = "/apis/events.k8s.io/v1/namespaces/red/events";
        let named = format!("{events}/{name}");
        assert_eq!(
            verbs,
            [
                ("POST", events),
                ("PATCH", named.as_str()),
                ("PATCH", named.as_str()),
                ("POST", events),
                ("POST", events)
            ]
        );
        // The Event kube-runtime's recorder wrote: named after the object and the time.
        let (hex, digits) = name.split_once('.').expect("NAME.HEX");
        assert_eq!(hex, "gw");
        assert!(
            digits.len() >= 15 && digits.chars().all(|c| c.is_ascii_hexdigit()),
            "{name}"
        );
        assert_eq!(created["reason"], "ApplyFailed");
        assert_eq!(created["note"], "first");
        assert_eq!(created["type"], "Warning");
        assert_eq!(created["action"], "Update");
        assert_eq!(
            created["reportingController"],
            "gateway-reconcile-controller"
        );
        assert_eq!(created["reportingInstance"], "pod-1");
        assert_eq!(created["regarding"]["resourceVersion"], "7");
        assert!(created["eventTime"].is_string(), "{created}");
        assert!(created.get("series").is_none(), "{created}");
        // A repeat is its series alone, a merge patch.
        for (count, (_, _, kind, patch)) in [2, 3].into_iter().zip(&seen[1..3]) {
            assert_eq!(kind, "application/merge-patch+json");
            assert_eq!(patch["series"]["count"], count, "{patch}");
            assert!(patch["series"]["lastObservedTime"].is_string(), "{patch}");
            assert_eq!(patch.as_object().map(|o| o.len()), Some(1), "{patch}");
        }
    }

    #[tokio::test]
    async fn an_event_the_server_refused_starts_no_series() {
        let (recorder, fake) = recording();
        let gw = gateway("gw", "7");
        *fake.code.lock().expect("lock") = 500;
        assert!(apply_failed(&recorder, &gw, "m").await.is_err());
        *fake.code.lock().expect("lock") = 201;
        apply_failed(&recorder, &gw, "m").await.expect("create");
        let seen = fake.seen.lock().expect("lock").clone();
        let methods: Vec<&str> = seen.iter().map(|(m, _, _, _)| m.as_str()).collect();
        assert_eq!(methods, ["POST", "POST"]);
    }

    /// A repeat of an Event the server no longer has (404 to its patch) is a new Event,
    /// the first of a new series.
    #[tokio::test]
    async fn a_repeat_of_an_event_gone_from_the_server_is_created_again() {
        let (recorder, fake) = recording();
        let gw = gateway("gw", "7");
        apply_failed(&recorder, &gw, "m").await.expect("create");
        *fake.patch_code.lock().expect("lock") = Some(404);
        apply_failed(&recorder, &gw, "m")
            .await
            .expect("created again");
        *fake.patch_code.lock().expect("lock") = None;
        apply_failed(&recorder, &gw, "m").await.expect("patch");
        let seen = fake.seen.lock().expect("lock").clone();
        let methods: Vec<&str> = seen.iter().map(|(m, _, _, _)| m.as_str()).collect();
        assert_eq!(methods, ["POST", "PATCH", "POST", "PATCH"]);
        let second = seen[2].3["metadata"]["name"].as_str().expect("named");
        assert_ne!(seen[0].3["metadata"]["name"].as_str(), Some(second));
        assert!(seen[3].1.ends_with(&format!("/{second}")), "{:?}", seen[3]);
        assert_eq!(seen[3].3["series"]["count"], 2, "the new Event's series");
        // Any other refusal of the patch is the caller's, and the series stays as it was.
        *fake.patch_code.lock().expect("lock") = Some(500);
        assert!(apply_failed(&recorder, &gw, "m").await.is_err());
        *fake.patch_code.lock().expect("lock") = None;
        apply_failed(&recorder, &gw, "m").await.expect("patch");
        let seen = fake.seen.lock().expect("lock").clone();
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[5].3["series"]["count"], 3);
    }

    #[tokio::test]
    async fn a_long_named_object_gets_an_event_named_by_the_server_each_time() {
        let (recorder, fake) = recording();
        let name = format!("{}-{}", "a".repeat(56), "b".repeat(253 - 57));
        let gw = gateway(&name, "7");
        for _ in 0..2 {
            recorder
                .publish(&warning("ApplyFailed", "m"), &gw)
                .await
                .expect("create");
        }
        let seen = fake.seen.lock().expect("lock").clone();
        assert_eq!(seen.len(), 2);
        for (method, _, _, body) in &seen {
            assert_eq!(method, "POST");
            assert_eq!(
                body["metadata"]["generateName"],
                format!("{}-", "a".repeat(56))
            );
            assert!(body["metadata"].get("name").is_none(), "{body}");
        }
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).expect("time")
    }

    fn key(reason: &str) -> Key {
        Key::new(&warning(reason, "m"), &gateway("gw", "7"))
    }

    fn occurrence(count: i32) -> Occurrence {
        Occurrence {
            name: "gw.1".into(),
            count,
        }
    }

    #[test]
    fn a_series_counts_repeats_within_its_window_of_the_last_occurrence() {
        let mut series = Series::default();
        assert_eq!(series.repeat(&key("A"), at(0)), None);
        series.written(key("A"), occurrence(1), at(0));
        assert_eq!(series.repeat(&key("A"), at(10)), Some(occurrence(2)));
        assert_eq!(series.repeat(&key("B"), at(10)), None);
        series.written(key("A"), occurrence(2), at(300));
        // Six minutes after the first write, but not after the last: still a repeat.
        assert_eq!(series.repeat(&key("A"), at(360)), Some(occurrence(3)));
        assert_eq!(series.last.len(), 1);
        assert_eq!(
            series.queue.len(),
            1,
            "the first write's entry expired alone"
        );
        // Six minutes after the last: a new Event, and nothing is held any more.
        assert_eq!(series.repeat(&key("A"), at(660)), None);
        assert!(series.last.is_empty() && series.queue.is_empty());
    }

    #[test]
    fn keys_tell_apart_what_their_parts_tell_apart() {
        let gw = gateway("gw", "7");
        let same = Key::new(&warning("A", "one note"), &gw);
        assert_eq!(same, Key::new(&warning("A", "another note"), &gw));
        let mut normal = warning("A", "m");
        normal.type_ = events::EventType::Normal;
        let mut related = warning("A", "m");
        related.secondary = Some(gateway("other", "1"));
        let mut moved = gw.clone();
        moved.name = Some("dgw".into());
        moved.namespace = Some("re".into());
        let mut absent = gw.clone();
        absent.field_path = Some(String::new());
        let others = [
            Key::new(&warning("B", "m"), &gw),
            Key::new(&normal, &gw),
            Key::new(&related, &gw),
            Key::new(&warning("A", "m"), &gateway("gw", "8")),
            Key::new(&warning("A", "m"), &moved),
            Key::new(&warning("A", "m"), &absent),
        ];
        for (i, other) in others.iter().enumerate() {
            assert_ne!(&same, other, "{i}");
        }
    }

    #[test]
    fn a_publish_walks_only_what_expired() {
        let mut series = Series::default();
        for i in 0..1000 {
            series.written(key(&format!("R{i}")), occurrence(1), at(i));
        }
        // Ten seconds past the first's window: the first ten go, the rest are not looked at.
        assert_eq!(series.repeat(&key("R500"), at(369)), Some(occurrence(2)));
        assert_eq!(series.last.len(), 990);
        assert_eq!(series.queue.len(), 990);
        assert_eq!(series.queue.front().map(|(t, _)| *t), Some(at(10)));
    }

    #[tokio::test]
    async fn a_long_name_gets_an_event_named_by_the_server_from_its_start() {
        let client = Client::try_from(kube::Config::new(
            "http://127.0.0.1:9".parse().expect("url"),
        ))
        .expect("client");
        let reporter = Reporter {
            controller: "gateway-reconcile-controller".into(),
            instance: Some("pod-1".into()),
        };
        let recorder = Recorder::new(client, reporter);
        // 56 characters, then a dash at the cut: trimmed so the name stays a subdomain.
        let name = format!("{}-{}", "a".repeat(56), "b".repeat(253 - 57));
        let reference = ObjectReference {
            name: Some(name.clone()),
            namespace: Some("red".into()),
            ..ObjectReference::default()
        };
        let event = to_runtime(
            &Event {
                type_: EventType::Warning,
                reason: "ApplyFailed".into(),
                message: "m".into(),
            },
            "Update",
        );
        let written = recorder.long_named(&event, &reference, Timestamp::now());
        assert_eq!(
            written.metadata.generate_name.as_deref(),
            Some(format!("{}-", "a".repeat(56)).as_str())
        );
        assert_eq!(written.metadata.name, None);
        assert_eq!(written.regarding.and_then(|r| r.name), Some(name));
        assert_eq!(written.reason.as_deref(), Some("ApplyFailed"));
        assert_eq!(written.type_.as_deref(), Some("Warning"));
        assert_eq!(written.reporting_instance.as_deref(), Some("pod-1"));
    }

    #[test]
    fn truncate_keeps_whole_chars() {
        assert_eq!(truncate("abc", 5), "abc");
        assert_eq!(truncate("abcdef", 3), "abc");
        // "é" is two bytes: cutting inside it keeps the char before.
        assert_eq!(truncate("aé", 2), "a");
        let long = "ü".repeat(1000);
        let cut = truncate(&long, MAX_NOTE_BYTES);
        assert_eq!(cut.len(), 1024);
        assert_eq!(truncate(&format!("x{long}"), MAX_NOTE_BYTES).len(), 1023);
    }

    #[test]
    fn events_carry_action_type_and_note() {
        let event = Event {
            type_: EventType::Warning,
            reason: "ApplyFailed".into(),
            message: "m".repeat(2000),
        };
        let out = to_runtime(&event, "Update");
        assert_eq!(out.type_, events::EventType::Warning);
        assert_eq!(out.reason, "ApplyFailed");
        assert_eq!(out.action, "Update");
        assert_eq!(out.note.as_deref().map(str::len), Some(1024));
    }
}
