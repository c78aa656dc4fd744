use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::events::Event;
use crate::outcome::ApiError;
use crate::reconcile::{DeploymentWrite, Labels, StatusPatch, View};
use crate::snapshot::NamespaceLabels;
use crate::template::default_template;
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};

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
    /// The answer to the next confirmation of a name collision (`None`: it stands).
    collision_later: Option<Requeue>,
    routes: Vec<L34Route>,
    labels: NamespaceLabels,
    /// The reads the driver asked for, in order.
    reads: Vec<String>,
    writes: usize,
    status_writes: usize,
    recorded: Vec<String>,
    record_seen: Option<WriteRecord>,
}

impl Reader for Toy {
    type Error = String;
    type Gateway = Gateway;
    type Class = GatewayClass;
    type Configuration = GatewayConfiguration;
    type Deployment = Deployment;

    async fn gateway(&mut self) -> Result<View<Gateway>, String> {
        self.reads.push("gateway".into());
        Ok(match self.later.take() {
            Some(requeue) => View::Later(requeue),
            None => View::Ready(self.gateway.clone()),
        })
    }

    async fn class(&mut self, name: &str) -> Result<Option<GatewayClass>, String> {
        self.reads.push(format!("class {name}"));
        Ok(Some(self.class.clone()))
    }

    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<GatewayConfiguration>, String> {
        self.reads.push(format!("configuration {namespace}/{name}"));
        Ok(Some(self.configuration.clone()))
    }

    async fn deployment(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Deployment>, String> {
        self.reads.push(format!("deployment {namespace}/{name}"));
        Ok(self.deployment.clone())
    }

    async fn confirm_collision(
        &mut self,
        namespace: &str,
        name: &str,
        _: &Deployment,
    ) -> Result<View<()>, String> {
        self.reads.push(format!("confirm {namespace}/{name}"));
        Ok(match self.collision_later.take() {
            Some(requeue) => View::Later(requeue),
            None => View::Ready(()),
        })
    }

    async fn routes(&mut self, namespace: &str, name: &str) -> Result<Vec<L34Route>, String> {
        self.reads.push(format!("routes {namespace}/{name}"));
        Ok(self.routes.clone())
    }

    async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, String> {
        self.reads.push(format!("labels {name}"));
        Ok(self.labels.get(name).cloned())
    }

    fn template(&mut self) -> Arc<Deployment> {
        self.template.clone()
    }
}

impl Port for Toy {
    type Error = String;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
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
            "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
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
        collision_later: None,
        routes: Vec::new(),
        labels: NamespaceLabels::new(),
        reads: Vec::new(),
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

/// A create's write record fingerprints the very Deployment it wrote: the plan's render,
/// kept for the settlement instead of a second render of the same inputs.
#[test]
fn a_creates_write_record_fingerprints_the_deployment_it_wrote() {
    let driver = Driver::new(Settings::default());
    let mut toy = toy();
    let decided = run(&driver, &mut toy).unwrap().decided.unwrap();
    let record = decided.settlement.write_record.expect("a write record");
    let written = toy.deployment.as_ref().expect("written");
    assert_eq!(
        record.fingerprint,
        crate::reconcile::record::fingerprint(written)
    );
    // The generation the toy server gave is not part of it.
    let mut other = written.clone();
    other.object.insert("metadata", {
        let mut metadata = written.object["metadata"].clone();
        metadata["generation"] = crate::wire::tree::Value::from(9_i64);
        metadata
    });
    assert_eq!(
        record.fingerprint,
        crate::reconcile::record::fingerprint(&other)
    );
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

/// A Deployment of the LB name the Gateway does not control is confirmed by the reader
/// before the plan reports the name collision; "later" plans nothing. Its own Deployment is
/// not confirmed.
#[test]
fn a_name_collision_is_confirmed_by_the_reader_before_it_is_reported() {
    let driver = Driver::new(Settings::default());
    let mut toy = toy();
    run(&driver, &mut toy).unwrap();
    assert_eq!(toy.writes, 1);
    run(&driver, &mut toy).unwrap();
    assert!(
        !toy.reads.iter().any(|r| r.starts_with("confirm")),
        "{:?}",
        toy.reads
    );

    // The same Deployment, now controlled by a former Gateway of the same name.
    let mut former = toy.deployment.take().unwrap().into_json();
    former["metadata"]["ownerReferences"][0]["uid"] = json!("u0");
    toy.deployment = Some(serde_json::from_value(former).unwrap());
    toy.reads.clear();
    toy.collision_later = Some(Requeue::After(std::time::Duration::from_secs(5)));
    let (writes, status_writes) = (toy.writes, toy.status_writes);
    let reconciled = run(&driver, &mut toy).unwrap();
    assert!(reconciled.decided.is_none());
    assert_eq!(
        reconciled.requeue,
        Requeue::After(std::time::Duration::from_secs(5))
    );
    assert_eq!(
        toy.reads.last().map(String::as_str),
        Some("confirm ns/sllbr-gw")
    );
    assert_eq!((toy.writes, toy.status_writes), (writes, status_writes));

    // Confirmed: the collision is reported, nothing written to the Deployment.
    run(&driver, &mut toy).unwrap();
    assert_eq!((toy.writes, toy.status_writes), (writes, status_writes + 1));
    let programmed = toy
        .gateway
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Programmed")
        .unwrap();
    assert_eq!(programmed.reason, "Invalid");
    assert!(
        programmed
            .message
            .contains("owned by Gateway/gw, cannot proceed due to name collision")
    );
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

fn route(namespace: &str, name: &str, parent: serde_json::Value) -> L34Route {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"parentRefs": [parent], "destinationCIDRs": ["20.0.0.1/32"]}
    }))
    .unwrap()
}

#[test]
fn the_driver_reads_the_gateways_own_objects_by_key_in_order() {
    let driver = Driver::new(Settings::default());
    let mut toy = toy();
    run(&driver, &mut toy).unwrap();
    assert_eq!(
        toy.reads,
        [
            "gateway",
            "class meridio",
            "configuration ns/conf",
            "deployment ns/sllbr-gw",
            "routes ns/gw",
        ],
        "no namespace labels without a listener that selects by them"
    );
}

#[test]
fn the_class_default_is_read_when_the_gateway_names_none() {
    let driver = Driver::new(Settings::default());
    let mut toy = toy();
    toy.gateway.spec.infrastructure = None;
    toy.class = serde_json::from_value(json!({
        "metadata": {"name": "meridio"},
        "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller",
                 "parametersRef": {"group": "meridio-2.nordix.org",
                    "kind": "GatewayConfiguration", "name": "defaults", "namespace": "infra"}}
    }))
    .unwrap();
    run(&driver, &mut toy).unwrap();
    assert!(
        toy.reads
            .iter()
            .any(|r| r == "configuration infra/defaults"),
        "{:?}",
        toy.reads
    );
    // Another group's reference names none of ours: nothing is read for it.
    let mut toy = toy_with_foreign_reference();
    run(&Driver::new(Settings::default()), &mut toy).unwrap();
    assert!(
        !toy.reads.iter().any(|r| r.starts_with("configuration")),
        "{:?}",
        toy.reads
    );
}

fn toy_with_foreign_reference() -> Toy {
    let mut toy = toy();
    if let Some(infrastructure) = toy.gateway.spec.infrastructure.as_mut()
        && let Some(reference) = infrastructure.parameters_ref.as_mut()
    {
        reference.group = "example.com".into();
    }
    toy
}

#[test]
fn routes_are_kept_when_they_name_the_gateway_and_ordered_by_namespace_and_name() {
    let mut toy = toy();
    toy.routes = vec![
        route("ns", "b", json!({"name": "gw"})),
        route("other", "a", json!({"name": "gw", "namespace": "ns"})),
        route("ns", "not-ours", json!({"name": "another"})),
        route("other", "wrong-namespace", json!({"name": "gw"})),
        route("ns", "a", json!({"name": "gw"})),
    ];
    let mut port = toy;
    let settings = Settings::default();
    let View::Ready(gathered) = ready(gather(&settings, &mut port)).unwrap().unwrap() else {
        panic!("the toy is ready");
    };
    let names: Vec<_> = gathered
        .routes()
        .iter()
        .map(|r| {
            format!(
                "{}/{}",
                r.metadata.namespace.as_deref().unwrap(),
                r.metadata.name.as_deref().unwrap()
            )
        })
        .collect();
    assert_eq!(names, ["ns/a", "ns/b", "other/a"]);
}

#[test]
fn namespace_labels_are_read_once_each_and_only_for_a_selecting_listener() {
    let mut toy = toy();
    toy.gateway = serde_json::from_value(json!({
        "metadata": {"name": "gw", "namespace": "ns", "uid": "u1", "generation": 1},
        "spec": {"gatewayClassName": "meridio",
                 "listeners": [{"name": "l", "port": 4000, "protocol": "TCP",
                    "allowedRoutes": {"namespaces": {"from": "Selector",
                        "selector": {"matchLabels": {"team": "red"}}}}}],
                 "infrastructure": {"parametersRef": {"group": "meridio-2.nordix.org",
                    "kind": "GatewayConfiguration", "name": "conf"}}}
    }))
    .unwrap();
    toy.routes = vec![
        route("red", "a", json!({"name": "gw", "namespace": "ns"})),
        route("red", "b", json!({"name": "gw", "namespace": "ns"})),
        route("blue", "c", json!({"name": "gw", "namespace": "ns"})),
    ];
    toy.labels
        .insert("red".into(), [("team".into(), "red".into())].into());
    let settings = Settings::default();
    let View::Ready(gathered) = ready(gather(&settings, &mut toy)).unwrap().unwrap() else {
        panic!("the toy is ready");
    };
    let labels: Vec<_> = toy
        .reads
        .iter()
        .filter(|r| r.starts_with("labels"))
        .collect();
    assert_eq!(labels, ["labels blue", "labels red"]);
    assert_eq!(
        gathered.namespace_labels().keys().collect::<Vec<_>>(),
        ["red"],
        "a namespace that does not exist has no labels"
    );
}

#[test]
fn an_unreadable_configuration_is_the_gateways_condition_and_an_unreadable_class_an_error() {
    /// The toy, holding the configuration as a reader that failed.
    struct Unreadable(Toy, bool);
    impl Reader for Unreadable {
        type Error = String;
        type Gateway = Gateway;
        type Class = Result<GatewayClass, String>;
        type Configuration = Result<GatewayConfiguration, String>;
        type Deployment = Deployment;
        async fn gateway(&mut self) -> Result<View<Gateway>, String> {
            self.0.gateway().await
        }
        async fn class(&mut self, _: &str) -> Result<Option<Self::Class>, String> {
            Ok(Some(if self.1 {
                Err("GatewayClass: spec: expected an object".into())
            } else {
                Ok(self.0.class.clone())
            }))
        }
        async fn configuration(
            &mut self,
            _: &str,
            _: &str,
        ) -> Result<Option<Self::Configuration>, String> {
            Ok(Some(Err(
                "GatewayConfiguration: spec.horizontalScaling.replicas: invalid type".into(),
            )))
        }
        async fn deployment(&mut self, ns: &str, name: &str) -> Result<Option<Deployment>, String> {
            self.0.deployment(ns, name).await
        }
        async fn routes(&mut self, ns: &str, name: &str) -> Result<Vec<L34Route>, String> {
            self.0.routes(ns, name).await
        }
        async fn namespace_labels(&mut self, name: &str) -> Result<Option<Labels>, String> {
            self.0.namespace_labels(name).await
        }
        fn template(&mut self) -> Arc<Deployment> {
            self.0.template()
        }
    }

    impl Port for Unreadable {
        type Error = String;
        type Reader = Self;

        fn reader(&mut self) -> &mut Self {
            self
        }

        async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
            self.0.write(write).await
        }
        async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, String> {
            self.0.patch_status(patch).await
        }
        async fn record(&mut self, action: WriteKind, events: &[Event]) {
            self.0.record(action, events).await
        }
    }
    let driver = Driver::new(Settings::default());
    let mut port = Unreadable(toy(), false);
    ready(driver.reconcile(&mut port, now())).unwrap().unwrap();
    let accepted = port
        .0
        .gateway
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Accepted")
        .unwrap();
    assert_eq!(accepted.reason, "InvalidParameters");
    assert!(
        accepted.message.contains("spec.horizontalScaling.replicas")
            && !accepted.message.contains("GatewayConfiguration: spec"),
        "{}",
        accepted.message
    );
    let mut port = Unreadable(toy(), true);
    match ready(driver.reconcile(&mut port, now())).unwrap() {
        Err(ReconcileError::Input(error)) => {
            assert_eq!(
                error.to_string(),
                "GatewayClass \"meridio\": spec: expected an object"
            )
        }
        other => panic!("expected an input error, got {other:?}"),
    }
}
