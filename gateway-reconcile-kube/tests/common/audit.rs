//! The API server's audit log, read as the stories read it: every request on a
//! namespace's objects, the controller's told apart by its user name.

use serde_json::Value;

use super::{CONTROLLER_USER, env};

/// One request from the API server's audit log.
#[derive(Debug, Clone, PartialEq)]
pub struct Audited {
    /// When the request came.
    pub at: jiff::Timestamp,
    /// When its answer was complete.
    pub done: jiff::Timestamp,
    /// Who sent it.
    pub user: String,
    /// Its client's user agent (the controller's carries its leader identity).
    pub agent: String,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, ...
    pub verb: String,
    /// The resource's plural.
    pub resource: String,
    /// `status`, or empty.
    pub subresource: String,
    /// The object's name (empty for a list or watch).
    pub name: String,
    /// The answer's code.
    pub code: i64,
    /// The request's path and query.
    pub uri: String,
}

/// Every request on objects in `namespace` (`""`: cluster-scoped ones and those on no
/// object), in the order the API server logged them.
pub fn audit(namespace: &str) -> Vec<Audited> {
    let log = std::fs::read_to_string(env("AUDIT_LOG")).expect("audit log");
    let text = |e: &Value, key: &str| e[key].as_str().unwrap_or_default().to_owned();
    let time = |e: &Value, key: &str| {
        e[key]
            .as_str()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{key} in {e}"))
    };
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|e| e["objectRef"]["namespace"].as_str().unwrap_or_default() == namespace)
        .map(|e| Audited {
            at: time(&e, "requestReceivedTimestamp"),
            done: time(&e, "stageTimestamp"),
            user: e["user"]["username"].as_str().unwrap_or_default().into(),
            agent: text(&e, "userAgent"),
            verb: text(&e, "verb"),
            resource: text(&e["objectRef"], "resource"),
            subresource: text(&e["objectRef"], "subresource"),
            name: text(&e["objectRef"], "name"),
            code: e["responseStatus"]["code"].as_i64().unwrap_or_default(),
            uri: text(&e, "requestURI"),
        })
        .collect()
}

/// The controller's requests in `namespace` (see [`audit`]).
pub fn controller_requests(namespace: &str) -> Vec<Audited> {
    audit(namespace)
        .into_iter()
        .filter(|a| a.user == CONTROLLER_USER)
        .collect()
}

/// Whether the request changed (or tried to change) an object.
pub fn is_write(a: &Audited) -> bool {
    matches!(
        a.verb.as_str(),
        "create" | "update" | "patch" | "delete" | "deletecollection"
    )
}

pub fn count(requests: &[Audited], verb: &str, resource: &str, subresource: &str) -> usize {
    requests
        .iter()
        .filter(|r| r.verb == verb && r.resource == resource && r.subresource == subresource)
        .count()
}
