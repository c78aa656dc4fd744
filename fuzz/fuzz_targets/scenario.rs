//! Arbitrary bytes as a scenario file: parsed, and when it parses, run (bounded) through the
//! simulated cluster, plan and settle.
#![no_main]

use gateway_reconcile::sim::scenario::Scenario;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(scenario) = Scenario::from_json(text) else { return };
    // Keep runs short: a scenario file is at most a few dozen steps in practice.
    if scenario.steps.len() <= 64 {
        let _ = scenario.run();
    }
});
