//! The kit's watch (issue 42, item 3, the simulator's half): the store's changes become
//! watch events, mapped to wake-ups by the core's wake-up map, each woken Gateway
//! reconciled at once; a resync wakes every Gateway every period; faults lose or coalesce
//! events.
//!
//! - Without faults, an edit wakes exactly the Gateways that read the edited object.
//! - With events lost and coalesced (several seeds and rates), every Gateway converges to
//!   what the crate's own plan says for the final objects, within the resync period after
//!   the last change, with no write loop.
//! - With the resync off, a lost wake-up is never repaired; with it on, it is.
//! - A lost event's object is compared, at its next event, with what the loop last saw.
//! - Every change of the store's objects is an event: a test's add, patch, delete and
//!   rollout, a reconcile's writes and its class status.
//!
//! The longest time to convergence against the resync setting is printed by
//! `longest_convergence_against_the_resync` (run it with `--nocapture`): the table in
//! `docs/reliability.md`, "The kit's watch".
#![cfg(feature = "testing")]

use std::collections::BTreeSet;
use std::time::Duration;

use gateway_reconcile::jiff::{SignedDuration, Timestamp};
use gateway_reconcile::testing::invariants::Invariants;
use gateway_reconcile::testing::strategies::{self, Op};
use gateway_reconcile::testing::{
    Kind, RolloutState, Run, Store, StoreLoop, Watch, WatchKind, sequences,
};
use proptest::prelude::*;
use serde_json::json;

/// The Gateways of the fleet: `gw`, `a` and `b` on the GatewayConfiguration `conf` (`gw`
/// with the route `r`), `c` on `conf-c`, all of the class `meridio`.
const GATEWAYS: [&str; 4] = ["a", "b", "c", "gw"];

/// The fleet's store (see [`GATEWAYS`]).
fn fleet() -> Store {
    let mut store = strategies::store().unwrap();
    for name in ["a", "b"] {
        store.add(strategies::objects_of(name)).unwrap();
    }
    let mut c = strategies::objects_of("c");
    c.gateway["spec"]["infrastructure"]["parametersRef"]["name"] = "conf-c".into();
    if let Some(configuration) = &mut c.configuration {
        configuration["metadata"]["name"] = "conf-c".into();
    }
    store.add(c).unwrap();
    store
}

fn seconds(n: i64) -> SignedDuration {
    SignedDuration::from_secs(n)
}

fn later(toy: &StoreLoop<()>, secs: i64) -> Timestamp {
    toy.store().now().checked_add(seconds(secs)).unwrap()
}

/// The names of the Gateways a run reconciled.
fn names(
    ran: &[(
        (String, String),
        gateway_reconcile::testing::ReconcileReport,
    )],
) -> BTreeSet<String> {
    ran.iter().map(|((_, name), _)| name.clone()).collect()
}

/// The Gateways whose objects the crate's plan would still change (the oracle of
/// [`sequences::settled_by_plan`], each Gateway targeted in turn), with why.
fn unsettled(controller: &mut StoreLoop<()>) -> Vec<String> {
    let invariants = Invariants::new(&*controller).unwrap();
    let mut out = Vec::new();
    for name in GATEWAYS {
        controller.target("ns", name).unwrap();
        if let Err(violation) = sequences::settled_by_plan(&*controller, &invariants, name) {
            out.push(format!("{name}: {}", violation.message));
        }
    }
    controller.target("ns", "gw").unwrap();
    out
}

/// Each Gateway's writes (Deployment and status), in the order of [`GATEWAYS`].
fn writes_of(store: &Store) -> [u64; 4] {
    GATEWAYS.map(|name| {
        let counts = store.write_counts("ns", name);
        counts.deployment_writes + counts.status_writes
    })
}

fn total_writes(store: &Store) -> u64 {
    writes_of(store).iter().sum()
}

/// Runs the fleet to quiet: everything due run, every Deployment rolled out, nothing due
/// after.
fn quiet(toy: &mut StoreLoop<()>) {
    let now = toy.store().now();
    toy.run_due(now).unwrap();
    for name in GATEWAYS {
        toy.store_mut()
            .rollout("ns", name, RolloutState::Complete)
            .unwrap();
    }
    toy.run_due(now).unwrap();
    assert!(toy.run_due(now).unwrap().is_empty(), "the fleet is quiet");
}

#[test]
fn an_edit_wakes_exactly_the_gateways_that_read_the_edited_object() {
    let mut toy = StoreLoop::new(fleet(), ()).with_watch(Watch::new());
    quiet(&mut toy);
    assert!(unsettled(&mut toy).is_empty());

    // The shared configuration: its three Gateways, not `c`.
    let before: Vec<_> = GATEWAYS
        .iter()
        .map(|name| toy.store().write_counts("ns", name))
        .collect();
    let edit = json!({"spec": {"horizontalScaling": {"replicas": 3, "enforceReplicas": true}}});
    toy.store_mut()
        .patch("ns", "a", Kind::Configuration, &edit)
        .unwrap();
    let ran = toy.run_due(later(&toy, 1)).unwrap();
    assert_eq!(
        names(&ran),
        BTreeSet::from(["a".into(), "b".into(), "gw".into()])
    );
    // Each wrote its Deployment and status once, then ran once more on its own writes'
    // echo (the kit filters no echo), and wrote nothing.
    for name in ["a", "b", "gw"] {
        let runs: Vec<_> = ran
            .iter()
            .filter(|(gateway, _)| gateway.1 == name)
            .collect();
        assert_eq!(runs.len(), 2, "{name}: {runs:?}");
    }
    for (name, before) in GATEWAYS.iter().zip(before) {
        let after = toy.store().write_counts("ns", name);
        let wrote = (
            after.deployment_writes - before.deployment_writes,
            after.status_writes - before.status_writes,
        );
        let expected = if *name == "c" { (0, 0) } else { (1, 1) };
        assert_eq!(wrote, expected, "{name}");
    }
    assert!(toy.run_due(toy.store().now()).unwrap().is_empty());

    // `c`'s own configuration: `c` alone.
    let edit = json!({"spec": {"horizontalScaling": {"replicas": 4}}});
    toy.store_mut()
        .patch("ns", "c", Kind::Configuration, &edit)
        .unwrap();
    let ran = toy.run_due(later(&toy, 1)).unwrap();
    assert_eq!(names(&ran), BTreeSet::from(["c".into()]));

    // A Deployment's rollout: its Gateway alone.
    toy.store_mut()
        .rollout("ns", "b", RolloutState::Complete)
        .unwrap();
    let ran = toy.run_due(later(&toy, 1)).unwrap();
    assert_eq!(names(&ran), BTreeSet::from(["b".into()]));

    // The route of `gw` moved to `a`: both, the one it left and the one it joined.
    let moved = json!([{"metadata": {"name": "r", "namespace": "ns"},
        "spec": {"parentRefs": [{"name": "a"}], "destinationCIDRs": ["20.0.0.1/32"]}}]);
    toy.store_mut()
        .patch("ns", "gw", Kind::Routes, &moved)
        .unwrap();
    let ran = toy.run_due(later(&toy, 1)).unwrap();
    assert_eq!(names(&ran), BTreeSet::from(["a".into(), "gw".into()]));

    // A class label: no Gateway reads it.
    let label = json!({"metadata": {"labels": {"team": "x"}}});
    toy.store_mut()
        .patch("ns", "gw", Kind::GatewayClass, &label)
        .unwrap();
    assert!(toy.run_due(later(&toy, 1)).unwrap().is_empty());

    let stats = toy.watch_stats().unwrap();
    assert_eq!((stats.dropped, stats.coalesced), (0, 0));
    assert_eq!(stats.events, stats.delivered);
    assert!(unsettled(&mut toy).is_empty());
}

/// The route `r` naming the Gateway `parent`.
fn route_to(parent: &str) -> serde_json::Value {
    json!([{"metadata": {"name": "r", "namespace": "ns"},
        "spec": {"parentRefs": [{"name": parent}], "destinationCIDRs": ["20.0.0.1/32"]}}])
}

/// A route moved from `a` to `b` unseen (its event lost), then to `c`: the event the loop
/// gets is compared with the route as the loop last saw it (on `a`), so `a`, which shows
/// the route's address, is woken and loses it; `b` never showed it. No resync needed.
#[test]
fn a_missed_state_is_compared_with_what_the_loop_last_saw() {
    let watch = Watch::new().drop_every(2).only(&[WatchKind::Route]);
    let mut toy = StoreLoop::new(fleet(), ()).with_watch(watch);
    quiet(&mut toy);
    // The first move is seen, the second lost, the third seen.
    toy.store_mut()
        .patch("ns", "gw", Kind::Routes, &route_to("a"))
        .unwrap();
    let ran = toy.run_due(later(&toy, 1)).unwrap();
    assert_eq!(names(&ran), BTreeSet::from(["a".into(), "gw".into()]));
    toy.store_mut()
        .patch("ns", "a", Kind::Routes, &route_to("b"))
        .unwrap();
    assert!(toy.run_due(later(&toy, 1)).unwrap().is_empty(), "lost");
    toy.store_mut()
        .patch("ns", "b", Kind::Routes, &route_to("c"))
        .unwrap();
    let ran = toy.run_due(later(&toy, 1)).unwrap();
    assert_eq!(names(&ran), BTreeSet::from(["a".into(), "c".into()]));
    assert_eq!(toy.watch_stats().unwrap().dropped, 1);
    assert!(unsettled(&mut toy).is_empty(), "{:?}", unsettled(&mut toy));
}

/// The kinds and names of the changes waiting for the loop.
fn changes(toy: &StoreLoop<()>) -> Vec<(WatchKind, String, bool, bool)> {
    toy.store()
        .changes()
        .iter()
        .map(|e| (e.kind, e.name.clone(), e.old.is_some(), e.new.is_some()))
        .collect()
}

#[test]
fn every_change_of_the_stores_objects_is_a_watch_event() {
    use WatchKind::*;
    let mut toy = StoreLoop::new(strategies::store().unwrap(), ()).with_watch(Watch::new());
    let now = toy.store().now();
    // A loop's reconcile: the class's status settled, the Deployment created, the
    // Gateway's status patched, each an event (taken by the loop as it runs).
    toy.reconcile_gateway("ns", "gw", now).unwrap();
    assert_eq!(toy.watch_stats().unwrap().events, 3);
    assert!(toy.store().changes().is_empty(), "the loop took them");

    // A test's add: the new objects only (the class and configuration are held already).
    let store = toy.store_mut();
    store.add(strategies::objects_of("other")).unwrap();
    let edit = json!({"spec": {"horizontalScaling": {"replicas": 3}}});
    store.patch("ns", "gw", Kind::Configuration, &edit).unwrap();
    // The route replaced by another: one deleted, one created.
    let routes = json!([{"metadata": {"name": "r2", "namespace": "ns"},
        "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": ["20.0.0.2/32"]}}]);
    store.patch("ns", "gw", Kind::Routes, &routes).unwrap();
    store.rollout("ns", "gw", RolloutState::Complete).unwrap();
    let template = json!({"spec": {"template": {"metadata": {"labels": {"edit": "1"}}}}});
    store.patch("ns", "gw", Kind::Template, &template).unwrap();
    store.delete("ns", "gw", Kind::Deployment).unwrap();
    store.delete("ns", "other", Kind::Gateway).unwrap();
    assert_eq!(
        changes(&toy),
        [
            (Gateway, "other".into(), false, true),
            (Configuration, "conf".into(), true, true),
            (Route, "r".into(), true, false),
            (Route, "r2".into(), false, true),
            (Deployment, "sllbr-gw".into(), true, true),
            (Template, "template".into(), true, true),
            (Deployment, "sllbr-gw".into(), true, false),
            // Marked for deletion: a change of the Gateway.
            (Gateway, "other".into(), true, true),
        ]
    );
    // A patch that is refused changes nothing, and is no event.
    let refused = json!({"spec": {"gatewayClassName": 5}});
    assert!(
        toy.store_mut()
            .patch("ns", "gw", Kind::Gateway, &refused)
            .is_err()
    );
    assert_eq!(toy.store().changes().len(), 8);
}

/// The workload: the fleet's first list, the shared configuration edited three times in a
/// row, a label of `gw`, `c`'s configuration edited, every Deployment rolled out: a second
/// between changes, the loop's reconciles as they fall due (each checked by the kit's
/// invariants). The clock of the last change.
fn workload(run: &mut Run<StoreLoop<()>>) -> Timestamp {
    let mut ops = vec![
        Op::Advance(0),
        Op::ConfigurationEdit(2),
        Op::Advance(1),
        Op::ConfigurationEdit(3),
        Op::Advance(1),
        Op::ConfigurationEdit(4),
        Op::Advance(1),
        Op::GatewayEdit(1),
        Op::Advance(1),
        Op::target("ns", "c"),
        Op::ConfigurationEdit(1),
        Op::Advance(1),
    ];
    for name in GATEWAYS {
        ops.extend([Op::target("ns", name), Op::rollout_complete()]);
    }
    for op in &ops {
        run.apply(op).unwrap();
    }
    run.invariants().now()
}

/// What one run under a watch showed.
#[derive(Debug)]
struct Outcome {
    /// From the last change to the first time every Gateway was settled.
    converged: Option<SignedDuration>,
    writes: u64,
    /// Each Gateway's, in the order of [`GATEWAYS`].
    each: [u64; 4],
    dropped: u64,
    coalesced: u64,
}

/// Runs the workload under `watch`, then steps the clock a second at a time until every
/// Gateway is settled (by the crate's plan) or `give_up` has passed; then checks that one
/// more reconcile of each writes nothing, and that an idle window writes nothing.
fn run_under(watch: Watch, give_up: SignedDuration) -> Outcome {
    let idle = watch.resync_period().map_or(60, |p| 2 * p.as_secs() + 1);
    let toy = StoreLoop::new(fleet(), ()).with_watch(watch);
    let mut run = Run::new(toy).unwrap();
    let last = workload(&mut run);
    let mut converged = None;
    loop {
        // What fell due by now first, then the check.
        run.apply(&Op::Advance(0)).unwrap();
        let mut probe = run.controller().clone();
        if unsettled(&mut probe).is_empty() {
            converged = Some(run.invariants().now().duration_since(last));
            break;
        }
        if run.invariants().now().duration_since(last) >= give_up {
            break;
        }
        run.apply(&Op::Advance(1)).unwrap();
    }
    let writes = total_writes(run.controller().store());
    let each = writes_of(run.controller().store());
    if converged.is_some() {
        // The oracle once more: one more reconcile of each Gateway writes nothing.
        for name in GATEWAYS {
            run.apply(&Op::target("ns", name)).unwrap();
            run.apply(&Op::Reconcile).unwrap();
        }
        assert_eq!(
            total_writes(run.controller().store()),
            writes,
            "a reconcile wrote"
        );
        // No write loop: nothing written over an idle window of two resync periods.
        for _ in 0..idle {
            run.apply(&Op::Advance(1)).unwrap();
        }
        assert_eq!(
            total_writes(run.controller().store()),
            writes,
            "writes while idle"
        );
    }
    let stats = run.controller().watch_stats().unwrap();
    Outcome {
        converged,
        writes,
        each,
        dropped: stats.dropped,
        coalesced: stats.coalesced,
    }
}

/// Each Gateway's writes of the workload under a faithful watch.
fn unperturbed_writes() -> [u64; 4] {
    let outcome = run_under(Watch::new(), seconds(0));
    assert_eq!(outcome.converged, Some(seconds(0)), "{outcome:?}");
    outcome.each
}

/// Checks one perturbed run: converged within the resync period plus the coalescing
/// window after the last change, and each Gateway writing at most twice as often as in
/// the unperturbed run (no write loop).
fn check_perturbed(watch: Watch, unperturbed: [u64; 4]) -> Outcome {
    let period = watch.resync_period().unwrap_or(Duration::from_secs(3600));
    let window = watch.coalesce_window().unwrap_or_default();
    let bound = seconds(i64::try_from((period + window).as_secs()).unwrap());
    let outcome = run_under(watch.clone(), bound);
    let converged = outcome
        .converged
        .unwrap_or_else(|| panic!("{watch:?}: not converged within {bound}: {outcome:?}"));
    assert!(converged <= bound, "{watch:?}: {outcome:?}");
    for ((name, wrote), unperturbed) in GATEWAYS.iter().zip(outcome.each).zip(unperturbed) {
        assert!(
            wrote <= 2 * unperturbed,
            "{watch:?}: {name} wrote {wrote} times, unperturbed {unperturbed}"
        );
    }
    outcome
}

#[test]
fn lost_and_coalesced_events_converge_within_the_resync() {
    let unperturbed = unperturbed_writes();
    let resync = Duration::from_secs(5);
    for seed in 1..=4 {
        let lossy = check_perturbed(
            Watch::new().resync(resync).drop_fraction(0.5, seed),
            unperturbed,
        );
        assert!(lossy.dropped > 0, "{lossy:?}");
        check_perturbed(
            Watch::new()
                .resync(resync)
                .drop_fraction(0.3, seed)
                .coalesce(Duration::from_secs(2)),
            unperturbed,
        );
    }
    for k in 1..=3 {
        let lossy = check_perturbed(Watch::new().resync(resync).drop_every(k), unperturbed);
        assert!(lossy.dropped > 0, "{lossy:?}");
    }
    let coalesced = check_perturbed(
        Watch::new().resync(resync).coalesce(Duration::from_secs(3)),
        unperturbed,
    );
    assert!(coalesced.coalesced > 0, "{coalesced:?}");
    assert_eq!(coalesced.dropped, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Any seed, any rate of loss, of every kind or of one, coalesced or not.
    #[test]
    fn any_loss_converges_within_the_resync(
        seed in any::<u64>(),
        percent in 0u32..=100,
        kind in prop_oneof![
            Just(None),
            Just(Some(WatchKind::Configuration)),
            Just(Some(WatchKind::Deployment)),
            Just(Some(WatchKind::Gateway)),
        ],
        window in prop_oneof![Just(None), (0u64..4).prop_map(Some)],
        resync in prop_oneof![Just(5u64), Just(20u64)],
    ) {
        let mut watch = Watch::new()
            .resync(Duration::from_secs(resync))
            .drop_fraction(f64::from(percent) / 100.0, seed);
        if let Some(kind) = kind {
            watch = watch.only(&[kind]);
        }
        if let Some(window) = window {
            watch = watch.coalesce(Duration::from_secs(window));
        }
        // The unperturbed run's writes are a constant of the workload: measured once.
        static UNPERTURBED: std::sync::OnceLock<[u64; 4]> = std::sync::OnceLock::new();
        let unperturbed = *UNPERTURBED.get_or_init(unperturbed_writes);
        check_perturbed(watch, unperturbed);
    }
}

/// The configuration edit's event lost, nothing else due: with no resync the three
/// Gateways that use it stay behind for good (their Deployments carry the old generation);
/// with one, they are repaired at its next tick. The resync is what repairs a lost event.
#[test]
fn a_lost_event_is_repaired_by_the_resync_and_by_nothing_else() {
    for resync in [None, Some(10i64)] {
        let mut watch = Watch::new().drop_every(1).only(&[WatchKind::Configuration]);
        if let Some(period) = resync {
            watch = watch.resync(Duration::from_secs(period.unsigned_abs()));
        }
        let mut toy = StoreLoop::new(fleet(), ()).with_watch(watch);
        quiet(&mut toy);
        for name in GATEWAYS {
            assert_eq!(
                toy.due("ns", name),
                None,
                "{name}: a requeue would repair it"
            );
        }
        let edited = later(&toy, 1);
        toy.store_mut().advance_to(edited);
        let edit = json!({"spec": {"horizontalScaling": {"replicas": 5, "enforceReplicas": true}}});
        toy.store_mut()
            .patch("ns", "gw", Kind::Configuration, &edit)
            .unwrap();
        let mut repaired = None;
        for _ in 0..60 {
            let now = later(&toy, 1);
            toy.run_due(now).unwrap();
            if repaired.is_none() && unsettled(&mut toy).is_empty() {
                repaired = Some(now.duration_since(edited));
            }
        }
        assert_eq!(toy.watch_stats().unwrap().dropped, 1);
        match resync {
            None => {
                assert_eq!(repaired, None, "nothing but a wake-up repairs a lost one");
                let behind = unsettled(&mut toy);
                assert_eq!(behind.len(), 3, "{behind:?}");
                assert!(
                    behind.iter().all(|why| why.contains("Deployment")),
                    "{behind:?}"
                );
            }
            Some(period) => {
                let repaired = repaired.expect("the resync repairs it");
                assert!(repaired <= seconds(period), "repaired after {repaired}");
            }
        }
    }
}

/// A row of the table: its name, its runs (seeds 1 to n) and its watch of a seed.
type Perturbation = (&'static str, u64, fn(u64) -> Watch);

/// The longest time from the workload's last change to convergence, over seeds, against
/// the resync setting: the table of `docs/reliability.md` ("The kit's watch"), printed
/// with `--nocapture`. With a resync, each run is checked as above; without one, the runs
/// are only reported (given a minute: one that converges had nothing lost for good).
#[test]
fn longest_convergence_against_the_resync() {
    let unperturbed = unperturbed_writes();
    let total: u64 = unperturbed.iter().sum();
    println!(
        "| perturbation | resync | runs | converged | longest convergence after the last change | writes | dropped / coalesced |"
    );
    println!("|---|---|---|---|---|---|---|");
    println!("| none | off | 1 | 1 | 0 s | {total} | 0 / 0 |");
    // The deterministic ones once, the random ones over seeds 1 to 5.
    let perturbations: [Perturbation; 4] = [
        ("drop every 3rd event", 1, |_| Watch::new().drop_every(3)),
        ("drop half at random", 5, |seed| {
            Watch::new().drop_fraction(0.5, seed)
        }),
        ("coalesce 2 s", 1, |_| {
            Watch::new().coalesce(Duration::from_secs(2))
        }),
        ("coalesce 2 s, drop a third at random", 5, |seed| {
            Watch::new()
                .coalesce(Duration::from_secs(2))
                .drop_fraction(1.0 / 3.0, seed)
        }),
    ];
    for (name, runs, watch) in perturbations {
        for resync in [Some(5u64), Some(20), None] {
            let outcomes: Vec<Outcome> = (1..=runs)
                .map(|seed| match resync {
                    Some(period) => check_perturbed(
                        watch(seed).resync(Duration::from_secs(period)),
                        unperturbed,
                    ),
                    None => run_under(watch(seed), seconds(60)),
                })
                .collect();
            let converged = outcomes.iter().filter(|o| o.converged.is_some()).count();
            let longest = match outcomes.iter().map(|o| o.converged).max().flatten() {
                Some(longest) if converged == outcomes.len() => format!("{} s", longest.as_secs()),
                _ => "none in 60 s".to_owned(),
            };
            let (least, most) = (
                outcomes.iter().map(|o| o.writes).min().unwrap(),
                outcomes.iter().map(|o| o.writes).max().unwrap(),
            );
            let dropped: u64 = outcomes.iter().map(|o| o.dropped).sum();
            let coalesced: u64 = outcomes.iter().map(|o| o.coalesced).sum();
            let resync = resync.map_or_else(|| "off".to_owned(), |p| format!("{p} s"));
            let writes = if least == most {
                least.to_string()
            } else {
                format!("{least}-{most}")
            };
            let seeds = if runs > 1 {
                format!(" (seeds 1-{runs})")
            } else {
                String::new()
            };
            println!(
                "| {name}{seeds} | {resync} | {runs} | {converged} | {longest} | {writes} | {dropped} / {coalesced} |",
            );
        }
    }
}
