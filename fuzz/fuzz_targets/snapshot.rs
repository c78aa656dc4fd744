//! Arbitrary bytes as the snapshot JSON, the settings and the time, through plan and settle
//! with every write outcome.
#![no_main]

use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};
use gateway_reconcile::{Plan, Settings, Snapshot, WriteOutcome, plan, template};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Split the input on NUL bytes: gateway, class, configuration, deployment, routes,
    // template, settings, now.
    let mut parts = data.split(|b| *b == 0);
    let mut next = || parts.next().unwrap_or(b"");
    let Ok(gateway) = serde_json::from_slice::<Gateway>(next()) else { return };
    let class = serde_json::from_slice::<GatewayClass>(next()).ok();
    let configuration = serde_json::from_slice::<GatewayConfiguration>(next()).ok();
    let deployment = serde_json::from_slice::<Deployment>(next()).ok();
    let routes = serde_json::from_slice::<Vec<L34Route>>(next()).unwrap_or_default();
    let template = serde_json::from_slice::<Deployment>(next()).unwrap_or_else(|_| template::default_template());
    let settings = serde_json::from_slice::<Settings>(next()).unwrap_or_default();
    let now = now(next());
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
    for outcome in &outcomes {
        let snapshot = Snapshot::new(&gateway, &template)
            .with_gateway_class(class.as_ref())
            .with_configuration(configuration.as_ref())
            .with_deployment(deployment.as_ref())
            .with_routes(&routes);
        // `None`: only a plan with nothing to write is settled.
        let s = match (plan(&settings, snapshot, now), outcome) {
            (Ok(Plan::Write(pending)), Some(outcome)) => pending.settle(outcome.clone()),
            (Ok(Plan::Settled(s)), _) => s,
            _ => continue,
        };
        let _ = s.status_patch();
    }
});

/// `now` from its part: RFC 3339 text, or else its bytes as seconds and nanoseconds folded
/// into the representable range (so both ends are reached).
fn now(part: &[u8]) -> jiff::Timestamp {
    if let Some(t) = std::str::from_utf8(part).ok().and_then(|s| s.parse().ok()) {
        return t;
    }
    let mut bytes = [0u8; 12];
    for (b, p) in bytes.iter_mut().zip(part) {
        *b = *p;
    }
    let [s @ .., n0, n1, n2, n3] = bytes;
    let (min, max) = (jiff::Timestamp::MIN.as_second(), jiff::Timestamp::MAX.as_second());
    let span = (max - min) as u64 + 1;
    let seconds = min + (u64::from_le_bytes(s) % span) as i64;
    let nanos = (u32::from_le_bytes([n0, n1, n2, n3]) % 1_000_000_000) as i32;
    jiff::Timestamp::new(seconds, nanos).unwrap_or(jiff::Timestamp::MAX)
}
