//! Liveness and readiness: `/healthz` answers while the process serves, `/readyz` once
//! every watch cache has its initial list (a standby too: it keeps warm caches). A cache
//! that is not filled within the cache sync timeout stops the process (see
//! [`crate::controller::RunError::CacheSync`]), naming the resource and its watch's last
//! error: a missing CRD or an RBAC gap is reported, not waited on silently.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// The state of the watch caches, as the probes and the sync timeout read it.
#[derive(Debug, Default)]
pub struct Health {
    caches: Mutex<BTreeMap<&'static str, Cache>>,
}

#[derive(Debug, Default, Clone)]
struct Cache {
    ready: bool,
    last_error: Option<String>,
}

/// A cache without its initial list: its kind and its watch's last error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsynced {
    /// The kind (`L34Route`, ...).
    pub kind: &'static str,
    /// The watch's last error, if it had one.
    pub last_error: Option<String>,
}

impl std::fmt::Display for Unsynced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.last_error {
            Some(error) => write!(f, "{} (last watch error: {error})", self.kind),
            None => write!(f, "{} (no watch error: the list is slow)", self.kind),
        }
    }
}

impl Health {
    /// A cache of `kind` that must fill before the process is ready.
    pub fn expect(&self, kind: &'static str) {
        self.caches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(kind)
            .or_default();
    }

    /// The watch of `kind` failed with `error` (it retries with its backoff).
    pub fn watch_error(&self, kind: &'static str, error: &dyn std::fmt::Display) {
        self.caches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(kind)
            .or_default()
            .last_error = Some(error.to_string());
    }

    /// The cache of `kind` has its initial list.
    pub fn synced(&self, kind: &'static str) {
        self.caches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(kind)
            .or_default()
            .ready = true;
    }

    /// The caches still without their initial list.
    pub fn unsynced(&self) -> Vec<Unsynced> {
        self.caches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, cache)| !cache.ready)
            .map(|(kind, cache)| Unsynced {
                kind,
                last_error: cache.last_error.clone(),
            })
            .collect()
    }

    /// Whether every expected cache has its initial list (and there is at least one).
    pub fn ready(&self) -> bool {
        let caches = self.caches.lock().unwrap_or_else(|e| e.into_inner());
        !caches.is_empty() && caches.values().all(|c| c.ready)
    }

    /// The answer to a probe of `path`: status code and body (`None`: not a probe path).
    pub fn probe(&self, path: &str) -> Option<(u16, String)> {
        match path {
            "/healthz" | "/livez" => Some((200, "ok\n".into())),
            "/readyz" if self.ready() => Some((200, "ok\n".into())),
            "/readyz" => {
                let waiting: Vec<String> =
                    self.unsynced().iter().map(ToString::to_string).collect();
                let waiting = if waiting.is_empty() {
                    "the watches have not started".to_owned()
                } else {
                    waiting.join("; ")
                };
                Some((503, format!("caches not synced: {waiting}\n")))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_once_every_cache_is_synced() {
        let health = Health::default();
        assert_eq!(health.probe("/readyz").map(|p| p.0), Some(503));
        health.expect("Gateway");
        health.expect("L34Route");
        health.synced("Gateway");
        health.watch_error(
            "L34Route",
            &"the server could not find the requested resource",
        );
        let (code, body) = health.probe("/readyz").expect("probe");
        assert_eq!(code, 503);
        assert!(
            body.contains("L34Route (last watch error: the server could not find"),
            "{body}"
        );
        assert!(!body.contains("Gateway"), "{body}");
        assert_eq!(health.probe("/healthz"), Some((200, "ok\n".into())));
        health.synced("L34Route");
        assert_eq!(health.probe("/readyz"), Some((200, "ok\n".into())));
        assert!(health.unsynced().is_empty());
        assert_eq!(health.probe("/metrics"), None);
    }
}
