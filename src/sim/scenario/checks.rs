//! Expectations on a reconcile (`expect` in a scenario file) and how they are checked.

use std::fmt;

use jiff::Timestamp;
use serde_json::Value;

use super::describe::{describe_action, describe_condition, describe_requeue};
use crate::events::{Event, EventType};
use crate::reconcile::Requeue;
use crate::sim::cluster::{ReconcileReport, WriteKind, format_time};
use crate::wire::{Condition, GatewayClassStatus, ListenerStatus};

/// What a reconcile must have done; every field optional.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Expect {
    /// The Deployment action.
    pub action: Option<WriteKind>,
    /// Whether the status was written.
    pub status_written: Option<bool>,
    /// Per condition type: `None` = must be absent.
    pub conditions: Vec<(String, Option<ConditionExpect>)>,
    /// The address values, exact and in order.
    pub addresses: Option<Vec<String>>,
    /// `Some(None)`: no Deployment; `Some(Some(v))`: the stored Deployment contains `v`.
    pub deployment: Option<Option<Value>>,
    /// Field paths that must each be in the Update's drift list (or, on `None`, in the
    /// drift a write record held back).
    pub drift: Option<Vec<String>>,
    /// Events each matched by a distinct Event of the reconcile (others allowed).
    pub events: Option<Vec<EventExpect>>,
    /// The GatewayClass's conditions, as [`Expect::conditions`].
    pub gateway_class: Option<Vec<(String, Option<ConditionExpect>)>>,
    /// The Gateway's `status.listeners` (revision 5): as many entries, in order.
    pub listeners: Option<Vec<ListenerExpect>>,
    /// The names of the GatewayClass's `status.supportedFeatures` (revision 5), exact and in
    /// order (no class, or a class without the field: empty).
    pub gateway_class_features: Option<Vec<String>>,
    /// The requeue hint.
    pub requeue: Option<Requeue>,
}

/// What one entry of the Gateway's `status.listeners` must hold; every field but the name
/// optional.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListenerExpect {
    /// The listener's name.
    pub name: String,
    /// `supportedKinds`, exact and in order: each `(group, kind)`.
    pub supported_kinds: Option<Vec<(String, String)>>,
    /// `attachedRoutes`.
    pub attached_routes: Option<i64>,
    /// The entry's conditions, as [`Expect::conditions`].
    pub conditions: Vec<(String, Option<ConditionExpect>)>,
}

/// What one expected Event must hold; every field optional.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventExpect {
    /// `Normal` or `Warning`.
    pub type_: Option<EventType>,
    /// The reason.
    pub reason: Option<String>,
    /// Texts the message must contain.
    pub message_contains: Vec<String>,
}

impl EventExpect {
    fn matches(&self, event: &Event) -> bool {
        self.type_.is_none_or(|t| t == event.type_)
            && self.reason.as_ref().is_none_or(|r| *r == event.reason)
            && self
                .message_contains
                .iter()
                .all(|part| event.message.contains(part.as_str()))
    }
}

/// What one condition must hold; every field optional.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConditionExpect {
    /// `True`, `False` or `Unknown`.
    pub status: Option<String>,
    /// The reason.
    pub reason: Option<String>,
    /// The exact message.
    pub message: Option<String>,
    /// Texts the message must contain.
    pub message_contains: Vec<String>,
    /// The condition's observedGeneration.
    pub observed_generation: Option<i64>,
    /// The condition's lastTransitionTime, as the file writes it (RFC 3339). Compared as an
    /// instant when both it and the condition's time are in the supported range; otherwise as
    /// written, since the crate keeps a time past the range (after 9999-12-30T22:00:00Z) as
    /// written, counting it as now.
    pub last_transition_time: Option<String>,
}

/// One failed expectation (or a step that could not run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The step (1-based).
    pub step: usize,
    /// What was checked, e.g. `conditions.Programmed.message`.
    pub what: String,
    /// What the scenario expected.
    pub expected: String,
    /// What happened.
    pub actual: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step {}: {}: expected {}, found {}",
            self.step, self.what, self.expected, self.actual
        )
    }
}

/// The stored objects an expectation reads, as JSON (`None`: it does not exist), read
/// from the backend only when the step's `expect` checks them (each a copy).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Stored<'a> {
    /// The Deployment, for `expect.deployment`.
    pub deployment: Option<&'a Value>,
    /// The Gateway, for `expect.listeners`.
    pub gateway: Option<&'a Value>,
    /// The GatewayClass, for `expect.gatewayClassFeatures`.
    pub gateway_class: Option<&'a Value>,
}

pub(super) fn check_record(
    step: usize,
    expect: &Expect,
    record: &ReconcileReport,
    stored: Stored<'_>,
    failures: &mut Vec<Failure>,
) {
    let deployment = stored.deployment;
    let mut fail = |what: String, expected: String, actual: String| {
        failures.push(Failure {
            step,
            what,
            expected,
            actual,
        });
    };
    if let Some(problem) = &record.status_patch_problem {
        fail(
            "status patch".into(),
            "status_patch() to give the settlement's status".into(),
            problem.clone(),
        );
    }
    if let Some(action) = expect.action
        && action != record.action
    {
        fail("action".into(), action.to_string(), describe_action(record));
    }
    if let Some(written) = expect.status_written
        && written != record.status_written
    {
        fail(
            "statusWritten".into(),
            written.to_string(),
            record.status_written.to_string(),
        );
    }
    check_conditions(
        "conditions",
        &expect.conditions,
        &record.conditions,
        &mut fail,
    );
    if let Some(want) = &expect.gateway_class {
        check_conditions("gatewayClass", want, &record.class_conditions, &mut fail);
    }
    if let Some(want) = &expect.gateway_class_features {
        match class_features(stored.gateway_class) {
            Ok(got) if got == *want => {}
            Ok(got) => fail(
                "gatewayClassFeatures".into(),
                format!("{want:?}"),
                format!("{got:?}"),
            ),
            Err(why) => fail("gatewayClassFeatures".into(), format!("{want:?}"), why),
        }
    }
    if let Some(want) = &expect.listeners {
        match listener_status(stored.gateway) {
            Ok(got) => check_listeners(want, &got, &mut fail),
            Err(why) => fail(
                "listeners".into(),
                describe_listener_names(want.iter().map(|l| l.name.as_str())),
                why,
            ),
        }
    }
    if let Some(want) = &expect.events {
        // Each expected Event takes a distinct one of the reconcile's, first match first.
        let mut taken = vec![false; record.events.len()];
        for (i, e) in want.iter().enumerate() {
            let found = record
                .events
                .iter()
                .enumerate()
                .find(|(j, event)| !taken.get(*j).copied().unwrap_or(true) && e.matches(event));
            match found {
                Some((j, _)) => {
                    if let Some(t) = taken.get_mut(j) {
                        *t = true;
                    }
                }
                None => fail(
                    format!("events[{i}]"),
                    format!(
                        "an Event{}{}{}",
                        e.type_.map(|t| format!(" {t:?}")).unwrap_or_default(),
                        e.reason
                            .as_ref()
                            .map(|r| format!(" {r}"))
                            .unwrap_or_default(),
                        if e.message_contains.is_empty() {
                            String::new()
                        } else {
                            format!(" containing {:?}", e.message_contains)
                        }
                    ),
                    describe_events(&record.events),
                ),
            }
        }
    }
    if let Some(want) = &expect.addresses
        && want != &record.addresses
    {
        fail(
            "addresses".into(),
            format!("{want:?}"),
            format!("{:?}", record.addresses),
        );
    }
    match (&expect.deployment, deployment) {
        (None, _) | (Some(None), None) => {}
        (Some(None), Some(d)) => fail(
            "deployment".into(),
            "no Deployment".into(),
            format!(
                "Deployment {:?}",
                d.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ),
        ),
        (Some(Some(_)), None) => fail("deployment".into(), "a Deployment".into(), "none".into()),
        (Some(Some(want)), Some(got)) => {
            let mut diffs = Vec::new();
            subset(want, got, "deployment", &mut diffs);
            for (path, expected, actual) in diffs {
                fail(path, expected, actual);
            }
        }
    }
    if let Some(want) = &expect.drift {
        for path in want.iter().filter(|p| !record.drift.contains(p)) {
            fail(
                "drift".into(),
                format!("to contain {path:?}"),
                format!("{:?}", record.drift),
            );
        }
    }
    if let Some(want) = expect.requeue
        && want != record.requeue
    {
        fail(
            "requeue".into(),
            describe_requeue(want),
            describe_requeue(record.requeue),
        );
    }
}

/// The names of the class's `status.supportedFeatures` (`[{"name": N}]`); none when there is
/// no class or the field is absent; an error (what is there) when it has another form.
fn class_features(class: Option<&Value>) -> Result<Vec<String>, String> {
    let Some(status) = class.and_then(|c| c.get("status")) else {
        return Ok(Vec::new());
    };
    let Some(features) = status.get("supportedFeatures") else {
        return Ok(Vec::new());
    };
    let read = serde_json::from_value::<GatewayClassStatus>(status.clone())
        .ok()
        .and_then(|s| {
            s.supported_feature_names()
                .map(|names| names.into_iter().map(str::to_owned).collect())
        });
    read.ok_or_else(|| {
        format!(
            "status.supportedFeatures not of the form [{{\"name\": N}}]: {}",
            compact(features)
        )
    })
}

/// The Gateway's `status.listeners` as stored (none when absent); an error when there is no
/// Gateway or the field does not read.
fn listener_status(gateway: Option<&Value>) -> Result<Vec<ListenerStatus>, String> {
    let gateway = gateway.ok_or("no Gateway")?;
    match gateway.pointer("/status/listeners") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(listeners) => serde_json::from_value(listeners.clone()).map_err(|e| {
            format!(
                "status.listeners that do not read ({e}): {}",
                compact(listeners)
            )
        }),
    }
}

/// `2 entries ["tcp", "udp"]`.
fn describe_listener_names<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let count = names.len();
    let names: Vec<&str> = names.collect();
    let noun = if count == 1 { "entry" } else { "entries" };
    format!("{count} {noun} {names:?}")
}

/// `[{"group": G, "kind": K}, ...]`, as the file writes them.
fn describe_kinds<'a>(kinds: impl Iterator<Item = (Option<&'a str>, &'a str)>) -> String {
    let each: Vec<String> = kinds
        .map(|(group, kind)| match group {
            Some(group) => format!("{{group: {group:?}, kind: {kind:?}}}"),
            None => format!("{{kind: {kind:?}}}"),
        })
        .collect();
    format!("[{}]", each.join(", "))
}

/// The listener entries: as many as expected, each with its name, kinds, count and
/// conditions; failures named `listeners[I].FIELD`. On a count or order mismatch only that
/// is reported (the entries then do not pair up).
fn check_listeners(
    want: &[ListenerExpect],
    got: &[ListenerStatus],
    fail: &mut impl FnMut(String, String, String),
) {
    let same_names = want.len() == got.len() && want.iter().zip(got).all(|(w, g)| w.name == g.name);
    if !same_names {
        fail(
            "listeners".into(),
            describe_listener_names(want.iter().map(|l| l.name.as_str())),
            describe_listener_names(got.iter().map(|l| l.name.as_str())),
        );
        return;
    }
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        if let Some(kinds) = &w.supported_kinds {
            let same = kinds.len() == g.supported_kinds.len()
                && kinds
                    .iter()
                    .zip(&g.supported_kinds)
                    .all(|((group, kind), got)| {
                        got.group.as_deref() == Some(group.as_str()) && got.kind == *kind
                    });
            if !same {
                fail(
                    format!("listeners[{i}].supportedKinds"),
                    describe_kinds(kinds.iter().map(|(g, k)| (Some(g.as_str()), k.as_str()))),
                    describe_kinds(
                        g.supported_kinds
                            .iter()
                            .map(|k| (k.group.as_deref(), k.kind.as_str())),
                    ),
                );
            }
        }
        if let Some(count) = w.attached_routes
            && count != i64::from(g.attached_routes)
        {
            fail(
                format!("listeners[{i}].attachedRoutes"),
                count.to_string(),
                g.attached_routes.to_string(),
            );
        }
        check_conditions(
            &format!("listeners[{i}].conditions"),
            &w.conditions,
            &g.conditions,
            fail,
        );
    }
}

/// Checks each expected condition (type → `None`: absent) against `found`; failures are
/// named `PREFIX.TYPE.FIELD`.
fn check_conditions(
    prefix: &str,
    expected: &[(String, Option<ConditionExpect>)],
    found: &[Condition],
    fail: &mut impl FnMut(String, String, String),
) {
    for (type_, want) in expected {
        let found = found.iter().find(|c| &c.type_ == type_);
        let what = |field: &str| format!("{prefix}.{type_}{field}");
        match (want, found) {
            (None, None) => {}
            (None, Some(c)) => fail(what(""), "absent".into(), describe_condition(c)),
            (Some(_), None) => fail(what(""), "present".into(), "absent".into()),
            (Some(want), Some(c)) => {
                let mut field = |name: &str, want: &Option<String>, got: &str| {
                    if let Some(w) = want
                        && w != got
                    {
                        fail(
                            what(&format!(".{name}")),
                            format!("{w:?}"),
                            format!("{got:?}"),
                        );
                    }
                };
                field("status", &want.status, &c.status);
                field("reason", &want.reason, &c.reason);
                field("message", &want.message, &c.message);
                for part in &want.message_contains {
                    if !c.message.contains(part.as_str()) {
                        fail(
                            what(".message"),
                            format!("to contain {part:?}"),
                            format!("{:?}", c.message),
                        );
                    }
                }
                if let Some(g) = want.observed_generation
                    && Some(g) != c.observed_generation
                {
                    fail(
                        what(".observedGeneration"),
                        g.to_string(),
                        c.observed_generation
                            .map_or_else(|| "none".into(), |g| g.to_string()),
                    );
                }
                if let Some(t) = &want.last_transition_time {
                    // In range: compared as instants; past it: as written.
                    let want: Option<Timestamp> = t.parse().ok();
                    let got: Option<Timestamp> = c.last_transition_time.parse().ok();
                    let same = match want {
                        Some(want) => got == Some(want),
                        None => *t == c.last_transition_time,
                    };
                    if !same {
                        fail(
                            what(".lastTransitionTime"),
                            want.map_or_else(|| t.clone(), format_time),
                            format!("{:?}", c.last_transition_time),
                        );
                    }
                }
            }
        }
    }
}

/// The Events of a reconcile, for a failure message.
fn describe_events(events: &[Event]) -> String {
    if events.is_empty() {
        return "no Event".into();
    }
    let each: Vec<String> = events
        .iter()
        .map(|e| format!("{:?} {}: {:?}", e.type_, e.reason, e.message))
        .collect();
    each.join("; ")
}

/// Appends every place where `actual` does not contain `expected`: objects are subsets
/// (`null` = key absent), lists have the same length and match element by element.
pub(super) fn subset(
    expected: &Value,
    actual: &Value,
    path: &str,
    out: &mut Vec<(String, String, String)>,
) {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => {
            for (key, w) in want {
                let sub = format!("{path}{}", key_segment(key));
                match (w, got.get(key)) {
                    (Value::Null, None | Some(Value::Null)) => {}
                    (Value::Null, Some(g)) => out.push((sub, "absent".into(), compact(g))),
                    (w, None) => out.push((sub, compact(w), "absent".into())),
                    (w, Some(g)) => subset(w, g, &sub, out),
                }
            }
        }
        (Value::Array(want), Value::Array(got)) if want.len() != got.len() => out.push((
            path.to_owned(),
            format!("{} items: {}", want.len(), compact(expected)),
            format!("{} items: {}", got.len(), compact(actual)),
        )),
        (Value::Array(want), Value::Array(got)) => {
            for (i, (w, g)) in want.iter().zip(got).enumerate() {
                subset(w, g, &format!("{path}[{i}]"), out);
            }
        }
        (w, g) if w == g => {}
        (w, g) => out.push((path.to_owned(), compact(w), compact(g))),
    }
}

fn key_segment(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        format!(".{key}")
    } else {
        format!("[{key:?}]")
    }
}

pub(super) fn compact(v: &Value) -> String {
    const MAX: usize = 400;
    let text = v.to_string();
    if text.len() <= MAX {
        return text;
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
pub(crate) mod tests;
