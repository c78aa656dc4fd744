//! The GatewayClass's own status: the core decides `Accepted`
//! ([`gateway_reconcile::gateway_class`]), this writes it.
//!
//! The GatewayClass watch that wakes the Gateways of a class also hands each class it
//! delivers to [`ClassStatus`], which settles it and, when the core says so, sends a JSON
//! merge patch to `gatewayclasses/status` carrying the cached class's `resourceVersion`
//! (the same precondition rules as the Gateway status: a class changed since answers 409,
//! and its watch event brings the newer object here again). Classes are few and their
//! status changes rarely, so they are settled one at a time, in the order the watch
//! delivers them. A class whose `controllerName` is not ours is never written.
//!
//! Only the leader writes: a standby keeps the last class of each name it was handed, and
//! settles them all when it becomes the leader (as the Gateways are then reconciled).

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;

use futures::future::{BoxFuture, Shared};
use gateway_reconcile::{Settings, gateway_class};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};
use tokio::sync::mpsc;
use tracing::{debug, info, warn};

use crate::cached::{GatewayClass, GatewayConfiguration};
use crate::leader::Leadership;
use crate::write::FIELD_MANAGER;

/// The first wait before a failed class status write is tried again; each next one
/// doubles, up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(300);

/// A class to settle, the wait before its next try should this one fail, and whether it
/// comes from the watch (a retry brings back an older copy, which must not replace a
/// newer one the watch delivered meanwhile).
type Item = (GatewayClass, Duration, bool);

/// Where the class watch hands the classes it delivers.
#[derive(Clone)]
pub(crate) struct ClassStatus(mpsc::UnboundedSender<Item>);

impl ClassStatus {
    /// Starts the writer task; it ends when every sender is dropped.
    pub(crate) fn spawn(
        client: Client,
        settings: Settings,
        leadership: Leadership,
        configurations: Store<GatewayConfiguration>,
        ready: Shared<BoxFuture<'static, bool>>,
    ) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        let status = ClassStatus(sender);
        let writer = Writer {
            api: Api::all(client),
            settings,
            again: status.0.downgrade(),
            configurations,
            ready,
        };
        tokio::spawn(writer.run(receiver, leadership));
        status
    }

    /// Hands a class the watch delivered to the writer (dropped when it has stopped).
    pub(crate) fn settle(&self, class: &GatewayClass) {
        let _ = self.0.send((class.clone(), FIRST_RETRY, true));
    }
}

/// The task that settles and writes.
struct Writer {
    api: Api<GatewayClass>,
    settings: Settings,
    /// To hand a class back after a failed write.
    again: mpsc::WeakUnboundedSender<Item>,
    /// Where the configuration a class names as its default is looked up.
    configurations: Store<GatewayConfiguration>,
    /// Every cache has its initial list: before, a class's configuration could look
    /// missing for a moment, and its `Accepted` would flap.
    ready: Shared<BoxFuture<'static, bool>>,
}

impl Writer {
    async fn run(self, mut classes: mpsc::UnboundedReceiver<Item>, leadership: Leadership) {
        // The last class of each name: what a new leader settles.
        let mut latest: BTreeMap<String, GatewayClass> = BTreeMap::new();
        let mut acquired = std::pin::pin!(leadership.acquired());
        loop {
            tokio::select! {
                item = classes.recv() => {
                    let Some((class, retry, from_watch)) = item else { return };
                    if from_watch {
                        latest.insert(class.name_any(), class.clone());
                    }
                    if leadership.may_write() {
                        self.settle(class, retry).await;
                    }
                }
                Some(()) = acquired.next() => {
                    for class in latest.values() {
                        self.settle(class.clone(), FIRST_RETRY).await;
                    }
                }
            }
        }
    }

    async fn settle(&self, class: GatewayClass, retry: Duration) {
        let name = class.name_any();
        let typed = match class.read() {
            Ok(typed) => typed,
            // Reported when its watch event came; a class of ours is then not settled.
            Err(why) => {
                warn!(class = %name, %why, "GatewayClass status not settled");
                return;
            }
        };
        if typed.metadata.deletion_timestamp.is_some() {
            return;
        }
        if !self.ready.clone().await {
            return;
        }
        // Readable or not, it exists: its content is judged on each Gateway.
        let presence = gateway_class::ConfigurationPresence::of_class(
            &self.settings,
            typed,
            |namespace, name| {
                self.configurations
                    .get(&ObjectRef::new(name).within(namespace))
                    .is_some()
            },
        );
        let settled = match gateway_class::settle_class(
            &self.settings,
            typed,
            presence,
            jiff::Timestamp::now(),
        ) {
            Ok(settled) => settled,
            Err(error) => {
                warn!(class = %name, %error, "GatewayClass status not settled");
                return;
            }
        };
        let Some(patch) = settled.status_patch() else {
            debug!(class = %name, stale = settled.stale, "GatewayClass status unchanged");
            return;
        };
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        match self
            .api
            .patch_status(&name, &params, &Patch::Merge(patch.into_body()))
            .await
        {
            Ok(_) => info!(class = %name, "GatewayClass status written"),
            // A newer class is on its way through the watch: it is settled then.
            Err(kube::Error::Api(status)) if status.code == 409 => {
                debug!(class = %name, "GatewayClass status conflict, waiting for the watch");
            }
            Err(error) => {
                // No watch event may follow a failed write: try again after a backoff (a
                // newer class delivered meanwhile is settled on its own).
                warn!(class = %name, %error, ?retry, "GatewayClass status write failed");
                if let Some(sender) = self.again.upgrade() {
                    tokio::spawn(async move {
                        tokio::time::sleep(retry).await;
                        let _ = sender.send((class, (retry * 2).min(MAX_RETRY), false));
                    });
                }
            }
        }
    }
}
