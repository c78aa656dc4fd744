//! The kit's store as one shared cluster: two Gateways over one class and one
//! GatewayConfiguration see each other's edits of them; per-request fault injection fails
//! exactly the verb and object asked, N times; a schedule names the Gateway its ops act
//! on; the Events the driver records are kept per Gateway.
#![cfg(feature = "testing")]

use gateway_reconcile::testing::strategies::{self, Op, WriteFailure};
use gateway_reconcile::testing::{
    ClusterError, Kind, Request, Run, Store, StoreLoop, Verb, invariants::Invariants,
};
use gateway_reconcile::{WriteKind, WriteOutcome, lookup};
use serde_json::{Value, json};

/// The kit's `ns/gw` and `ns/other`, sharing the class `meridio` and the configuration
/// `ns/conf`, in a loop running the crate's driver.
fn two() -> StoreLoop<()> {
    let mut store = strategies::store().unwrap();
    store.add(strategies::objects_of("other")).unwrap();
    StoreLoop::new(store, ())
}

fn reconcile(toy: &mut StoreLoop<()>, name: &str) -> gateway_reconcile::testing::ReconcileReport {
    let now = toy.store().now();
    toy.reconcile_gateway("ns", name, now).unwrap()
}

/// The GatewayConfiguration generation a Gateway's LB Deployment carries.
fn carried(store: &Store, name: &str) -> Option<String> {
    let deployment = store.read("ns", name, Kind::Deployment).unwrap()?;
    let annotation = lookup::generation_annotation(store.settings());
    deployment["metadata"]["annotations"][annotation.as_str()]
        .as_str()
        .map(str::to_owned)
}

fn condition<'v>(gateway: &'v Value, suffix: &str) -> Option<&'v Value> {
    gateway["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"].as_str().is_some_and(|t| t.ends_with(suffix)))
}

#[test]
fn an_edit_of_the_shared_configuration_is_seen_by_both_gateways() {
    let mut toy = two();
    assert_eq!(
        toy.store().configuration_key("ns", "gw"),
        toy.store().configuration_key("ns", "other")
    );
    for name in ["gw", "other"] {
        assert_eq!(reconcile(&mut toy, name).action, WriteKind::Create);
        assert_eq!(carried(toy.store(), name).as_deref(), Some("1"));
    }
    // Edited once, through the first Gateway's name: one object, generation 2.
    toy.store_mut()
        .patch(
            "ns",
            "gw",
            Kind::Configuration,
            &json!({"spec": {"horizontalScaling": {"replicas": 4, "enforceReplicas": true}}}),
        )
        .unwrap();
    let seen = toy
        .store()
        .read("ns", "other", Kind::Configuration)
        .unwrap()
        .unwrap();
    assert_eq!(seen["metadata"]["generation"], 2);
    assert_eq!(seen["spec"]["horizontalScaling"]["replicas"], 4);
    // Each Gateway's reconcile carries the edit to its own Deployment.
    for name in ["gw", "other"] {
        let record = reconcile(&mut toy, name);
        assert_eq!(record.action, WriteKind::Update, "{name}");
        assert_eq!(carried(toy.store(), name).as_deref(), Some("2"), "{name}");
        let deployment = toy.store().read("ns", name, Kind::Deployment).unwrap();
        assert_eq!(deployment.unwrap()["spec"]["replicas"], 4, "{name}");
    }
}

#[test]
fn an_edit_of_the_shared_class_is_seen_by_both_gateways() {
    let mut toy = two();
    assert_eq!(reconcile(&mut toy, "gw").action, WriteKind::Create);
    // The class handed to another controller, through the first Gateway's name.
    toy.store_mut()
        .patch(
            "ns",
            "gw",
            Kind::GatewayClass,
            &json!({"spec": {"controllerName": "example.com/other"}}),
        )
        .unwrap();
    let class = toy.store().read("ns", "other", Kind::GatewayClass).unwrap();
    assert_eq!(
        class.unwrap()["spec"]["controllerName"],
        "example.com/other"
    );
    // The second Gateway is no longer ours: no Deployment for it.
    let record = reconcile(&mut toy, "other");
    assert_eq!(record.action, WriteKind::None);
    assert_eq!(
        toy.store().read("ns", "other", Kind::Deployment).unwrap(),
        None
    );
    // Handed back through the second Gateway's name, the first sees it too.
    let ours = toy.store().settings().controller_name.clone();
    toy.store_mut()
        .patch(
            "ns",
            "other",
            Kind::GatewayClass,
            &json!({"spec": {"controllerName": ours}}),
        )
        .unwrap();
    assert_eq!(reconcile(&mut toy, "other").action, WriteKind::Create);
    let class = toy.store().read("ns", "gw", Kind::GatewayClass).unwrap();
    assert_eq!(class.unwrap()["spec"]["controllerName"], ours.as_str());
}

#[test]
fn a_write_fault_fails_its_verb_on_its_object_n_times_then_lets_it_through() {
    let mut toy = two();
    for name in ["gw", "other"] {
        reconcile(&mut toy, name);
    }
    toy.store_mut()
        .patch(
            "ns",
            "gw",
            Kind::Configuration,
            &json!({"spec": {"horizontalScaling": {"replicas": 3}}}),
        )
        .unwrap();
    let update = Request::update("ns", "sllbr-gw");
    let unavailable = WriteFailure::Unavailable.outcome();
    toy.store_mut()
        .fail_next(update.clone(), 2, unavailable.clone());
    // A create of the same object is another request: not failed (nor used up).
    toy.store_mut().fail_next(
        Request::create("ns", "sllbr-gw"),
        1,
        WriteFailure::Invalid.outcome(),
    );
    assert_eq!(toy.store().pending(&update), 2);

    // The other Gateway's update goes through at once.
    let other = reconcile(&mut toy, "other");
    assert_eq!(
        (other.action, other.outcome),
        (WriteKind::Update, Some(WriteOutcome::Applied))
    );
    // This one fails twice with the injected answer, then goes through.
    for left in [1, 0] {
        let failed = reconcile(&mut toy, "gw");
        assert_eq!(failed.action, WriteKind::Update);
        assert_eq!(failed.outcome, Some(unavailable.clone()));
        assert_eq!(toy.store().pending(&update), left);
    }
    let through = reconcile(&mut toy, "gw");
    assert_eq!(through.outcome, Some(WriteOutcome::Applied));
    assert_eq!(carried(toy.store(), "gw").as_deref(), Some("2"));
    assert_eq!(toy.store().write_counts("ns", "gw").deployment_writes, 4);
    assert_eq!(toy.store().write_counts("ns", "other").deployment_writes, 2);
    assert_eq!(toy.store().pending(&Request::create("ns", "sllbr-gw")), 1);
    // Stopping the failures (as `converge` does) clears the per-request ones too.
    run_stop_failures(&mut toy);
    assert_eq!(toy.store().pending(&Request::create("ns", "sllbr-gw")), 0);
}

fn run_stop_failures(toy: &mut StoreLoop<()>) {
    let mut run = Run::new(toy).unwrap();
    run.apply(&Op::stop_failures()).unwrap();
}

#[test]
fn a_status_patch_fault_fails_that_gateways_status_write_only() {
    let mut toy = two();
    // A 409 on the status patch: a conflict the driver looks again at at once.
    toy.store_mut().fail_next(
        Request::patch_status("ns", "gw"),
        1,
        WriteFailure::Conflict.outcome(),
    );
    let conflicted = reconcile(&mut toy, "gw");
    assert!(
        !conflicted.status_written,
        "the server refused the status patch: not written"
    );
    assert!(
        conflicted.events.is_empty(),
        "no Event of an unwritten status"
    );
    // Not written: the loop looks again at once, and no Event of it is recorded.
    assert_eq!(toy.due("ns", "gw"), Some(conflicted.time));
    assert_eq!(toy.store().events("ns", "gw").count(), 0);
    assert_eq!(toy.store().write_counts("ns", "gw").status_writes, 0);
    let other = reconcile(&mut toy, "other");
    assert!(other.status_written);
    assert_eq!(toy.store().write_counts("ns", "other").status_writes, 1);
    let written = reconcile(&mut toy, "gw");
    assert!(written.status_written);
    assert_eq!(toy.store().write_counts("ns", "gw").status_writes, 1);

    // Any other answer is the port's error, once.
    toy.store_mut()
        .patch(
            "ns",
            "gw",
            Kind::Gateway,
            &json!({"spec": {"infrastructure": {"labels": {"a": "b"}}}}),
        )
        .unwrap();
    toy.store_mut().fail_next(
        Request::patch_status("ns", "gw"),
        1,
        WriteFailure::Unavailable.outcome(),
    );
    let now = toy.store().now();
    let failed = toy.reconcile_gateway("ns", "gw", now).unwrap_err();
    assert!(
        matches!(&failed, ClusterError::Refused { request, .. } if request.verb == Verb::PatchStatus),
        "{failed}"
    );
    assert!(reconcile(&mut toy, "gw").status_written);
}

#[test]
fn a_read_fault_fails_the_reconciles_that_read_that_object() {
    let mut toy = two();
    let read = Request::get(Kind::Configuration, "ns", "conf");
    toy.store_mut()
        .fail_next(read.clone(), 2, WriteFailure::Transport.outcome());
    let now = toy.store().now();
    // Both Gateways read the shared configuration: each read uses one failure up.
    for name in ["gw", "other"] {
        let failed = toy.reconcile_gateway("ns", name, now).unwrap_err();
        assert_eq!(
            failed.to_string(),
            "get configuration ns/conf: connection refused"
        );
    }
    assert_eq!(toy.store().pending(&read), 0);
    assert_eq!(reconcile(&mut toy, "gw").action, WriteKind::Create);
}

#[test]
fn a_schedule_names_the_gateway_its_ops_act_on() {
    let mut run = Run::new(two()).unwrap();
    for op in [
        Op::Reconcile,
        Op::rollout_complete(),
        Op::target("ns", "other"),
        Op::Reconcile,
        Op::rollout_complete(),
        Op::fail(3, WriteFailure::Unavailable),
        Op::ConfigurationEdit(2),
        Op::Reconcile,
        Op::target("ns", "gw"),
        Op::Reconcile,
        Op::target("ns", "other"),
        Op::Advance(150),
    ] {
        run.apply(&op).unwrap();
    }
    let toy = run.controller();
    assert_eq!(toy.targeted(), ("ns", "other"));
    // The failures were the targeted Gateway's: the first one's update went through.
    assert_eq!(carried(toy.store(), "gw").as_deref(), Some("2"));
    let gw = toy
        .store()
        .read("ns", "gw", Kind::Gateway)
        .unwrap()
        .unwrap();
    assert_eq!(
        condition(&gw, "ConfigurationApplied").unwrap()["status"],
        "True"
    );
    // The other's failed until its backoff reconciles, due during the advance, got through.
    assert!(run.steps().iter().any(|step| step.due));
    assert_eq!(carried(toy.store(), "other").as_deref(), Some("2"));
    // One checker saw both Gateways, on the store's clock.
    assert_eq!(run.invariants().gateways(), 2);
    assert_eq!(run.invariants().now(), toy.store().now());
    assert!(run.changes().contains("target the Gateway ns/other"));
    run.converge().unwrap();

    // A Gateway the store does not hold is refused, as is a target on a one-Gateway loop.
    let missing = run.apply(&Op::target("ns", "nope")).unwrap_err();
    assert_eq!(missing.property, "backend", "{missing}");
    let mut single = Run::new(strategies::cluster().unwrap()).unwrap();
    let refused = single.apply(&Op::target("ns", "gw")).unwrap_err();
    assert!(
        refused.message.contains("target another Gateway"),
        "{refused}"
    );
}

/// The changes of a run over two Gateways compare each with its own last conditions.
#[test]
fn the_changes_of_a_run_follow_each_gateway() {
    let mut run = Run::new(two()).unwrap();
    for op in [
        Op::Reconcile,
        Op::target("ns", "other"),
        Op::Reconcile,
        Op::target("ns", "gw"),
        Op::Reconcile,
    ] {
        run.apply(&op).unwrap();
    }
    let changes = run.changes();
    // Both first reconciles create a Deployment and set conditions.
    assert!(
        changes.contains("step  1  +0s  Deployment Create: Applied\n"),
        "{changes}"
    );
    assert!(
        changes.contains("step  3  +0s  Deployment Create: Applied\n"),
        "{changes}"
    );
    assert_eq!(
        changes.matches("Programmed none -> True").count(),
        2,
        "{changes}"
    );
    // The first Gateway's second reconcile changed nothing of its own.
    assert!(!changes.contains("step  5"), "{changes}");
    let gateways: Vec<_> = run.steps().iter().map(|s| s.gateway.1.as_str()).collect();
    assert_eq!(gateways, ["gw", "other", "other", "gw", "gw"]);
}

#[test]
fn one_checker_keeps_each_gateways_last_status() {
    let mut toy = two();
    let mut invariants = Invariants::new(&toy).unwrap();
    let now = invariants.now();
    let first = toy.reconcile_gateway("ns", "gw", now).unwrap();
    invariants.check(&toy, &first).unwrap();
    // A Gateway the checker never saw before its reconcile cannot be checked: it says so.
    toy.target("ns", "other").unwrap();
    let unseen = toy.reconcile_gateway("ns", "other", now).unwrap();
    let error = invariants.check(&toy, &unseen).unwrap_err();
    assert!(error.message.contains("never saw"), "{error}");

    // Observed first, each is checked against its own last status.
    let mut toy = two();
    let mut invariants = Invariants::new(&toy).unwrap();
    toy.target("ns", "other").unwrap();
    invariants.observe(&toy).unwrap();
    assert_eq!(invariants.gateways(), 2);
    for name in ["other", "gw", "other"] {
        toy.target("ns", name).unwrap();
        let record = toy.reconcile_gateway("ns", name, now).unwrap();
        invariants.check(&toy, &record).unwrap();
    }
    assert_eq!(invariants.steps(), 3);
}

#[test]
fn the_recorder_keeps_each_gateways_events() {
    let mut toy = two();
    let first = reconcile(&mut toy, "gw");
    assert!(!first.events.is_empty());
    let recorded: Vec<_> = toy.store().events("ns", "gw").cloned().collect();
    assert_eq!(recorded, first.events);
    assert_eq!(toy.store().events("ns", "other").count(), 0);
    let second = reconcile(&mut toy, "other");
    let recorded: Vec<_> = toy.store().events("ns", "other").cloned().collect();
    assert_eq!(recorded, second.events);
    assert_eq!(
        toy.store().recorded().len(),
        first.events.len() + second.events.len()
    );
    toy.store_mut().clear_events();
    assert!(toy.store().recorded().is_empty());
}

/// An advance runs every Gateway's reconciles as they fall due, not only the target's:
/// both Gateways' updates keep failing, both turn `Degraded` on time, each checked.
#[test]
fn an_advance_runs_every_gateways_due_reconciles() {
    let mut toy = two();
    for name in ["gw", "other"] {
        reconcile(&mut toy, name);
        toy.store_mut()
            .rollout(
                "ns",
                name,
                gateway_reconcile::testing::RolloutState::Complete,
            )
            .unwrap();
        reconcile(&mut toy, name);
        let lb = format!("sllbr-{name}");
        let failing = WriteFailure::Unavailable.outcome();
        toy.store_mut()
            .fail_next(Request::update("ns", &lb), 1000, failing);
    }
    toy.store_mut()
        .patch(
            "ns",
            "gw",
            Kind::Configuration,
            &json!({"spec": {"horizontalScaling": {"replicas": 3, "enforceReplicas": true}}}),
        )
        .unwrap();
    let mut run = Run::new(toy).unwrap();
    for op in [
        Op::target("ns", "other"),
        Op::Reconcile,
        Op::target("ns", "gw"),
        Op::Reconcile,
        Op::Advance(150),
    ] {
        run.apply(&op).unwrap();
    }
    let due = |name: &str| {
        run.steps()
            .iter()
            .filter(|s| s.due && s.gateway.1 == name)
            .count()
    };
    assert!(due("gw") >= 3 && due("other") >= 3, "{}", run.changes());
    // The advance moved the target to each and back.
    assert_eq!(run.controller().targeted(), ("ns", "gw"));
    for name in ["gw", "other"] {
        let gateway = run
            .controller()
            .store()
            .read("ns", name, Kind::Gateway)
            .unwrap()
            .unwrap();
        let degraded = condition(&gateway, "/Degraded").map(|c| c["reason"].clone());
        assert_eq!(
            degraded,
            Some(json!("ApplyFailing")),
            "{name}: {}",
            run.changes()
        );
    }
    // The changes name each Gateway's own transitions.
    assert_eq!(
        run.changes().matches("Degraded none -> True").count(),
        2,
        "{}",
        run.changes()
    );
}
