//! The watch caches' writer: a watch's events applied to its store, a relist in place.
//!
//! kube-runtime's reflector (`Writer::apply_watcher_event`) fills a list into a buffer
//! beside the live store and swaps it in at `InitDone`: during a relist the store holds the
//! old list and the buffer the new one, two whole copies of the kind at once. Here only the
//! first list of a watch goes through that buffer (the store is still empty then, so the
//! buffer is the one copy, and its end marks the store ready, which is what
//! `Store::wait_until_ready` waits for); every later list (a watch that fell out of the
//! server's window, a stream restarted) is applied in place ([`reflect`]): each listed
//! object replaces its cached version as it arrives, and at the end the cached objects the
//! list did not have are removed and passed on as deletions. No object is held twice.
//!
//! In place, the store is a mix of the old and the new list until the relist ends (an
//! object deleted meanwhile still beside a newer one): a state that never existed.
//! Reconciles therefore do not read the caches during a relist: [`Relists`] counts the
//! relists in progress; a reconcile waits until there is none ([`Relists::quiet`]) and
//! reads again if one began while it read ([`Relists::unchanged`]).
//!
//! Every list a consumer (the store, the indexes, the triggers) sees starts with an `Init`:
//! kube-runtime 5 emits it for streaming lists too, 4.2 did not (a list started with its
//! first object, or with `InitDone` when empty); [`with_init`] adds it wherever it is
//! missing, and passes one that is there unchanged.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use kube::runtime::reflector::{Lookup, ObjectRef, store::Writer};
use kube::runtime::watcher::{self, Event};

/// The relists in progress, across the caches of one controller.
#[derive(Debug)]
pub(crate) struct Relists(tokio::sync::watch::Sender<Count>);

#[derive(Debug, Clone, Copy, Default)]
struct Count {
    /// Relists running now.
    running: usize,
    /// Relists begun and ended so far: a view taken at one value is whole while it holds.
    changes: u64,
}

/// What [`Relists::quiet`] saw: the caches' state between relists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct View(u64);

impl Default for Relists {
    fn default() -> Self {
        Relists(tokio::sync::watch::Sender::new(Count::default()))
    }
}

impl Relists {
    fn begin(&self) {
        self.0.send_modify(|c| {
            c.running += 1;
            c.changes += 1;
        });
    }

    fn end(&self) {
        self.0.send_modify(|c| {
            c.running = c.running.saturating_sub(1);
            c.changes += 1;
        });
    }

    /// Resolves once no cache is being relisted.
    pub(crate) async fn quiet(&self) -> View {
        let mut count = self.0.subscribe();
        // The sender lives in `self`: the wait cannot fail.
        let changes = count
            .wait_for(|c| c.running == 0)
            .await
            .map_or(u64::MAX, |c| c.changes);
        View(changes)
    }

    /// Whether no relist began since `view` (what was read since is one state).
    pub(crate) fn unchanged(&self, view: View) -> bool {
        let count = *self.0.borrow();
        count.running == 0 && count.changes == view.0
    }

    /// Relists running now.
    #[cfg(test)]
    pub(crate) fn running(&self) -> usize {
        self.0.borrow().running
    }
}

/// The key of an object in a store, without the version and uid an `ObjectRef` can carry.
pub(crate) fn key<K>(object: &K) -> ObjectRef<K>
where
    K: Lookup,
    K::DynamicType: Default,
{
    let mut key = ObjectRef::from_obj(object);
    key.extra = Default::default();
    key
}

/// Adds the `Init` a list may lack (kube-runtime 4.2's streaming lists emitted none): before an `InitApply` or `InitDone`
/// that no `Init` began, at the start and after the end of a list, or after an error that
/// restarts the list (a 410 Gone, a failed start).
pub(crate) fn with_init<K>(
    events: impl Stream<Item = watcher::Result<Event<K>>> + Send + 'static,
) -> impl Stream<Item = watcher::Result<Event<K>>> + Send + 'static
where
    K: Send + 'static,
{
    let mut expect_init = true;
    events.flat_map(move |event| {
        let out = match event {
            Ok(Event::Init) => {
                expect_init = false;
                vec![Ok(Event::Init)]
            }
            Ok(event @ (Event::InitApply(_) | Event::InitDone)) => {
                let mut out = Vec::with_capacity(2);
                if expect_init {
                    out.push(Ok(Event::Init));
                }
                expect_init = matches!(event, Event::InitDone);
                out.push(Ok(event));
                out
            }
            Err(error) => {
                if restarts_list(&error) {
                    expect_init = true;
                }
                vec![Err(error)]
            }
            Ok(event) => vec![Ok(event)],
        };
        futures::stream::iter(out)
    })
}

/// Whether the watcher starts its list over after this error.
fn restarts_list(error: &watcher::Error) -> bool {
    match error {
        watcher::Error::WatchError(status) => status.code == 410,
        watcher::Error::InitialListFailed(_)
        | watcher::Error::WatchStartFailed(_)
        | watcher::Error::NoResourceVersion => true,
        watcher::Error::WatchFailed(_) => false,
    }
}

/// Applies `events` (each list begun by an `Init`, see [`with_init`]) to `writer`'s store,
/// every list after the first in place, and passes them on; at the end of a relist, the
/// cached objects it did not have are removed and passed on as `Delete` before `InitDone`.
pub(crate) fn reflect<K>(
    events: impl Stream<Item = watcher::Result<Event<K>>> + Send + 'static,
    mut writer: Writer<K>,
    relists: Arc<Relists>,
) -> impl Stream<Item = watcher::Result<Event<K>>> + Send + 'static
where
    K: Lookup + Clone + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    let store = writer.as_reader();
    let mut listed = false;
    // During a relist: the objects it had so far.
    let mut relist: Option<HashSet<ObjectRef<K>>> = None;
    events.flat_map(move |event| {
        let out = match event {
            Err(error) => vec![Err(error)],
            Ok(event) if !listed => {
                // The first list, into the writer's buffer (the store is empty).
                writer.apply_watcher_event(&event);
                listed = matches!(event, Event::InitDone);
                vec![Ok(event)]
            }
            Ok(Event::Init) => {
                // A list restarted before its end keeps what it applied (newer than before)
                // and starts counting again.
                if relist.is_none() {
                    relists.begin();
                }
                relist = Some(HashSet::new());
                vec![Ok(Event::Init)]
            }
            Ok(Event::InitApply(object)) => {
                if let Some(seen) = &mut relist {
                    seen.insert(key(&object));
                }
                // Into the live store at once (the writer keeps its own copy, as for a watch
                // event); the object itself goes on.
                let applied = Event::Apply(object);
                writer.apply_watcher_event(&applied);
                let Event::Apply(object) = applied else {
                    unreachable!("built above")
                };
                vec![Ok(Event::InitApply(object))]
            }
            Ok(Event::InitDone) => {
                let mut out = Vec::new();
                if let Some(seen) = relist.take() {
                    for gone in store.state() {
                        if seen.contains(&key(gone.as_ref())) {
                            continue;
                        }
                        let deleted = Event::Delete(Arc::unwrap_or_clone(gone));
                        writer.apply_watcher_event(&deleted);
                        out.push(Ok(deleted));
                    }
                    relists.end();
                }
                out.push(Ok(Event::InitDone));
                out
            }
            Ok(event) => {
                writer.apply_watcher_event(&event);
                vec![Ok(event)]
            }
        };
        futures::stream::iter(out)
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event::{Apply, Delete, Init, InitApply, InitDone};
    use kube::{Resource, ResourceExt};

    use crate::cached::GatewayConfiguration;

    fn conf(name: &str, version: &str) -> GatewayConfiguration {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": version},
            "spec": {}
        }))
        .expect("a GatewayConfiguration")
    }

    fn version(store: &reflector::Store<GatewayConfiguration>, name: &str) -> Option<String> {
        store
            .get(&ObjectRef::new(name).within("ns"))
            .and_then(|c| c.meta().resource_version.clone())
    }

    /// What a stream passed on: the event's kind and object name.
    fn names(events: &[watcher::Result<Event<GatewayConfiguration>>]) -> Vec<String> {
        events
            .iter()
            .map(|event| match event {
                Ok(Init) => "Init".to_owned(),
                Ok(InitApply(c)) => format!("InitApply {}", c.name_any()),
                Ok(Apply(c)) => format!("Apply {}", c.name_any()),
                Ok(Delete(c)) => format!("Delete {}", c.name_any()),
                Ok(InitDone) => "InitDone".to_owned(),
                Err(_) => "Err".to_owned(),
            })
            .collect()
    }

    /// A relist replaces each object in the store as it arrives (kube-runtime's writer
    /// would show the old list until `InitDone`, the new one buffered beside it), and
    /// removes at its end what it did not have, passed on as a deletion.
    #[tokio::test]
    async fn a_relist_is_applied_in_place_and_drops_what_it_lost() {
        let (store, writer) = reflector::store::<GatewayConfiguration>();
        let relists = Arc::new(Relists::default());
        let (sender, receiver) = futures::channel::mpsc::unbounded();
        let mut passed = Box::pin(reflect(receiver, writer, relists.clone()));
        macro_rules! step {
            ($event:expr) => {{
                sender.unbounded_send(Ok($event)).expect("open");
                passed.next().await.expect("an event").expect("passed");
            }};
        }
        step!(Init);
        step!(InitApply(conf("kept", "1")));
        step!(InitApply(conf("lost", "2")));
        // The first list fills the store at its end, and marks it ready.
        assert_eq!(version(&store, "kept"), None);
        step!(InitDone);
        assert_eq!(version(&store, "kept").as_deref(), Some("1"));
        assert_eq!(relists.running(), 0);

        // A relist: `kept` changed, `lost` was deleted while the watch was down.
        step!(Init);
        assert_eq!(relists.running(), 1);
        step!(InitApply(conf("kept", "3")));
        // In place: the new version is the cached one at once, nothing held beside it.
        assert_eq!(version(&store, "kept").as_deref(), Some("3"));
        let kept = store
            .get(&ObjectRef::new("kept").within("ns"))
            .expect("cached");
        assert_eq!(Arc::strong_count(&kept), 2, "one copy, in the store");
        assert_eq!(version(&store, "lost").as_deref(), Some("2"));
        sender.unbounded_send(Ok(InitDone)).expect("open");
        let rest: Vec<_> = passed.as_mut().take(2).collect().await;
        assert_eq!(names(&rest), ["Delete lost", "InitDone"]);
        assert_eq!(version(&store, "lost"), None);
        assert_eq!(relists.running(), 0);
        assert_eq!(store.state().len(), 1);
    }

    /// A streaming list starts with its first object (or ends at once when empty): an
    /// `Init` is added before it, and after an error that restarts the list.
    #[tokio::test]
    async fn a_streaming_list_gets_its_init() {
        let gone = watcher::Error::WatchError(Box::new(kube::core::Status {
            code: 410,
            ..Default::default()
        }));
        let events = futures::stream::iter([
            Ok(InitApply(conf("a", "1"))),
            Ok(InitDone),
            Ok(Apply(conf("a", "2"))),
            Ok(InitDone),
            Err(gone),
            Ok(InitApply(conf("a", "3"))),
            Ok(InitApply(conf("b", "4"))),
            Ok(InitDone),
            // A list/watch's own Init is kept, never doubled.
            Ok(Init),
            Ok(InitDone),
        ]);
        let passed: Vec<_> = with_init(events).collect().await;
        assert_eq!(
            names(&passed),
            [
                "Init",
                "InitApply a",
                "InitDone",
                "Apply a",
                "Init",
                "InitDone",
                "Err",
                "Init",
                "InitApply a",
                "InitApply b",
                "InitDone",
                "Init",
                "InitDone",
            ]
        );
    }

    #[tokio::test]
    async fn a_view_taken_before_a_relist_is_not_whole() {
        let relists = Relists::default();
        let view = relists.quiet().await;
        assert!(relists.unchanged(view));
        relists.begin();
        assert!(!relists.unchanged(view));
        // Waits while the relist runs.
        let waiting = tokio::time::timeout(Duration::from_millis(50), relists.quiet()).await;
        assert!(waiting.is_err(), "a view was taken during a relist");
        relists.end();
        assert!(!relists.unchanged(view), "a relist ran since the view");
        let after = relists.quiet().await;
        assert!(relists.unchanged(after));
    }
}
