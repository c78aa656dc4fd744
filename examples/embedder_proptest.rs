//! An embedder's property test of its own wrapper, with the kit's strategies and invariants.
//!
//! The wrapper here is a stand-in for a controller's own code around the crate: it runs the
//! reconciles and, like a real wrapper might, skips a reconcile while write failures are
//! injected (a circuit breaker). The invariants must hold on whatever it does. In a
//! controller's crate this is a `proptest!` test; here it is an example that runs the same
//! check with proptest's runner:
//!
//! ```text
//! cargo run --example embedder_proptest --features testing
//! ```

use gateway_reconcile::testing::Cluster;
use gateway_reconcile::testing::invariants::{Invariants, Violation};
use gateway_reconcile::testing::schedule;
use gateway_reconcile::testing::strategies::{self, Op};
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// The embedder's wrapper: decides whether to reconcile now.
struct Wrapper {
    breaker_open: bool,
}

impl Wrapper {
    /// One op, through the wrapper; every reconcile it runs is checked.
    fn step(
        &mut self,
        cluster: &mut Cluster,
        check: &mut Invariants,
        op: &Op,
    ) -> Result<(), Violation> {
        let failing = cluster.pending_failures() > 0;
        if *op == Op::Reconcile && self.breaker_open && failing {
            return Ok(());
        }
        self.breaker_open = failing;
        schedule::apply(cluster, check, op).map(|_| ())
    }
}

fn main() {
    let cases = std::env::var("CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(32);
    // No regression file for an example (a test in a crate gets one next to its source).
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::with_cases(cases)
    });
    let result = runner.run(&strategies::schedule(40), |ops| {
        let mut cluster = strategies::cluster().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut check = Invariants::new(&cluster)?;
        let mut wrapper = Wrapper {
            breaker_open: false,
        };
        for op in &ops {
            wrapper.step(&mut cluster, &mut check, op)?;
        }
        schedule::converge(&mut cluster, &mut check)?;
        Ok(())
    });
    match result {
        Ok(()) => println!("{cases} schedules: every invariant held"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
