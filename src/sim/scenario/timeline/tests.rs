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
        "Programmed = True/Programmed (observedGeneration 1, since 2026-01-01T00:00:00Z): LB Deployment",
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

/// The two text renderers (this timeline and the test kit's `text::settlement`) word the
/// same facts of one reconcile the same way.
#[cfg(feature = "testing")]
#[test]
fn the_timeline_and_the_kit_word_the_same_facts_alike() {
    use crate::reconcile::{Requeue, Settlement};
    use crate::testing::text;
    use crate::wire::GatewayStatus;

    for (written, awaiting) in [(true, false), (false, true)] {
        let mut record = record();
        record.status_written = written;
        record.events.clear();
        if awaiting {
            record.requeue = Requeue::AwaitChange;
        }
        let status = written.then(|| GatewayStatus {
            conditions: record.conditions.clone(),
            ..GatewayStatus::default()
        });
        if !written {
            // The timeline lists the conditions the Gateway has; the kit only those it writes.
            record.conditions.clear();
        }
        let settlement = Settlement::new(status, record.requeue);
        let kit = text::settlement(crate::WriteKind::None, &[], &settlement);
        let timeline = Entry {
            step: 1,
            time: record.time,
            note: None,
            effect: Effect::Reconciled(Box::new(record)),
        }
        .to_string();
        let lines = |text: &str| -> Vec<String> {
            text.lines()
                .map(|l| l.trim().to_owned())
                .filter(|l| {
                    l.starts_with("status:")
                        || l.starts_with("requeue:")
                        || l.starts_with("Programmed =")
                })
                .map(|l| l.split(": LB").next().unwrap_or(&l).to_owned())
                .collect()
        };
        assert_eq!(
            lines(&kit),
            lines(&timeline),
            "kit:\n{kit}\ntimeline:\n{timeline}"
        );
        assert_eq!(lines(&kit).len(), if written { 3 } else { 2 });
    }
}
