//! An embedder's snapshot test of the condition output through a fault schedule.
//!
//! In a controller's own crate this is a test (`#[test]`, with
//! `insta::assert_snapshot!(run.text())`); here it is an example that prints the text the
//! snapshot would hold, so it runs without insta:
//!
//! ```text
//! cargo run --example embedder_snapshot --features testing
//! ```

use gateway_reconcile::reconcile::{Driver, ready};
use gateway_reconcile::testing::strategies::{self, Op, WriteFailure};
use gateway_reconcile::testing::{Run, text};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The controller's own settings go here; the kit's cluster holds a Gateway, its class,
    // a valid GatewayConfiguration and a route.
    let mut run = Run::new(strategies::cluster()?)?;
    // A rollout, then an edit whose updates time out until Degraded appears, then recovery.
    let schedule = [
        Op::Reconcile,
        Op::rollout_complete(),
        Op::Reconcile,
        Op::ConfigurationEdit(2),
        Op::fail(10, WriteFailure::Unavailable),
        Op::Reconcile,
        Op::Advance(130),
        Op::Reconcile,
        Op::stop_failures(),
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

    // One reconcile of the embedder's own loop (the crate's driver over the store's port,
    // after a restart: no write record), rendered the same way.
    let mut cluster = run.cluster().clone();
    let driver = Driver::new(cluster.settings().clone());
    let now = cluster.now();
    let reconciled = ready(driver.reconcile(&mut cluster.port(), now))??;
    let decided = reconciled.decided.ok_or("the port read the Gateway")?;
    let text = text::decided(&decided);
    print!("\n{text}");
    assert!(text.starts_with("action: None\n"));
    Ok(())
}
