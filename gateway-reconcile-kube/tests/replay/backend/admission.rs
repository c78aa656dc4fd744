//! The faults a scenario asks for, made through admission objects on the real server:
//! `failWrites` through a ValidatingAdmissionPolicy (422), a validating webhook served on
//! loopback (any other code) or a concurrent update (an update's 409, made by the port),
//! `mutateWrites` through a mutating webhook; each waits until admission is seen to act,
//! or to stop acting, and skips the scenario when the real server's message for the
//! failure could not meet the file's expectations.

use gateway_reconcile::sim::cluster::Kind;
use gateway_reconcile::sim::scenario::StepError;
use gateway_reconcile::{FailureClass, WriteOutcome};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

use super::{CONTROLLER_USER, Real, Step, api_text, ar, dynamic, failed, merge, str_at};

/// The name of the webhook serving write failures, as the API server quotes it.
const WEBHOOK_NAME: &str = "deny.replay.e2e.example";
/// The name of the webhook that changes the controller's Deployment writes (`mutateWrites`).
const MUTATING_WEBHOOK_NAME: &str = "mutate.replay.e2e.example";
/// The name of the throwaway Deployment the admission probes create with `dryRun`.
const PROBE_NAME: &str = "replay-admission-probe";

/// How the pending `failWrites` are made.
#[derive(Debug)]
pub(super) enum Admission {
    /// A ValidatingAdmissionPolicy and its binding (both named this).
    Policy(String),
    /// A ValidatingWebhookConfiguration (named this).
    Webhook(String),
    /// A concurrent update of the Deployment between plan and write.
    Conflict,
}

#[derive(Debug)]
pub(super) struct Pending {
    pub(super) remaining: u32,
    pub(super) admission: Admission,
    /// The failure the scenario asked for.
    pub(super) outcome: WriteOutcome,
}

impl Real {
    /// `mutateWrites`: a mutating webhook served on loopback applies `patch` to every
    /// Deployment write of the controller in the Gateway's namespace; `None` removes it.
    /// Waits until the server calls the webhook (or, removed, no longer does).
    pub(super) async fn mutate(&mut self, patch: Option<&Value>) -> Step<()> {
        let name = format!("{}-mutate", self.admission_name());
        if let Some(webhook) = self.mutation.take() {
            let api: Api<DynamicObject> = Api::all_with(
                self.admin.clone(),
                &admission_ar("MutatingWebhookConfiguration"),
            );
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) | Err(kube::Error::Api(_)) => {}
                Err(e) => return failed(format!("remove the mutating webhook: {e}")),
            }
            crate::common::webhook::until_admission(
                "stop calling the mutating webhook",
                async || Ok(!self.calls_webhook(&webhook).await?),
            )
            .await
            .or_else(failed)?;
        }
        let Some(patch) = patch.cloned() else {
            return Ok(());
        };
        let dir = std::env::var("E2E_DIR").or_else(|_| failed("E2E_DIR is not set"))?;
        let served = crate::common::webhook::mutate(&dir, move |object| {
            let mut changed = object.clone();
            merge(&mut changed, &patch);
            changed
        })
        .await
        .or_else(|e| failed(format!("webhook: {e}")))?;
        let ca_bundle = crate::common::webhook::ca_bundle(&dir).or_else(failed)?;
        let (_, rules, only_controller, selector) = self.admission_scope();
        let hook = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": { "name": name },
            "webhooks": [{ "name": MUTATING_WEBHOOK_NAME, "failurePolicy": "Fail", "sideEffects": "None",
                "admissionReviewVersions": ["v1"], "timeoutSeconds": crate::common::webhook::REQUEST_TIMEOUT.as_secs(),
                "reinvocationPolicy": "Never",
                "clientConfig": { "url": served.url, "caBundle": ca_bundle },
                "rules": rules, "matchConditions": only_controller, "namespaceSelector": selector }] });
        self.create_admission(hook).await?;
        crate::common::webhook::until_admission("call the mutating webhook", async || {
            self.calls_webhook(&served).await
        })
        .await
        .or_else(failed)?;
        self.mutation = Some(served);
        Ok(())
    }

    /// Whether a `dryRun` Deployment create of the controller's now reaches `webhook`.
    async fn calls_webhook(
        &self,
        webhook: &crate::common::webhook::Webhook,
    ) -> Result<bool, String> {
        let before = webhook.calls();
        let api = self.api(&self.controller, Kind::Deployment, self.namespace());
        let probe = dynamic(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": PROBE_NAME },
            "spec": { "selector": { "matchLabels": { "app": PROBE_NAME } },
                "template": { "metadata": { "labels": { "app": PROBE_NAME } },
                    "spec": { "containers": [{ "name": "probe", "image": "probe" }] } } }
        }))
        .map_err(|e| e.to_string())?;
        let params = PostParams {
            dry_run: true,
            field_manager: None,
        };
        match api.create(&params, &probe).await {
            Ok(_) => {}
            // Mutating admission runs before validating admission: a probe the pending
            // `failWrites` deny has been through the mutating webhook all the same.
            Err(kube::Error::Api(s)) if self.is_denial(&s.message) => {}
            Err(e) => return Err(format!("admission probe: {}", api_text(&e))),
        }
        Ok(webhook.calls() > before)
    }

    /// Whether `message` is a denial by the scenario's own validating admission.
    fn is_denial(&self, message: &str) -> bool {
        message.contains(WEBHOOK_NAME)
            || message.contains(&format!(
                "ValidatingAdmissionPolicy '{}'",
                self.admission_name()
            ))
    }

    /// Counts a failed write against the pending `failWrites`; removes the admission
    /// object after the last.
    pub(super) async fn failed_write(&mut self) -> Step<()> {
        let Some(pending) = self.pending.as_mut() else {
            return Ok(());
        };
        pending.remaining = pending.remaining.saturating_sub(1);
        if pending.remaining == 0
            && let Some(pending) = self.pending.take()
        {
            self.remove_admission(pending.admission).await?;
        }
        Ok(())
    }

    /// Removes an admission object and waits until the controller's writes pass again.
    async fn remove_admission(&mut self, admission: Admission) -> Step<()> {
        let delete = |api: Api<DynamicObject>, name: String| async move {
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
                Err(e) => failed(format!("remove admission: {}", api_text(&e))),
            }
        };
        match admission {
            Admission::Conflict => return Ok(()),
            Admission::Policy(name) => {
                delete(
                    Api::all_with(
                        self.admin.clone(),
                        &admission_ar("ValidatingAdmissionPolicyBinding"),
                    ),
                    name.clone(),
                )
                .await?;
                delete(
                    Api::all_with(
                        self.admin.clone(),
                        &admission_ar("ValidatingAdmissionPolicy"),
                    ),
                    name,
                )
                .await?;
            }
            Admission::Webhook(name) => {
                delete(
                    Api::all_with(
                        self.admin.clone(),
                        &admission_ar("ValidatingWebhookConfiguration"),
                    ),
                    name,
                )
                .await?;
            }
        }
        // The webhook keeps answering until the API server stops calling it.
        let waited = self.await_admission(false).await;
        self.webhook = None;
        waited
    }

    /// Whether the scenario's admission denies a Deployment write of the controller now:
    /// a `dryRun` create of a throwaway Deployment in the Gateway's namespace, as the
    /// controller (admission runs on dry runs; nothing is stored).
    async fn denied_now(&self) -> Step<bool> {
        let api = self.api(&self.controller, Kind::Deployment, self.namespace());
        let probe = dynamic(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": PROBE_NAME },
            "spec": { "selector": { "matchLabels": { "app": PROBE_NAME } },
                "template": { "metadata": { "labels": { "app": PROBE_NAME } },
                    "spec": { "containers": [{ "name": "probe", "image": "probe" }] } } }
        }))?;
        let params = PostParams {
            dry_run: true,
            field_manager: None,
        };
        match api.create(&params, &probe).await {
            Ok(_) => Ok(false),
            Err(kube::Error::Api(s)) if self.is_denial(&s.message) => Ok(true),
            Err(e) => failed(format!("admission probe: {}", api_text(&e))),
        }
    }

    /// Waits until the scenario's admission denies (`true`) or passes (`false`) the
    /// controller's Deployment writes: a policy or webhook configuration starts and stops
    /// applying some time after it is created or deleted.
    async fn await_admission(&self, denying: bool) -> Step<()> {
        let what = if denying {
            "start denying"
        } else {
            "stop denying"
        };
        crate::common::webhook::until_admission(what, async || {
            let denied = self.denied_now().await.map_err(|e| e.to_string())?;
            Ok(denied == denying)
        })
        .await
        .or_else(failed)
    }

    /// The name of the scenario's admission objects (cluster-scoped).
    fn admission_name(&self) -> String {
        format!("replay-{}", self.namespace().unwrap_or_default())
    }

    /// Skips the scenario when a condition message expected after the current `failWrites`
    /// step holds the failure's text and could not match the real server's message for it
    /// (`real`, which differs: admission prefixes it): an exact `message` holding the text,
    /// or a `messageContains` part holding it that the real message would not contain (see
    /// [`part_matches`]; a part that is the failure's text alone, or starts with it, still
    /// matches and runs).
    pub(super) fn check_text(&self, outcome: &WriteOutcome, real: &str) -> Step<()> {
        let text = outcome.message();
        if text.is_empty() || real == text {
            return Ok(());
        }
        let after = |list: &'_ [(u32, String)]| -> Vec<String> {
            list.iter()
                .filter(|(after, _)| *after >= self.fail_steps)
                .map(|(_, message)| message.clone())
                .collect()
        };
        if let Some(expected) = after(&self.exact_messages)
            .into_iter()
            .find(|m| m.contains(text))
        {
            return Err(StepError::Skip(format!(
                "the scenario expects the exact condition message {expected:?}, which holds the failure's text; the real server's text differs: {real:?}"
            )));
        }
        match after(&self.message_parts)
            .into_iter()
            .find(|part| !part_matches(part, text, real))
        {
            Some(part) => Err(StepError::Skip(format!(
                "the scenario expects a condition message containing {part:?}, which holds the failure's text with text before it; the real server's text differs ({real:?}), so the message would not contain it"
            ))),
            None => Ok(()),
        }
    }

    /// The message the API server gives for a denial by the scenario's policy.
    fn policy_text(&self, message: &str) -> Step<String> {
        let name = self.admission_name();
        Ok(format!(
            "deployments.apps {:?} is forbidden: ValidatingAdmissionPolicy '{name}' with binding '{name}' denied request: {message}",
            self.name_of(Kind::Deployment)?
        ))
    }

    /// The message the API server gives for a 409 `Conflict` of a stale update.
    fn conflict_text(&self) -> Step<String> {
        Ok(format!(
            "Operation cannot be fulfilled on deployments.apps {:?}: the object has been modified; please apply your changes to the latest version and try again",
            self.name_of(Kind::Deployment)?
        ))
    }

    pub(super) fn webhook_text(message: &str) -> String {
        format!("admission webhook \"{WEBHOOK_NAME}\" denied the request: {message}")
    }

    /// A ValidatingAdmissionPolicy (and binding) denying the controller's Deployment
    /// writes in the Gateway's namespace with 422 `Invalid` and the outcome's message.
    async fn install_policy(&mut self, outcome: &WriteOutcome) -> Step<Admission> {
        let (name, rules, only_controller, selector) = self.admission_scope();
        let policy = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": { "name": name },
            "spec": { "failurePolicy": "Fail", "matchConstraints": { "resourceRules": rules },
                "matchConditions": only_controller,
                "validations": [{ "expression": "false", "message": outcome.message(), "reason": "Invalid" }] } });
        let binding = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": { "name": name },
            "spec": { "policyName": name, "validationActions": ["Deny"],
                "matchResources": { "namespaceSelector": selector } } });
        for object in [policy, binding] {
            self.create_admission(object).await?;
        }
        let admission = Admission::Policy(name);
        self.await_admission(true).await?;
        Ok(admission)
    }

    /// A webhook served on loopback denying the controller's Deployment writes in the
    /// Gateway's namespace with the outcome's code, reason and message
    /// (`failurePolicy: Fail`, so a webhook that cannot be called fails the write too).
    pub(super) async fn install_webhook(&mut self, outcome: &WriteOutcome) -> Step<Admission> {
        let code = code_of(outcome).unwrap_or(500);
        let (name, rules, only_controller, selector) = self.admission_scope();
        let dir = std::env::var("E2E_DIR").or_else(|_| failed("E2E_DIR is not set"))?;
        let served =
            crate::common::webhook::deny(&dir, code, &outcome_reason(outcome), outcome.message())
                .await
                .or_else(|e| failed(format!("webhook: {e}")))?;
        let ca_bundle = crate::common::webhook::ca_bundle(&dir).or_else(failed)?;
        let hook = json!({ "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": { "name": name },
            "webhooks": [{ "name": WEBHOOK_NAME, "failurePolicy": "Fail", "sideEffects": "None",
                "admissionReviewVersions": ["v1"], "timeoutSeconds": crate::common::webhook::REQUEST_TIMEOUT.as_secs(),
                "clientConfig": { "url": served.url, "caBundle": ca_bundle },
                "rules": rules, "matchConditions": only_controller, "namespaceSelector": selector }] });
        self.webhook = Some(served);
        self.create_admission(hook).await?;
        let admission = Admission::Webhook(name);
        self.await_admission(true).await?;
        Ok(admission)
    }

    /// Creates one admission object (cluster-scoped) as the admin.
    async fn create_admission(&self, object: Value) -> Step<()> {
        let kind = str_at(&object, "/kind").unwrap_or_default().to_owned();
        Api::<DynamicObject>::all_with(self.admin.clone(), &admission_ar(&kind))
            .create(&PostParams::default(), &dynamic(object)?)
            .await
            .map(drop)
            .or_else(|e| failed(format!("{kind}: {}", api_text(&e))))
    }

    /// What the admission objects match: the controller's creates and updates of
    /// Deployments (not their status) in the Gateway's namespace, nothing of the admin's.
    fn admission_scope(&self) -> (String, Value, Value, Value) {
        let real_ns = self.namespace().unwrap_or_default().to_owned();
        (
            self.admission_name(),
            json!([{ "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments"] }]),
            json!([{ "name": "controller", "expression": format!("request.userInfo.username == '{CONTROLLER_USER}'") }]),
            json!({ "matchLabels": { "kubernetes.io/metadata.name": real_ns } }),
        )
    }

    /// Makes the next `count` Deployment writes of the controller fail with `outcome`:
    /// a 422 through a ValidatingAdmissionPolicy; an update's 409 `Conflict` through a
    /// real concurrent update between plan and write (a create's, which no concurrent
    /// update gives, through the webhook); any other code through the webhook.
    pub(super) async fn fail(&mut self, count: u32, outcome: &WriteOutcome) -> Step<()> {
        self.fail_steps += 1;
        if let Some(pending) = self.pending.take() {
            self.remove_admission(pending.admission).await?;
        }
        let admission = match (outcome.class(), code_of(outcome)) {
            (Some(FailureClass::Conflict), Some(409)) => {
                self.check_text(outcome, &self.conflict_text()?)?;
                Admission::Conflict
            }
            (_, Some(422)) => {
                self.check_text(outcome, &self.policy_text(outcome.message())?)?;
                self.install_policy(outcome).await?
            }
            (_, Some(_)) => {
                self.check_text(outcome, &Self::webhook_text(outcome.message()))?;
                self.install_webhook(outcome).await?
            }
            (_, None) => {
                return Err(StepError::Skip(
                    "a transport error (no HTTP status) cannot come from admission, which always answers with one; and the kube client's own connection errors do not have the scenario's text (Go's `dial tcp ...`)".into(),
                ));
            }
        };
        self.pending = Some(Pending {
            remaining: count,
            admission,
            outcome: outcome.clone(),
        });
        Ok(())
    }

    /// Stops the pending `failWrites`: removes their admission object and waits until the
    /// controller's writes pass again (the end of a fault schedule).
    pub fn stop_failures(&mut self) -> Result<(), String> {
        let rt = self.rt.clone();
        rt.block_on(async {
            match self.pending.take() {
                Some(pending) => self
                    .remove_admission(pending.admission)
                    .await
                    .map_err(|e| e.to_string()),
                None => Ok(()),
            }
        })
    }

    /// Removes what the scenario left at cluster scope (namespaces stay: they never finish
    /// deleting here).
    pub fn clean_up(&mut self) {
        let rt = self.rt.clone();
        rt.block_on(async {
            if let Some(pending) = self.pending.take() {
                let _ = self.remove_admission(pending.admission).await;
            }
            // Also what a step that failed half-way left behind.
            let _ = remove_admission_objects(&self.admin, &self.admission_name()).await;
        });
        self.webhook = None;
    }
}

/// Deletes the ValidatingAdmissionPolicies, bindings and webhook configurations whose
/// names start with `prefix` (`replay-`: every scenario's; one scenario's name: its own).
pub async fn remove_admission_objects(admin: &Client, prefix: &str) -> Result<(), String> {
    for kind in [
        "ValidatingAdmissionPolicyBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    ] {
        let api: Api<DynamicObject> = Api::all_with(admin.clone(), &admission_ar(kind));
        let list = api
            .list(&Default::default())
            .await
            .map_err(|e| format!("{kind}: {}", api_text(&e)))?;
        for object in list {
            let name = object.name_any();
            if name.starts_with(prefix) {
                match api.delete(&name, &DeleteParams::default()).await {
                    Ok(_) | Err(kube::Error::Api(_)) => {}
                    Err(e) => return Err(format!("{kind} {name}: {e}")),
                }
            }
        }
    }
    Ok(())
}

fn admission_ar(kind: &str) -> ApiResource {
    let plural = match kind {
        "ValidatingAdmissionPolicy" => "validatingadmissionpolicies",
        "ValidatingAdmissionPolicyBinding" => "validatingadmissionpolicybindings",
        "MutatingWebhookConfiguration" => "mutatingwebhookconfigurations",
        _ => "validatingwebhookconfigurations",
    };
    ar("admissionregistration.k8s.io/v1", kind, plural)
}

/// Whether an expected `messageContains` part can match on the real server, where the
/// failure's text `text` reaches the condition message as `real` (`text` with a prefix).
/// The core's message holds the failure's text; on the real server it holds `real` in its
/// place, so it contains the part with `real` put in for `text`, and so the part itself
/// only when that contains it (a part without the failure's text is not concerned).
pub fn part_matches(part: &str, text: &str, real: &str) -> bool {
    text.is_empty() || !part.contains(text) || part.replacen(text, real, 1).contains(part)
}

fn code_of(outcome: &WriteOutcome) -> Option<u16> {
    match outcome {
        WriteOutcome::Api(e) => Some(e.code),
        _ => None,
    }
}

fn outcome_reason(outcome: &WriteOutcome) -> String {
    match outcome {
        WriteOutcome::Api(e) => e.reason.clone(),
        _ => String::new(),
    }
}
