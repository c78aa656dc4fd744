//! Desired-state sequences on the real server (issue #42 item 4): the kit's
//! `testing::sequences` run through the replay backend, as the kit's fault schedules are
//! (`schedules_on_the_real_server`).

use super::schedules;
use super::schedules::Verdict;
use crate::{SCHEDULE_TIMEOUT, env_number, first_seed, on_real, world};

/// Desired-state sequences (Acto's method, the kit's `testing::sequences`) on the real
/// server: `REAL_SEQUENCES` sequences of 10 valid edits (2 by default, as `e2e/run.sh` runs
/// it) from seed `REAL_SEQUENCE_SEED` on (the clock's by default; every seed is printed),
/// each edit followed by convergence and the oracle: the crate's plan on the objects the
/// server holds asks for no write and no status change. The same sequences pass on the
/// simulator (`tests/sequences.rs` in the core crate).
#[test]
#[ignore = "needs a control plane: e2e/run.sh"]
fn desired_state_sequences_on_the_real_server() {
    let world = world();
    let count = env_number("REAL_SEQUENCES", 2);
    let first = first_seed("REAL_SEQUENCE_SEED");
    let started = std::time::Instant::now();
    let (mut passed, mut reconciles, mut skipped, mut failed) = (0, 0, Vec::new(), Vec::new());
    for seed in first..first.saturating_add(count) {
        let edits = schedules::sequence_of(seed, 10);
        let began = std::time::Instant::now();
        let (verdict, report) = on_real(
            &world,
            {
                let edits = edits.clone();
                move |backend| {
                    let (verdict, mut looped, report) = schedules::run_sequence(backend, &edits);
                    looped.inner.clean_up();
                    (verdict, report)
                }
            },
            (
                Verdict::Failed(format!("no end within {} s", SCHEDULE_TIMEOUT.as_secs())),
                None,
            ),
        );
        let described: Vec<String> = edits.iter().map(|e| e.describe()).collect();
        println!(
            "sequence seed {seed}: {:.1} s, {report:?}: {verdict:?}\n  {}",
            began.elapsed().as_secs_f64(),
            described.join("; ")
        );
        match verdict {
            Verdict::Passed => {
                passed += 1;
                reconciles += report.map_or(0, |r| r.reconciles);
            }
            Verdict::Skipped(why) => skipped.push((seed, why)),
            Verdict::Failed(why) => failed.push((seed, why)),
        }
    }
    println!(
        "{count} sequences of 10 edits from seed {first}: {passed} passed ({reconciles} reconciles), {} skipped, {} failed; {:.0} s",
        skipped.len(),
        failed.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failed.is_empty(), "failed sequences: {failed:#?}");
    assert!(passed > 0 || count == 0, "no sequence passed: {skipped:#?}");
}
