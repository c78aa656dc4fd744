//! The controller's metrics, in the Prometheus text format (`prometheus-client`, as
//! kube-rs's controller-rs example uses), served on `/metrics` by the binary.
//!
//! Counters and the reconcile histogram are updated where things happen (the reconcile
//! wrapper, the error policy, the client's request layer). Everything that is a state
//! rather than an event (the Gateways by condition, cached objects, leadership, Gateways
//! backing off) is read at scrape time from the caches through [`Observe`]: a Gateway
//! that goes is gone from the next scrape, and a standby reports the same states as the
//! leader (it reads the same API server).
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `gateway_reconcile_reconciles_total` | counter | `result` |
//! | `gateway_reconcile_reconcile_duration_seconds` | histogram | |
//! | `gateway_reconcile_reconciles_in_flight` | gauge | |
//! | `gateway_reconcile_requeues_total` | counter | `kind` |
//! | `gateway_reconcile_backoff_gateways` | gauge | |
//! | `gateway_reconcile_api_requests_total` | counter | `verb`, `resource`, `code` |
//! | `gateway_reconcile_deployment_writes_total` | counter | `verb`, `outcome` |
//! | `gateway_reconcile_status_writes_total` | counter | `result` |
//! | `gateway_reconcile_cached_objects` | gauge | `kind` |
//! | `gateway_reconcile_unreadable_objects_total` | counter | `kind` |
//! | `gateway_reconcile_leader` | gauge | |
//! | `gateway_reconcile_leader_write_refusals_total` | counter | |
//! | `gateway_reconcile_own_write_echoes_total` | counter | `kind` (`deployment`, `status`) |
//! | `gateway_reconcile_gateways` | gauge | `condition`, `status` |
//! | `gateway_reconcile_gateway_condition` | gauge | `namespace`, `gateway`, `condition`, `status` |

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gateway_reconcile::{FailureClass, WriteOutcome};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The `Content-Type` of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// The Gateway conditions the metrics report (the ones the controller owns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Condition {
    /// `Accepted`.
    Accepted,
    /// `Programmed`.
    Programmed,
    /// `<domain>/ConfigurationApplied`.
    ConfigurationApplied,
    /// `<domain>/Degraded` (present only while True).
    Degraded,
}

impl Condition {
    /// All of them, in the order they are reported.
    pub const ALL: [Condition; 4] = [
        Condition::Accepted,
        Condition::Programmed,
        Condition::ConfigurationApplied,
        Condition::Degraded,
    ];

    /// The label value: the type without its domain.
    pub fn label(self) -> &'static str {
        match self {
            Condition::Accepted => "Accepted",
            Condition::Programmed => "Programmed",
            Condition::ConfigurationApplied => "ConfigurationApplied",
            Condition::Degraded => "Degraded",
        }
    }

    /// The condition a status condition `type_` is, with the controller's `domain`.
    pub fn of_type(type_: &str, domain: &str) -> Option<Condition> {
        match type_ {
            "Accepted" => Some(Condition::Accepted),
            "Programmed" => Some(Condition::Programmed),
            _ => match type_.strip_prefix(domain)?.strip_prefix('/')? {
                "ConfigurationApplied" => Some(Condition::ConfigurationApplied),
                "Degraded" => Some(Condition::Degraded),
                _ => None,
            },
        }
    }
}

/// One Gateway of ours as its status says, for the condition gauges.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayState {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its owned conditions present in the status, with their `status` (`True`, `False`,
    /// `Unknown`).
    pub conditions: Vec<(Condition, String)>,
}

/// What the metrics read at scrape time.
pub trait Observe: Send + Sync {
    /// Objects in each watch cache, by kind.
    fn cached_objects(&self) -> Vec<(&'static str, usize)>;
    /// The Gateways of the controller's classes, as the cache has them.
    fn gateways(&self) -> Vec<GatewayState>;
    /// Whether this process leads (always with leader election off).
    fn leader(&self) -> bool;
    /// Gateways whose last reconciles did not settle (backing off).
    fn backing_off(&self) -> usize;
}

/// How a reconcile ended, for `reconciles_total{result}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReconcileResult {
    /// Settled (whatever the core decided, a failed Deployment write included).
    Success,
    /// An object the core cannot work with.
    InputError,
    /// The status write failed.
    StatusWriteError,
    /// A cache closed (shutting down).
    CacheClosed,
    /// A read the caches could not answer failed (the GET of an own LB Deployment that
    /// lost its managed-by label).
    ReadError,
}

impl ReconcileResult {
    fn label(self) -> &'static str {
        match self {
            ReconcileResult::Success => "success",
            ReconcileResult::InputError => "input_error",
            ReconcileResult::StatusWriteError => "status_write_error",
            ReconcileResult::CacheClosed => "cache_closed",
            ReconcileResult::ReadError => "read_error",
        }
    }
}

/// Why a Gateway is reconciled again, for `requeues_total{kind}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequeueKind {
    /// An "at once" requeue, taken through the Gateway's backoff.
    Backoff,
    /// A requeue after a delay the core chose.
    Scheduled,
    /// A failed reconcile (error policy).
    Error,
}

impl RequeueKind {
    fn label(self) -> &'static str {
        match self {
            RequeueKind::Backoff => "backoff",
            RequeueKind::Scheduled => "scheduled",
            RequeueKind::Error => "error",
        }
    }
}

type Labels<const N: usize> = [(&'static str, &'static str); N];
type OwnedLabels = Vec<(&'static str, String)>;

/// The controller's metrics registry.
pub struct Metrics {
    registry: Registry,
    reconciles: Family<Labels<1>, Counter>,
    reconcile_duration: Histogram,
    in_flight: Gauge,
    requeues: Family<Labels<1>, Counter>,
    api_requests: Family<OwnedLabels, Counter>,
    deployment_writes: Family<Labels<2>, Counter>,
    status_writes: Family<Labels<1>, Counter>,
    unreadable: Family<Labels<1>, Counter>,
    write_refusals: Counter,
    echoes: Family<Labels<1>, Counter>,
    observed: Arc<Mutex<Option<Arc<dyn Observe>>>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// A registry with every metric at zero and nothing observed yet.
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let reconciles = Family::<Labels<1>, Counter>::default();
        registry.register(
            "gateway_reconcile_reconciles",
            "Reconciles of Gateways, by result",
            reconciles.clone(),
        );
        // 5 ms to 41 s.
        let reconcile_duration = Histogram::new(exponential_buckets(0.005, 2.0, 14));
        registry.register(
            "gateway_reconcile_reconcile_duration_seconds",
            "How long a reconcile of one Gateway takes, its API requests included",
            reconcile_duration.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "gateway_reconcile_reconciles_in_flight",
            "Reconciles running now (kube-runtime does not expose its queue)",
            in_flight.clone(),
        );
        let requeues = Family::<Labels<1>, Counter>::default();
        registry.register(
            "gateway_reconcile_requeues",
            "Gateways scheduled to reconcile again, by kind: backoff (an at-once requeue through the Gateway's backoff), scheduled (the core's delay), error",
            requeues.clone(),
        );
        let api_requests = Family::<OwnedLabels, Counter>::default();
        registry.register(
            "gateway_reconcile_api_requests",
            "Requests to the API server, by verb, resource and HTTP code (error: no answer)",
            api_requests.clone(),
        );
        let deployment_writes = Family::<Labels<2>, Counter>::default();
        registry.register(
            "gateway_reconcile_deployment_writes",
            "LB Deployment writes, by verb and outcome class",
            deployment_writes.clone(),
        );
        let status_writes = Family::<Labels<1>, Counter>::default();
        registry.register(
            "gateway_reconcile_status_writes",
            "Gateway status writes, by result (written, conflict, failed)",
            status_writes.clone(),
        );
        let unreadable = Family::<Labels<1>, Counter>::default();
        registry.register(
            "gateway_reconcile_unreadable_objects",
            "Watched objects the core's types cannot read (each skipped alone), by kind",
            unreadable.clone(),
        );
        let write_refusals = Counter::default();
        registry.register(
            "gateway_reconcile_leader_write_refusals",
            "Writes refused in the process because it does not hold the lease",
            write_refusals.clone(),
        );
        let echoes = Family::<Labels<1>, Counter>::default();
        registry.register(
            "gateway_reconcile_own_write_echoes",
            "Watch events of the controller's own writes, which trigger no reconcile",
            echoes.clone(),
        );
        let observed: Arc<Mutex<Option<Arc<dyn Observe>>>> = Arc::default();
        registry.register_collector(Box::new(States {
            observed: observed.clone(),
        }));
        Metrics {
            registry,
            reconciles,
            reconcile_duration,
            in_flight,
            requeues,
            api_requests,
            deployment_writes,
            status_writes,
            unreadable,
            write_refusals,
            echoes,
            observed,
        }
    }

    /// Reads the states from `observed` from now on.
    pub fn observe(&self, observed: Arc<dyn Observe>) {
        *self.observed.lock().unwrap_or_else(|e| e.into_inner()) = Some(observed);
    }

    /// A reconcile began; the guard ends it (also when the reconcile is dropped).
    pub fn reconcile_started(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(self.in_flight.clone())
    }

    /// A reconcile ended with `result` after `took`.
    pub fn reconciled(&self, result: ReconcileResult, took: Duration) {
        self.reconciles
            .get_or_create(&[("result", result.label())])
            .inc();
        self.reconcile_duration.observe(took.as_secs_f64());
    }

    /// A Gateway was scheduled again.
    pub fn requeued(&self, kind: RequeueKind) {
        self.requeues.get_or_create(&[("kind", kind.label())]).inc();
    }

    /// One request to the API server and its answer (`None`: no answer).
    pub fn api_request(&self, verb: &'static str, resource: &str, code: Option<u16>) {
        let code = code.map_or_else(|| "error".to_owned(), |c| c.to_string());
        self.api_requests
            .get_or_create(&vec![
                ("verb", verb.to_owned()),
                ("resource", resource.to_owned()),
                ("code", code.clone()),
            ])
            .inc();
        if verb == "patch" && resource == "gateways/status" {
            let result = match code.as_str() {
                "409" => "conflict",
                c if c.starts_with('2') => "written",
                _ => "failed",
            };
            self.status_writes
                .get_or_create(&[("result", result)])
                .inc();
        }
    }

    /// A watch event brought an object of `kind` the core's type cannot read.
    pub fn unreadable(&self, kind: &'static str) {
        self.unreadable.get_or_create(&[("kind", kind)]).inc();
    }

    /// An LB Deployment write (`Create` or `Update`) and its outcome.
    pub fn deployment_write(&self, verb: &str, outcome: &WriteOutcome) {
        let verb = if verb == "Create" { "create" } else { "update" };
        let outcome = match outcome.class() {
            None => "applied",
            Some(FailureClass::Conflict) => "conflict",
            Some(FailureClass::AlreadyExists) => "already_exists",
            Some(FailureClass::NotFound) => "not_found",
            Some(FailureClass::Rejected) => "rejected",
            Some(FailureClass::Transient) => "transient",
            Some(_) => "other",
        };
        self.deployment_writes
            .get_or_create(&[("verb", verb), ("outcome", outcome)])
            .inc();
    }

    /// The watch event of an own write (`kind`: `deployment` or `status`), which triggered
    /// no reconcile.
    pub fn own_write_echo(&self, kind: &'static str) {
        self.echoes.get_or_create(&[("kind", kind)]).inc();
    }

    /// A write refused in the process: the lease is not held.
    pub fn write_refused(&self) {
        self.write_refusals.inc();
    }

    /// Everything, in the Prometheus text format (version 0.0.4).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail; an encoder error would leave a partial text.
        if let Err(e) =
            prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry)
        {
            let _ = writeln!(text, "# encoding failed: {e}");
        }
        text
    }
}

/// Counts a reconcile in flight until dropped.
#[derive(Debug)]
pub struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The scrape-time states (see [`Observe`]).
#[derive(Debug)]
struct States {
    observed: Arc<Mutex<Option<Arc<dyn Observe>>>>,
}

impl std::fmt::Debug for dyn Observe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observe")
    }
}

const STATUSES: [&str; 3] = ["True", "False", "Unknown"];

impl Collector for States {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(observed) = self
            .observed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        else {
            return Ok(());
        };

        let leader = ConstGauge::new(i64::from(observed.leader()));
        leader.encode(encoder.encode_descriptor(
            "gateway_reconcile_leader",
            "1 while this process holds the leader lease (always 1 with leader election off)",
            None,
            MetricType::Gauge,
        )?)?;

        let backing_off = ConstGauge::new(observed.backing_off() as i64);
        backing_off.encode(encoder.encode_descriptor(
            "gateway_reconcile_backoff_gateways",
            "Gateways whose last reconciles did not settle, waiting in their backoff",
            None,
            MetricType::Gauge,
        )?)?;

        let mut cached = encoder.encode_descriptor(
            "gateway_reconcile_cached_objects",
            "Objects in the watch caches, by kind",
            None,
            MetricType::Gauge,
        )?;
        for (kind, count) in observed.cached_objects() {
            ConstGauge::new(count as i64).encode(cached.encode_family(&[("kind", kind)])?)?;
        }

        let gateways = observed.gateways();
        let mut counts = std::collections::BTreeMap::new();
        for condition in Condition::ALL {
            for status in STATUSES {
                counts.insert((condition, status), 0i64);
            }
        }
        for gateway in &gateways {
            for (condition, status) in &gateway.conditions {
                if let Some(n) = STATUSES
                    .iter()
                    .find(|s| *s == status)
                    .and_then(|s| counts.get_mut(&(*condition, *s)))
                {
                    *n += 1;
                }
            }
        }
        let mut by_status = encoder.encode_descriptor(
            "gateway_reconcile_gateways",
            "Gateways of the controller's classes, by the status of each owned condition (Degraded is present only while True)",
            None,
            MetricType::Gauge,
        )?;
        for ((condition, status), n) in counts {
            ConstGauge::new(n).encode(
                by_status.encode_family(&[("condition", condition.label()), ("status", status)])?,
            )?;
        }

        let mut each = encoder.encode_descriptor(
            "gateway_reconcile_gateway_condition",
            "1 for each owned condition a Gateway of the controller's classes has, with its status",
            None,
            MetricType::Gauge,
        )?;
        for gateway in &gateways {
            for (condition, status) in &gateway.conditions {
                let labels: OwnedLabels = vec![
                    ("namespace", gateway.namespace.clone()),
                    ("gateway", gateway.name.clone()),
                    ("condition", condition.label().to_owned()),
                    ("status", status.clone()),
                ];
                ConstGauge::new(1i64).encode(each.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Mutex<Vec<GatewayState>>);

    impl Observe for Fixed {
        fn cached_objects(&self) -> Vec<(&'static str, usize)> {
            vec![("Gateway", 2), ("Deployment", 5)]
        }
        fn gateways(&self) -> Vec<GatewayState> {
            self.0.lock().expect("lock").clone()
        }
        fn leader(&self) -> bool {
            true
        }
        fn backing_off(&self) -> usize {
            1
        }
    }

    fn gateway(name: &str, applied: &str) -> GatewayState {
        GatewayState {
            namespace: "ns".into(),
            name: name.into(),
            conditions: vec![
                (Condition::Programmed, "True".into()),
                (Condition::ConfigurationApplied, applied.into()),
            ],
        }
    }

    /// The sample lines of `text` (no comments).
    fn samples(text: &str) -> Vec<&str> {
        text.lines().filter(|l| !l.starts_with('#')).collect()
    }

    #[test]
    fn condition_types_are_read_with_the_domain() {
        let d = "meridio-2.nordix.org";
        assert_eq!(
            Condition::of_type("meridio-2.nordix.org/ConfigurationApplied", d),
            Some(Condition::ConfigurationApplied)
        );
        assert_eq!(
            Condition::of_type("meridio-2.nordix.org/Degraded", d),
            Some(Condition::Degraded)
        );
        assert_eq!(
            Condition::of_type("Programmed", d),
            Some(Condition::Programmed)
        );
        assert_eq!(Condition::of_type("other.io/Degraded", d), None);
        assert_eq!(Condition::of_type("ConfigurationApplied", d), None);
    }

    #[test]
    fn events_are_counted_in_the_text_format() {
        let metrics = Metrics::new();
        metrics.reconciled(ReconcileResult::Success, Duration::from_millis(3));
        metrics.reconciled(ReconcileResult::Success, Duration::from_millis(30));
        metrics.reconciled(ReconcileResult::StatusWriteError, Duration::from_millis(30));
        metrics.requeued(RequeueKind::Backoff);
        metrics.api_request("patch", "gateways/status", Some(409));
        metrics.api_request("patch", "gateways/status", Some(200));
        metrics.api_request("watch", "deployments", None);
        metrics.deployment_write("Create", &WriteOutcome::Applied);
        metrics.deployment_write(
            "Update",
            &WriteOutcome::from_parts(Some(409), "Conflict", "stale"),
        );
        {
            let _running = metrics.reconcile_started();
            assert!(
                samples(&metrics.encode()).contains(&"gateway_reconcile_reconciles_in_flight 1")
            );
        }
        let text = metrics.encode();
        let lines = samples(&text);
        for expected in [
            r#"gateway_reconcile_reconciles_total{result="success"} 2"#,
            r#"gateway_reconcile_reconciles_total{result="status_write_error"} 1"#,
            "gateway_reconcile_reconcile_duration_seconds_count 3",
            r#"gateway_reconcile_reconcile_duration_seconds_bucket{le="0.005"} 1"#,
            "gateway_reconcile_reconciles_in_flight 0",
            r#"gateway_reconcile_requeues_total{kind="backoff"} 1"#,
            r#"gateway_reconcile_api_requests_total{verb="patch",resource="gateways/status",code="409"} 1"#,
            r#"gateway_reconcile_api_requests_total{verb="watch",resource="deployments",code="error"} 1"#,
            r#"gateway_reconcile_status_writes_total{result="conflict"} 1"#,
            r#"gateway_reconcile_status_writes_total{result="written"} 1"#,
            r#"gateway_reconcile_deployment_writes_total{verb="create",outcome="applied"} 1"#,
            r#"gateway_reconcile_deployment_writes_total{verb="update",outcome="conflict"} 1"#,
        ] {
            assert!(lines.contains(&expected), "{expected} missing from\n{text}");
        }
        assert!(text.contains("# TYPE gateway_reconcile_reconciles_total counter"));
        // Nothing observed yet: no state metrics.
        assert!(!text.contains("gateway_reconcile_leader "), "{text}");
    }

    #[test]
    fn gateway_states_are_read_at_scrape_time_and_a_gone_gateway_leaves() {
        let metrics = Metrics::new();
        let observed = Arc::new(Fixed(Mutex::new(vec![
            gateway("a", "True"),
            gateway("b", "False"),
        ])));
        metrics.observe(observed.clone());
        let text = metrics.encode();
        let lines = samples(&text);
        for expected in [
            "gateway_reconcile_leader 1",
            "gateway_reconcile_backoff_gateways 1",
            r#"gateway_reconcile_cached_objects{kind="Deployment"} 5"#,
            r#"gateway_reconcile_gateways{condition="Programmed",status="True"} 2"#,
            r#"gateway_reconcile_gateways{condition="ConfigurationApplied",status="True"} 1"#,
            r#"gateway_reconcile_gateways{condition="ConfigurationApplied",status="False"} 1"#,
            r#"gateway_reconcile_gateways{condition="Degraded",status="True"} 0"#,
            r#"gateway_reconcile_gateway_condition{namespace="ns",gateway="b",condition="ConfigurationApplied",status="False"} 1"#,
        ] {
            assert!(lines.contains(&expected), "{expected} missing from\n{text}");
        }
        // b goes: its series goes with it.
        observed.0.lock().expect("lock").pop();
        let text = metrics.encode();
        assert!(!text.contains(r#"gateway="b""#), "{text}");
        assert!(samples(&text).contains(
            &r#"gateway_reconcile_gateways{condition="ConfigurationApplied",status="False"} 0"#
        ));
    }
}
