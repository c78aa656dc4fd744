//! The Gateway's `status.listeners` (SPEC revision 5): one entry per listener, in spec
//! order, with the route kinds it supports, how many routes attach through it, and its
//! `Accepted`, `Programmed` and `ResolvedRefs` conditions.
//!
//! The rules are public documentation: the section "Listeners" of [`crate::reconcile`]. A
//! change here changes that text. Which routes a listener admits is
//! [`lookup`](crate::lookup)'s, shared with the addresses.

use std::borrow::Cow;
use std::collections::BTreeSet;

use jiff::Timestamp;

use crate::conditions::{
    ACCEPTED, Change, Condition, ListenerTypes, PROGRAMMED, RESOLVED_REFS, Wanted,
    listener_message, merge_changed, reason, status,
};
use crate::lookup::{
    self, GATEWAY_API_GROUP, MAX_LISTENERS, ROUTE_GROUP, ROUTE_KIND, SUPPORTED_PROTOCOLS,
    listener_accepted,
};
use crate::wire::{Gateway, Listener, ListenerStatus, RouteGroupKind};

/// The Gateway's `Programmed` after this reconcile, as the listeners' own `Programmed`
/// follows it: its status and reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GatewayProgrammed<'a> {
    pub status: &'a str,
    pub reason: &'a str,
}

/// The Gateway's `status.listeners` after this reconcile, or `None` when it equals the
/// observed one. One entry per listener of `spec.listeners` in spec order (the first of
/// each name, at most [`MAX_LISTENERS`]: the CRD's bounds), each matched to the observed
/// entry of its name for the conditions' bookkeeping (foreign conditions kept,
/// `lastTransitionTime` moved only on a status change); entries of listeners no longer in
/// the spec go.
pub(crate) fn listener_status(
    gateway: &Gateway,
    attachment: &[u64],
    programmed: GatewayProgrammed<'_>,
    generation: i64,
    now: Timestamp,
) -> Option<Vec<ListenerStatus>> {
    let (positions, listeners): (Vec<usize>, Vec<&Listener>) =
        distinct(&gateway.spec.listeners).into_iter().unzip();
    let attached = attached_routes(&positions, attachment);
    let observed = &gateway.status.listeners;
    let no_conditions: &[Condition] = &[];
    // Decided first, compared with the observed entries; copied only when one differs.
    let mut changed = observed.len() != listeners.len();
    let decided: Vec<_> = listeners
        .iter()
        .zip(attached)
        .enumerate()
        .map(|(position, (listener, attached))| {
            let seen = observed.iter().find(|entry| entry.name == listener.name);
            let seen_conditions = seen.map_or(no_conditions, |entry| entry.conditions.as_slice());
            let merged = merge_changed(
                seen_conditions,
                &ListenerTypes,
                &conditions(listener, programmed),
                generation,
                now,
            );
            let supports = supports_routes(listener);
            let attached_routes = i32::try_from(attached).unwrap_or(i32::MAX);
            changed |= merged.is_some()
                || observed.get(position).is_none_or(|entry| {
                    entry.name != listener.name
                        || !is_supported_kinds(&entry.supported_kinds, supports)
                        || entry.attached_routes != attached_routes
                });
            (merged, seen_conditions, supports, attached_routes)
        })
        .collect();
    if !changed {
        return None;
    }
    let entries = listeners
        .iter()
        .zip(decided)
        .map(
            |(listener, (merged, seen, supports, attached_routes))| ListenerStatus {
                name: listener.name.clone(),
                supported_kinds: supported_kinds(supports),
                attached_routes,
                conditions: merged.unwrap_or_else(|| seen.to_vec()),
            },
        )
        .collect();
    Some(entries)
}

/// The listeners that get an entry, with their position in the spec: the first of each
/// name, at most [`MAX_LISTENERS`].
fn distinct(listeners: &[Listener]) -> Vec<(usize, &Listener)> {
    let mut names = BTreeSet::new();
    listeners
        .iter()
        .enumerate()
        .filter(|(_, listener)| names.insert(listener.name.as_str()))
        .take(MAX_LISTENERS)
        .collect()
}

/// How many routes attach through each listener (at `positions` in the spec), read from
/// the reconcile's [`attachment`](crate::addresses::attachment): a route whose `parentRef`
/// names the Gateway with this listener's `sectionName`, or none, and which the listener
/// admits ([`lookup::route_attaches`]'s rule, listener by listener). A route counts whether
/// or not its CIDRs give an address; a route over its CRD's bounds attaches nowhere, as for
/// the addresses. A listener past the 64 the attachment tells apart (only a hand-written
/// Gateway over the CRD's bound, with repeated names) counts none.
fn attached_routes(positions: &[usize], attachment: &[u64]) -> Vec<usize> {
    let mut by_position = [0usize; MAX_LISTENERS];
    for bits in attachment {
        let mut bits = *bits;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            if let Some(count) = by_position.get_mut(i) {
                *count += 1;
            }
            bits &= bits - 1;
        }
    }
    positions
        .iter()
        .map(|at| by_position.get(*at).copied().unwrap_or(0))
        .collect()
}

/// Whether the listener takes L34Routes: accepted, and its `allowedRoutes.kinds` admits
/// them.
fn supports_routes(listener: &Listener) -> bool {
    listener_accepted(listener) && lookup::kinds_admit_routes(listener)
}

/// `[{meridio-2.nordix.org, L34Route}]` when the listener takes L34Routes; `[]`
/// otherwise.
fn supported_kinds(supports: bool) -> Vec<RouteGroupKind> {
    if supports {
        vec![RouteGroupKind {
            group: Some(ROUTE_GROUP.to_owned()),
            kind: ROUTE_KIND.to_owned(),
        }]
    } else {
        Vec::new()
    }
}

/// Whether `kinds` is what [`supported_kinds`] gives, without building it.
fn is_supported_kinds(kinds: &[RouteGroupKind], supports: bool) -> bool {
    match kinds {
        [] => !supports,
        [only] => supports && only.kind == ROUTE_KIND && only.group.as_deref() == Some(ROUTE_GROUP),
        _ => false,
    }
}

/// The listener's three conditions, in the order a new entry lists them.
fn conditions(
    listener: &Listener,
    programmed: GatewayProgrammed<'_>,
) -> [(&'static str, Change); 3] {
    let accepted = listener_accepted(listener);
    let set = |status, reason, message: Cow<'static, str>| {
        Change::Set(Wanted::new(status, reason, message))
    };
    let accepted_condition = if accepted {
        set(
            status::TRUE,
            reason::ACCEPTED,
            listener_message::ACCEPTED.into(),
        )
    } else {
        set(
            status::FALSE,
            reason::UNSUPPORTED_PROTOCOL,
            format!(
                "protocol {:?} is not supported (supported: {})",
                listener.protocol.chars().take(300).collect::<String>(),
                SUPPORTED_PROTOCOLS.join(", ")
            )
            .into(),
        )
    };
    let programmed_condition = match (accepted, programmed.status == status::TRUE) {
        (false, _) => set(
            status::FALSE,
            reason::INVALID,
            listener_message::NOT_ACCEPTED.into(),
        ),
        (true, true) => set(
            status::TRUE,
            reason::PROGRAMMED,
            listener_message::PROGRAMMED.into(),
        ),
        (true, false) => Change::Set(Wanted {
            status: status::FALSE,
            reason: gateway_reason(programmed.reason),
            message: listener_message::GATEWAY_NOT_PROGRAMMED.into(),
        }),
    };
    [
        (ACCEPTED, accepted_condition),
        (PROGRAMMED, programmed_condition),
        (RESOLVED_REFS, resolved_refs(listener)),
    ]
}

/// The Gateway's `Programmed` reason as a listener's: one of the crate's own (the Gateway's
/// `Programmed` is the crate's), `Pending` should it be another.
fn gateway_reason(gateway: &str) -> &'static str {
    [reason::PENDING, reason::INVALID, reason::PROGRAMMED]
        .into_iter()
        .find(|known| *known == gateway)
        .unwrap_or(reason::PENDING)
}

/// `ResolvedRefs`: `False`/`InvalidRouteKinds` naming each kind other than L34Route once,
/// in the order of its first entry; `True` otherwise.
fn resolved_refs(listener: &Listener) -> Change {
    let kinds = listener
        .allowed_routes
        .as_ref()
        .map_or(&[][..], |a| a.kinds.as_slice());
    let mut seen = BTreeSet::new();
    let unsupported: Vec<String> = kinds
        .iter()
        .filter(|kind| !lookup::is_route_kind(kind))
        .map(|kind| {
            let group = kind.group.as_deref().unwrap_or(GATEWAY_API_GROUP);
            format!("{group}/{}", kind.kind)
        })
        .filter(|named| seen.insert(named.clone()))
        .collect();
    if unsupported.is_empty() {
        return Change::Set(Wanted::new(
            status::TRUE,
            reason::RESOLVED_REFS,
            listener_message::RESOLVED_REFS,
        ));
    }
    Change::Set(Wanted::new(
        status::FALSE,
        reason::INVALID_ROUTE_KINDS,
        format!(
            "route kinds not supported: {} (supported: {ROUTE_GROUP}/{ROUTE_KIND})",
            unsupported.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests;
