//! What a caller implements to run the [`Driver`](super::Driver): object reads by kind and
//! key that any store can answer ([`Reader`]), and the writes ([`Port`]).
//!
//! The port decides nothing. Which GatewayConfiguration applies, which Deployment is the
//! LB Deployment, which routes name the Gateway and in what order, whose namespace labels
//! matter: the driver asks for exactly those objects ([`gather`](super::gather)), and the
//! reader answers each read from its cache, its in-memory map or the API server.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use super::settlement::{Requeue, StatusPatch};
use super::write::{DeploymentWrite, WriteKind};
use crate::events::Event;
use crate::outcome::WriteOutcome;
use crate::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};

/// An object as a port holds it: the crate's wire type `K`, or an object of that kind that
/// does not read into it (a field of another type under a newer or hand-edited CRD), with
/// the reader's error.
///
/// The wire types hold themselves (always readable), and so do an [`Arc`] of a holder and a
/// `Result<K, String>` (a store that reads its objects as it answers). A cache of raw
/// objects that reads each one once implements it for its own entry type, so that the
/// driver borrows cached objects without a copy.
pub trait Held<K> {
    /// The object as the wire type, or why it does not read into it (naming the field
    /// path when the reader knows it).
    fn read(&self) -> Result<&K, &str>;
}

macro_rules! held_by_itself {
    ($($kind:ty),*) => {$(
        impl Held<$kind> for $kind {
            fn read(&self) -> Result<&$kind, &str> {
                Ok(self)
            }
        }
    )*};
}
held_by_itself!(Gateway, GatewayClass, GatewayConfiguration, Deployment);

impl<K, T: Held<K> + ?Sized> Held<K> for Arc<T> {
    fn read(&self) -> Result<&K, &str> {
        T::read(self)
    }
}

impl<K> Held<K> for Result<K, String> {
    fn read(&self) -> Result<&K, &str> {
        self.as_ref().map_err(String::as_str)
    }
}

/// A port's answer to a read that may say "not now": its view is not fit to decide from (a
/// cache that has not yet seen the controller's own last write, a relist under way, a
/// Gateway already gone). The driver then plans nothing and returns the requeue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View<T> {
    /// The object: the driver goes on.
    Ready(T),
    /// Not now: look again then.
    Later(Requeue),
}

/// The labels of one namespace.
pub type Labels = BTreeMap<String, String>;

/// What became of a status write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusWrite {
    /// The settlement had no status to write (it equals the observed one).
    Unchanged,
    /// The API server took the patch.
    Written,
    /// The API server refused the patch's precondition (409: the Gateway changed since it
    /// was read): the driver looks again at once, with the newer object, and records no
    /// Event of a status that was not written.
    Conflict,
}

/// The read side of a [`Port`]: object reads by kind and key that any store can answer
/// (controller-runtime's `client.Reader`, narrowed to what a reconcile reads).
///
/// The reads hold no decision: the driver reads the Gateway, then its class by the name the
/// Gateway gives, then the GatewayConfiguration it uses (its own reference, else its
/// class's default), the Deployment of the LB name, the routes, and the labels of the
/// routes' namespaces only when a listener selects namespaces by label
/// ([`gather`](super::gather) says it step by step). A read answers `Ok(None)` for an
/// object that does not exist.
pub trait Reader {
    /// Why a read failed.
    type Error;
    /// The Gateway as the reader holds it.
    type Gateway: Held<Gateway>;
    /// A GatewayClass as the reader holds it.
    type Class: Held<GatewayClass>;
    /// A GatewayConfiguration as the reader holds it (an unreadable one is reported on the
    /// Gateway as `InvalidParameters`).
    type Configuration: Held<GatewayConfiguration>;
    /// A Deployment as the reader holds it.
    type Deployment: Held<Deployment>;

    /// The port's Gateway; [`View::Later`] when it is gone
    /// ([`Requeue::AwaitChange`]) or the reader's view is not ready.
    fn gateway(&mut self) -> impl Future<Output = Result<View<Self::Gateway>, Self::Error>>;

    /// The GatewayClass `name`.
    fn class(
        &mut self,
        name: &str,
    ) -> impl Future<Output = Result<Option<Self::Class>, Self::Error>>;

    /// The GatewayConfiguration `namespace/name`.
    fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<Self::Configuration>, Self::Error>>;

    /// The Deployment `namespace/name` as the server stores it (the driver asks for the LB
    /// Deployment's name; whoever owns it).
    fn deployment(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<Self::Deployment>, Self::Error>>;

    /// The readable L34Routes that may name the Gateway `namespace/name` in their
    /// `parentRefs`: an index's answer, or every route (the driver keeps those that name
    /// it, ordered by namespace and name). An unreadable route is left out: it names no
    /// Gateway the driver can know of.
    fn routes(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Vec<L34Route>, Self::Error>>;

    /// The labels of the namespace `name` (`None`: no such namespace, which no label
    /// selector admits).
    fn namespace_labels(
        &mut self,
        name: &str,
    ) -> impl Future<Output = Result<Option<Labels>, Self::Error>>;

    /// The LB Deployment template.
    fn template(&mut self) -> Arc<Deployment>;

    /// Called when the Deployment of the LB name is not the Gateway's (its controller
    /// reference carries another uid, or there is none), which the plan reports as a name
    /// collision (`Programmed` False/`Invalid`). A reader that answers from caches confirms
    /// first that its copy is current: each cache catches up on its own, so the Gateway
    /// read can be newer than the Deployment read (a Gateway created again, whose
    /// predecessor's LB Deployment's deletion the Deployment cache has not seen yet), and
    /// answers [`View::Later`] when it is not. By default the read stands.
    fn confirm_collision(
        &mut self,
        namespace: &str,
        name: &str,
        deployment: &Self::Deployment,
    ) -> impl Future<Output = Result<View<()>, Self::Error>> {
        let _ = (namespace, name, deployment);
        async { Ok(View::Ready(())) }
    }

    /// Called once every read is made, before the driver plans: [`View::Later`] when the
    /// reader's view changed under the reads (a cache relisted meanwhile) or is behind the
    /// controller's own last write. By default the reads stand.
    fn reads_done(&mut self) -> impl Future<Output = Result<View<()>, Self::Error>> {
        async { Ok(View::Ready(())) }
    }
}

/// The I/O of one reconcile of one Gateway, done by the caller: a port is made for one
/// Gateway (or knows which one it serves), lends the driver its [`Reader`], and performs
/// the writes the driver asks for.
///
/// A store that reads and writes through one object is its own reader (`type Reader =
/// Self`); a wrapper that adds metrics or faults to the writes of another port lends the
/// inner port's reader as it is.
///
/// The methods may be `async` (the controller's are); the driver awaits each in turn and
/// never runs two at once. A port whose futures are always ready (an in-memory store) is
/// driven with [`ready`](super::ready).
pub trait Port {
    /// Why a read or a status write failed (the Deployment write's failures are outcomes,
    /// not errors: the core settles them).
    type Error;
    /// The reads.
    type Reader: Reader<Error = Self::Error>;

    /// The reader the driver gathers the reconcile's objects with.
    fn reader(&mut self) -> &mut Self::Reader;

    /// Performs the Deployment write (create a new object, or replace the observed one),
    /// and answers what happened: [`WriteOutcome::Stored`] with the object the server
    /// stored when it took the write (or `Applied` when the port has no answer), the API
    /// error, or a transport error.
    fn write(&mut self, write: DeploymentWrite) -> impl Future<Output = WriteOutcome>;

    /// Writes the Gateway status: the merge patch of `gateways/status`, carrying the
    /// `resourceVersion` of the Gateway the plan read as its precondition.
    fn patch_status(
        &mut self,
        patch: StatusPatch,
    ) -> impl Future<Output = Result<StatusWrite, Self::Error>>;

    /// Records the settlement's Events on the Gateway, once its status write went through
    /// (or there was none to make). An Event is informational: a port logs a failure to
    /// record one and goes on.
    fn record(&mut self, action: WriteKind, events: &[Event]) -> impl Future<Output = ()>;
}
