//! An embedder's snapshot test of the condition output through a fault schedule.
//!
//! In a controller's own crate this is a test (`#[test]`, with
//! `insta::assert_snapshot!(run.text())`); here it is an example that prints the text the
//! snapshot would hold, so it runs without insta:
//!
//! ```text
//! cargo run --example embedder_snapshot --features testing
//! ```

use gateway_reconcile::testing::strategies::{self, Op};
use gateway_reconcile::testing::{Run, text};
use gateway_reconcile::{Plan, WriteOutcome};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The controller's own settings go here; the kit's cluster holds a Gateway, its class,
    // a valid GatewayConfiguration and a route.
    let mut run = Run::new(strategies::cluster()?)?;
    // A rollout, then an edit whose updates time out until Degraded appears, then recovery.
    let schedule = [
        Op::Reconcile,
        Op::Rollout(0),
        Op::Reconcile,
        Op::ConfigurationEdit(2),
        Op::Fail(4, 10),
        Op::Reconcile,
        Op::Advance(130),
        Op::Reconcile,
        Op::Fail(4, 0),
        Op::Reconcile,
    ];
    for op in &schedule {
        // Every reconcile is checked against the invariants as it runs.
        run.apply(op)?;
    }
    let text = run.text();
    // The snapshot: `insta::assert_snapshot!(text);` in a test.
    print!("{text}");
    assert!(text.contains("Degraded = True/ApplyFailing"));
    assert!(text.contains("event: Normal Recovered"));

    // One settlement of the embedder's own loop, rendered the same way.
    let cluster = run.cluster();
    let gateway = serde_json::from_value(cluster.gateway().clone())?;
    let template = cluster.template();
    let deployment = cluster.deployment();
    let class: Option<gateway_reconcile::wire::GatewayClass> = cluster
        .gateway_class()
        .cloned()
        .map(serde_json::from_value)
        .transpose()?;
    let configuration: Option<gateway_reconcile::wire::GatewayConfiguration> = cluster
        .configuration()
        .cloned()
        .map(serde_json::from_value)
        .transpose()?;
    let snapshot = gateway_reconcile::Snapshot::new(&gateway, template)
        .with_gateway_class(class.as_ref())
        .with_configuration(configuration.as_ref())
        .with_deployment(deployment)
        .with_routes(cluster.routes());
    let (write, settlement) =
        match gateway_reconcile::plan(cluster.settings(), snapshot, cluster.now())? {
            Plan::Write(pending) => {
                let (write, awaiting) = pending.into_write();
                (Some(write), awaiting.settle(WriteOutcome::Applied))
            }
            Plan::Settled(settlement) => (None, settlement),
        };
    let text = text::settlement(write.as_ref(), &settlement);
    print!("\n{text}");
    assert!(text.starts_with("action: None\n"));
    Ok(())
}
