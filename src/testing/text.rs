//! Stable, human-readable text of a settlement and of a run, for snapshot tests (insta's
//! `assert_snapshot!`): one fact a line, in a fixed order, with nothing that depends on the
//! platform, the process or a hash map's order. Line breaks inside a message are written
//! `\n`, so every fact stays on its line.

use std::fmt::Write as _;

#[cfg(doc)]
use crate::reconcile::DeploymentWrite;
use crate::reconcile::{Decided, Settlement, WriteKind};
use crate::sim::scenario::Entry;
use crate::sim::scenario::describe::{describe_condition_facts, describe_requeue, describe_status};
use crate::wire::Condition;

fn one_line(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

fn condition(out: &mut String, c: &Condition) {
    let _ = writeln!(out, "  {}", describe_condition_facts(c));
    let _ = writeln!(out, "    {}", one_line(&c.message));
}

/// The text of one reconcile: the Deployment action (with its drift), the conditions
/// (status, reason, observedGeneration, lastTransitionTime, message), the addresses, the
/// events and the requeue. `action` and `drift` are those of the write the plan asked for
/// (its [`kind`](DeploymentWrite::kind) and [`drift`](DeploymentWrite::drift), read before
/// the write goes to the client), or [`WriteKind::None`] with the drift the settlement holds
/// back ([`Settlement::held_drift`]) when it asked for none. A reconcile on the crate's
/// [`Driver`](crate::reconcile::Driver) renders its answer with [`decided`].
///
/// ```
/// # use gateway_reconcile::{plan, Plan, Settings, Snapshot, WriteKind, WriteOutcome, template};
/// # use gateway_reconcile::wire::Gateway;
/// use gateway_reconcile::testing::text;
///
/// let gateway: Gateway = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "gw", "namespace": "ns", "uid": "u", "generation": 1},
///     "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}})).unwrap();
/// let template = template::default_template();
/// let now = "2026-01-01T00:00:00Z".parse().unwrap();
/// let settings = Settings::default();
/// let planned = plan(&settings, Snapshot::new(&gateway, &template), now).unwrap();
/// let (action, drift, settlement) = match planned {
///     Plan::Write(pending) => {
///         let (write, awaiting) = pending.into_write();
///         let (action, drift) = (write.kind(), write.drift().to_vec());
///         // `write` goes to the client here, by value.
///         (action, drift, awaiting.settle(WriteOutcome::Applied))
///     }
///     Plan::Settled(settlement) => (WriteKind::None, settlement.held_drift.clone(), settlement),
/// };
/// let text = text::settlement(action, &drift, &settlement);
/// assert!(text.starts_with("action: None\n"));
/// assert!(text.contains("requeue: "));
/// ```
pub fn settlement(action: WriteKind, drift: &[String], settlement: &Settlement) -> String {
    let mut out = String::new();
    match (action, drift.is_empty()) {
        (_, true) => {
            let _ = writeln!(out, "action: {action}");
        }
        (WriteKind::None, false) => {
            let _ = writeln!(out, "action: None (drift held back: {})", drift.join(", "));
        }
        (_, false) => {
            let _ = writeln!(out, "action: {action} (drift: {})", drift.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "status: {}",
        describe_status(settlement.status.is_some())
    );
    match &settlement.status {
        None => {}
        Some(status) => {
            out.push_str("conditions:\n");
            for c in &status.conditions {
                condition(&mut out, c);
            }
            if status.addresses.is_empty() {
                out.push_str("addresses: none\n");
            } else {
                let values: Vec<String> = status
                    .addresses
                    .iter()
                    .map(|a| match &a.type_ {
                        Some(t) => format!("{t} {}", a.value),
                        None => a.value.clone(),
                    })
                    .collect();
                let _ = writeln!(out, "addresses: {}", values.join(", "));
            }
        }
    }
    if settlement.events.is_empty() {
        out.push_str("events: none\n");
    }
    for e in &settlement.events {
        let _ = writeln!(
            out,
            "event: {:?} {}: {}",
            e.type_,
            e.reason,
            one_line(&e.message)
        );
    }
    let _ = writeln!(out, "requeue: {}", describe_requeue(settlement.requeue));
    out
}

/// The text of one reconcile a [`Driver`](crate::reconcile::Driver) ran: [`settlement`]
/// of its action, drift and settlement.
///
/// ```
/// use gateway_reconcile::reconcile::{Driver, ready};
/// use gateway_reconcile::testing::{strategies, text};
///
/// let mut cluster = strategies::cluster().unwrap();
/// let driver = Driver::new(strategies::settings());
/// let reconciled = ready(driver.reconcile(&mut cluster.port(), strategies::start()))
///     .unwrap()
///     .unwrap();
/// let text = text::decided(&reconciled.decided.unwrap());
/// assert!(text.starts_with("action: Create\n"));
/// ```
pub fn decided(decided: &Decided) -> String {
    settlement(decided.action, &decided.drift, &decided.settlement)
}

/// The timeline of a run, as the `simulate` command prints it: one [`Entry`] after the
/// other, separated by newlines, ending with a newline.
pub fn timeline(entries: &[Entry]) -> String {
    let mut out = String::new();
    for entry in entries {
        let _ = writeln!(out, "{entry}");
    }
    out
}
