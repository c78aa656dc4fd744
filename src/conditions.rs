//! The condition vocabulary, and the bookkeeping of `status.conditions`.
//!
//! The crate owns four condition types (`D` is [`Settings::condition_domain`]):
//!
//! | type | polarity | present |
//! |---|---|---|
//! | `Accepted` | positive | always, once the Gateway is ours (within the 8-item limit, by priority) |
//! | `Programmed` | positive | always, once the Gateway is ours (idem) |
//! | `D/ConfigurationApplied` | positive | always, once the Gateway is ours (idem) |
//! | `D/Degraded` | negative | only while True (idem) |
//!
//! This module is the one place of the vocabulary: the condition types, the statuses, every
//! reason and literal message the crate writes, and the reasons of the Events it derives.
//! The crate docs, the condition table (`reconcile`) and [`events`](crate::events) refer
//! to these constants.
//!
//! The bookkeeping of `status.conditions` (apimachinery's `SetStatusCondition` semantics,
//! the 8-item limit) is crate-private, in `conditions::merge`.

mod merge;

use jiff::Timestamp;

use crate::error::InputError;
use crate::settings::{Settings, is_dns_subdomain, not_a_subdomain};

/// A condition of `status.conditions` (the wire type, re-exported beside the lookup).
pub use crate::wire::Condition;

pub(crate) use merge::{Change, Owned, Wanted, find, is_stale, merge_changed};

/// `Accepted`: the Gateway is ours and its parameters are valid.
pub const ACCEPTED: &str = "Accepted";
/// `Programmed`: the LB Deployment exists and is reconciled.
pub const PROGRAMMED: &str = "Programmed";
/// `ResolvedRefs`, a listener's: the route kinds it names are supported (SPEC revision 5).
pub const RESOLVED_REFS: &str = "ResolvedRefs";
/// Name part of `D/ConfigurationApplied`: the Deployment carries the current
/// GatewayConfiguration generation.
///
/// Not a condition type by itself: the type is `D/ConfigurationApplied`
/// ([`ConditionTypes::configuration_applied`]); look a condition up with
/// [`ConditionTypes::find`].
pub const CONFIGURATION_APPLIED_NAME: &str = "ConfigurationApplied";
/// Name part of `D/Degraded`: the LB serves, but not as desired, and will not fix itself soon.
///
/// Not a condition type by itself: the type is `D/Degraded` ([`ConditionTypes::degraded`]);
/// look a condition up with [`ConditionTypes::find`].
pub const DEGRADED_NAME: &str = "Degraded";
/// `meridio-2.nordix.org/ConfigurationApplied`: the full type under the default
/// [`Settings::condition_domain`], for comparing with a Gateway's conditions when the
/// domain is the default one (otherwise [`ConditionTypes::configuration_applied`]).
pub const DEFAULT_CONFIGURATION_APPLIED: &str = "meridio-2.nordix.org/ConfigurationApplied";
/// `meridio-2.nordix.org/Degraded`: the full type under the default
/// [`Settings::condition_domain`] (otherwise [`ConditionTypes::degraded`]).
pub const DEFAULT_DEGRADED: &str = "meridio-2.nordix.org/Degraded";
/// Condition status values.
pub mod status {
    /// The condition holds.
    pub const TRUE: &str = "True";
    /// The condition does not hold.
    pub const FALSE: &str = "False";
    /// Not known (yet).
    pub const UNKNOWN: &str = "Unknown";
}

/// Every reason the crate writes.
pub mod reason {
    /// `Accepted=True`.
    pub const ACCEPTED: &str = "Accepted";
    /// `Accepted=Unknown` (waiting for a controller); `Programmed`/`ConfigurationApplied`
    /// False while a write is retried at once.
    pub const PENDING: &str = "Pending";
    /// `Accepted`/`ConfigurationApplied` False: the parameters are invalid.
    pub const INVALID_PARAMETERS: &str = "InvalidParameters";
    /// `Programmed=True`.
    pub const PROGRAMMED: &str = "Programmed";
    /// `Programmed=False`: the Gateway cannot be programmed as it is.
    pub const INVALID: &str = "Invalid";
    /// `ConfigurationApplied=True`.
    pub const APPLIED: &str = "Applied";
    /// `ConfigurationApplied=False`: a transient write failure, retried with backoff.
    pub const APPLY_FAILED: &str = "ApplyFailed";
    /// `ConfigurationApplied`/`Degraded`: the API rejected the write for good.
    pub const APPLY_REJECTED: &str = "ApplyRejected";
    /// `Degraded=True`: transient failures have lasted `degradedAfter`.
    pub const APPLY_FAILING: &str = "ApplyFailing";
    /// `Degraded=True`: the Deployment's rollout exceeded its progress deadline.
    pub const ROLLOUT_STALLED: &str = "RolloutStalled";
    /// `Accepted`/`ConfigurationApplied` False: the Gateway has `spec.addresses`, which
    /// cannot be honoured (SPEC revision 5).
    pub const UNSUPPORTED_ADDRESS: &str = "UnsupportedAddress";
    /// `Accepted`/`ConfigurationApplied` False: no listener is accepted (SPEC revision 5).
    pub const LISTENERS_NOT_VALID: &str = "ListenersNotValid";
    /// A listener's `Accepted=False`: its protocol is not one the LB carries.
    pub const UNSUPPORTED_PROTOCOL: &str = "UnsupportedProtocol";
    /// A listener's `ResolvedRefs=True`.
    pub const RESOLVED_REFS: &str = "ResolvedRefs";
    /// A listener's `ResolvedRefs=False`: `allowedRoutes.kinds` names a kind other than
    /// L34Route.
    pub const INVALID_ROUTE_KINDS: &str = "InvalidRouteKinds";
}

/// The literal messages of a listener's conditions (SPEC revision 5).
pub mod listener_message {
    /// `Accepted=True`.
    pub const ACCEPTED: &str = "Listener accepted";
    /// `ResolvedRefs=True`.
    pub const RESOLVED_REFS: &str = "Listener references resolved";
    /// `Programmed=True`.
    pub const PROGRAMMED: &str = "Listener programmed";
    /// `Programmed=False/Invalid`: the listener is not accepted.
    pub const NOT_ACCEPTED: &str = "listener not accepted";
    /// `Programmed=False` with the Gateway's reason: the Gateway is not programmed.
    pub const GATEWAY_NOT_PROGRAMMED: &str = "Gateway not programmed";
}

/// The reasons of the Events that are not a condition's reason (see [`events`](crate::events)).
pub mod event_reason {
    /// Warning: `D/Degraded` appeared.
    pub const DEGRADED: &str = "Degraded";
    /// Normal: `D/Degraded` went away.
    pub const RECOVERED: &str = "Recovered";
    /// Warning: the API server changed the LB Deployment inside the crate's own write
    /// (mutating admission).
    pub const ADMISSION_CHANGED: &str = "AdmissionChanged";
}

/// The `Accepted=Unknown` message written when the Gateway is handed to another controller.
pub const WAITING_FOR_CONTROLLER: &str = "Waiting for controller";

/// The CRD's limit on `status.conditions`.
pub const MAX_CONDITIONS: usize = 8;
/// The API's limit on a condition message (characters).
pub const MAX_MESSAGE: usize = 32768;

/// The four condition types for one [`Settings::condition_domain`]: the one way to name
/// them. Two of them carry the domain (`D/ConfigurationApplied`, `D/Degraded`), so the
/// bare name parts ([`CONFIGURATION_APPLIED_NAME`], [`DEGRADED_NAME`]) find nothing in a
/// Gateway's `status.conditions`; the fields here and [`ConditionTypes::find`] do.
///
/// ```
/// use gateway_reconcile::conditions::{Condition, ConditionKind, ConditionTypes};
///
/// let types = ConditionTypes::new(&Default::default()).unwrap();
/// assert_eq!(types.degraded, "meridio-2.nordix.org/Degraded");
/// let conditions: Vec<Condition> = serde_json::from_value(serde_json::json!([
///     {"type": "meridio-2.nordix.org/Degraded", "status": "True", "reason": "ApplyFailing",
///      "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}
/// ])).unwrap();
/// let degraded = types.find(&conditions, ConditionKind::Degraded).unwrap();
/// assert_eq!(degraded.reason, "ApplyFailing");
/// assert!(types.find(&conditions, ConditionKind::Programmed).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionTypes {
    /// `Accepted` (the Gateway API's own type, without a domain).
    pub accepted: String,
    /// `Programmed` (the Gateway API's own type, without a domain).
    pub programmed: String,
    /// `D/ConfigurationApplied`.
    pub configuration_applied: String,
    /// `D/Degraded`.
    pub degraded: String,
}

/// One of the four condition types the crate owns, independent of the domain; its type
/// string is [`ConditionTypes::type_of`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConditionKind {
    /// `Accepted`.
    Accepted,
    /// `Programmed`.
    Programmed,
    /// `D/ConfigurationApplied`.
    ConfigurationApplied,
    /// `D/Degraded`.
    Degraded,
}

impl ConditionKind {
    /// The four kinds, in the order the crate writes them.
    pub const ALL: [ConditionKind; 4] = [
        ConditionKind::Accepted,
        ConditionKind::Programmed,
        ConditionKind::ConfigurationApplied,
        ConditionKind::Degraded,
    ];
}

impl ConditionTypes {
    /// The types for these settings; fails when the domain makes an invalid condition type.
    ///
    /// ```
    /// let types = gateway_reconcile::conditions::ConditionTypes::new(&Default::default()).unwrap();
    /// assert_eq!(types.degraded, "meridio-2.nordix.org/Degraded");
    /// assert_eq!(types.accepted, "Accepted");
    /// ```
    pub fn new(settings: &Settings) -> Result<Self, InputError> {
        let domain = settings.condition_domain.as_str();
        if !is_dns_subdomain(domain) {
            return Err(InputError::InvalidSetting {
                field: "conditionDomain",
                why: not_a_subdomain(domain),
            });
        }
        Ok(ConditionTypes::of_valid(settings))
    }

    /// The types for settings already validated ([`Settings::validate`] checks the domain).
    pub(crate) fn of_valid(settings: &Settings) -> Self {
        let domain = settings.condition_domain.as_str();
        ConditionTypes {
            accepted: ACCEPTED.to_owned(),
            programmed: PROGRAMMED.to_owned(),
            configuration_applied: format!("{domain}/{CONFIGURATION_APPLIED_NAME}"),
            degraded: format!("{domain}/{DEGRADED_NAME}"),
        }
    }

    /// The full type string of `kind`.
    pub fn type_of(&self, kind: ConditionKind) -> &str {
        match kind {
            ConditionKind::Accepted => &self.accepted,
            ConditionKind::Programmed => &self.programmed,
            ConditionKind::ConfigurationApplied => &self.configuration_applied,
            ConditionKind::Degraded => &self.degraded,
        }
    }

    /// The condition of `kind` in `conditions` (a Gateway's `status.conditions`), if any.
    pub fn find<'c>(
        &self,
        conditions: &'c [Condition],
        kind: ConditionKind,
    ) -> Option<&'c Condition> {
        let type_ = self.type_of(kind);
        conditions.iter().find(|c| c.type_ == type_)
    }

    /// The kind of an owned condition type, `None` for a type the crate does not own.
    pub fn kind_of(&self, type_: &str) -> Option<ConditionKind> {
        ConditionKind::ALL
            .into_iter()
            .find(|&kind| self.type_of(kind) == type_)
    }

    /// True for the four types the crate owns.
    pub fn owns(&self, type_: &str) -> bool {
        self.kind_of(type_).is_some()
    }
}

impl Owned for ConditionTypes {
    /// The four types, ranked as [`ConditionKind::ALL`] lists them.
    fn rank(&self, type_: &str) -> Option<usize> {
        ConditionKind::ALL
            .iter()
            .position(|&kind| self.type_of(kind) == type_)
    }
}

/// The three condition types of a listener entry the crate owns, ranked for the 8-item
/// limit: `Accepted`, `Programmed`, `ResolvedRefs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ListenerTypes;

impl ListenerTypes {
    /// The types, by rank.
    pub(crate) const ALL: [&'static str; 3] = [ACCEPTED, PROGRAMMED, RESOLVED_REFS];
}

impl Owned for ListenerTypes {
    fn rank(&self, type_: &str) -> Option<usize> {
        ListenerTypes::ALL.iter().position(|t| *t == type_)
    }
}

/// What a condition's `lastTransitionTime` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransitionTime {
    /// A time within the supported range.
    At(Timestamp),
    /// An RFC 3339 time the API server accepts but [`Timestamp`] cannot hold (after
    /// 9999-12-30T22:00:00Z): it counts as now, and is kept as written.
    OutOfRange,
    /// Not a time at all (only a hand-written snapshot has one): it counts as now, and is
    /// repaired when the condition is next written.
    Invalid,
}

/// Reads a condition's `lastTransitionTime`.
pub(crate) fn transition_time(text: &str) -> TransitionTime {
    if let Ok(t) = text.parse::<Timestamp>() {
        return TransitionTime::At(t);
    }
    // A date, a time and an offset that only fail as a timestamp are out of its range.
    match jiff::fmt::temporal::Pieces::parse(text) {
        Ok(p)
            if p.time().is_some() && p.offset().is_some() && p.time_zone_annotation().is_none() =>
        {
            TransitionTime::OutOfRange
        }
        _ => TransitionTime::Invalid,
    }
}

/// `now` as a condition timestamp: RFC 3339, UTC, second precision.
pub(crate) fn timestamp(now: Timestamp) -> String {
    Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}

/// True when `reason` passes the API's pattern `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`.
///
/// Public for an embedder that writes conditions of its own beside the crate's (or checks
/// a status in a test, as the kit's invariants do): the API server refuses the whole status
/// write when one condition fails this.
pub fn is_valid_reason(reason: &str) -> bool {
    let b = reason.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    b.len() <= 1024
        && first.is_ascii_alphabetic()
        && (b.len() == 1 || last.is_ascii_alphanumeric() || *last == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'))
}

/// True when `type_` is a valid condition type: a qualified name (optional DNS-subdomain
/// prefix and `/`, then a name of at most 63 characters), at most 316 characters.
///
/// Public for the same reason as [`is_valid_reason`].
pub fn is_valid_type(type_: &str) -> bool {
    if type_.len() > 316 {
        return false;
    }
    let (prefix, name) = match type_.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, type_),
    };
    prefix.is_none_or(is_dns_subdomain) && is_qualified_name_part(name)
}

fn is_qualified_name_part(name: &str) -> bool {
    let b = name.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    b.len() <= 63
        && first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests;
