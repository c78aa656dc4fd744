//! The reconcile kube-runtime runs for a Gateway, and its error policy: the core's
//! [`Driver`](gateway_reconcile::reconcile::Driver) over the controller's port, the
//! per-Gateway backoff, and the metrics.
//!
//! What the core says travels whole: its requeue stays next to the [`Action`] made of it
//! ([`Requeued`]), and its error becomes this module's [`Error`] once (the `From` of the
//! driver's `ReconcileError`), carrying the settlement's own requeue.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{Future, StreamExt};
use gateway_reconcile::reconcile::ReconcileError;
use gateway_reconcile::{InputError, Requeue};
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use tracing::{debug, warn};

use super::context::Context;
use super::port::{CachePort, PortError};
use crate::backoff;
use crate::cached::Gateway;
use crate::leader::Leadership;
use crate::metrics::{ReconcileResult, RequeueKind};
use crate::requeue;

/// Why a reconcile stopped before it settled. The Deployment write is never one: its
/// failures are outcomes the core settles.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A watch cache's writer is gone (the controller is shutting down).
    #[error("watch cache closed")]
    CacheClosed,
    /// The Gateway status write failed (other than by a conflict, which requeues at once).
    #[error("Gateway status write: {source}")]
    StatusWrite {
        /// The answer.
        #[source]
        source: kube::Error,
        /// The core's requeue for the settlement that was not written: the retry waits at
        /// least this long.
        requeue: Requeue,
    },
    /// An object the core cannot work with (no uid, a malformed timestamp, ...).
    #[error(transparent)]
    Input(#[from] InputError),
    /// A GET of the Deployment of the LB name failed: of an own LB Deployment the LB cache
    /// does not hold (its managed-by label was removed), or confirming a name collision.
    #[error("LB Deployment read: {source}")]
    Read {
        /// The answer.
        #[source]
        source: kube::Error,
    },
    /// A reconcile error of the core this controller does not know: the core's
    /// `ReconcileError` is non-exhaustive, and a newer core may add one.
    #[error("reconcile: {why}")]
    UnknownCoreError {
        /// The core's message.
        why: String,
    },
}

/// The one conversion of a failed reconcile: the driver's error around the port's.
impl From<ReconcileError<PortError>> for Error {
    fn from(error: ReconcileError<PortError>) -> Self {
        match error {
            ReconcileError::Input(error) | ReconcileError::Read(PortError::Unreadable(error)) => {
                Error::Input(error)
            }
            ReconcileError::Read(PortError::Request(source)) => Error::Read { source },
            ReconcileError::StatusWrite {
                source: PortError::Request(source),
                requeue,
            } => Error::StatusWrite { source, requeue },
            // The status write reads nothing; kept whole should a port ever answer so.
            ReconcileError::StatusWrite {
                source: PortError::Unreadable(error),
                ..
            } => Error::Input(error),
            other => Error::UnknownCoreError {
                why: other.to_string(),
            },
        }
    }
}

impl Error {
    /// The reconcile's outcome as the metrics count it.
    fn result(&self) -> ReconcileResult {
        match self {
            Error::CacheClosed => ReconcileResult::CacheClosed,
            Error::StatusWrite { .. } => ReconcileResult::StatusWriteError,
            Error::Read { .. } => ReconcileResult::ReadError,
            // The metrics have no label of their own for an unknown core error: counted
            // with the input errors, as it always was.
            Error::Input(_) | Error::UnknownCoreError { .. } => ReconcileResult::InputError,
        }
    }
}

/// When to reconcile a Gateway again: the core's requeue, and the [`Action`] kube-runtime
/// gets for it (a resync spread out, see [`requeue::spread_resync`]). The backoff and the
/// metrics read the core's requeue, never the `Action`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Requeued {
    requeue: Requeue,
    action: Action,
}

impl Requeued {
    /// `requeue` as kube-runtime runs it; `resync`: the core says it is a resync.
    fn new(requeue: Requeue, resync: bool) -> Self {
        Requeued {
            requeue,
            action: requeue::spread_resync(requeue, resync, backoff::random_fraction()),
        }
    }

    /// Whether the core asked for "at once", which goes through the Gateway's backoff.
    fn at_once(&self) -> bool {
        // A wait of zero is "at once" too: never run at round-trip speed.
        matches!(
            self.requeue,
            Requeue::Immediately | Requeue::After(Duration::ZERO)
        )
    }
}

/// `controller` run with [`reconcile_leading`] and [`error_policy`] over `context` until
/// `shutdown` (the reconciles in flight finish), each result logged. A standby's reconciles
/// return at once; winning the lease reconciles everything.
pub(super) fn run(
    controller: Controller<Gateway>,
    leadership: &Leadership,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
    context: Arc<Context>,
) -> impl Future<Output = ()> {
    controller
        .reconcile_all_on(leadership.acquired())
        .graceful_shutdown_on(shutdown)
        .run(reconcile_leading, error_policy, context)
        .for_each(|result| async move {
            match result {
                Ok((gateway, action)) => debug!(%gateway, ?action, "reconciled"),
                Err(error) => warn!(%error, "controller"),
            }
        })
}

/// One reconcile of one Gateway: the driver over a port made for it, once every cache has
/// its initial list.
async fn reconcile(gateway: Arc<Gateway>, ctx: Arc<Context>) -> Result<Requeued, Error> {
    if !ctx.ready.clone().await {
        return Err(Error::CacheClosed);
    }
    let mut port = CachePort::new(ctx.clone(), gateway);
    let reconciled = ctx
        .driver
        .reconcile(&mut port, jiff::Timestamp::now())
        .await?;
    let mut requeued = Requeued::new(reconciled.requeue, reconciled.resync);
    if port.changed_meanwhile() {
        // A change came while a write was in flight and was held back from the trigger
        // (`own_writes`): it is decided now, as its own event would have had it.
        requeued.action = Action::requeue(Duration::ZERO);
    }
    Ok(requeued)
}

/// [`reconcile`] as the controller runs it: nothing on a standby, metrics, and every
/// "at once" requeue (the core's `Immediately`, a status conflict, a relist under way)
/// through the Gateway's backoff; a settled reconcile with any other requeue resets it. A
/// cache that has not seen an own write waits for that write's event (`own_writes`).
async fn reconcile_leading(gateway: Arc<Gateway>, ctx: Arc<Context>) -> Result<Action, Error> {
    if !ctx.leadership.may_write() {
        // A standby writes nothing; winning the lease triggers every Gateway again.
        return Ok(Action::await_change());
    }
    let key = ObjectRef::from_obj(gateway.as_ref());
    let _running = ctx.metrics.reconcile_started();
    let started = Instant::now();
    let result = reconcile(gateway, ctx.clone()).await;
    let outcome = match &result {
        Ok(_) => ReconcileResult::Success,
        Err(error) => error.result(),
    };
    ctx.metrics.reconciled(outcome, started.elapsed());
    let requeued = result?;
    if requeued.at_once() {
        let wait = ctx.backoff.next(&key);
        debug!(gateway = %key, ?wait, failures = ctx.backoff.failures(&key), "at-once requeue, backing off");
        ctx.metrics.requeued(RequeueKind::Backoff);
        return Ok(Action::requeue(wait));
    }
    ctx.backoff.reset(&key);
    if requeued.requeue != Requeue::AwaitChange {
        ctx.metrics.requeued(RequeueKind::Scheduled);
    }
    Ok(requeued.action)
}

/// A reconcile that did not settle: retried after the Gateway's backoff, but never sooner
/// than the core's own requeue for the settlement it could not write, nor than the API
/// server's `Retry-After`.
fn error_policy(gateway: Arc<Gateway>, error: &Error, ctx: Arc<Context>) -> Action {
    let key = ObjectRef::from_obj(gateway.as_ref());
    let wait = match error {
        // The Gateway (or an object it names) must change first; an unknown core error is
        // waited on alike, as it always was.
        Error::Input(_) | Error::UnknownCoreError { .. } => None,
        Error::StatusWrite { source, requeue } => Some(backoff::failed_wait(
            ctx.backoff.next(&key),
            requeue::after(*requeue),
            server_retry_after(source),
        )),
        Error::Read { source } => Some(backoff::failed_wait(
            ctx.backoff.next(&key),
            None,
            server_retry_after(source),
        )),
        Error::CacheClosed => Some(ctx.backoff.next(&key)),
    };
    let action = wait.map_or_else(Action::await_change, Action::requeue);
    warn!(gateway = %key, %error, ?action, failures = ctx.backoff.failures(&key), "reconcile failed");
    if wait.is_some() {
        ctx.metrics.requeued(RequeueKind::Error);
    }
    action
}

/// The wait an API answer asks for (`details.retryAfterSeconds`, which the API server
/// sets with its `Retry-After` header).
fn server_retry_after(error: &kube::Error) -> Option<Duration> {
    match error {
        kube::Error::Api(status) => status
            .details
            .as_ref()
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(u64::from(s))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use gateway_reconcile::reconcile::ReconcileError;
    use gateway_reconcile::{InputError, Requeue};
    use kube::runtime::controller::Action;

    use super::{Error, Requeued, error_policy, reconcile_leading};
    use crate::controller::client::client;
    use crate::controller::client::tests::answering;
    use crate::controller::fixtures::{context, gateway};
    use crate::controller::port::PortError;
    use crate::leader::Leadership;

    /// The delay of a requeue action (kube-runtime keeps it private: read from `Debug`).
    fn requeue_of(action: &Action) -> Option<Duration> {
        let text = format!("{action:?}");
        let inner = text.split("Some(").nth(1)?.split(')').next()?;
        for (suffix, scale) in [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)] {
            if let Some(number) = inner.strip_suffix(suffix) {
                return Some(Duration::from_secs_f64(number.parse::<f64>().ok()? * scale));
            }
        }
        None
    }

    fn status_error(code: u16, retry_after_seconds: u32) -> kube::Error {
        let mut status = kube::core::Status::failure("refused", "Forbidden");
        status.code = code;
        status.details =
            serde_json::from_value(serde_json::json!({ "retryAfterSeconds": retry_after_seconds }))
                .ok();
        kube::Error::Api(status.boxed())
    }

    #[tokio::test]
    async fn a_failed_status_write_backs_off_but_keeps_the_cores_requeue() {
        let client = client(kube::Config::new(
            "http://127.0.0.1:9".parse().expect("url"),
        ))
        .expect("client");
        let ctx = context(client, Leadership::always());
        let gw = gateway("gw");
        let failed = |requeue, retry_after| Error::StatusWrite {
            source: status_error(403, retry_after),
            requeue,
        };
        // The core said 5 minutes: the retry is not sooner (before: 5 s).
        assert_eq!(
            error_policy(
                gw.clone(),
                &failed(Requeue::After(Duration::from_secs(300)), 0),
                ctx.clone()
            ),
            Action::requeue(Duration::from_secs(300))
        );
        // The core said "on the next change": the backoff alone, from 5 ms, doubling.
        let waits: Vec<Action> = (0..3)
            .map(|_| error_policy(gw.clone(), &failed(Requeue::AwaitChange, 0), ctx.clone()))
            .collect();
        // 0-10 % of jitter on top of the doubling delay.
        let within = |action: &Action, ms: u64| {
            requeue_of(action).is_some_and(|d| {
                d >= Duration::from_millis(ms) && d <= Duration::from_millis(ms).mul_f64(1.1)
            })
        };
        assert!(within(&waits[0], 10), "{waits:?}"); // the second failure of gw
        assert!(within(&waits[1], 20), "{waits:?}");
        assert!(within(&waits[2], 40), "{waits:?}");
        // The server's Retry-After wins over a shorter backoff.
        assert_eq!(
            error_policy(
                gateway("other"),
                &failed(Requeue::AwaitChange, 7),
                ctx.clone()
            ),
            Action::requeue(Duration::from_secs(7))
        );
        // An object the core cannot read waits for a change.
        let input = Error::Input(InputError::Malformed {
            object: "Gateway".into(),
            why: "no uid".into(),
        });
        assert_eq!(error_policy(gw, &input, ctx), Action::await_change());
    }

    #[tokio::test]
    async fn a_standby_reconciles_nothing() {
        let (url, requests) = answering(404).await;
        let client = client(kube::Config::new(url.parse().expect("url"))).expect("client");
        let ctx = context(client, Leadership::candidate());
        let action = reconcile_leading(gateway("gw"), ctx.clone())
            .await
            .expect("no error");
        assert_eq!(action, Action::await_change());
        assert_eq!(requests.load(Ordering::SeqCst), 0);
        assert!(
            !ctx.metrics
                .encode()
                .contains("gateway_reconcile_reconciles_total{")
        );
    }

    /// The driver's error becomes the reconcile's once, the settlement's requeue kept
    /// whole (not as a delay).
    #[test]
    fn a_failed_reconcile_is_converted_once_and_keeps_the_cores_requeue() {
        let error = Error::from(ReconcileError::StatusWrite {
            source: PortError::Request(status_error(403, 0)),
            requeue: Requeue::Immediately,
        });
        assert!(
            matches!(
                error,
                Error::StatusWrite {
                    requeue: Requeue::Immediately,
                    ..
                }
            ),
            "{error:?}"
        );
        let read = Error::from(ReconcileError::Read(PortError::Request(status_error(
            500, 0,
        ))));
        assert!(matches!(read, Error::Read { .. }), "{read:?}");
        let unreadable = InputError::Malformed {
            object: "ns/gw".into(),
            why: "no spec".into(),
        };
        let input = Error::from(ReconcileError::Read(PortError::Unreadable(unreadable)));
        assert_eq!(input.to_string(), "ns/gw: no spec");
        assert!(matches!(input, Error::Input(_)), "{input:?}");
    }

    /// The backoff reads the core's requeue: "at once" is the core's `Immediately` (or a
    /// wait of zero), whatever the `Action`.
    #[test]
    fn only_the_cores_at_once_requeue_backs_off() {
        let resync = true;
        assert!(Requeued::new(Requeue::Immediately, resync).at_once());
        assert!(Requeued::new(Requeue::After(Duration::ZERO), resync).at_once());
        for requeue in [
            Requeue::AwaitChange,
            Requeue::After(Duration::from_secs(1)),
            Requeue::After(Duration::from_secs(600)),
        ] {
            let requeued = Requeued::new(requeue, resync);
            assert!(!requeued.at_once(), "{requeued:?}");
            assert_eq!(requeued.requeue, requeue);
        }
        assert_eq!(
            Requeued::new(Requeue::AwaitChange, resync).action,
            Action::await_change()
        );
    }
}
