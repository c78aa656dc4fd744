//! The core's Events, recorded on the Gateway through kube-runtime's events recorder
//! (`events.k8s.io/v1`), or for a Gateway whose name is too long for its Event names, as
//! an Event named by the API server ([`Recorder`]).

use gateway_reconcile::events::{Event, EventType};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Client;
use kube::api::{Api, PostParams};
use kube::runtime::events::{self, Reporter};
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

/// Where the controller records its Events: kube-runtime's recorder, and for an object
/// whose name leaves no room for the recorder's Event name (`NAME.HEX`, 17 characters more
/// than the object's, past the 253 an Event name may have: a Gateway name longer than
/// [`MAX_RECORDER_NAME`]) an Event of its own whose name the API server generates from
/// the object name's first characters.
#[derive(Clone)]
pub struct Recorder {
    recorder: events::Recorder,
    client: Client,
    reporter: Reporter,
}

/// The longest object name kube-runtime's recorder can name an Event after (253 less the
/// `.` and 16 hexadecimal digits it appends).
pub const MAX_RECORDER_NAME: usize = 253 - 17;

impl Recorder {
    /// A recorder writing with `client`, as `reporter`.
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Recorder {
            recorder: events::Recorder::new(client.clone(), reporter.clone()),
            client,
            reporter,
        }
    }

    /// Records one Event on the object `reference` names.
    pub async fn publish(
        &self,
        event: &events::Event,
        reference: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let name = reference.name.as_deref().unwrap_or_default();
        if name.len() <= MAX_RECORDER_NAME {
            return self.recorder.publish(event, reference).await;
        }
        let api = Api::<K8sEvent>::namespaced(
            self.client.clone(),
            reference.namespace.as_deref().unwrap_or("default"),
        );
        api.create(&PostParams::default(), &self.long_named(event, reference))
            .await
            .map(|_| ())
    }

    /// The Event kube-runtime's recorder would write, named by the API server from the
    /// object name's start (`generateName`: it keeps 58 characters and adds 5). The prefix
    /// ends with `-`: the server checks a `generateName` as a subdomain whose trailing dash
    /// the suffix completes, and refuses one that ends with `.` (shown on a real server).
    fn long_named(&self, event: &events::Event, reference: &ObjectReference) -> K8sEvent {
        let name = reference.name.as_deref().unwrap_or_default();
        let prefix = truncate(name, 57).trim_end_matches(['-', '.']);
        K8sEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            event_time: Some(MicroTime(k8s_openapi::jiff::Timestamp::now())),
            regarding: Some(reference.clone()),
            note: event.note.clone(),
            metadata: ObjectMeta {
                namespace: reference.namespace.clone(),
                generate_name: Some(format!("{prefix}-")),
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
        let written = recorder.long_named(&event, &reference);
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
