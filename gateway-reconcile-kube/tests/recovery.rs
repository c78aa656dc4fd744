//! Failures and recovery, stories on a real kube-apiserver: a Deployment update rejected
//! (422), failing (a webhook's 500) or refused with 503, reported and recovered from, also
//! across a restart and by the rejection backoff; a stale read and a Deployment appearing
//! before a create; a status time past year 9999; a GatewayConfiguration the core cannot
//! read.
//! `e2e/run.sh` runs them under the control plane with `--ignored`; their harness (a
//! story's namespace, GatewayClass and in-process controller) is `common::story`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use gateway_reconcile::Settings;
use gateway_reconcile::reconcile::{Reader, View};
use gateway_reconcile_kube::controller;
use gateway_reconcile_kube::fresh::FreshPort;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

mod common;
use common::*;
// The webhooks the tests serve on loopback (shared with the scenario replay).
use common::webhook as served_webhook;

/// A ValidatingAdmissionPolicy (and its binding) that refuses every Deployment update in
/// the story's namespace with 422.
fn refusing_policy(story: &Story) -> (Value, Value) {
    let name = format!("refuse-{}", story.ns);
    let policy = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": { "name": name },
        "spec": { "failurePolicy": "Fail",
            "matchConstraints": { "resourceRules": [{ "apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["UPDATE"], "resources": ["deployments"] }] },
            "validations": [{ "expression": "false", "message": "e2e: updates refused", "reason": "Invalid" }] } });
    let binding = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": { "name": name },
        "spec": { "policyName": name, "validationActions": ["Deny"],
            "matchResources": { "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": story.ns } } } } });
    (policy, binding)
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_rejected_update_is_degraded_at_once_and_recovers() {
    let mut story = Story::new(Settings {
        resync: Some(Duration::from_secs(2)),
        ..settings()
    })
    .await;
    story.healthy_gateway().await;
    let (policy, binding) = refusing_policy(&story);
    create(&story.admin, policy.clone()).await;
    create(&story.admin, binding.clone()).await;
    until_dry_run_update(
        &story,
        "refuse a dry-run update with the policy's 422",
        |answer| {
            matches!(answer, Err(kube::Error::Api(s))
                if s.code == 422 && s.message.contains("e2e: updates refused"))
        },
    )
    .await;
    let before = story.requests().len();
    story.enforce_replicas(3).await;
    let c = story
        .wait_conditions("gw", "ApplyRejected", |c| {
            is(c, &applied(), "False", "ApplyRejected")
        })
        .await;
    // Degraded in the same status write as the rejection.
    assert!(is(&c, &degraded(), "True", "ApplyRejected"), "{c:#?}");
    assert!(is(&c, "Programmed", "True", "Programmed"), "{c:#?}");
    let message = c["Programmed"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("generation 2 not applied yet"),
        "{message}"
    );
    let message = c[&applied()]["message"].as_str().unwrap_or_default();
    assert!(message.contains("e2e: updates refused"), "{message}");
    let requests = story.requests().split_off(before);
    let rejected = requests
        .iter()
        .filter(|r| r.verb == "update" && r.resource == "deployments" && r.code == 422)
        .count();
    assert!(rejected >= 1, "{requests:#?}");
    // Events follow the status write that reports them.
    let status = requests
        .iter()
        .position(|r| r.subresource == "status" && r.code == 200)
        .expect("a status write");
    let event = requests
        .iter()
        .position(|r| r.resource == "events" && r.verb == "create")
        .expect("an Event");
    assert!(status < event, "{requests:#?}");

    delete(&story.admin, &binding).await;
    delete(&story.admin, &policy).await;
    let c = story.recovered().await;
    let message = c["Programmed"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("LB Deployment reconciled with GatewayConfiguration generation 2"),
        "{message}"
    );
    let deployment = story.get("Deployment", "sllbr-gw").await;
    assert_eq!(deployment["spec"]["replicas"], 3);
    story.stop().await;
}

/// A webhook that fails every Deployment update in the story's namespace: its URL is a
/// closed port, with `failurePolicy: Fail` (500 InternalError).
fn unreachable_webhook(story: &Story) -> Value {
    webhook(
        story,
        &format!("down-{}", story.ns),
        "https://127.0.0.1:1/validate",
        "Fail",
    )
}

/// Healthy, then a GatewayConfiguration edit whose update keeps failing until Degraded.
async fn failing_until_degraded(degraded_after: Duration) -> (Story, Value, usize) {
    let story = Story::new(Settings {
        degraded_after,
        ..settings()
    })
    .await;
    story.healthy_gateway().await;
    let hook = unreachable_webhook(&story);
    create(&story.admin, hook.clone()).await;
    until_dry_run_update(
        &story,
        "fail a dry-run update calling the unreachable webhook",
        |answer| {
            matches!(answer, Err(kube::Error::Api(s))
                if s.code == 500 && s.message.contains("failed calling webhook \"hold.e2e.example\""))
        },
    )
    .await;
    let before = story.requests().len();
    story.enforce_replicas(3).await;
    let c = story
        .wait_conditions("gw", "ApplyFailed", |c| {
            is(c, &applied(), "False", "ApplyFailed")
        })
        .await;
    assert!(is(&c, "Programmed", "True", "Programmed"), "{c:#?}");
    assert!(
        !c.contains_key(&degraded()),
        "Degraded before degradedAfter: {c:#?}"
    );
    let message = c[&applied()]["message"].as_str().unwrap_or_default();
    assert!(message.contains("failed calling webhook"), "{message}");
    let c = story
        .wait_conditions("gw", "Degraded", |c| {
            is(c, &degraded(), "True", "ApplyFailing")
        })
        .await;
    assert!(is(&c, &applied(), "False", "ApplyFailed"), "{c:#?}");
    (story, hook, before)
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_failing_webhook_is_apply_failed_then_degraded_then_recovers() {
    let (mut story, hook, before) = failing_until_degraded(Duration::from_secs(3)).await;
    let requests = story.requests().split_off(before);
    let failed = requests
        .iter()
        .filter(|r| r.verb == "update" && r.resource == "deployments" && r.code == 500)
        .count();
    assert!(failed >= 2, "retried with backoff: {requests:#?}");
    delete(&story.admin, &hook).await;
    story.recovered().await;
    story.stop().await;
}

/// A 503 on the LB Deployment's update (an admission webhook answering "unavailable")
/// reaches the core after the client's short retry budget: the status says `ApplyFailed`
/// within seconds, after `1 + CLIENT_RETRIES` update requests. kube-rs's default client
/// retry would send that update 16 times over minutes before the core heard of it
/// (`controller::client` replaces it).
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_write_refused_with_503_reaches_the_status_within_seconds() {
    const DOWN: &str = "the LB admission service is down";
    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    let dir = env("E2E_DIR");
    let served = served_webhook::deny(&dir, 503, "ServiceUnavailable", DOWN)
        .await
        .expect("webhook");
    let mut hook = webhook(
        &story,
        &format!("unavailable-{}", story.ns),
        &served.url,
        "Fail",
    );
    hook["webhooks"][0]["clientConfig"]["caBundle"] =
        json!(served_webhook::ca_bundle(&dir).expect("CA"));
    hook["webhooks"][0]["timeoutSeconds"] = json!(served_webhook::REQUEST_TIMEOUT.as_secs());
    create(&story.admin, hook.clone()).await;

    until_dry_run_update(
        &story,
        "refuse a dry-run update with the webhook's 503",
        |answer| matches!(answer, Err(kube::Error::Api(s)) if s.code == 503),
    )
    .await;

    let before = story.requests().len();
    let edited = Instant::now();
    story.enforce_replicas(3).await;
    let c = story
        .wait_conditions_within(
            "gw",
            "ApplyFailed",
            |c| is(c, &applied(), "False", "ApplyFailed"),
            Duration::from_secs(10),
        )
        .await;
    println!("ApplyFailed {:?} after the edit", edited.elapsed());
    let message = c[&applied()]["message"].as_str().unwrap_or_default();
    assert!(message.contains(DOWN), "{message}");
    assert!(is(&c, "Programmed", "True", "Programmed"), "{c:#?}");

    // In the audit log: the update requests before the status write that reported them.
    let start = Instant::now();
    let updates = loop {
        let requests = story.requests().split_off(before);
        if let Some(at) = requests.iter().position(|r| {
            r.verb == "patch" && r.resource == "gateways" && r.subresource == "status"
        }) {
            break requests[..at].to_vec();
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "no status write in the audit log: {requests:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let refused = count(&updates, "update", "deployments", "");
    assert_eq!(
        refused,
        1 + controller::CLIENT_RETRIES as usize,
        "one update and the client's retries, then the status: {updates:#?}"
    );
    assert!(
        updates
            .iter()
            .filter(|r| r.verb == "update")
            .all(|r| r.code == 503),
        "{updates:#?}"
    );

    delete(&story.admin, &hook).await;
    drop(served);
    story.recovered().await;
    story.stop().await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_restart_mid_failure_keeps_the_status_and_writes_nothing_more() {
    let (mut story, hook, _) = failing_until_degraded(Duration::from_secs(3)).await;
    story.stop().await;
    let before_restart = conditions(&story.get("Gateway", "gw").await);
    let count_before = story.requests().len();
    story.start().await;
    // Long enough for the new controller to sync, reconcile and retry a few times.
    let requests = settle_and_collect(&story, count_before, Duration::from_secs(6)).await;
    let after_restart = conditions(&story.get("Gateway", "gw").await);
    assert_eq!(
        before_restart, after_restart,
        "the status changed on restart"
    );
    assert_eq!(
        count(&requests, "patch", "gateways", "status"),
        0,
        "{requests:#?}"
    );
    assert!(
        requests
            .iter()
            .filter(|r| matches!(r.verb.as_str(), "create" | "update" | "patch"))
            .all(|r| r.resource == "deployments" && r.code == 500),
        "a write other than a failing Deployment update: {requests:#?}"
    );
    delete(&story.admin, &hook).await;
    story.recovered().await;
    story.stop().await;
}

/// The kube crate's `FreshPort` with another client acting in the read-to-write window:
/// the read may be edited as a stale cache would show it, and between the plan and the
/// write the other client changes the Deployment or creates one of the LB name.
struct Meanwhile<'s> {
    inner: gateway_reconcile_kube::fresh::FreshPort,
    story: &'s Story,
    /// Show the LB Deployment with an owned field edited (so that the plan is an update).
    edit_read: bool,
    /// What the other client created before the write (a create's window).
    foreign: Option<DynamicObject>,
}

/// The reads are the inner port's, the Deployment's edited when asked.
impl Reader for Meanwhile<'_> {
    type Error = gateway_reconcile_kube::fresh::FreshError;
    type Gateway = <FreshPort as Reader>::Gateway;
    type Class = <FreshPort as Reader>::Class;
    type Configuration = <FreshPort as Reader>::Configuration;
    type Deployment = gateway_reconcile::wire::Deployment;

    async fn gateway(&mut self) -> Result<View<Self::Gateway>, Self::Error> {
        self.inner.gateway().await
    }
    async fn class(&mut self, name: &str) -> Result<Option<Self::Class>, Self::Error> {
        self.inner.class(name).await
    }
    async fn configuration(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Self::Configuration>, Self::Error> {
        self.inner.configuration(namespace, name).await
    }
    async fn deployment(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Self::Deployment>, Self::Error> {
        let Some(held) = self.inner.deployment(namespace, name).await? else {
            return Ok(None);
        };
        let mut observed = held.read().expect("a readable Deployment").to_json();
        if self.edit_read {
            observed["spec"]["template"]["spec"]["serviceAccountName"] = json!("edited");
        }
        Ok(Some(serde_json::from_value(observed).expect("deployment")))
    }
    async fn routes(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<gateway_reconcile::wire::L34Route>, Self::Error> {
        self.inner.routes(namespace, name).await
    }
    async fn namespace_labels(
        &mut self,
        name: &str,
    ) -> Result<Option<gateway_reconcile::reconcile::Labels>, Self::Error> {
        self.inner.namespace_labels(name).await
    }
    fn template(&mut self) -> std::sync::Arc<gateway_reconcile::wire::Deployment> {
        self.inner.template()
    }
}

impl gateway_reconcile::reconcile::Port for Meanwhile<'_> {
    type Error = gateway_reconcile_kube::fresh::FreshError;
    type Reader = Self;

    fn reader(&mut self) -> &mut Self {
        self
    }

    async fn write(
        &mut self,
        write: gateway_reconcile::DeploymentWrite,
    ) -> gateway_reconcile::WriteOutcome {
        match &write {
            // A stale read: another client writes the Deployment before the PUT.
            gateway_reconcile::DeploymentWrite::Update { .. } => {
                self.story
                    .patch(
                        "Deployment",
                        "sllbr-gw",
                        json!({ "metadata": { "annotations": { "example.com/meanwhile": "yes" } } }),
                    )
                    .await;
            }
            // A Deployment of the LB name, not ours, appears before the POST.
            gateway_reconcile::DeploymentWrite::Create(_) => {
                self.foreign = Some(
                    create(
                        &self.story.admin,
                        json!({ "apiVersion": "apps/v1", "kind": "Deployment",
                            "metadata": { "name": "sllbr-other", "namespace": self.story.ns,
                                          "labels": { "owner": "someone-else" } },
                            "spec": { "replicas": 1, "selector": { "matchLabels": { "app": "web" } },
                                "template": { "metadata": { "labels": { "app": "web" } },
                                    "spec": { "containers": [{ "name": "web", "image": "registry.example/web:1" }] } } } }),
                    )
                    .await,
                );
            }
        }
        self.inner.write(write).await
    }

    async fn patch_status(
        &mut self,
        patch: gateway_reconcile::StatusPatch,
    ) -> Result<gateway_reconcile::reconcile::StatusWrite, Self::Error> {
        self.inner.patch_status(patch).await
    }

    async fn record(
        &mut self,
        action: gateway_reconcile::WriteKind,
        events: &[gateway_reconcile::events::Event],
    ) {
        self.inner.record(action, events).await;
    }
}

/// The read-to-write window, staged on the real server with the controller stopped: the
/// loop the controller ships (the core's `Driver`) over the kube crate's `FreshPort` (its
/// write verbs), another client writing in between. A PUT from the stale read is a 409
/// Conflict that the core retries at once, and leaves the other client's change in place;
/// a POST over a Deployment that appeared meanwhile, not ours, is a 409 AlreadyExists that
/// leaves it untouched (never a takeover), also retried at once.
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_stale_read_conflicts_and_a_deployment_appearing_before_create_is_never_taken() {
    use gateway_reconcile::reconcile::Driver;
    use gateway_reconcile::{FailureClass, Requeue, WriteKind};

    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    // From here on nothing but the test writes: the controller is stopped before `other`
    // exists, so it never creates `other`'s Deployment.
    story.stop().await;
    story.gateway("other", "conf").await;
    let template = std::sync::Arc::new(gateway_reconcile::template::default_template());
    let driver = Driver::new(settings());
    let port = |name: &str, edit_read| Meanwhile {
        inner: FreshPort::new(story.admin.clone(), template.clone(), &story.ns, name),
        story: &story,
        edit_read,
        foreign: None,
    };

    // A stale read: the Deployment as read has an owned field edited, so the plan is an
    // update; another client writes it before the PUT.
    let mut stale = port("gw", true);
    let reconciled = driver
        .reconcile(&mut stale, jiff::Timestamp::now())
        .await
        .expect("the reconcile");
    assert_eq!(reconciled.requeue, Requeue::Immediately);
    let decided = reconciled.decided.expect("decided");
    assert_eq!(decided.action, WriteKind::Update);
    assert_eq!(
        decided.outcome.as_ref().and_then(|o| o.class()),
        Some(FailureClass::Conflict),
        "{:?}",
        decided.outcome
    );
    let deployment = story.get("Deployment", "sllbr-gw").await;
    assert_eq!(
        deployment["metadata"]["annotations"]["example.com/meanwhile"],
        "yes"
    );
    assert_ne!(
        deployment["spec"]["template"]["spec"]["serviceAccountName"],
        "edited"
    );

    // A Deployment of the LB name, not ours, appears between the read (none) and the POST.
    let mut racing = port("other", false);
    let reconciled = driver
        .reconcile(&mut racing, jiff::Timestamp::now())
        .await
        .expect("the reconcile");
    assert_eq!(reconciled.requeue, Requeue::Immediately);
    let decided = reconciled.decided.expect("decided");
    assert_eq!(decided.action, WriteKind::Create);
    assert_eq!(
        decided.outcome.as_ref().and_then(|o| o.class()),
        Some(FailureClass::AlreadyExists),
        "{:?}",
        decided.outcome
    );
    let foreign = racing.foreign.take().expect("the foreign Deployment");
    let after = story.get("Deployment", "sllbr-other").await;
    assert_eq!(
        after["metadata"]["resourceVersion"].as_str(),
        foreign.resource_version().as_deref(),
        "the foreign Deployment was written"
    );
    assert!(after["metadata"]["ownerReferences"].is_null(), "{after:#}");
    assert_eq!(after["metadata"]["labels"]["owner"], "someone-else");
}

/// A condition time the API server accepts (RFC 3339, four-digit year) and k8s-openapi's
/// `Time` cannot hold (jiff's `Timestamp` ends at 9999-12-30T22:00:00Z).
const PAST_9999: &str = "9999-12-31T23:59:59Z";

/// An admin's status write: the Gateway's ConfigurationApplied turned False at [`PAST_9999`]
/// (the other conditions as they are). Returns the status as the server stored it.
async fn write_time_past_9999(story: &Story, gateway: &str) -> Value {
    let object = story.get("Gateway", gateway).await;
    let mut list = object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    list.retain(|c| c["type"] != applied());
    list.push(
        json!({ "type": applied(), "status": "False", "reason": "ApplyFailed",
                      "message": "written by an admin", "lastTransitionTime": PAST_9999,
                      "observedGeneration": object["metadata"]["generation"] }),
    );
    let written = story
        .api("Gateway")
        .patch_status(
            gateway,
            &PatchParams::default(),
            &Patch::Merge(&json!({ "status": { "conditions": list } })),
        )
        .await
        .expect("the API server accepts a time past 9999-12-30T22:00:00Z");
    serde_json::to_value(written).expect("json")["status"].clone()
}

/// Every condition of the Gateway has a time jiff can hold.
fn valid_times(c: &BTreeMap<String, Value>) -> bool {
    c.values().all(|c| {
        c["lastTransitionTime"]
            .as_str()
            .is_some_and(|t| t.parse::<jiff::Timestamp>().is_ok())
    })
}

/// Healthy again after the admin's write: ConfigurationApplied True with a valid time.
fn recovered_with_valid_times(c: &BTreeMap<String, Value>) -> bool {
    healthy(c) && valid_times(c)
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_status_time_past_year_9999_neither_blinds_the_controller_nor_stays() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
    use kube::core::Object;

    /// A Gateway as a typed client reads it: its conditions as k8s-openapi's `Condition`,
    /// whose `metav1.Time` is what the gateway-api crate's types hold too.
    #[derive(Clone, Debug, Default, serde::Deserialize)]
    struct TypedStatus {
        #[allow(dead_code)] // read only to show that it cannot be
        conditions: Vec<Condition>,
    }
    type TypedGateway = Object<Value, TypedStatus>;

    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    story.gateway("neighbour", "conf").await;
    story.wait_conditions("neighbour", "healthy", healthy).await;

    // While the controller runs (its Gateway watch sees the write).
    let status = write_time_past_9999(&story, "gw").await;
    let stored = conditions(&json!({ "status": status }));
    assert_eq!(
        stored[&applied()]["lastTransitionTime"],
        PAST_9999,
        "stored as written"
    );
    story.gateway("late", "conf").await;
    story.wait_conditions("late", "healthy", healthy).await;
    let start = Instant::now();
    story
        .wait_conditions("gw", "healthy with valid times", recovered_with_valid_times)
        .await;
    eprintln!(
        "running controller: gw recovered after {:?}",
        start.elapsed()
    );

    // Across a restart (the controller's first list holds the Gateway).
    story.stop().await;
    write_time_past_9999(&story, "gw").await;
    // The same time in the GatewayClass's and the GatewayConfiguration's status: each of
    // their caches must fill too before any Gateway is reconciled.
    let foreign = json!({ "status": { "conditions": [{ "type": "example.com/Checked",
        "status": "True", "reason": "Checked", "message": "written by an admin",
        "lastTransitionTime": PAST_9999 }] } });
    let class_api = api_for(
        &story.admin,
        &json!({ "apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                 "metadata": { "name": story.class } }),
    );
    class_api
        .patch_status(
            &story.class,
            &PatchParams::default(),
            &Patch::Merge(&foreign),
        )
        .await
        .expect("GatewayClass status");
    story
        .api("GatewayConfiguration")
        .patch_status("conf", &PatchParams::default(), &Patch::Merge(&foreign))
        .await
        .expect("GatewayConfiguration status");
    let typed = Api::<TypedGateway>::namespaced_with(
        story.admin.clone(),
        &story.ns,
        &resource("gateway.networking.k8s.io/v1", "Gateway"),
    );
    let get = typed
        .get("gw")
        .await
        .expect_err("a typed Gateway (k8s-openapi's Condition) cannot read it");
    eprintln!("typed get: {get}");
    let list = typed
        .list(&Default::default())
        .await
        .expect_err("nor a list that holds it");
    eprintln!("typed list: {list}");
    story.start().await;
    story.enforce_replicas(3).await;
    let generation_2 = |c: &BTreeMap<String, Value>| {
        recovered_with_valid_times(c)
            && c["Programmed"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("generation 2"))
    };
    let start = Instant::now();
    for gateway in ["gw", "neighbour", "late"] {
        story
            .wait_conditions(gateway, "generation 2 applied, valid times", generation_2)
            .await;
    }
    eprintln!(
        "restarted controller: all converged after {:?}",
        start.elapsed()
    );
    story.stop().await;
}

#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn a_rejected_update_is_retried_with_backoff_and_recovers_when_the_policy_goes() {
    // Default settings: no resync. Removing a policy wakes nothing the controller watches;
    // only the rejection backoff brings the Gateway back.
    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    let (policy, binding) = refusing_policy(&story);
    create(&story.admin, policy.clone()).await;
    create(&story.admin, binding.clone()).await;
    until_dry_run_update(
        &story,
        "refuse a dry-run update with the policy's 422",
        |answer| matches!(answer, Err(kube::Error::Api(s)) if s.code == 422),
    )
    .await;
    let before = story.requests().len();
    story.enforce_replicas(3).await;
    story
        .wait_conditions("gw", "ApplyRejected", |c| {
            is(c, &applied(), "False", "ApplyRejected")
                && is(c, &degraded(), "True", "ApplyRejected")
        })
        .await;
    // The first retry comes 30 s after the rejection and is rejected the same way: it writes
    // no status.
    let requests = settle_and_collect(&story, before, Duration::from_secs(36)).await;
    let rejected = requests
        .iter()
        .filter(|r| r.verb == "update" && r.resource == "deployments" && r.code == 422)
        .count();
    assert!((2..=3).contains(&rejected), "{requests:#?}");
    assert_eq!(
        count(&requests, "patch", "gateways", "status"),
        1,
        "{requests:#?}"
    );

    let removed = Instant::now();
    delete(&story.admin, &binding).await;
    delete(&story.admin, &policy).await;
    // The next retry is due at most the time ConfigurationApplied has been False later.
    story
        .wait_conditions_within(
            "gw",
            "recovered by the rejection backoff",
            |c| healthy(c) && !c.contains_key(&degraded()),
            Duration::from_secs(90),
        )
        .await;
    eprintln!(
        "recovered {:?} after the policy was removed",
        removed.elapsed()
    );
    assert_eq!(
        story.get("Deployment", "sllbr-gw").await["spec"]["replicas"],
        3
    );
    story.stop().await;
}

/// The GatewayConfiguration CRD, its `replicas` schema swapped for `schema`: the variant
/// CRD of [`an_unreadable_configuration_blinds_nothing_but_its_gateway`]. Returns the
/// schema it replaced.
async fn swap_replicas_schema(admin: &Client, schema: Value) -> Value {
    let crds: Api<DynamicObject> = Api::all_with(
        admin.clone(),
        &resource("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    );
    let name = format!("gatewayconfigurations.{DOMAIN}");
    let mut crd = serde_json::to_value(crds.get(&name).await.expect("the CRD")).expect("json");
    let versions = crd["spec"]["versions"].as_array_mut().expect("versions");
    let version = versions
        .iter_mut()
        .find(|v| v["name"] == "v1alpha1")
        .expect("v1alpha1");
    let replicas = &mut version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["horizontalScaling"]
        ["properties"]["replicas"];
    assert!(replicas.is_object(), "no replicas schema: {version:#}");
    let before = std::mem::replace(replicas, schema);
    let crd: DynamicObject = serde_json::from_value(crd).expect("crd");
    crds.replace(&name, &PostParams::default(), &crd)
        .await
        .expect("the variant CRD");
    before
}

/// One bad object never blinds the controller: a GatewayConfiguration the API server
/// accepts and the core's type cannot read is cached alone as unreadable. Meridio-2's CRD
/// admits no such object (its `replicas` is an integer, which the core reads as `i64`; the
/// server refuses one past 64 bits), so the story widens the CRD's `replicas` to
/// int-or-string, a CRD variant, while it creates one with `replicas: "many"`, then puts
/// the CRD back (the stored object stays). The Gateways on healthy configurations keep
/// reconciling, also after a restart lists the bad object among the others; the Gateway on
/// it is told (SPEC revision 4: `InvalidParameters`, `GatewayConfiguration "NAME" cannot
/// be read: WHY`, no Deployment), and recovers once an edit makes the object readable. A
/// CRD update ends every watch of the kind, so `e2e/run.sh` runs this story alone, after
/// the others.
#[tokio::test]
#[ignore = "needs a control plane: e2e/run.sh"]
async fn an_unreadable_configuration_blinds_nothing_but_its_gateway() {
    let mut story = Story::new(settings()).await;
    story.healthy_gateway().await;
    let original =
        swap_replicas_schema(&story.admin, json!({ "x-kubernetes-int-or-string": true })).await;
    let huge = json!({ "apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "GatewayConfiguration",
            "metadata": { "name": "huge", "namespace": story.ns },
            "spec": {
                "networkAttachments": [{ "type": "NAD", "nad": { "name": "vlan", "namespace": story.ns, "interface": "eth1" } }],
                "internalSubnets": [{ "attachmentType": "NAD", "cidr": "169.254.100.0/24" }],
                "horizontalScaling": { "replicas": "many", "enforceReplicas": true } } });
    // The variant applies a moment after the update.
    let start = Instant::now();
    let configurations = story.api("GatewayConfiguration");
    let object: DynamicObject = serde_json::from_value(huge).expect("object");
    loop {
        match configurations.create(&PostParams::default(), &object).await {
            Ok(_) => break,
            Err(e) => assert!(start.elapsed() < WAIT, "the variant CRD never applied: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    swap_replicas_schema(&story.admin, original).await;
    story.gateway("gw-bad", "huge").await;
    story.configuration("conf2", 1).await;
    story.gateway("gw2", "conf2").await;
    story.wait_conditions("gw2", "healthy", healthy).await;

    // A restarted controller lists the bad object with the good ones.
    story.stop().await;
    story.gateway("gw3", "conf2").await;
    story.start().await;
    story.wait_conditions("gw3", "healthy", healthy).await;
    story.enforce_replicas(3).await;
    story
        .wait_conditions("gw", "generation 2 applied", |c| {
            healthy(c)
                && c[&applied()]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("generation 2"))
        })
        .await;
    // The Gateway on the unreadable configuration is told so, and gets no Deployment.
    let c = story
        .wait_conditions("gw-bad", "InvalidParameters", |c| {
            is(c, "Accepted", "False", "InvalidParameters")
        })
        .await;
    let message = c["Accepted"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("GatewayConfiguration \"huge\" cannot be read: ")
            && message.contains("horizontalScaling.replicas"),
        "{message}"
    );
    assert!(is(&c, &applied(), "False", "InvalidParameters"), "{c:#?}");
    assert!(is(&c, "Programmed", "False", "Invalid"), "{c:#?}");
    let deployments = story
        .api("Deployment")
        .list(&Default::default())
        .await
        .expect("list");
    let names: Vec<String> = deployments.items.iter().map(|d| d.name_any()).collect();
    assert!(names.contains(&"sllbr-gw3".to_owned()), "{names:?}");
    assert!(!names.contains(&"sllbr-gw-bad".to_owned()), "{names:?}");
    // An edit makes it readable (the CRD is back to integers): the Gateway recovers.
    story
        .patch(
            "GatewayConfiguration",
            "huge",
            json!({ "spec": { "horizontalScaling": { "replicas": 2 } } }),
        )
        .await;
    story.wait_conditions("gw-bad", "healthy", healthy).await;
    story.get("Deployment", "sllbr-gw-bad").await;
    story.stop().await;
}
