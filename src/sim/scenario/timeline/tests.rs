//! The timeline text `simulate` prints.

use super::{Effect, Entry, Report};
use crate::sim::scenario::checks::Failure;
use crate::sim::scenario::checks::tests::record;

#[test]
fn timeline_text_shows_action_write_status_conditions_and_requeue() {
    let entry = Entry {
        step: 7,
        time: "2026-01-01T00:01:00Z".parse().unwrap(),
        note: Some("why".into()),
        effect: Effect::Reconciled(Box::new(record())),
    };
    let text = entry.to_string();
    for line in [
        "step  7  2026-01-01T00:01:00Z  reconcile",
        "note: why",
        "action: Update (drift: spec.replicas)",
        "write: 503 ServiceUnavailable: etcd",
        "status: written",
        "Programmed = True/Programmed (generation 1, since 2026-01-01T00:00:00Z): LB Deployment",
        "addresses: 20.0.0.1",
        "event: Warning ApplyFailed: update failed",
        "requeue: after 1s",
    ] {
        assert!(text.contains(line), "{line:?} not in\n{text}");
    }
    let report = Report {
        description: "demo".into(),
        timeline: vec![entry],
        failures: vec![Failure {
            step: 7,
            what: "action".into(),
            expected: "None".into(),
            actual: "Update".into(),
        }],
        deployment_writes: 1,
        status_writes: 1,
        skipped: None,
    };
    assert!(!report.passed());
    let text = report.to_string();
    assert!(text.starts_with("demo\n"), "{text}");
    assert!(
        text.contains("1 Deployment writes, 1 status writes"),
        "{text}"
    );
    assert!(
        text.ends_with("step 7: action: expected None, found Update"),
        "{text}"
    );
}
