//! The exhaustive exploration of the kit's bounded models (`testing::explore`), as deep as
//! asked, with what it went through.
//!
//! ```text
//! cargo run --release --example explore --features testing -- one 5
//! cargo run --release --example explore --features testing -- two 4
//! ```
//!
//! `one`: one Gateway on the simulated cluster ([`explore::one_gateway_ops`]); `two`: two
//! Gateways sharing a GatewayConfiguration on the kit's store ([`explore::two_gateway_ops`]).
//! The second argument is the depth (default 3). It prints one line per depth, then the
//! totals and the time, or the counterexample (exit 1).

use std::time::Instant;

use gateway_reconcile::testing::explore::{self, Bounds, Exploration};
use gateway_reconcile::testing::{StoreLoop, strategies};

fn main() {
    let mut args = std::env::args().skip(1);
    let model = args.next().unwrap_or_else(|| "one".into());
    let depth = args.next().and_then(|d| d.parse().ok()).unwrap_or(3);
    let bounds = Bounds::to_depth(depth);
    let started = Instant::now();
    let explored = match model.as_str() {
        "one" => explore::explore(
            strategies::cluster().expect("the kit's cluster"),
            &explore::one_gateway_ops(),
            bounds,
        ),
        "two" => {
            let mut store = strategies::store().expect("the kit's store");
            store
                .add(strategies::objects_of("other"))
                .expect("a second Gateway");
            explore::explore(
                StoreLoop::new(store, ()),
                &explore::two_gateway_ops(),
                bounds,
            )
        }
        other => {
            eprintln!("explore: unknown model {other:?} (one or two)");
            std::process::exit(2);
        }
    };
    match explored {
        Ok(exploration) => report(&model, depth, &exploration, started),
        Err(counterexample) => {
            eprintln!("explore: {counterexample}");
            std::process::exit(1);
        }
    }
}

fn report(model: &str, depth: usize, e: &Exploration, started: Instant) {
    for (level, states) in e.by_depth.iter().enumerate() {
        println!("depth {level}: {states} new states");
    }
    println!(
        "model {model}, depth {depth}: {} states, {} transitions, {} reconciles checked, longest settle {} rounds, {}, {:.1} s",
        e.states,
        e.transitions,
        e.reconciles,
        e.longest_settle,
        if e.complete {
            "complete"
        } else {
            "stopped at the state bound"
        },
        started.elapsed().as_secs_f64()
    );
}
