//! What one reconcile reads, decided once for every port: [`gather`] asks the [`Reader`] for
//! the Gateway and exactly the objects its decision depends on, and [`Gathered`] lends them
//! to the plan as a [`Snapshot`].
//!
//! The reads, in order:
//!
//! 1. the Gateway (the port may answer "later");
//! 2. its GatewayClass, by `spec.gatewayClassName`;
//! 3. the GatewayConfiguration it uses ([`lookup::configuration_ref`]): its own
//!    `infrastructure.parametersRef` in its namespace, else its class's default in the
//!    namespace the class names; none when neither names one of ours;
//! 4. the Deployment of the LB name ([`lookup::deployment_name`]) in the Gateway's
//!    namespace; one the Gateway does not control ([`Deployment::controlled_by`], a name
//!    collision) is confirmed by the reader ([`Reader::confirm_collision`]), which may say
//!    "later";
//! 5. the routes the port offers for the Gateway, kept when their `parentRefs` name it
//!    ([`lookup::names_gateway`]), ordered by namespace and name;
//! 6. the labels of those routes' namespaces, each once, only when a listener admits routes
//!    by a namespace selector ([`lookup::uses_namespace_selector`]);
//! 7. the port's last word ([`Reader::reads_done`]), and the template.
//!
//! An object the port holds but cannot read into its wire type is an [`InputError`]
//! naming it (when the gather reads it, or when [`Gathered::snapshot`] lends it), except
//! the GatewayConfiguration, which the Gateway reports (`InvalidParameters`).

use std::sync::Arc;

use super::driver::ReconcileError;
use super::port::{Held, Reader, View};
use crate::error::InputError;
use crate::lookup;
use crate::settings::Settings;
use crate::snapshot::{NamespaceLabels, Snapshot, UnreadableConfiguration};
use crate::wire::{Deployment, Gateway, L34Route};

/// The objects one reconcile of one Gateway read through a reader, held as the reader
/// holds them; [`snapshot`](Gathered::snapshot) lends them to the plan.
#[derive(Debug)]
pub struct Gathered<P: Reader> {
    gateway: P::Gateway,
    class: Option<P::Class>,
    /// The configuration the Gateway uses, with the key it was read by.
    configuration: Option<(String, String, P::Configuration)>,
    deployment: Option<P::Deployment>,
    /// The LB Deployment's name, for an error naming it.
    lb_name: String,
    routes: Vec<L34Route>,
    namespace_labels: NamespaceLabels,
    template: Arc<Deployment>,
}

/// Reads what one reconcile of the reader's Gateway decides from, as the module
/// documentation lists it; [`View::Later`] when the port says its view is not ready. A
/// failed read is the port's error ([`ReconcileError::Read`]); an unreadable Gateway or
/// GatewayClass an [`InputError`] naming it.
pub async fn gather<P: Reader>(
    settings: &Settings,
    port: &mut P,
) -> Result<View<Gathered<P>>, ReconcileError<P::Error>> {
    let gateway = match port.gateway().await.map_err(ReconcileError::Read)? {
        View::Ready(gateway) => gateway,
        View::Later(requeue) => return Ok(View::Later(requeue)),
    };
    let wire = match gateway.read() {
        Ok(wire) => wire,
        Err(why) => return Err(malformed("Gateway", None, "", why).into()),
    };
    let namespace = wire.metadata.namespace.as_deref().unwrap_or_default();
    let name = wire.metadata.name.as_deref().unwrap_or_default();

    let class_name = wire.spec.gateway_class_name.as_str();
    let class = port.class(class_name).await.map_err(ReconcileError::Read)?;
    let class_wire = match class.as_ref().map(Held::read).transpose() {
        Ok(class) => class,
        Err(why) => return Err(malformed("GatewayClass", None, class_name, why).into()),
    };

    let configuration = match lookup::configuration_ref(settings, wire, class_wire) {
        None => None,
        Some(used) => port
            .configuration(used.namespace, used.name)
            .await
            .map_err(ReconcileError::Read)?
            .map(|found| (used.namespace.to_owned(), used.name.to_owned(), found)),
    };

    let lb_name = lookup::deployment_name(settings, name);
    let deployment = port
        .deployment(namespace, &lb_name)
        .await
        .map_err(ReconcileError::Read)?;
    if let Some(held) = &deployment {
        let uid = wire.metadata.uid.as_deref().unwrap_or_default();
        let collision = held
            .read()
            .is_ok_and(|observed| !observed.controlled_by(uid));
        if collision {
            let confirmed = port
                .confirm_collision(namespace, &lb_name, held)
                .await
                .map_err(ReconcileError::Read)?;
            if let View::Later(requeue) = confirmed {
                return Ok(View::Later(requeue));
            }
        }
    }

    let mut routes = port
        .routes(namespace, name)
        .await
        .map_err(ReconcileError::Read)?;
    routes.retain(|route| lookup::names_gateway(route, name, namespace));
    // By namespace and name, borrowed: no copy per comparison.
    routes.sort_by(|a, b| route_key(a).cmp(&route_key(b)));

    let mut namespace_labels = NamespaceLabels::new();
    if lookup::uses_namespace_selector(wire) {
        for route in &routes {
            let Some(ns) = route.metadata.namespace.as_deref() else {
                continue;
            };
            if namespace_labels.contains_key(ns) {
                continue;
            }
            if let Some(labels) = port
                .namespace_labels(ns)
                .await
                .map_err(ReconcileError::Read)?
            {
                namespace_labels.insert(ns.to_owned(), labels);
            }
        }
    }

    if let View::Later(requeue) = port.reads_done().await.map_err(ReconcileError::Read)? {
        return Ok(View::Later(requeue));
    }
    let template = port.template();
    Ok(View::Ready(Gathered {
        gateway,
        class,
        configuration,
        deployment,
        lb_name,
        routes,
        namespace_labels,
        template,
    }))
}

/// A route's namespace and name, the order the routes are handed to the plan in.
fn route_key(route: &L34Route) -> (Option<&str>, Option<&str>) {
    (
        route.metadata.namespace.as_deref(),
        route.metadata.name.as_deref(),
    )
}

/// `Gateway: why`, `GatewayClass "name": why`, `Deployment "ns/name": why`.
fn malformed(kind: &str, namespace: Option<&str>, name: &str, why: &str) -> InputError {
    // A reader's error that names the kind already is not told it twice.
    let why = why
        .strip_prefix(kind)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(why);
    let object = match (namespace, name) {
        (_, "") => kind.to_owned(),
        (Some(namespace), name) => format!("{kind} \"{namespace}/{name}\""),
        (None, name) => format!("{kind} {name:?}"),
    };
    InputError::Malformed {
        object,
        why: why.to_owned(),
    }
}

impl<P: Reader> Gathered<P> {
    /// The snapshot the plan decides from, borrowing the gathered objects; an object that
    /// does not read into its wire type is an [`InputError`] naming it (the configuration
    /// excepted: the Gateway reports it). The write record is the driver's to set.
    pub fn snapshot(&self) -> Result<Snapshot<'_>, InputError> {
        let gateway = self.gateway()?;
        let namespace = gateway.metadata.namespace.as_deref();
        let class = match &self.class {
            None => None,
            Some(held) => Some(held.read().map_err(|why| {
                malformed("GatewayClass", None, &gateway.spec.gateway_class_name, why)
            })?),
        };
        let deployment = match &self.deployment {
            None => None,
            Some(held) => Some(
                held.read()
                    .map_err(|why| malformed("Deployment", namespace, &self.lb_name, why))?,
            ),
        };
        let (configuration, unreadable) = match &self.configuration {
            None => (None, None),
            Some((namespace, name, held)) => match held.read() {
                Ok(configuration) => (Some(configuration), None),
                Err(why) => (
                    None,
                    Some(UnreadableConfiguration {
                        namespace,
                        name,
                        // The kind is in the Gateway's message already.
                        why: why.strip_prefix("GatewayConfiguration: ").unwrap_or(why),
                    }),
                ),
            },
        };
        Ok(Snapshot::new(gateway, &self.template)
            .with_gateway_class(class)
            .with_configuration(configuration)
            .with_unreadable_configuration(unreadable)
            .with_deployment(deployment)
            .with_routes(&self.routes)
            .with_namespace_labels(&self.namespace_labels))
    }

    /// The Gateway the reconcile read.
    pub fn gateway(&self) -> Result<&Gateway, InputError> {
        self.gateway
            .read()
            .map_err(|why| malformed("Gateway", None, "", why))
    }

    /// The routes that name the Gateway, ordered by namespace and name.
    pub fn routes(&self) -> &[L34Route] {
        &self.routes
    }

    /// The labels of the routes' namespaces the gather read (none when no listener selects
    /// namespaces by label).
    pub fn namespace_labels(&self) -> &NamespaceLabels {
        &self.namespace_labels
    }
}
