//! Running scenarios on a backend: steps that fail, steps a backend cannot reproduce.

use jiff::Timestamp;
use serde_json::json;

use super::Scenario;

#[test]
fn steps_that_cannot_run_are_failures_and_the_run_goes_on() {
    let doc = json!({
        "objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}, "template": {}},
        "steps": [{"rollout": "complete"}, {"delete": "configuration"}, {"advance": "1m"}]
    });
    let report = Scenario::from_value(&doc).unwrap().run();
    assert_eq!(report.failures.len(), 2);
    assert_eq!(report.failures[0].step, 1);
    assert_eq!(report.failures[0].what, "rollout");
    assert_eq!(
        report.failures[0].actual,
        "cannot roll out: there is no deployment"
    );
    assert_eq!(report.failures[1].step, 2);
    assert_eq!(report.timeline.len(), 3);
    assert_eq!(
        report.timeline[2].time,
        "2026-01-01T00:01:00Z".parse::<Timestamp>().unwrap()
    );
}
