//! `reconcile::InMemory` under the `Driver`: many Gateways over shared objects, each
//! reconciled by its key; an edit of a shared configuration reaches every Gateway using it.

use gateway_reconcile::reconcile::{Driver, InMemory, Reader, StatusWrite, View, ready};
use gateway_reconcile::{Requeue, Settings, WriteKind, template};
use serde_json::{from_value, json};

fn objects() -> InMemory {
    let mut objects = InMemory::new(template::default_template());
    let reference = json!({"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
        "name": "conf", "namespace": "ns"});
    let class = json!({"metadata": {"name": "meridio"}, "spec": {
        "controllerName": "meridio-2.nordix.org/gateway-controller", "parametersRef": reference}});
    let conf = json!({"metadata": {"name": "conf", "namespace": "ns", "generation": 1},
        "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}});
    objects.insert_class(from_value(class).unwrap());
    objects.insert_configuration(from_value(conf).unwrap());
    for name in ["a", "b"] {
        let gateway = json!({"metadata": {"name": name, "namespace": "ns", "uid": name,
            "generation": 1}, "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}});
        objects.insert_gateway(from_value(gateway).unwrap());
    }
    objects
}

/// A port that is the store itself, writes applied as given.
struct Port(InMemory);

impl gateway_reconcile::reconcile::Port for Port {
    type Error = serde_json::Error;
    type Reader = InMemory;
    fn reader(&mut self) -> &mut InMemory {
        &mut self.0
    }
    async fn write(
        &mut self,
        write: gateway_reconcile::DeploymentWrite,
    ) -> gateway_reconcile::WriteOutcome {
        self.0.store_write(write)
    }
    async fn patch_status(
        &mut self,
        patch: gateway_reconcile::StatusPatch,
    ) -> Result<StatusWrite, serde_json::Error> {
        self.0.store_status(&patch)
    }
    async fn record(&mut self, _: WriteKind, _: &[gateway_reconcile::events::Event]) {}
}

fn reconcile(
    driver: &Driver,
    port: &mut Port,
    name: &str,
) -> gateway_reconcile::reconcile::Reconciled {
    port.0.reconciling("ns", name);
    let now = "2026-01-01T00:00:00Z".parse().unwrap();
    ready(driver.reconcile(port, now)).unwrap().unwrap()
}

fn action(reconciled: gateway_reconcile::reconcile::Reconciled) -> WriteKind {
    reconciled
        .decided
        .expect("the store's reads are ready")
        .action
}

#[test]
fn an_edit_of_a_shared_configuration_reaches_every_gateway() {
    let driver = Driver::new(Settings::default());
    let mut port = Port(objects());
    for name in ["a", "b"] {
        assert_eq!(
            action(reconcile(&driver, &mut port, name)),
            WriteKind::Create
        );
    }
    let conf = port
        .0
        .configurations
        .get_mut(&("ns".into(), "conf".into()))
        .unwrap();
    conf.metadata.generation = Some(2);
    conf.spec.horizontal_scaling =
        from_value(json!({"replicas": 3, "enforceReplicas": true})).unwrap();
    for name in ["a", "b"] {
        assert_eq!(
            action(reconcile(&driver, &mut port, name)),
            WriteKind::Update,
            "{name}"
        );
        let key = ("ns".to_owned(), format!("sllbr-{name}"));
        let deployment = port.0.deployments[&key].to_json();
        assert_eq!(deployment["spec"]["replicas"], 3, "{name}");
    }
    // Both settled: nothing left to write.
    for name in ["a", "b"] {
        assert_eq!(action(reconcile(&driver, &mut port, name)), WriteKind::None);
    }
}

#[test]
fn a_gateway_that_is_not_there_waits_for_a_change() {
    let driver = Driver::new(Settings::default());
    let mut port = Port(objects());
    let reconciled = reconcile(&driver, &mut port, "gone");
    assert!(reconciled.decided.is_none());
    assert_eq!(reconciled.requeue, Requeue::AwaitChange);
    assert!(port.0.deployments.is_empty());
}

#[test]
fn reads_are_by_key_and_a_status_patch_of_a_deleted_gateway_conflicts() {
    let mut objects = objects();
    objects.reconciling("ns", "a");
    assert!(matches!(
        ready(objects.gateway()).unwrap().unwrap(),
        View::Ready(_)
    ));
    assert!(ready(objects.class("other")).unwrap().unwrap().is_none());
    assert!(
        ready(objects.configuration("elsewhere", "conf"))
            .unwrap()
            .unwrap()
            .is_none()
    );
    assert!(
        ready(objects.configuration("ns", "conf"))
            .unwrap()
            .unwrap()
            .is_some()
    );
    // The patch of a Gateway deleted since the read.
    let driver = Driver::new(Settings::default());
    let mut port = Port(objects);
    port.0.reconciling("ns", "a");
    let now = "2026-01-01T00:00:00Z".parse().unwrap();
    let mut gone = GoneBeforeStatus(port);
    let reconciled = ready(driver.reconcile(&mut gone, now)).unwrap().unwrap();
    assert_eq!(reconciled.decided.unwrap().status, StatusWrite::Conflict);
    assert_eq!(reconciled.requeue, Requeue::Immediately);
}

/// Deletes the Gateway between the Deployment write and the status patch.
struct GoneBeforeStatus(Port);

impl gateway_reconcile::reconcile::Port for GoneBeforeStatus {
    type Error = serde_json::Error;
    type Reader = InMemory;
    fn reader(&mut self) -> &mut InMemory {
        self.0.reader()
    }
    async fn write(
        &mut self,
        write: gateway_reconcile::DeploymentWrite,
    ) -> gateway_reconcile::WriteOutcome {
        let outcome = self.0.write(write).await;
        self.0.0.gateways.clear();
        outcome
    }
    async fn patch_status(
        &mut self,
        patch: gateway_reconcile::StatusPatch,
    ) -> Result<StatusWrite, serde_json::Error> {
        self.0.patch_status(patch).await
    }
    async fn record(&mut self, _: WriteKind, _: &[gateway_reconcile::events::Event]) {}
}
