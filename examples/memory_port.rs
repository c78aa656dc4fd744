//! A port over an in-memory store: the store answers the reads by kind and key (`InMemory`),
//! the port does the writes (here it also counts them), the `Driver` decides everything.
//!
//!     cargo run --example memory_port
use gateway_reconcile::events::Event;
use gateway_reconcile::reconcile::{Driver, InMemory, Port, StatusWrite, ready};
use gateway_reconcile::{
    DeploymentWrite, Settings, StatusPatch, WriteKind, WriteOutcome, template,
};
use serde_json::{from_value, json};

struct MyPort(InMemory, Vec<WriteKind>);

impl Port for MyPort {
    type Error = serde_json::Error;
    type Reader = InMemory;
    fn reader(&mut self) -> &mut InMemory {
        &mut self.0
    }
    async fn write(&mut self, write: DeploymentWrite) -> WriteOutcome {
        self.1.push(write.kind()); // A controller sends the request here.
        self.0.store_write(write)
    }
    async fn patch_status(&mut self, patch: StatusPatch) -> Result<StatusWrite, Self::Error> {
        self.0.store_status(&patch)
    }
    async fn record(&mut self, _action: WriteKind, _events: &[Event]) {}
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut objects = InMemory::new(template::default_template());
    // Two Gateways of one class, whose default GatewayConfiguration they share.
    let reference = json!({"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf", "namespace": "ns"});
    let class = json!({"metadata": {"name": "meridio"}, "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller", "parametersRef": reference}});
    let conf = json!({"metadata": {"name": "conf", "namespace": "ns", "generation": 1}, "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}});
    objects
        .insert_class(from_value(class)?)
        .insert_configuration(from_value(conf)?);
    for name in ["a", "b"] {
        let gateway = json!({"metadata": {"name": name, "namespace": "ns", "uid": name, "generation": 1}, "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}});
        objects.insert_gateway(from_value(gateway)?);
    }
    let driver = Driver::new(Settings::default());
    let mut port = MyPort(objects, Vec::new());
    for name in ["a", "b", "a"] {
        port.0.reconciling("ns", name);
        ready(driver.reconcile(&mut port, "2026-01-01T00:00:00Z".parse()?))??;
    }
    assert_eq!(port.1, [WriteKind::Create, WriteKind::Create]); // The third had nothing to do.
    println!("LB Deployments: {:?}", port.0.deployments.keys());
    Ok(())
}
