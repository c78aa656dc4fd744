//! A complete Gateway controller on kube-rs: `gateway_reconcile` decides, this file does the
//! I/O.
//!
//! It watches Gateways, owns their LB Deployments, and reconciles a Gateway again when its
//! GatewayClass, its GatewayConfiguration or an L34Route naming it changes. One reconcile:
//!
//! 1. read the objects the decision needs (GatewayClass, GatewayConfiguration, the LB
//!    Deployment, the L34Routes) and convert them to the crate's wire types;
//! 2. [`plan`] decides; for [`Plan::Write`] server-side apply the desired Deployment and turn
//!    the answer into a [`WriteOutcome`];
//! 3. [`PendingWrite::settle`](gateway_reconcile::PendingWrite::settle) says what status to
//!    write: patch it with [`Settlement::status_patch`](gateway_reconcile::Settlement::status_patch)
//!    (its body carries the Gateway's `resourceVersion` as a precondition);
//! 4. requeue as the settlement says.
//!
//! Build it with `cargo build --example controller --all-features`; run it with a kubeconfig
//! (or in a Pod) against a cluster that has the Gateway API and Meridio-2 CRDs installed.
//! The GatewayConfiguration and L34Route CRDs are read as [`DynamicObject`]s, so no Rust
//! types for them are needed here.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use gateway_api::apis::standard::gatewayclasses::GatewayClass;
use gateway_api::apis::standard::gateways::Gateway;
use gateway_reconcile::{
    InputError, Plan, Requeue, Settings, Settlement, Snapshot, WriteOutcome, plan, render,
    template, wire,
};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
};
use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use serde_json::Value;

/// The server-side apply field manager of the LB Deployments.
const FIELD_MANAGER: &str = render::MANAGED_BY;

/// The Gateway API group, the default of a parentRef's `group`.
const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";

/// What a reconcile needs besides the Gateway.
struct Context {
    client: Client,
    settings: Settings,
    template: wire::Deployment,
}

/// Why a reconcile stopped before it settled.
#[derive(Debug, thiserror::Error)]
enum Error {
    /// A read or the status write failed; the Deployment write is never an error here, it
    /// is a `WriteOutcome` the crate settles.
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// An object the crate cannot work with (no uid, a malformed timestamp, ...).
    #[error(transparent)]
    Input(#[from] InputError),
}

/// `meridio-2.nordix.org/v1alpha1` GatewayConfiguration, read as JSON.
fn gateway_configurations() -> ApiResource {
    let gvk = GroupVersionKind::gvk("meridio-2.nordix.org", "v1alpha1", "GatewayConfiguration");
    ApiResource::from_gvk_with_plural(&gvk, "gatewayconfigurations")
}

/// `meridio-2.nordix.org/v1alpha1` L34Route, read as JSON.
fn l34_routes() -> ApiResource {
    let gvk = GroupVersionKind::gvk("meridio-2.nordix.org", "v1alpha1", "L34Route");
    ApiResource::from_gvk_with_plural(&gvk, "l34routes")
}

/// `apps/v1` Deployment, read as JSON: a typed read would drop any field newer than the
/// Kubernetes version compiled into k8s-openapi, and the crate renders an update from the
/// observed object, so it must see every field to write them all back.
fn deployments() -> ApiResource {
    ApiResource::erase::<Deployment>(&())
}

/// A `DynamicObject` (or any object) as one of the crate's wire types.
fn to_wire<T: serde::de::DeserializeOwned>(
    object: &impl serde::Serialize,
) -> Result<T, InputError> {
    serde_json::to_value(object)
        .and_then(serde_json::from_value)
        .map_err(|e| InputError::Malformed {
            object: "watched object".into(),
            why: e.to_string(),
        })
}

/// One reconcile of one Gateway: read, plan, write, settle, requeue.
async fn reconcile(gateway: Arc<Gateway>, ctx: Arc<Context>) -> Result<controller::Action, Error> {
    let (Some(namespace), name) = (gateway.namespace(), gateway.name_any()) else {
        return Ok(controller::Action::await_change());
    };
    let gateway = wire::Gateway::try_from(gateway.as_ref())?;
    let client = &ctx.client;
    let settings = &ctx.settings;

    // 1. What the decision needs. "Not found" is an answer, not an error.
    let class = Api::<GatewayClass>::all(client.clone())
        .get_opt(&gateway.spec.gateway_class_name)
        .await?
        .map(|class| wire::GatewayClass::try_from(&class))
        .transpose()?;

    let parameters = gateway
        .spec
        .infrastructure
        .as_ref()
        .and_then(|i| i.parameters_ref.as_ref());
    let configuration = match parameters {
        // Only look up our own kind; the crate reports any other reference as unsupported.
        Some(p) if p.group == settings.parameters_group && p.kind == settings.parameters_kind => {
            Api::<DynamicObject>::namespaced_with(
                client.clone(),
                &namespace,
                &gateway_configurations(),
            )
            .get_opt(&p.name)
            .await?
            .map(|conf| to_wire::<wire::GatewayConfiguration>(&conf))
            .transpose()?
        }
        _ => None,
    };

    let lb_deployments =
        Api::<DynamicObject>::namespaced_with(client.clone(), &namespace, &deployments());
    let lb_name = render::deployment_name(settings, &name);
    let observed = lb_deployments
        .get_opt(&lb_name)
        .await?
        .map(|deployment| to_wire::<wire::Deployment>(&deployment))
        .transpose()?;

    // Routes may live in any namespace; the crate keeps those whose parentRefs name this
    // Gateway. (A large cluster would keep them in a reflector instead of listing.)
    let routes: Vec<wire::L34Route> = Api::<DynamicObject>::all_with(client.clone(), &l34_routes())
        .list(&ListParams::default())
        .await?
        .items
        .iter()
        .filter_map(|route| to_wire(route).ok())
        .collect();

    // 2. Decide, and perform the one write the plan asks for.
    let snapshot = Snapshot::new(&gateway, &ctx.template)
        .with_gateway_class(class.as_ref())
        .with_configuration(configuration.as_ref())
        .with_deployment(observed.as_ref())
        .with_routes(&routes);
    let settlement: Settlement = match plan(settings, snapshot, jiff::Timestamp::now())? {
        Plan::Write(pending) => {
            let outcome = apply(&lb_deployments, &lb_name, pending.write().desired()).await;
            pending.settle(outcome)
        }
        Plan::Settled(settlement) => settlement,
        _ => return Ok(controller::Action::await_change()),
    };

    // 3. Write the status the outcome leads to (nothing when it did not change). The patch
    // carries the Gateway's resourceVersion: a 409 retries the reconcile (through
    // `error_policy`) on the newer object instead of overwriting its status.
    if let Some(patch) = settlement.status_patch() {
        Api::<Gateway>::namespaced(client.clone(), &namespace)
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(patch.body()))
            .await?;
    }

    // 4. Look again when the crate says so.
    Ok(match settlement.requeue {
        Requeue::AwaitChange => controller::Action::await_change(),
        Requeue::Immediately => controller::Action::requeue(Duration::ZERO),
        Requeue::After(after) => controller::Action::requeue(after),
        _ => controller::Action::requeue(Duration::from_secs(10)),
    })
}

/// Server-side applies the desired LB Deployment and says how it went.
///
/// The desired object is the whole Deployment (on update: the observed one with the
/// crate's fields put in place, carrying its `resourceVersion`), so applying it with
/// `force` behaves like a replace that also records field ownership: a stale
/// `resourceVersion` is a 409 Conflict, which the crate retries at once.
async fn apply(api: &Api<DynamicObject>, name: &str, desired: &wire::Deployment) -> WriteOutcome {
    let mut body = desired.object.clone();
    // An apply request must not carry managedFields, and status is not written here.
    body.remove("status");
    if let Some(Value::Object(metadata)) = body.get_mut("metadata") {
        metadata.remove("managedFields");
    }
    let params = PatchParams::apply(FIELD_MANAGER).force();
    match api.patch(name, &params, &Patch::Apply(&body)).await {
        Ok(_) => WriteOutcome::Applied,
        // The API server's `Status`: the crate classifies it by code and reason.
        Err(kube::Error::Api(status)) => {
            let code = Some(status.code).filter(|&code| code != 0);
            WriteOutcome::from_parts(code, &status.reason, &status.message)
        }
        // No answer from the API server (connection, TLS, timeout, ...).
        Err(other) => WriteOutcome::from_parts(None, "", &other.to_string()),
    }
}

/// A reconcile that did not settle: back off and try again, unless the Gateway itself must
/// change first.
fn error_policy(gateway: Arc<Gateway>, error: &Error, _: Arc<Context>) -> controller::Action {
    eprintln!("Gateway {}: {error}", ObjectRef::from_obj(gateway.as_ref()));
    match error {
        Error::Input(_) => controller::Action::await_change(),
        Error::Kube(_) => controller::Action::requeue(Duration::from_secs(10)),
    }
}

/// The Gateways whose `parametersRef` names this GatewayConfiguration.
fn gateways_using(
    gateways: &Store<Gateway>,
    settings: &Settings,
    conf: &DynamicObject,
) -> Vec<ObjectRef<Gateway>> {
    let (namespace, name) = (conf.namespace(), conf.name_any());
    gateways
        .state()
        .into_iter()
        .filter(|gateway| gateway.namespace() == namespace)
        .filter(|gateway| {
            let infrastructure = gateway.spec.infrastructure.as_ref();
            infrastructure
                .and_then(|i| i.parameters_ref.as_ref())
                .is_some_and(|p| {
                    p.group == settings.parameters_group
                        && p.kind == settings.parameters_kind
                        && p.name == name
                })
        })
        .map(|gateway| ObjectRef::from_obj(gateway.as_ref()))
        .collect()
}

/// The Gateways of this GatewayClass.
fn gateways_of_class(gateways: &Store<Gateway>, class: &GatewayClass) -> Vec<ObjectRef<Gateway>> {
    let name = class.name_any();
    gateways
        .state()
        .into_iter()
        .filter(|gateway| gateway.spec.gateway_class_name == name)
        .map(|gateway| ObjectRef::from_obj(gateway.as_ref()))
        .collect()
}

/// The Gateways this L34Route's `parentRefs` name (with the Gateway API defaults).
fn gateways_of_route(route: &DynamicObject) -> Vec<ObjectRef<Gateway>> {
    let Ok(route) = to_wire::<wire::L34Route>(route) else {
        return Vec::new();
    };
    let own_namespace = route.metadata.namespace.unwrap_or_default();
    route
        .spec
        .parent_refs
        .into_iter()
        .filter(|parent| parent.group.as_deref().unwrap_or(GATEWAY_GROUP) == GATEWAY_GROUP)
        .filter(|parent| parent.kind.as_deref().unwrap_or("Gateway") == "Gateway")
        .map(|parent| {
            let namespace = parent.namespace.unwrap_or_else(|| own_namespace.clone());
            ObjectRef::new(&parent.name).within(&namespace)
        })
        .collect()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::try_default().await?;
    let settings = Settings::default();
    let context = Arc::new(Context {
        client: client.clone(),
        settings: settings.clone(),
        template: template::default_template(),
    });

    let controller = Controller::new(
        Api::<Gateway>::all(client.clone()),
        watcher::Config::default(),
    );
    // The controller's own cache of Gateways, to map other objects to the Gateways they
    // concern.
    let by_configuration = (controller.store(), settings);
    let by_class = controller.store();
    // Only the LB Deployments, not every Deployment of the cluster.
    let managed = format!("{}={}", render::MANAGED_BY_LABEL, render::MANAGED_BY);

    controller
        .owns(
            Api::<Deployment>::all(client.clone()),
            watcher::Config::default().labels(&managed),
        )
        .watches_with(
            Api::<DynamicObject>::all_with(client.clone(), &gateway_configurations()),
            gateway_configurations(),
            watcher::Config::default(),
            move |conf| gateways_using(&by_configuration.0, &by_configuration.1, &conf),
        )
        .watches_with(
            Api::<DynamicObject>::all_with(client.clone(), &l34_routes()),
            l34_routes(),
            watcher::Config::default(),
            |route| gateways_of_route(&route),
        )
        .watches(
            Api::<GatewayClass>::all(client.clone()),
            watcher::Config::default(),
            move |class| gateways_of_class(&by_class, &class),
        )
        .shutdown_on_signal()
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            match result {
                Ok((gateway, _)) => eprintln!("reconciled Gateway {gateway}"),
                Err(error) => eprintln!("controller: {error}"),
            }
        })
        .await;
    Ok(())
}
