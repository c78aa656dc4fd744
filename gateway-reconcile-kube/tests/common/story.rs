//! The in-process controller of the stories on a real kube-apiserver (`writes.rs`,
//! `recovery.rs`, `caches.rs`, `revision4.rs`; `e2e/run.sh` runs them under the control
//! plane with `--ignored`). Each story has its own namespace, GatewayClass and controller
//! instance (watching that namespace only), running in-process as the user
//! `gateway-reconcile-controller`, bound to `deploy/clusterrole.yaml` and nothing else.
//! Every assertion reads the API server's objects or its audit log, where the controller's
//! requests are told from the test's by `user.username`. Here: the story ([`Story`]), the
//! recording of a client's requests ([`Sent`]), and how a story sets up admission and waits
//! for it to take effect.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use gateway_reconcile::Settings;
use gateway_reconcile_kube::controller;
use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::events::Reporter;
use serde_json::{Value, json};

use super::{Audited, World, controller_requests, degraded, env, healthy, resource};

/// The requests a client sent (method, URI, `Accept`): a tower layer around its stack.
#[derive(Clone, Default)]
pub struct Sent(std::sync::Arc<std::sync::Mutex<Vec<(String, String, String)>>>);

impl Sent {
    /// The requests whose path holds `part`.
    pub fn to(&self, part: &str) -> Vec<(String, String, String)> {
        let sent = self.0.lock().expect("lock");
        sent.iter()
            .filter(|(_, uri, _)| uri.contains(part))
            .cloned()
            .collect()
    }
}

impl<S> tower::Layer<S> for Sent {
    type Service = Sending<S>;
    fn layer(&self, inner: S) -> Sending<S> {
        Sending {
            inner,
            sent: self.clone(),
        }
    }
}

/// See [`Sent`].
#[derive(Clone)]
pub struct Sending<S> {
    inner: S,
    sent: Sent,
}

impl<S, B> tower::Service<http::Request<B>> for Sending<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let accept = request
            .headers()
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        self.sent.0.lock().expect("lock").push((
            request.method().to_string(),
            request.uri().to_string(),
            accept,
        ));
        self.inner.call(request)
    }
}

/// A story's world: its namespace, GatewayClass and controller.
pub struct Story {
    world: World,
    pub settings: Settings,
    /// The controller watches every namespace (by default the story's alone).
    pub cluster_wide: bool,
    running: Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    )>,
}

/// A story reads and writes through its world.
impl std::ops::Deref for Story {
    type Target = World;
    fn deref(&self) -> &World {
        &self.world
    }
}

impl Story {
    pub async fn new(settings: Settings) -> Story {
        let mut story = Story::create(settings).await;
        story.start().await;
        story
    }

    /// A story's namespace and GatewayClass, with no controller yet.
    pub async fn create(settings: Settings) -> Story {
        // The controller's log, filtered by RUST_LOG (e.g. `gateway_reconcile_kube=debug`).
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
        Story {
            world: World::new("e2e-").await,
            settings,
            cluster_wide: false,
            running: None,
        }
    }

    /// Starts the controller as the user `gateway-reconcile-controller`.
    pub async fn start(&mut self) {
        let kubeconfig = kube::config::Kubeconfig::read_from(env("E2E_CONTROLLER_KUBECONFIG"))
            .expect("controller kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("controller config");
        self.start_with(config);
    }

    /// Starts the controller as `user`: the admin impersonating it (RBAC gives it what
    /// the story binds to it, nothing else).
    pub async fn start_as(&mut self, user: &str) {
        let mut config = kube::Config::infer().await.expect("admin config");
        config.auth_info.impersonate = Some(user.to_owned());
        self.start_with(config);
    }

    /// Starts the controller as the user `gateway-reconcile-controller`, with a client that
    /// records every request it sends: method, URI and `Accept` header.
    pub async fn start_recording(&mut self) -> Sent {
        self.start_recording_with(false).await
    }

    /// [`Story::start_recording`], its watches' initial lists streamed when `streaming`.
    pub async fn start_recording_with(&mut self, streaming: bool) -> Sent {
        let kubeconfig = kube::config::Kubeconfig::read_from(env("E2E_CONTROLLER_KUBECONFIG"))
            .expect("controller kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("controller config");
        let sent = Sent::default();
        let client = kube::client::ClientBuilder::try_from(config)
            .expect("client builder")
            .with_layer(&sent)
            .build();
        self.start_client(client, streaming);
        sent
    }

    fn start_with(&mut self, config: kube::Config) {
        let client = controller::client(config).expect("controller client");
        self.start_client(client, false);
    }

    fn start_client(&mut self, client: Client, streaming_lists: bool) {
        let config = controller::Config {
            settings: self.settings.clone(),
            template: gateway_reconcile::template::default_template(),
            namespace: (!self.cluster_wide).then(|| self.ns.clone()),
            reporter: Reporter {
                controller: "gateway-reconcile-controller".into(),
                instance: Some("e2e".into()),
            },
            concurrency: 4,
            streaming_lists,
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(controller::run(client, config, async move {
            let _ = stopped.await;
        }));
        self.running = Some((stop, task));
    }

    pub async fn stop(&mut self) {
        if let Some((stop, task)) = self.running.take() {
            let _ = stop.send(());
            tokio::time::timeout(Duration::from_secs(30), task)
                .await
                .expect("the controller stops within 30 s")
                .expect("the controller task");
        }
    }

    /// Waits until `gw` is healthy again with no Degraded, once what failed its writes
    /// is gone; the conditions then.
    pub async fn recovered(&self) -> BTreeMap<String, Value> {
        self.wait_conditions("gw", "recovered", |c| {
            healthy(c) && !c.contains_key(&degraded())
        })
        .await
    }

    /// The story's usual start: GatewayConfiguration `conf` (2 replicas), Gateway `gw` on it,
    /// and the controller's first reconciles done (Accepted, Programmed, Applied).
    pub async fn healthy_gateway(&self) {
        self.configuration("conf", 2).await;
        self.gateway("gw", "conf").await;
        self.wait_conditions("gw", "healthy", healthy).await;
    }

    pub fn requests(&self) -> Vec<Audited> {
        controller_requests(&self.ns)
    }
}

/// Lets the controller act on what just happened, then returns its requests since `before`.
pub async fn settle_and_collect(story: &Story, before: usize, quiet: Duration) -> Vec<Audited> {
    tokio::time::sleep(quiet).await;
    story.requests().split_off(before)
}

pub fn settings() -> Settings {
    Settings::default()
}

pub fn webhook(story: &Story, name: &str, url: &str, failure_policy: &str) -> Value {
    json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": { "name": name },
            "webhooks": [{ "name": "hold.e2e.example", "failurePolicy": failure_policy, "sideEffects": "None",
                "admissionReviewVersions": ["v1"], "timeoutSeconds": 2,
                "clientConfig": { "url": url },
                "rules": [{ "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["deployments"] }],
                "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": story.ns } } }] })
}

/// Waits until admission gives a dry-run update of the story's LB Deployment (a label;
/// admission runs on dry runs, nothing is stored) the answer `expected` looks for: how a
/// story sees a webhook or policy it just created take effect (not at once, and later on a
/// loaded machine), instead of sleeping. The probe client has the controller's short retry
/// budget: the admin's default one would retry a 503 for minutes.
pub async fn until_dry_run_update(
    story: &Story,
    what: &str,
    expected: impl Fn(&Result<DynamicObject, kube::Error>) -> bool,
) {
    let probe = controller::client(kube::Config::infer().await.expect("admin config"))
        .expect("probe client");
    let deployments: Api<DynamicObject> =
        Api::namespaced_with(probe, &story.ns, &resource("apps/v1", "Deployment"));
    let dry_run = PatchParams {
        dry_run: true,
        ..PatchParams::default()
    };
    let label = json!({ "metadata": { "labels": { "probe": "1" } } });
    let mut last = None;
    super::webhook::until_admission(what, async || {
        let sent = Instant::now();
        let answer = deployments
            .patch("sllbr-gw", &dry_run, &Patch::Merge(&label))
            .await;
        let took = sent.elapsed();
        let done = expected(&answer);
        last = Some((answer.map(|_| "accepted"), took));
        Ok(done)
    })
    .await
    .unwrap_or_else(|e| panic!("{e}; last answer: {last:?}"));
}
