use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::outcome::ApiError;
use crate::template::default_template;
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration};

/// A port over owned objects that counts what the driver asked of it.
struct Toy {
    gateway: Gateway,
    class: GatewayClass,
    configuration: GatewayConfiguration,
    deployment: Option<Deployment>,
    template: Arc<Deployment>,
    /// The answer to the next Deployment write (`None`: store it).
    fail_write: Option<WriteOutcome>,
    /// The answer to the next status write (`None`: take it).
    status_answer: Option<Result<StatusWrite, String>>,
    later: Option<Requeue>,
    writes: usize,
    status_writes: usize,
    recorded: Vec<String>,
    record_seen: Option<WriteRecord>,
}

impl Port for Toy {
    type Inputs = OwnedInputs;
    type Error = String;

    async fn read(&mut self) -> Result<Gathered<OwnedInputs>, String> {
        if let Some(requeue) = self.later.take() {
            return Ok(Gathered::Later(requeue));
        }
        let mut inputs = OwnedInputs::new(self.gateway.clone(), self.template.clone());
        inputs.class = Some(self.class.clone());
        inputs.configuration = Some(self.configuration.clone()).into();
        inputs.deployment = self.deployment.clone();
        Ok(Gathered::Inputs(inputs))
    }

    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        self.writes += 1;
        if let Some(outcome) = self.fail_write.take() {
            return outcome;
        }
        // Stored as a server stores it: with a generation.
        let mut stored = write.into_desired().into_json();
        let generation = self.deployment.as_ref().and_then(Deployment::generation);
        stored["metadata"]["generation"] = json!(generation.unwrap_or(0) + 1);
        let stored: Deployment = serde_json::from_value(stored).unwrap();
        self.deployment = Some(stored.clone());
        WriteOutcome::Stored(stored)
    }

    async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, String> {
        self.status_writes += 1;
        if let Some(answer) = self.status_answer.take() {
            return answer;
        }
        let mut gateway = serde_json::to_value(&self.gateway).map_err(|e| e.to_string())?;
        patch.apply_to(&mut gateway);
        self.gateway = serde_json::from_value(gateway).map_err(|e| e.to_string())?;
        Ok(StatusWrite::Written)
    }

    async fn record(&mut self, _action: WriteKind, events: &[Event]) {
        self.recorded
            .extend(events.iter().map(|event| event.reason.clone()));
    }
}

fn toy() -> Toy {
    Toy {
        gateway: serde_json::from_value(json!({
            "metadata": {"name": "gw", "namespace": "ns", "uid": "u1", "generation": 1,
                         "resourceVersion": "1"},
            "spec": {"gatewayClassName": "meridio", "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
        }))
        .unwrap(),
        class: serde_json::from_value(json!({
            "metadata": {"name": "meridio"},
            "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
        }))
        .unwrap(),
        configuration: serde_json::from_value(json!({
            "metadata": {"name": "conf", "namespace": "ns", "generation": 7, "uid": "c1"},
            "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}
        }))
        .unwrap(),
        deployment: None,
        template: Arc::new(default_template()),
        fail_write: None,
        status_answer: None,
        later: None,
        writes: 0,
        status_writes: 0,
        recorded: Vec::new(),
        record_seen: None,
    }
}

fn now() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

fn run(driver: &Driver, toy: &mut Toy) -> Result<Reconciled, ReconcileError<String>> {
    let result = ready(driver.reconcile(toy, now())).expect("the toy port answers at once");
    toy.record_seen = driver.write_record("ns", "gw");
    result
}

#[test]
fn a_create_keeps_its_write_record_and_records_the_events_after_the_status() {
    let driver = Driver::new(Settings::default());
    let mut toy = toy();
    let reconciled = run(&driver, &mut toy).unwrap();
    let decided = reconciled.decided.unwrap();
    assert_eq!(decided.action, WriteKind::Create);
    assert!(matches!(decided.outcome, Some(WriteOutcome::Stored(_))));
    assert_eq!(decided.status, StatusWrite::Written);
    assert_eq!((toy.writes, toy.status_writes), (1, 1));
    assert!(
        toy.recorded.iter().any(|r| r == "Applied"),
        "{:?}",
        toy.recorded
    );
    assert_eq!(driver.records_held(), 1);
    assert_eq!(toy.record_seen, decided.settlement.write_record);
}

#[test]
fn a_settled_gateway_writes_nothing_and_records_nothing() {
    let driver = Driver::new(Settings::default());
    let mut toy = toy();
    run(&driver, &mut toy).unwrap();
    toy.recorded.clear();
    let decided = run(&driver, &mut toy).unwrap().decided.unwrap();
    assert_eq!(decided.action, WriteKind::None);
    assert_eq!(decided.status, StatusWrite::Unchanged);
    assert_eq!((toy.writes, toy.status_writes), (1, 1));
    assert!(toy.recorded.is_empty());
}

#[test]
fn a_status_conflict_looks_again_at_once_and_records_no_event() {
    let driver = Driver::new(Settings::default());
    let mut toy = toy();
    toy.status_answer = Some(Ok(StatusWrite::Conflict));
    let reconciled = run(&driver, &mut toy).unwrap();
    assert_eq!(reconciled.requeue, Requeue::Immediately);
    assert!(toy.recorded.is_empty());
    // The write went through all the same: its record is kept.
    assert_eq!(driver.records_held(), 1);
}

#[test]
fn a_failed_status_write_is_an_error_carrying_the_settlements_requeue() {
    let driver = Driver::new(Settings::default());
    let mut toy = toy();
    toy.fail_write = Some(WriteOutcome::Api(ApiError {
        code: 503,
        reason: "ServiceUnavailable".into(),
        message: "etcd".into(),
    }));
    toy.status_answer = Some(Err("connection reset".into()));
    match run(&driver, &mut toy) {
        Err(ReconcileError::StatusWrite { source, requeue }) => {
            assert_eq!(source, "connection reset");
            assert!(matches!(requeue, Requeue::After(_)), "{requeue:?}");
        }
        other => panic!("expected a status write error, got {other:?}"),
    }
    assert!(toy.recorded.is_empty());
    assert_eq!(driver.records_held(), 0, "a failed write leaves no record");
}

#[test]
fn a_port_that_is_not_ready_plans_nothing() {
    let driver = Driver::new(Settings::default());
    let mut toy = toy();
    toy.later = Some(Requeue::After(std::time::Duration::from_millis(100)));
    let reconciled = run(&driver, &mut toy).unwrap();
    assert!(reconciled.decided.is_none());
    assert_eq!(
        reconciled.requeue,
        Requeue::After(std::time::Duration::from_millis(100))
    );
    assert_eq!((toy.writes, toy.status_writes), (0, 0));
}

#[test]
fn a_gateway_being_deleted_loses_its_record() {
    let driver = Driver::new(Settings::default());
    let mut toy = toy();
    run(&driver, &mut toy).unwrap();
    assert_eq!(driver.records_held(), 1);
    toy.gateway.metadata.deletion_timestamp = Some("2026-01-01T00:00:00Z".into());
    let decided = run(&driver, &mut toy).unwrap().decided.unwrap();
    assert_eq!(decided.action, WriteKind::None);
    assert_eq!(driver.records_held(), 0);
}

#[test]
fn ready_refuses_a_future_that_waits() {
    struct Never;
    impl Future for Never {
        type Output = ();
        fn poll(self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
            Poll::Pending
        }
    }
    assert_eq!(ready(Never), Err(NotReady));
    assert_eq!(ready(async { 5 }), Ok(5));
}
