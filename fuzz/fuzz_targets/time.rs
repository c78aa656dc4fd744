//! Structured times and settings through plan and settle: `now` anywhere in the representable
//! range, any `degradedAfter` and `resync` (valid or not), and owned conditions whose
//! `lastTransitionTime` is near `now`, at an end of the range, past it, or not a time. Nothing
//! may panic, and a requeue is never a zero wait.
#![no_main]

use std::time::Duration;

use arbitrary::Arbitrary;
use gateway_reconcile::wire::{Condition, Deployment, Gateway, GatewayClass, GatewayConfiguration};
use gateway_reconcile::{DeploymentWrite, Plan, Requeue, Settings, Snapshot, WriteOutcome, plan, template};
use jiff::{SignedDuration, Timestamp};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

#[derive(Debug, Arbitrary)]
struct Input {
    now: (i64, u32),
    degraded_after: (u64, u32),
    resync: Option<(u64, u32)>,
    generation_in_programmed_message: bool,
    conditions: Vec<(u8, u8, When)>,
    configuration_generation: u8,
    deployment_generation: Option<u8>,
    stalled: bool,
    outcome: u8,
}

/// A `lastTransitionTime`.
#[derive(Debug, Arbitrary)]
enum When {
    /// `now` plus this many seconds.
    Offset(i64),
    /// Seconds and nanoseconds since the epoch.
    Absolute(i64, u32),
    /// Past the supported range, as the API server would accept it.
    PastTheEnd,
    /// Free text.
    Text(String),
}

const TYPES: [&str; 5] = [
    "Accepted",
    "Programmed",
    "meridio-2.nordix.org/ConfigurationApplied",
    "meridio-2.nordix.org/Degraded",
    "example.com/Foreign",
];
const STATUSES: [&str; 3] = ["True", "False", "Unknown"];

fn time(seconds: i64, nanos: u32) -> Timestamp {
    let (min, max) = (Timestamp::MIN.as_second(), Timestamp::MAX.as_second());
    let s = seconds.rem_euclid(max - min + 1) + min;
    Timestamp::new(s, (nanos % 1_000_000_000) as i32).unwrap_or(Timestamp::MAX)
}

fn duration((s, n): (u64, u32)) -> Duration {
    // Small values are the interesting ones, with the full range now and then.
    let s = if s % 4 == 0 { s } else { s % 1000 };
    Duration::new(s, n % 1_000_000_000)
}

fn text(when: &When, now: Timestamp) -> String {
    match when {
        When::Offset(d) => now
            .checked_add(SignedDuration::from_secs(*d))
            .map_or_else(|_| "9999-12-31T23:59:59Z".to_owned(), |t| t.to_string()),
        When::Absolute(s, n) => time(*s, *n).to_string(),
        When::PastTheEnd => "9999-12-31T23:59:59Z".to_owned(),
        When::Text(t) => t.clone(),
    }
}

fuzz_target!(|input: Input| {
    let now = time(input.now.0, input.now.1);
    let settings = Settings {
        degraded_after: duration(input.degraded_after),
        resync: input.resync.map(duration),
        generation_in_programmed_message: input.generation_in_programmed_message,
        ..Settings::default()
    };
    let conditions: Vec<Condition> = input
        .conditions
        .iter()
        .take(10)
        .map(|(t, s, when)| Condition {
            type_: TYPES[*t as usize % TYPES.len()].to_owned(),
            status: STATUSES[*s as usize % STATUSES.len()].to_owned(),
            observed_generation: Some(1),
            last_transition_time: text(when, now),
            reason: "R".to_owned(),
            message: "m".to_owned(),
        })
        .collect();
    let Ok(gateway) = serde_json::from_value::<Gateway>(json!({
        "metadata": {"name": "gw", "namespace": "ns", "uid": "u", "generation": 1},
        "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
            "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}},
        "status": {"conditions": conditions}
    })) else {
        return;
    };
    let class: GatewayClass = serde_json::from_value(json!({
        "metadata": {"name": "c"}, "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
    }))
    .unwrap();
    let configuration: GatewayConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "conf", "namespace": "ns", "generation": input.configuration_generation},
        "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}
    }))
    .unwrap();
    let template = template::default_template();
    // An observed Deployment, when asked for: the one a create would write, carrying some
    // generation, its rollout stalled or not.
    let defaults = Settings::default();
    let deployment = input.deployment_generation.and_then(|g| {
        let snapshot = Snapshot::new(&gateway, &template)
            .with_gateway_class(Some(&class))
            .with_configuration(Some(&configuration));
        let Ok(p) = plan(&defaults, snapshot, now) else { return None };
        let Some(DeploymentWrite::Create(d)) = p.write() else { return None };
        let mut d = d.clone();
        d.object["metadata"]["annotations"]["meridio-2.nordix.org/gatewayconfiguration-generation"] =
            g.to_string().into();
        d.object["metadata"]["generation"] = 1.into();
        if input.stalled {
            d.object.insert("status", json!({"observedGeneration": 1, "conditions": [{
                "type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                "lastTransitionTime": now.to_string()}]}).into());
        }
        Some::<Deployment>(d)
    });
    let outcomes = [
        None,
        Some(WriteOutcome::Applied),
        Some(WriteOutcome::from_parts(Some(409), "Conflict", "c")),
        Some(WriteOutcome::from_parts(Some(409), "AlreadyExists", "a")),
        Some(WriteOutcome::from_parts(Some(404), "NotFound", "n")),
        Some(WriteOutcome::from_parts(Some(422), "Invalid", "i")),
        Some(WriteOutcome::from_parts(Some(503), "ServiceUnavailable", "s")),
        Some(WriteOutcome::from_parts(None, "", "t")),
    ];
    let outcome = &outcomes[input.outcome as usize % outcomes.len()];
    let snapshot = Snapshot::new(&gateway, &template)
        .with_gateway_class(Some(&class))
        .with_configuration(Some(&configuration))
        .with_deployment(deployment.as_ref());
    let Ok(p) = plan(&settings, snapshot, now) else {
        // Only invalid settings may refuse this snapshot.
        assert!(settings.validate().is_err());
        return;
    };
    // `None`: only a plan with nothing to write is settled.
    let s = match (p, outcome) {
        (Plan::Write(pending), Some(outcome)) => pending.settle(outcome.clone()),
        (Plan::Settled(s), _) => s,
        _ => return,
    };
    if let Requeue::After(d) = s.requeue {
        assert!(!d.is_zero(), "a zero wait is a hot loop");
    }
    let _ = s.status_patch();
});
