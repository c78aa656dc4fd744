//! The story the crate exists for, as a snapshot a reviewer reads at a glance: a
//! GatewayConfiguration edit whose Deployment update keeps failing. `Programmed` stays True
//! (the LB serves) but names the generation it carries; `ConfigurationApplied` says the
//! edit has not reached it; `Degraded` appears once the gap has lasted `degradedAfter`
//! (2 minutes here), and all of it clears when the update goes through.
//!
//!     cargo run --example stale_programmed --features testing

use gateway_reconcile::testing::Run;
use gateway_reconcile::testing::strategies::{self, Op, WriteFailure};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut run = Run::new(strategies::cluster()?)?;
    for op in [
        Op::Reconcile,
        Op::rollout_complete(),
        Op::Reconcile,
        Op::ConfigurationEdit(2),
        Op::fail(10, WriteFailure::Unavailable),
        Op::Reconcile,
        Op::advance(130),
        Op::stop_failures(),
        Op::Reconcile,
        Op::rollout_complete(),
        Op::Reconcile,
    ] {
        // Each reconcile is checked against the kit's invariants as it runs.
        run.apply(&op)?;
    }
    // One line per transition; in a test of yours, `insta::assert_snapshot!(run.changes())`.
    insta::assert_snapshot!("stale_programmed", run.changes());
    print!("{}", run.changes());
    Ok(())
}
