//! A toy controller tested with the kit, whole: a port wrapper of its own (its metrics) on
//! the crate's `Driver` over the kit's in-memory store, a property test over the kit's random
//! fault schedules, and an insta snapshot of one schedule.
//! `cargo run --example toy_controller --features testing` runs both.

use gateway_reconcile::events::Event;
use gateway_reconcile::jiff::Timestamp;
use gateway_reconcile::reconcile::{Driver, Port, ReconcileError, Reconciled, StatusWrite};
use gateway_reconcile::testing::strategies::{self, Op, WriteFailure};
use gateway_reconcile::testing::{Backend, ClusterError, Reconciler, Run, StoreLoop, StorePort};
use gateway_reconcile::{DeploymentWrite, StatusPatch, WriteKind, WriteOutcome};
use proptest::prelude::*;

/// The controller's port wrapper: counts the Deployment writes it sends.
struct Metered<'m, P>(P, &'m mut u64);

impl<P: Port> Port for Metered<'_, P> {
    type Error = P::Error;
    type Reader = P::Reader;

    fn reader(&mut self) -> &mut P::Reader {
        self.0.reader()
    }
    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        *self.1 += 1;
        self.0.write(write).await
    }
    async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, P::Error> {
        self.0.patch_status(patch).await
    }
    async fn record(&mut self, action: WriteKind, events: &[Event]) {
        self.0.record(action, events).await;
    }
}

/// The toy controller: the crate's driver over its metered port. It schedules the next
/// reconcile at each requeue's deadline (`Reconciler::schedule`'s default).
#[derive(Debug, Default)]
struct Toy {
    writes: u64,
}

impl Reconciler for Toy {
    async fn reconcile(
        &mut self,
        driver: &Driver,
        port: StorePort<'_>,
        now: Timestamp,
    ) -> Result<Reconciled, ReconcileError<ClusterError>> {
        driver
            .reconcile(&mut Metered(port, &mut self.writes), now)
            .await
    }
}

/// The toy on the kit's store: a Gateway of our class with a valid configuration.
fn toy() -> StoreLoop<Toy> {
    StoreLoop::new(strategies::store().unwrap(), Toy::default())
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(32) })]
    // In a test file, `#[test]` goes here.
    fn the_toy_tells_the_truth(ops in strategies::schedule(40)) {
        let mut run = Run::new(toy())?;
        for op in &ops {
            run.apply(op)?; // every reconcile checked against the invariants
        }
        run.converge()?;
        let toy = run.controller();
        prop_assert_eq!(toy.reconciler().writes, toy.write_counts().deployment_writes);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    the_toy_tells_the_truth();
    // An edit whose updates time out: backoff reconciles, then Degraded after 2 minutes.
    let mut run = Run::new(toy())?;
    for op in [
        Op::Reconcile,
        Op::ConfigurationEdit(2),
        Op::fail(10, WriteFailure::Unavailable),
        Op::Reconcile,
        Op::Advance(130),
    ] {
        run.apply(&op)?;
    }
    insta::assert_snapshot!("toy_controller", run.text());
    println!("32 random schedules and the snapshot: the toy tells the truth");
    Ok(())
}
