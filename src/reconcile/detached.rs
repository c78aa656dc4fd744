//! A write's settlement detached from the snapshot it was planned from, for a caller that
//! must change the objects the snapshot borrows while the write is in flight.

use jiff::Timestamp;

use super::plan::{Accepted, AwaitingOutcome, Decision, Observed, Planned};
use super::settlement::Settlement;
use super::write::WriteKind;
use crate::conditions::ConditionTypes;
use crate::nad::NetworkSelection;
use crate::outcome::WriteOutcome;
use crate::settings::Settings;
use crate::snapshot::Snapshot;
use crate::validate::Validated;
use crate::wire::{Deployment, Gateway, GatewayAddress, GatewayConfiguration};

/// A write waiting for its outcome that borrows nothing
/// ([`AwaitingOutcome::detach`]): it holds its own copies of the Gateway, the
/// GatewayConfiguration and the settings, and none of the Deployments or routes.
///
/// An embedder whose objects live in one mutable store (an in-memory cluster, a test
/// double) plans from a snapshot that borrows the store, and must then change the store to
/// perform the write. [`AwaitingOutcome`] keeps that borrow until it is settled; a
/// `Detached` does not, so the store can be written between the plan and the settlement.
/// The template is handed back to [`Detached::settle`]: settling a
/// [`WriteOutcome::Stored`] compares the API server's answer with the template's render,
/// and a template can be as large as a Deployment, so it is not copied.
///
/// ```
/// use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration};
/// use gateway_reconcile::{DeploymentWrite, Plan, Settings, Snapshot, WriteOutcome, plan, template};
///
/// struct Store {
///     gateway: Gateway,
///     class: GatewayClass,
///     configuration: GatewayConfiguration,
///     deployment: Option<Deployment>,
///     template: Deployment,
/// }
///
/// # let gateway: Gateway = serde_json::from_value(serde_json::json!({
/// #     "metadata": {"name": "gw", "namespace": "ns", "uid": "u1", "generation": 1},
/// #     "spec": {"gatewayClassName": "meridio", "infrastructure": {"parametersRef": {
/// #         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
/// # })).unwrap();
/// # let class: GatewayClass = serde_json::from_value(serde_json::json!({
/// #     "metadata": {"name": "meridio"},
/// #     "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
/// # })).unwrap();
/// # let configuration: GatewayConfiguration = serde_json::from_value(serde_json::json!({
/// #     "metadata": {"name": "conf", "namespace": "ns", "generation": 7},
/// #     "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}
/// # })).unwrap();
/// let mut store = Store {
///     gateway, class, configuration, deployment: None, template: template::default_template(),
/// };
/// let settings = Settings::default();
/// let now = "2026-01-01T00:00:00Z".parse().unwrap();
///
/// let snapshot = Snapshot::new(&store.gateway, &store.template)
///     .with_gateway_class(Some(&store.class))
///     .with_configuration(Some(&store.configuration))
///     .with_deployment(store.deployment.as_ref());
/// let Plan::Write(pending) = plan(&settings, snapshot, now).unwrap() else { unreachable!() };
/// let (write, awaiting) = pending.into_write();
/// let detached = awaiting.detach(); // the store is no longer borrowed
/// let DeploymentWrite::Create(desired) = write else { unreachable!() };
/// store.deployment = Some(desired); // the write, into the store
/// let settlement = detached.settle(WriteOutcome::Applied, &store.template);
/// assert!(settlement.status.is_some());
/// ```
#[must_use = "settle it with the outcome of the write"]
#[derive(Debug)]
pub struct Detached {
    kind: WriteKind,
    settings: Settings,
    types: ConditionTypes,
    gateway: Gateway,
    generation: i64,
    now: Timestamp,
    applied_false_since: Option<Timestamp>,
    /// The accepted decision without its borrows. `None` only if a write were planned for a
    /// Gateway that is not accepted, which `plan` never does; it then settles as a plan with
    /// nothing to write.
    accepted: Option<(GatewayConfiguration, DetachedAccepted)>,
}

/// The owned parts of [`Accepted`] but its GatewayConfiguration, which [`Detached`] keeps
/// beside them (copied), so that [`DetachedAccepted::into_accepted`] can lend it again.
#[derive(Debug)]
struct DetachedAccepted {
    networks: Vec<NetworkSelection>,
    ipv4: bool,
    ipv6: bool,
    held: Vec<String>,
    wanted: i64,
    deployment: String,
    addresses: Vec<GatewayAddress>,
    observed: Option<Observed>,
}

impl AwaitingOutcome<'_> {
    /// Detaches the write from the snapshot it was planned from: the result borrows nothing,
    /// so the caller may change what the snapshot borrowed before it settles. Costs a copy of
    /// the Gateway, the GatewayConfiguration and the settings (never of a Deployment).
    pub fn detach(self) -> Detached {
        let AwaitingOutcome { planned, kind } = self;
        let Planned {
            settings,
            types,
            snapshot,
            generation,
            now,
            applied_false_since,
            decision,
        } = planned;
        let accepted = match decision {
            Decision::Accepted(a) => Some((
                a.configuration.clone(),
                DetachedAccepted {
                    networks: a.validated.networks,
                    ipv4: a.validated.ipv4,
                    ipv6: a.validated.ipv6,
                    held: a.held,
                    wanted: a.wanted,
                    deployment: a.deployment,
                    addresses: a.addresses,
                    observed: a.observed,
                },
            )),
            _ => None,
        };
        Detached {
            kind,
            settings: settings.clone(),
            types,
            gateway: snapshot.gateway.clone(),
            generation,
            now,
            applied_false_since,
            accepted,
        }
    }
}

impl Detached {
    /// What the write was: [`WriteKind::Create`] or [`WriteKind::Update`].
    pub fn kind(&self) -> WriteKind {
        self.kind
    }

    /// Settles the write with what happened to it, as
    /// [`PendingWrite::settle`](crate::PendingWrite::settle) does. `template` must be the
    /// template the write was planned with: a [`WriteOutcome::Stored`] answer is compared
    /// with its render (what the API server changed, and the write record).
    pub fn settle(self, outcome: WriteOutcome, template: &Deployment) -> Settlement {
        let Detached {
            kind,
            settings,
            types,
            gateway,
            generation,
            now,
            applied_false_since,
            accepted,
        } = self;
        // The configuration stays in this frame, where the decision's references point.
        let (configuration, rest) = accepted.map_or((None, None), |(c, r)| (Some(c), Some(r)));
        let decision = match (&configuration, rest) {
            (Some(configuration), Some(rest)) => {
                Decision::Accepted(rest.into_accepted(configuration))
            }
            _ => Decision::Deleted,
        };
        let planned = Planned {
            settings: &settings,
            types,
            snapshot: Snapshot::new(&gateway, template).with_configuration(configuration.as_ref()),
            generation,
            now,
            applied_false_since,
            decision,
        };
        planned.settle(Some((kind, &outcome)))
    }
}

impl DetachedAccepted {
    /// The accepted decision again, borrowing `configuration`.
    fn into_accepted(self, configuration: &GatewayConfiguration) -> Accepted<'_> {
        Accepted {
            configuration,
            validated: Validated {
                configuration,
                networks: self.networks,
                ipv4: self.ipv4,
                ipv6: self.ipv6,
            },
            held: self.held,
            wanted: self.wanted,
            deployment: self.deployment,
            addresses: self.addresses,
            observed: self.observed,
        }
    }
}
