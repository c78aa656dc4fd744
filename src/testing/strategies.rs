//! proptest strategies: configurations (valid, and invalid with their message), Gateways with
//! foreign conditions, observed Deployments, write outcomes of every class, and fault
//! schedules of [`Op`]s that [`apply`](super::schedule::apply) runs on any
//! [`ControllerLoop`](super::ControllerLoop) (the simulated cluster, or the embedder's own).

use std::time::Duration;

use jiff::Timestamp;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::outcome::WriteOutcome;
use crate::settings::Settings;
use crate::sim::cluster::{Cluster, ClusterError, Objects, RolloutState};
use crate::wire::{Deployment, L34Route};

use super::Store;
/// The operations the strategies draw (defined with [`apply`](super::schedule::apply)).
pub use super::schedule::{Op, WriteFailure};

/// The GatewayClass `controllerName` of [`Settings::default`]: the Gateway is ours.
pub const OURS: &str = "meridio-2.nordix.org/gateway-controller";

/// The `type` of the foreign condition [`objects`] puts on the Gateway.
pub const FOREIGN: &str = "example.com/Foreign";

/// Any [`Op`], reconciles the most frequent.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::Reconcile),
        1 => any::<u8>().prop_map(Op::GatewayEdit),
        2 => any::<u8>().prop_map(Op::ConfigurationEdit),
        1 => Just(Op::ConfigurationInvalid),
        1 => Just(Op::ConfigurationFixed),
        1 => Just(Op::ClassOther),
        1 => Just(Op::ClassOurs),
        1 => Just(Op::DeploymentEdit),
        1 => Just(Op::DeploymentDelete),
        1 => any::<u8>().prop_map(Op::Autoscale),
        2 => (write_failure(), 1u32..6).prop_map(|(f, n)| Op::Fail(f, n)),
        1 => rollout_state().prop_map(Op::Rollout),
        2 => (1u32..400).prop_map(Op::Advance),
        1 => Just(Op::Restart),
        1 => any::<bool>().prop_map(Op::MutateWrites),
    ]
}

/// A fault schedule: 1 to `max_len` [`Op`]s (at least 1).
pub fn schedule(max_len: usize) -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(op(), 1..max_len.max(2))
}

/// A write outcome of any class: applied, conflict, gone, rejected, transient (API error or
/// transport error).
pub fn write_outcome() -> impl Strategy<Value = WriteOutcome> {
    prop_oneof![
        Just(WriteOutcome::Applied),
        write_failure().prop_map(WriteFailure::outcome)
    ]
}

/// Any [`WriteFailure`].
pub fn write_failure() -> impl Strategy<Value = WriteFailure> {
    proptest::sample::select(&WriteFailure::ALL[..])
}

/// Any [`RolloutState`].
pub fn rollout_state() -> impl Strategy<Value = RolloutState> {
    prop_oneof![
        Just(RolloutState::Complete),
        Just(RolloutState::Progressing),
        Just(RolloutState::Stalled)
    ]
}

/// The settings of the kit's runs: the defaults with `degradedAfter` 120 s.
pub fn settings() -> Settings {
    Settings {
        degraded_after: Duration::from_secs(120),
        ..Settings::default()
    }
}

/// The start of the kit's runs: 2026-01-01T00:00:00Z.
pub fn start() -> Timestamp {
    Timestamp::from_second(1_767_225_600).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// The objects of the kit's runs: a Gateway `ns/gw` of our class with one listener and one
/// foreign condition ([`FOREIGN`]), a valid GatewayConfiguration `conf` (2 replicas), no
/// Deployment, the built-in template and one L34Route of the Gateway's namespace.
pub fn objects() -> Objects {
    Objects {
        gateway_class: Some(
            json!({"metadata": {"name": "meridio"}, "spec": {"controllerName": OURS}}).into(),
        ),
        gateway: json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": 1},
            "spec": {"gatewayClassName": "meridio",
                "listeners": [{"name": "all", "port": 4000, "protocol": "TCP"}],
                "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}},
            "status": {"conditions": [{"type": FOREIGN, "status": "True", "observedGeneration": 1,
                "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "Foreign", "message": "not ours"}]}
        })
        .into(),
        configuration: Some(configuration_object(&json!({
            "internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}],
            "horizontalScaling": {"replicas": 2, "enforceReplicas": false}
        }))
        .into()),
        deployment: None,
        template: None,
        routes: serde_json::from_value::<L34Route>(json!({
            "metadata": {"name": "r", "namespace": "ns"},
            "spec": {"parentRefs": [{"name": "gw"}], "destinationCIDRs": ["20.0.0.1/32"]}
        }))
        .into_iter()
        .collect(),
        namespaces: Default::default(),
    }
}

/// [`objects`] of another Gateway, `ns/{name}` (its uid `{name}-uid`), of the same class
/// and GatewayConfiguration, without the route (it names `gw`): in a [`Store`] the class,
/// the configuration and the template are shared with `ns/gw`'s.
///
/// ```
/// use gateway_reconcile::testing::strategies;
///
/// let other = strategies::objects_of("other");
/// assert_eq!(other.gateway["metadata"]["name"], "other");
/// assert_eq!(other.configuration, strategies::objects().configuration);
/// ```
pub fn objects_of(name: &str) -> Objects {
    let mut objects = objects();
    objects.gateway["metadata"]["name"] = name.into();
    objects.gateway["metadata"]["uid"] = format!("{name}-uid").into();
    objects.routes.clear();
    objects
}

fn configuration_object(spec: &Value) -> Value {
    json!({
        "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "GatewayConfiguration",
        "metadata": {"name": "conf", "namespace": "ns", "generation": 1},
        "spec": spec
    })
}

/// A cluster holding [`objects`] with [`settings`], its clock at [`start`].
pub fn cluster() -> Result<Cluster, ClusterError> {
    Cluster::new(settings(), start(), objects())
}

/// The kit's in-memory store holding [`objects`] with [`settings`], its clock at [`start`]:
/// the Gateway `ns/gw` first (add others with [`Store::add`]).
pub fn store() -> Result<Store, ClusterError> {
    Store::new(settings(), start(), objects())
}

/// A valid GatewayConfiguration object (`ns/conf`, generation 1): one or two internal
/// subnets (IPv4, and maybe IPv6), 0 to 9 replicas, `enforceReplicas` either way.
pub fn valid_configuration() -> impl Strategy<Value = Value> {
    (1u8..=254, any::<bool>(), 0i64..10, any::<bool>()).prop_map(
        |(octet, v6, replicas, enforce)| {
            let mut subnets =
                vec![json!({"attachmentType": "NAD", "cidr": format!("169.254.{octet}.0/24")})];
            if v6 {
                subnets
                    .push(json!({"attachmentType": "NAD", "cidr": format!("fd00:{octet:x}::/64")}));
            }
            configuration_object(&json!({
                "internalSubnets": subnets,
                "horizontalScaling": {"replicas": replicas, "enforceReplicas": enforce}
            }))
        },
    )
}

/// An invalid GatewayConfiguration object, tagged with the validation message it must
/// produce (the `Accepted=False/InvalidParameters` message contains it).
pub fn invalid_configuration() -> impl Strategy<Value = (Value, String)> {
    prop_oneof![
        prop_oneof![Just("0.0.0.0/0"), Just("::/0")].prop_map(|cidr| (
            configuration_object(&json!({"internalSubnets": subnets(&[cidr.to_owned()])})),
            format!("CIDR {cidr:?}: default route CIDRs (0.0.0.0/0 or ::/0) are not allowed")
        )),
        (1u8..=254, 17u8..=24).prop_map(|(octet, prefix)| {
            let (wide, narrow) = (
                format!("10.{octet}.0.0/16"),
                format!("10.{octet}.0.0/{prefix}"),
            );
            (
                configuration_object(
                    &json!({"internalSubnets": subnets(&[wide.clone(), narrow.clone()])}),
                ),
                format!("overlapping internalSubnet CIDRs: {wide} and {narrow}"),
            )
        }),
        (1i64..1000).prop_map(|n| (
            configuration_object(&json!({
                "internalSubnets": subnets(&["169.254.100.0/24".to_owned()]),
                "horizontalScaling": {"replicas": -n}
            })),
            format!(
                "horizontalScaling.replicas: invalid value {}: must be greater than or equal to 0",
                -n
            )
        )),
    ]
}

fn subnets(cidrs: &[String]) -> Value {
    cidrs
        .iter()
        .map(|cidr| json!({"attachmentType": "NAD", "cidr": cidr}))
        .collect()
}

/// A Gateway object of our class (`ns/gw`, generation 1 to 5) carrying 0 to 3 foreign
/// conditions (types `example.com/ForeignN`), as another controller left them.
pub fn gateway_with_foreign_conditions() -> impl Strategy<Value = Value> {
    (1i64..6, 0usize..4, any::<bool>()).prop_map(|(generation, n, status)| {
        let conditions: Vec<Value> = (0..n)
            .map(|i| {
                json!({"type": format!("example.com/Foreign{i}"),
                       "status": if status { "True" } else { "False" },
                       "observedGeneration": 1, "lastTransitionTime": "2025-01-01T00:00:00Z",
                       "reason": "Foreign", "message": format!("not ours {i}")})
            })
            .collect();
        json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "gw", "namespace": "ns", "uid": "gw-uid", "generation": generation},
            "spec": {"gatewayClassName": "meridio",
                "listeners": [{"name": "all", "port": 4000, "protocol": "TCP"}],
                "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}},
            "status": {"conditions": conditions}
        })
    })
}

/// An observed LB Deployment as the API server returns it: created by a reconcile of
/// [`objects`] with a [`valid_configuration`], server-defaulted, with bookkeeping, and with
/// the status of a rollout state (complete, progressing or stalled). A case the cluster
/// cannot run is filtered out.
pub fn observed_deployment() -> impl Strategy<Value = Value> {
    (valid_configuration(), rollout_state()).prop_filter_map(
        "the cluster created a Deployment",
        |(configuration, rollout)| {
            let mut objects = objects();
            objects.configuration = Some(configuration.into());
            let mut cluster = Cluster::new(settings(), start(), objects).ok()?;
            cluster.reconcile().ok()?;
            cluster.rollout(rollout).ok()?;
            cluster.deployment().map(Deployment::to_json)
        },
    )
}
