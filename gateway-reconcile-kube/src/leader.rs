//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's algorithm (the one
//! controller-runtime's manager runs), and the write gate it holds open.
//!
//! # Why not a crate
//!
//! Of the crates for kube-rs, `kube-coordinate` (2.0.0-rc.0) needs kube 2;
//! `kube-lease-manager` 0.13 fits kube 5 (the version in use), its 0.12 and
//! `kube-leader-election` 0.44 fit kube 4, but none gives what the controller needs: a
//! holder that stops writing before its lease can be taken over. They judge expiry from the
//! Lease's `renewTime` plus its duration against the local clock (a skewed clock shortens
//! or stretches the lease; 0.13 does so as 0.12 did), neither has a renew deadline (a
//! leader whose renewals fail keeps saying it leads until a renewal succeeds,
//! `kube-lease-manager` backing off up to 30 s meanwhile), and `kube-leader-election`
//! takes an expired lease with a merge patch without precondition, so two candidates can
//! both believe they won.
//!
//! # The algorithm
//!
//! - A candidate reads the Lease every retry period. It counts a holder's lease from the
//!   moment *it* saw the Lease's record change (never from the `renewTime` written in it,
//!   so no clock comparison between machines), and takes it once the holder has not
//!   renewed for `leaseDurationSeconds`: a replace carrying the read `resourceVersion`, so
//!   of two candidates only one wins (the other gets 409).
//! - The holder renews every retry period the same way. Every success holds the write
//!   gate ([`Leadership::may_write`]) open until the renewal's *start* plus the renew
//!   deadline. The deadline is shorter than the lease duration, so the gate closes before
//!   any candidate can take the lease over: the holder stops writing first, whatever
//!   happened to it (a partition, a stopped process, a slow API server).
//! - A holder that could not renew by its deadline, or found the Lease taken, has lost it:
//!   [`Elector::run`] returns, and the controller exits non-zero so that its Deployment
//!   restarts it as a candidate (controller-runtime does the same).
//! - On a clean shutdown the holder gives the Lease up (empty holder, as client-go's
//!   `ReleaseOnCancel`), so the standby takes over at its next read.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::Stream;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};
use tracing::{debug, info, warn};

use crate::backoff::random_fraction;

/// controller-runtime's defaults.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// See [`LEASE_DURATION`].
pub const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// See [`LEASE_DURATION`].
pub const RETRY_PERIOD: Duration = Duration::from_secs(2);

/// Where a service account's namespace is mounted in a Pod.
pub const SERVICE_ACCOUNT_NAMESPACE: &str =
    "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// Why leadership cannot be had, or was lost.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaderError {
    /// The timings do not keep the holder's writes inside its lease.
    #[error("leader election: {0}")]
    Config(String),
    /// The Lease's namespace is unknown.
    #[error(
        "leader election: no namespace for the Lease: set --leader-election-namespace (or POD_NAMESPACE), or run in a Pod"
    )]
    NoNamespace,
    /// Leadership was lost; the process must stop writing and exit.
    #[error("leader election lost: {0}")]
    Lost(String),
}

/// The Lease and the timings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The Lease's namespace.
    pub namespace: String,
    /// The Lease's name.
    pub name: String,
    /// This process's identity (`holderIdentity`), unique among the candidates.
    pub identity: String,
    /// How long a candidate waits, after the holder's last renewal it saw, before it takes
    /// the Lease (`leaseDurationSeconds`, whole seconds).
    pub lease_duration: Duration,
    /// How long the holder keeps writing after the start of its last successful renewal.
    pub renew_deadline: Duration,
    /// How often candidates read and the holder renews.
    pub retry_period: Duration,
}

impl LeaseConfig {
    /// Checks the timings as client-go does: the renew deadline below the lease duration
    /// (the holder stops before it can be replaced) and above 1.2 retry periods (at least
    /// one renewal can be tried within it).
    pub fn check(&self) -> Result<(), LeaderError> {
        if self.lease_duration < Duration::from_secs(1) {
            return Err(LeaderError::Config(format!(
                "the lease duration ({:?}) must be at least 1s",
                self.lease_duration
            )));
        }
        if self.renew_deadline >= self.lease_duration {
            return Err(LeaderError::Config(format!(
                "the renew deadline ({:?}) must be shorter than the lease duration ({:?})",
                self.renew_deadline, self.lease_duration
            )));
        }
        if self.retry_period.is_zero() || self.renew_deadline <= self.retry_period.mul_f64(1.2) {
            return Err(LeaderError::Config(format!(
                "the renew deadline ({:?}) must be longer than 1.2 retry periods ({:?}), which must not be zero",
                self.renew_deadline, self.retry_period
            )));
        }
        if self.identity.is_empty() || self.name.is_empty() || self.namespace.is_empty() {
            return Err(LeaderError::Config(
                "the identity, the Lease name and its namespace must not be empty".into(),
            ));
        }
        Ok(())
    }

    fn lease_seconds(&self) -> i32 {
        // Whole seconds, rounded up: never shorter than asked.
        let secs =
            self.lease_duration.as_secs() + u64::from(self.lease_duration.subsec_nanos() > 0);
        i32::try_from(secs).unwrap_or(i32::MAX)
    }
}

/// `{name}_{random}`: client-go's `hostname_uuid`, with the Pod name when there is one.
pub fn identity(instance: Option<&str>) -> String {
    let host = instance
        .map(str::to_owned)
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "gateway-reconcile-controller".into());
    let suffix = (random_fraction() * f64::from(u32::MAX)) as u32;
    format!("{host}_{suffix:08x}")
}

/// The Lease's namespace: `flag` (the flag or `POD_NAMESPACE`), else the service account's
/// namespace file, as controller-runtime does.
pub fn namespace(flag: Option<&str>) -> Result<String, LeaderError> {
    if let Some(ns) = flag.map(str::trim).filter(|ns| !ns.is_empty()) {
        return Ok(ns.to_owned());
    }
    std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE)
        .ok()
        .map(|ns| ns.trim().to_owned())
        .filter(|ns| !ns.is_empty())
        .ok_or(LeaderError::NoNamespace)
}

/// Whether this process may write, shared by the elector and the client's write gate.
#[derive(Clone, Debug)]
pub struct Leadership(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    /// Leader election is off: writes always go out.
    always: bool,
    /// Writes go out until then.
    valid_until: Mutex<Option<Instant>>,
    /// Counts the terms won, for [`Leadership::acquired`].
    terms: tokio::sync::watch::Sender<u64>,
}

impl Leadership {
    fn new(always: bool) -> Self {
        Leadership(Arc::new(Shared {
            always,
            valid_until: Mutex::new(None),
            terms: tokio::sync::watch::Sender::new(0),
        }))
    }

    /// Leader election off: this process always leads.
    pub fn always() -> Self {
        Leadership::new(true)
    }

    /// A candidate: no writes until the [`Elector`] wins the Lease.
    pub fn candidate() -> Self {
        Leadership::new(false)
    }

    /// Whether leader election is on.
    pub fn elected(&self) -> bool {
        !self.0.always
    }

    /// Whether writes may go out now.
    pub fn may_write(&self) -> bool {
        self.0.always
            || self
                .valid_until()
                .is_some_and(|until| Instant::now() < until)
    }

    fn valid_until(&self) -> Option<Instant> {
        *self.0.valid_until.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens the gate until `until`; a new term when it was closed.
    fn grant(&self, until: Instant) {
        let mut valid = self.0.valid_until.lock().unwrap_or_else(|e| e.into_inner());
        let new_term = !valid.is_some_and(|v| Instant::now() < v);
        *valid = Some(until);
        drop(valid);
        if new_term {
            self.0.terms.send_modify(|t| *t += 1);
        }
    }

    /// Closes the gate.
    fn revoke(&self) {
        *self.0.valid_until.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Yields once each time this process becomes the leader (the controller then
    /// reconciles every Gateway).
    pub fn acquired(&self) -> impl Stream<Item = ()> + Send + 'static {
        futures::stream::unfold(self.0.terms.subscribe(), |mut terms| async move {
            terms.changed().await.ok()?;
            Some(((), terms))
        })
    }
}

/// The Lease record as last read, and when this process first saw it.
struct Observed {
    spec: LeaseSpec,
    at: Instant,
}

/// Runs the election for one [`Leadership`].
pub struct Elector {
    api: Api<Lease>,
    config: LeaseConfig,
    leadership: Leadership,
    observed: Option<Observed>,
}

impl Elector {
    /// An elector on `config`'s Lease, through `client` (not the gated one: the Lease is
    /// written before the gate opens).
    pub fn new(
        client: Client,
        config: LeaseConfig,
        leadership: Leadership,
    ) -> Result<Self, LeaderError> {
        config.check()?;
        Ok(Elector {
            api: Api::namespaced(client, &config.namespace),
            config,
            leadership,
            observed: None,
        })
    }

    /// The identity it runs for.
    pub fn identity(&self) -> &str {
        &self.config.identity
    }

    /// Campaigns until it leads, then renews until it cannot: returns only when
    /// leadership is lost (the gate is closed by then).
    pub async fn run(&mut self) -> LeaderError {
        info!(identity = %self.config.identity, lease = %self.config.name, namespace = %self.config.namespace, "leader election: waiting for the lease");
        let retry = self.config.retry_period;
        loop {
            let attempt = Instant::now();
            match tokio::time::timeout(self.config.renew_deadline, self.try_acquire_or_renew())
                .await
            {
                Ok(Ok(true)) => {
                    self.leadership.grant(attempt + self.config.renew_deadline);
                    info!(identity = %self.config.identity, "leader election: acquired the lease");
                    break;
                }
                Ok(Ok(false)) => {
                    debug!(holder = ?self.holder(), "leader election: the lease is held")
                }
                Ok(Err(error)) => {
                    warn!(%error, "leader election: reading or taking the lease failed")
                }
                Err(_) => warn!("leader election: the lease request timed out"),
            }
            // A retry period less up to a tenth (never more: a candidate takes over within
            // the lease duration plus one retry period), and no later than the moment the
            // observed lease expires; never a tight loop.
            let mut wait = retry.mul_f64(1.0 - 0.1 * random_fraction());
            if let Some(expiry) = self.observed_expiry() {
                wait = wait.min(expiry.saturating_duration_since(Instant::now()));
            }
            tokio::time::sleep(wait.max(retry / 10)).await;
        }
        let mut last = Instant::now();
        loop {
            let Some(valid_until) = self.leadership.valid_until() else {
                return LeaderError::Lost("the write gate was closed".into());
            };
            let next = (last + retry).min(valid_until);
            tokio::time::sleep_until(tokio::time::Instant::from_std(next)).await;
            let attempt = Instant::now();
            last = attempt;
            if attempt >= valid_until {
                self.leadership.revoke();
                return LeaderError::Lost(format!(
                    "not renewed within the renew deadline ({:?})",
                    self.config.renew_deadline
                ));
            }
            match tokio::time::timeout(valid_until - attempt, self.try_acquire_or_renew()).await {
                Ok(Ok(true)) => {
                    self.leadership.grant(attempt + self.config.renew_deadline);
                    debug!("leader election: renewed");
                }
                Ok(Ok(false)) => {
                    self.leadership.revoke();
                    return LeaderError::Lost(format!(
                        "the lease is held by {}",
                        self.holder().unwrap_or_else(|| "nobody".into())
                    ));
                }
                Ok(Err(error)) => warn!(%error, "leader election: renewing failed, retrying"),
                Err(_) => {
                    self.leadership.revoke();
                    return LeaderError::Lost(format!(
                        "not renewed within the renew deadline ({:?})",
                        self.config.renew_deadline
                    ));
                }
            }
        }
    }

    /// Gives the Lease up when this process holds it (clean shutdown): the gate closes
    /// first, then the Lease gets an empty holder.
    pub async fn release(&mut self) {
        if !self.leadership.may_write() {
            return;
        }
        self.leadership.revoke();
        let Ok(Some(mut lease)) = self.api.get_opt(&self.config.name).await else {
            return;
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return;
        }
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(now.clone());
        spec.acquire_time = Some(now);
        match self.api.replace(&self.config.name, &params(), &lease).await {
            Ok(_) => info!("leader election: released the lease"),
            Err(error) => warn!(%error, "leader election: releasing the lease failed"),
        }
    }

    fn holder(&self) -> Option<String> {
        self.observed.as_ref()?.spec.holder_identity.clone()
    }

    fn observed_expiry(&self) -> Option<Instant> {
        let observed = self.observed.as_ref()?;
        Some(observed.at + self.duration_of(&observed.spec))
    }

    fn duration_of(&self, spec: &LeaseSpec) -> Duration {
        spec.lease_duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(self.config.lease_duration, Duration::from_secs)
    }

    fn observe(&mut self, spec: LeaseSpec) {
        if self.observed.as_ref().map(|o| &o.spec) != Some(&spec) {
            self.observed = Some(Observed {
                spec,
                at: Instant::now(),
            });
        }
    }

    /// One round: `true` when this process holds the Lease afterwards.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        let Some(mut lease) = self.api.get_opt(&self.config.name).await? else {
            let lease = Lease {
                metadata: kube::api::ObjectMeta {
                    name: Some(self.config.name.clone()),
                    namespace: Some(self.config.namespace.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.config.identity.clone()),
                    lease_duration_seconds: Some(self.config.lease_seconds()),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            };
            return match self.api.create(&params(), &lease).await {
                Ok(created) => {
                    self.observe(created.spec.unwrap_or_default());
                    Ok(true)
                }
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(error) => Err(error),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        self.observe(spec.clone());
        let holder = spec.holder_identity.as_deref().filter(|h| !h.is_empty());
        let mine = holder == Some(self.config.identity.as_str());
        if holder.is_some() && !mine && self.observed_expiry().is_some_and(|e| Instant::now() < e) {
            return Ok(false);
        }
        let mut next = spec.clone();
        next.holder_identity = Some(self.config.identity.clone());
        next.lease_duration_seconds = Some(self.config.lease_seconds());
        next.renew_time = Some(now.clone());
        if !mine {
            next.acquire_time = Some(now);
            next.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        }
        lease.spec = Some(next);
        // The replace carries the resourceVersion read: a concurrent taker gets 409.
        match self.api.replace(&lease.name_any(), &params(), &lease).await {
            Ok(written) => {
                self.observe(written.spec.unwrap_or_default());
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }
}

fn params() -> PostParams {
    PostParams {
        dry_run: false,
        field_manager: Some(crate::write::FIELD_MANAGER.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> LeaseConfig {
        LeaseConfig {
            namespace: "ns".into(),
            name: "lease".into(),
            identity: "me".into(),
            lease_duration: LEASE_DURATION,
            renew_deadline: RENEW_DEADLINE,
            retry_period: RETRY_PERIOD,
        }
    }

    #[test]
    fn the_renew_deadline_must_end_before_the_lease() {
        assert!(config().check().is_ok());
        let equal = LeaseConfig {
            renew_deadline: LEASE_DURATION,
            ..config()
        };
        assert!(
            equal
                .check()
                .unwrap_err()
                .to_string()
                .contains("shorter than the lease duration")
        );
        let tight = LeaseConfig {
            retry_period: Duration::from_secs(9),
            ..config()
        };
        assert!(
            tight
                .check()
                .unwrap_err()
                .to_string()
                .contains("1.2 retry periods")
        );
        let sub_second = LeaseConfig {
            lease_duration: Duration::from_millis(900),
            renew_deadline: Duration::from_millis(500),
            retry_period: Duration::from_millis(100),
            ..config()
        };
        assert!(sub_second.check().is_err());
        let fractional = LeaseConfig {
            lease_duration: Duration::from_millis(4500),
            ..config()
        };
        assert_eq!(fractional.lease_seconds(), 5, "rounded up");
    }

    #[test]
    fn the_gate_is_open_until_the_deadline_and_each_term_is_announced() {
        use futures::StreamExt;
        assert!(Leadership::always().may_write());
        let leadership = Leadership::candidate();
        assert!(!leadership.may_write());
        let mut acquired = Box::pin(leadership.acquired());
        leadership.grant(Instant::now() + Duration::from_secs(60));
        assert!(leadership.may_write());
        assert_eq!(
            futures::FutureExt::now_or_never(acquired.next()),
            Some(Some(()))
        );
        // A renewal is not a new term.
        leadership.grant(Instant::now() + Duration::from_secs(60));
        assert_eq!(futures::FutureExt::now_or_never(acquired.next()), None);
        // A deadline in the past closes the gate by itself.
        leadership.grant(Instant::now() - Duration::from_millis(1));
        assert!(!leadership.may_write());
        leadership.grant(Instant::now() + Duration::from_secs(60));
        assert_eq!(
            futures::FutureExt::now_or_never(acquired.next()),
            Some(Some(()))
        );
        leadership.revoke();
        assert!(!leadership.may_write());
    }

    #[test]
    fn identities_differ_and_name_the_pod() {
        let a = identity(Some("pod-a"));
        let b = identity(Some("pod-a"));
        assert!(a.starts_with("pod-a_"), "{a}");
        assert_ne!(a, b);
        assert_eq!(namespace(Some(" ns ")).expect("flag"), "ns");
    }
}
