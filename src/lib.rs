//! The whole decision logic of a Gateway API controller that runs one load-balancer (LB)
//! Deployment per Gateway, modelled on the Meridio-2 gateway controller
//! (API group `meridio-2.nordix.org`).
//!
//! The crate is pure: no Kubernetes client, no I/O, no clock, no randomness. A controller
//! hands it snapshots of the objects it watches and the time; it answers with the Deployment
//! to create or update (or to leave alone, with the fields that drifted), the Gateway status
//! to write (or nothing), and when to look again.
//!
//! # What an embedder uses
//!
//! - The loop: a [`Driver`] (one per controller, holding the [`Settings`]) runs one whole
//!   reconcile of one Gateway through the embedder's [`Port`]: the core decides what to
//!   read and the port's [`Reader`] answers by kind and key; the port does the Deployment
//!   write, the status patch and the Events. The controller, the simulator and the tests
//!   all run it; see [`reconcile`] for a complete port over an in-memory store.
//! - Write outcomes: [`WriteOutcome`] (`Applied`, `Stored`, an [`ApiError`] or a transport
//!   error), classified as a [`FailureClass`]; a reconcile says when to look again
//!   ([`Requeue`], with its [`deadline`](Requeue::deadline)).
//! - The conditions with their domain: [`conditions::ConditionTypes`] names the four types
//!   for a [`Settings::condition_domain`] and finds them in a Gateway's status
//!   ([`ConditionTypes::find`](conditions::ConditionTypes::find)); reasons and messages are
//!   in [`conditions`], Events in [`events`].
//! - Whom a change wakes: [`wake`] (from a watched object's change to the Gateways to
//!   reconcile, as keys of an index the embedder keeps, and the GatewayClasses to settle).
//! - What to find and watch: [`lookup`] (the LB Deployment's name, labels and
//!   annotations; which GatewayConfiguration a Gateway uses, its own or its class's;
//!   which Gateway a route names and whether it attaches; the Gateway of a Deployment).
//! - The protocol under the loop, for a loop of one's own: [`plan`] takes a [`Snapshot`]
//!   (the Gateway, its GatewayClass, GatewayConfiguration (or an
//!   [`UnreadableConfiguration`]), L34Routes with the [`NamespaceLabels`] of their
//!   namespaces, and LB Deployment, the last [`WriteRecord`]), the [`Settings`] and the
//!   time (a [`jiff`] `Timestamp`, re-exported); it answers a [`Plan`]: a [`PendingWrite`]
//!   (a [`DeploymentWrite`] to perform, then [`settle`](PendingWrite::settle) with its
//!   [`WriteOutcome`], or take it out with [`into_write`](PendingWrite::into_write) and
//!   settle the [`AwaitingOutcome`]), or the [`Settlement`] already. A settlement carries
//!   the [`StatusPatch`], the Events, the [`Requeue`] and the new [`WriteRecord`].
//! - The objects: [`wire`] (Gateway, GatewayClass, GatewayConfiguration, L34Route,
//!   Deployment, conditions), and the LB Deployment [`template`].
//! - The GatewayClass's own status: [`gateway_class`] (its default parameters included).
//! - Errors: [`InputError`], for inputs the crate cannot work with.
//! - Behind features (below): `kube` (`kube::Resource` for the wire types, to watch and
//!   cache them with kube-rs), `testing` (the test kit), `k8s-openapi` and `gateway-api`
//!   (conversions with those crates' types, in `interop`), `sim` (the simulator and
//!   scenario runner).
//!
//! Nothing else is needed to run the reconcile. The rules behind its decisions are
//! documented in [`reconcile`], under "The rules a plan applies":
//! [validation](reconcile#validation) with the exact `InvalidParameters` messages,
//! [the LB Deployment](reconcile#the-lb-deployment) as rendered, what counts as
//! [drift](reconcile#drift), the [addresses](reconcile#addresses) and the
//! [listeners](reconcile#listeners). The code behind them
//! is crate-private: [`plan`] runs it, and what a controller needs of it to find and watch
//! the objects is in [`lookup`].
//!
//! # Changes the API server makes to the controller's own write
//!
//! Mutating admission (a webhook rewriting `image` to a mirror registry, injecting a
//! toleration or a sidecar) can change the LB Deployment inside the very write the crate
//! asked for; by the drift rules the stored object then drifts after every write. The crate
//! never loops on it. A caller that has the API server's answer to a successful write
//! settles with [`WriteOutcome::Stored`]; the settlement compares it with what the crate
//! wants, records a Warning `AdmissionChanged` Event naming the drifted paths when they
//! differ, and returns a [`WriteRecord`] (the stored `metadata.generation`, a fingerprint of
//! the desired object, and one of the drift the server left). The caller keeps the last
//! record per Gateway in memory and hands it to the next [`plan`]
//! ([`Snapshot::with_write_record`]): while the Deployment's generation, the desired object
//! and the drift are those of the record, the plan writes nothing and reports the drift it
//! holds back ([`Settlement::held_drift`]). Anyone else's later edit moves the generation
//! or the drift, a new desired object moves the fingerprint, and a restarted controller
//! (no record) writes once more and learns again. When the server changes the generation or
//! uid annotation itself, the Deployment cannot say what it carries:
//! `ConfigurationApplied=False/ApplyRejected` and `Degraded=True/ApplyRejected`, naming the
//! annotation, and no further write until the desired object or the Deployment changes.
//!
//! # The four conditions
//!
//! | type | says | reasons |
//! |---|---|---|
//! | [`Accepted`] | the Gateway is ours and its parameters are valid | [`Accepted`][r-accepted], [`InvalidParameters`], [`UnsupportedAddress`], [`ListenersNotValid`], [`Pending`] (handed to another controller) |
//! | [`Programmed`] | the LB Deployment exists and serves | [`Programmed`][r-programmed], [`Pending`], [`Invalid`] |
//! | `D/`[`ConfigurationApplied`] | the Deployment carries the current GatewayConfiguration generation | [`Applied`], [`Pending`], [`ApplyFailed`], [`ApplyRejected`], [`InvalidParameters`], [`UnsupportedAddress`], [`ListenersNotValid`] |
//! | `D/`[`Degraded`] | serving, but not as desired, and it will not fix itself soon; present only while True | [`ApplyFailing`], [`ApplyRejected`], [`RolloutStalled`] |
//!
//! `D` is [`Settings::condition_domain`] (`meridio-2.nordix.org`). The names are the
//! constants of [`conditions`], the one place of the vocabulary; look a condition up with
//! [`ConditionTypes::find`](conditions::ConditionTypes::find), since two of the types carry
//! the domain. The sections below state when each is set.
//!
//! Beside them, each entry of `status.listeners` carries three conditions of its own
//! ([listeners](reconcile#listeners)):
//!
//! | type | says | reasons |
//! |---|---|---|
//! | [`Accepted`] | the listener's protocol is one the LB carries | [`Accepted`][r-accepted], [`UnsupportedProtocol`] |
//! | [`Programmed`] | the listener is accepted and the Gateway programmed | [`Programmed`][r-programmed], [`Invalid`], the Gateway's `Programmed` reason |
//! | [`ResolvedRefs`] | the route kinds it names are supported | [`ResolvedRefs`][r-resolved-refs], [`InvalidRouteKinds`] |
//!
//! [`Accepted`]: conditions::ACCEPTED
//! [`Programmed`]: conditions::PROGRAMMED
//! [`ConfigurationApplied`]: conditions::CONFIGURATION_APPLIED_NAME
//! [`Degraded`]: conditions::DEGRADED_NAME
//! [r-accepted]: conditions::reason::ACCEPTED
//! [r-programmed]: conditions::reason::PROGRAMMED
//! [`InvalidParameters`]: conditions::reason::INVALID_PARAMETERS
//! [`Pending`]: conditions::reason::PENDING
//! [`Invalid`]: conditions::reason::INVALID
//! [`Applied`]: conditions::reason::APPLIED
//! [`ApplyFailed`]: conditions::reason::APPLY_FAILED
//! [`ApplyRejected`]: conditions::reason::APPLY_REJECTED
//! [`ApplyFailing`]: conditions::reason::APPLY_FAILING
//! [`RolloutStalled`]: conditions::reason::ROLLOUT_STALLED
//! [`UnsupportedAddress`]: conditions::reason::UNSUPPORTED_ADDRESS
//! [`ListenersNotValid`]: conditions::reason::LISTENERS_NOT_VALID
//! [`UnsupportedProtocol`]: conditions::reason::UNSUPPORTED_PROTOCOL
//! [`ResolvedRefs`]: conditions::RESOLVED_REFS
//! [r-resolved-refs]: conditions::reason::RESOLVED_REFS
//! [`InvalidRouteKinds`]: conditions::reason::INVALID_ROUTE_KINDS
//!
//! # Generation currency
//!
//! Editing only a GatewayConfiguration does not bump the Gateway's `metadata.generation`, so
//! the Gateway's `observedGeneration` cannot tell whether the edit reached the LB. The crate
//! writes the GatewayConfiguration's generation into the Deployment annotation
//! `D/gatewayconfiguration-generation` and reads it back on every reconcile: the
//! `Programmed` message names the generation the running Deployment carries
//! (`LB Deployment reconciled with GatewayConfiguration generation 7; generation 8 not
//! applied yet`), and `ConfigurationApplied` is True only when it is the current one. The
//! annotation lives on the Deployment, which the controller owns, never on the Gateway, which
//! its users own; so a restarted controller reads the same truth.
//!
//! A GatewayConfiguration deleted and recreated restarts at generation 1 with a new uid, so
//! the Deployment also carries `D/gatewayconfiguration-uid`: a Deployment carrying another
//! uid does not carry the current generation, whatever its number. A Deployment without the
//! uid annotation (written before it existed) is compared by generation alone, and gets the
//! annotation with its next write.
//!
//! A transient write failure never turns `Programmed` False: the old Deployment still serves.
//! `ConfigurationApplied` turns False at once, and `Degraded=True/ApplyFailing` appears when
//! it has been False for [`Settings::degraded_after`] (measured from its
//! `lastTransitionTime`, so the answer does not depend on process memory). A rejected update
//! is `Degraded=True/ApplyRejected` at once; a rollout past its progress deadline is
//! `Degraded=True/RolloutStalled` (what the crate reads of the Deployment's `status` as a
//! complete, progressing or stalled rollout: [`Snapshot::with_deployment`]). Once True, `Degraded` stays True while the gap lasts, its
//! reason following the current cause, until `ConfigurationApplied` is True and the rollout
//! is not stalled, or `Programmed` turns False.
//!
//! # Events and requeue
//!
//! [`Settlement::status_patch`] is the merge patch of the Gateway status, with the observed
//! `resourceVersion` as its precondition (see [`StatusPatch`]).
//! [`Settlement::events`] lists the Kubernetes Events to record, one per condition transition
//! and none on a retry that changes nothing (see [`events`]). [`Settlement::requeue`] says
//! when to look again: at once after a conflict, a vanished Deployment or a stale snapshot
//! (an owned condition newer than the Gateway, or a Deployment carrying a newer generation of
//! the GatewayConfiguration than the one read);
//! after a backoff (the time `ConfigurationApplied` has been False, clamped to 1 s–5 min, and
//! never past the moment `Degraded` becomes due) after a transient failure; after the
//! rejection backoff (the same time, clamped to 30 s–10 min, and never past
//! [`Settings::resync`]) after a rejection, which can end without any event the controller
//! watches (an admission policy fixed, a quota raised) and is written again only when it is
//! rejected differently; otherwise only on the next event, or, for an accepted or invalid
//! Gateway, after [`Settings::resync`].
//!
//! Time never fails: a `Degraded` deadline past the end of representable time is never due,
//! and a `lastTransitionTime` in the future or beyond the supported range counts as now.
//!
//! # Choices where the contract is silent
//!
//! - A 404 on create (the namespace is going away) backs off like a transient failure.
//! - `Programmed` names generation `unknown` when the Deployment has no readable generation
//!   annotation.
//! - `Degraded` keeps its status, reason and message across a conflicting retry, and records
//!   the current Gateway generation. Absent and due, a conflicting retry raises it
//!   (`ApplyFailing`, naming the conflict's message), as the contract now says too.
//! - Once `Degraded` is True, any failing update keeps it True with reason `ApplyFailing`
//!   (also after `RolloutStalled`, before `degradedAfter`; the contract's rule); its message
//!   is always the one of the current cause, saying since when ConfigurationApplied has
//!   been False, and its `lastTransitionTime` stays that of the moment it turned True.
//! - The write record also fingerprints the drift the API server left in the stored
//!   object, and holds the drift back only while it is that same drift. The contract's two
//!   conditions (the Deployment's generation and the desired object) alone would hide an
//!   edit that moves no generation: apps/v1 does not count a `metadata.labels` edit, so a
//!   controller label someone removed would stay removed, although a change to an owned
//!   field is always drift. With the third, such an edit is reverted at once.
//! - The fingerprints are 64-bit FNV-1a over the canonical JSON of the compact tree: fixed
//!   by definition (std's hasher may change between Rust versions), not cryptographic (the
//!   inputs are the controller's own, not an attacker's).
//! - When the API server changes the generation or uid annotation on write,
//!   `ConfigurationApplied` says so in the usual form (`GatewayConfiguration NS/NAME
//!   generation M is not applied to Deployment NS/NAME (it carries generation N): the API
//!   server changes the annotation KEY on write`), and `Programmed` stays True naming what
//!   the Deployment's annotation says (`unknown` when it has none).
//! - The `AdmissionChanged` message joins the drifted paths with `, ` and cuts them to
//!   1024 bytes at a character boundary.
//! - A create answered 404 says `create failed (not found)` in ConfigurationApplied.
//! - Owned conditions over the 8-item limit are removed even when observed; when foreign
//!   conditions alone pass the limit, every owned one is removed and the list stays longer
//!   than 8 (a foreign condition is never touched).
//! - A `lastTransitionTime` that is not a time at all counts as now and is repaired when the
//!   condition is next written; one in the future or past 9999-12-30T22:00:00Z counts as now,
//!   is kept as written, and Degraded messages print it as written (so retries stay stable).
//!   Such a time keeps a transient failure from ever making Degraded due while it lasts.
//! - Settings bounds: `degradedAfter` from 0 to 8760h (one year), `resync` from 1 s to
//!   8760h, so that a caller adding them to its clock cannot overflow; `parametersKind` must
//!   be a Gateway API `Kind`; `deploymentPrefix` may be empty and is at most 53 characters
//!   (revision 4).
//! - `ConfigurationApplied` is True when the write succeeded, or when nothing was to be
//!   written and the Deployment carries the current generation; no drift left is implied
//!   by the generation annotation being compared as drift.
//! - Render values the API server would refuse are `InvalidParameters`, each
//!   message naming the field and the value (see [validation](reconcile#validation) for the order and
//!   the exact messages): a container named twice in `verticalScaling`, a request or limit that is not
//!   a quantity or is negative, a negative `horizontalScaling.replicas`, an LB Deployment
//!   name (`deploymentPrefix + Gateway name`, shortened past 63 characters, also its `app`
//!   label value) that is not a DNS-1123 subdomain (a hand-written upper-case name), a
//!   `gateway.networking.k8s.io/gateway-name` label value that is not a label value (a
//!   hand-written name starting with `-`: `label gateway.networking.k8s.io/gateway-name:
//!   invalid value "V" (the Gateway name): WHY`), a Gateway `infrastructure` label or
//!   annotation key that is not a valid key, or label value that is not a valid label value
//!   (`infrastructure.labels["KEY"]: invalid value "V": WHY`). A long Gateway name is not a
//!   failure (revision 4), also past the API's 253 characters in a hand-written snapshot.
//!   From the template (an unusable template):
//!   a `spec.replicas` that is not a non-negative integer, a container's request or limit
//!   that is not a quantity or is negative, a label value out of form.
//! - A GatewayConfiguration without `metadata.uid` (a hand-written snapshot) writes no uid
//!   annotation, removes one the Deployment has, and is compared by generation alone.
//! - Every field the template sets in `spec.template.spec` is desired on update; one a new
//!   template stops setting stays on existing Deployments (nothing tells it from a field
//!   another writer set), and a `null` in the template sets nothing. The template's
//!   `affinity` replaces the observed one whole, its anti-affinity `app` values rendered.
//! - An element of a list without a merge key (a toleration) is compared by the same
//!   rules as any object: a field only the observed element has is not drift.
//! - Quantities finer than a nano are held rounded up to a nano, as the API server stores
//!   them, so they are not drift; requests and limits are compared rounded up to a milli,
//!   as the server's defaulting stores them.
//! - Names (revision 4): the lengths of the Gateway name, the prefix and the cuts are
//!   counted in characters (Unicode scalar values; names are ASCII in practice) and the
//!   hash is over the name's UTF-8 bytes.
//! - GatewayClass default parameters (revision 4): a class reference without `namespace`
//!   makes the Gateways that use it `InvalidParameters` with the class's own message,
//!   `parametersRef.namespace is required for a GatewayConfiguration`.
//!   [`lookup::configuration_ref`] takes the class it is given as the Gateway's, without
//!   looking at its `controllerName` (a Gateway of another controller's class is not
//!   reconciled at all). An existing but unreadable configuration counts as existing for
//!   the class ([`gateway_class::ConfigurationPresence::Exists`]): the class is judged by
//!   existence alone.
//! - The unreadable GatewayConfiguration (revision 4): when the caller hands both a
//!   readable configuration and an unreadable one under the referenced name, the unreadable
//!   one wins (the caller says the stored object cannot be read; a readable copy is stale).
//!   The message's WHY is the caller's error text as given (cut with the rest of the
//!   message to the condition's 32768 bytes).
//! - `allowedRoutes` (revision 4): a Gateway without listeners (the Gateway API's CRD
//!   requires one; only a hand-written snapshot has none) admits no route. `from` absent or
//!   empty is `Same`; any value but `Same`, `All` and `Selector` admits nothing; `Selector`
//!   without a `selector`, or with one Kubernetes refuses (an unknown operator, `In` or
//!   `NotIn` without values, `Exists` or `DoesNotExist` with values), admits nothing; the
//!   empty selector `{}` admits every namespace whose labels the caller hands; `NotIn` and
//!   `DoesNotExist` hold for a handed namespace without the key. A route without a namespace
//!   is admitted by `All` alone. A `kinds` entry without `group` is of
//!   `gateway.networking.k8s.io` (the Gateway API's default), so it never admits L34Route.
//!   [`lookup::names_gateway`] (a controller's trigger) still says whether a route names a
//!   Gateway, attached or not; [`lookup::route_attaches`] says whether it attaches.
//! - A stale GatewayConfiguration read (issue #42): a Deployment of this Gateway whose
//!   annotations carry a generation of the same GatewayConfiguration (the same uid, on both
//!   sides) above the generation read means the read is older than what was applied
//!   (generations never go down; a controller's per-kind caches lag apart). As for an owned
//!   condition newer than the Gateway (the contract's stale snapshot): nothing is written,
//!   look again at once; otherwise the controller would roll the LB Deployment back and
//!   name the old generation in the status. Without a uid on either side, a configuration
//!   deleted and created again (generation 1, a new uid) cannot be told from a stale read,
//!   and the usual rules apply. A hand edit that raises the annotation above the
//!   configuration's generation holds the Deployment the same way, until the
//!   configuration's generation passes it or the annotation is put back.
//! - The Gateway of a Deployment ([`lookup::deployment_gateway`]) is its controller
//!   ownerReference of kind `Gateway` in group `gateway.networking.k8s.io`, any version.
//! - Scenario files and the command line (the `sim` module and the binary, not the
//!   library's decisions): a UTF-8 byte-order mark is refused, not skipped; times must use
//!   an upper-case `T` and `Z` and have seconds (Kubernetes writes them so); the supported
//!   time range is jiff's (years -9999 to 9999); `failWrites.error` may be a whole
//!   Kubernetes `Status` object, as `plan --outcome` may; each input is capped at 64 MiB
//!   unless `--max-input-bytes` says otherwise, and `-` (standard input) may stand for one
//!   input only. The simulator gives the CRD's default status to a Gateway or GatewayClass
//!   created with `status` absent or `null` (one given with any `status` keeps it as
//!   written); `unreadable` applies to the GatewayConfiguration only and, on an absent one,
//!   creates it as a `patch` would; `objects.namespaces` keys must be DNS-1123 labels and
//!   their labels valid label keys and values; a backend that cannot store an unreadable
//!   object skips the file (`Backend::unreadable`'s default). Stale reads (`snapshot`,
//!   `staleReads`, `catchUp`): the simulator answers the controller's reads from a named
//!   snapshot and checks its writes against the current objects with the real server's
//!   preconditions (a status patch whose `resourceVersion` is not the stored object's is
//!   refused 409, and reported as not written, without its Events); a backend that cannot
//!   hold its reads back skips the file. `recreate` replaces the Gateway with a new object
//!   of the same name (a new uid, generation 1, the CRD's default status).
//!
//! # Cargo features
//!
//! On by default: `sim` (the simulated API server and scenario runner, the `sim` module, and the
//! `gateway-reconcile` command line built on them). A controller that embeds the crate
//! turns it off (`default-features = false`): its build then has no simulator and no
//! `serde_path_to_error`.
//!
//! Off by default:
//!
//! | feature | gives | needs |
//! |---|---|---|
//! | `kube` | `kube::Resource` for the wire types (`wire::resource::Watched`), to watch and cache them with kube-rs | kube-core 5 (types only, no client); Rust 1.89 |
//! | `k8s-openapi` | conversions with k8s-openapi 0.29's `Deployment` and `Condition` (`interop`) | |
//! | `gateway-api` | conversions from gateway-api 0.22's `Gateway` and `GatewayClass`, and condition lists back (`interop`) | gateway-api 0.22, itself on k8s-openapi 0.28 and kube 4; Rust 1.92 |
//! | `testing` | the test kit for embedders (`testing`: proptest strategies, the invariants as reusable checks, stable text for snapshot tests) | proptest |
//! | `yaml` | YAML input for the `gateway-reconcile` command line | |
//!
//! The library enables no Kubernetes version of k8s-openapi; the final binary does. The
//! crate's MSRV (1.88, `rust-version`) holds for its default features and for
//! `k8s-openapi`, `testing` and `yaml`; CI checks it with that toolchain.
//!
//! # Reading these docs
//!
//! From a crate that depends on this one, with the features it enables:
//!
//! ```text
//! cargo doc -p gateway-reconcile --open
//! ```
//!
//! No environment is needed, except with `kube`, `k8s-openapi` or `gateway-api` on (each
//! brings k8s-openapi: kube-core depends on it) while nothing in the build picks a
//! Kubernetes version of k8s-openapi yet (a binary picks one with a
//! `v1_*` feature of its own k8s-openapi dependency; with `gateway-api`, of k8s-openapi
//! 0.28 too): then name one for the build,
//! `K8S_OPENAPI_ENABLED_VERSION=1.36 cargo doc -p gateway-reconcile --open` (1.36 is one
//! that both k8s-openapi 0.29 and 0.28, under gateway-api, support). docs.rs builds them with
//! every feature, the newest Kubernetes version of each k8s-openapi, and the feature
//! badges (`[package.metadata.docs.rs]`).
//!
//! # Example
//!
//! See [`reconcile`] for a whole reconcile loop, and the workspace member
//! `gateway-reconcile-kube` for the kube-rs controller built on this crate.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub(crate) mod cidr;
pub mod conditions;
mod error;
pub mod events;
pub mod gateway_class;
#[cfg(any(feature = "k8s-openapi", feature = "gateway-api"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "k8s-openapi", feature = "gateway-api")))
)]
pub mod interop;
mod json;
pub mod lookup;
mod merge_patch;
mod names;
mod outcome;
pub(crate) mod quantity;
#[cfg(any(feature = "sim", feature = "kube"))]
mod read_at;
pub mod reconcile;
pub(crate) mod rollout;
mod settings;
#[cfg(feature = "sim")]
#[cfg_attr(docsrs, doc(cfg(feature = "sim")))]
pub mod sim;
mod snapshot;
mod stages;
pub mod template;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod wake;
pub mod wire;

// The stages under their short names inside the crate.
pub(crate) use stages::{addresses, drift, listeners, nad, render, validate};

/// The time crate of [`plan`]'s `now` and of [`Requeue::deadline`] (jiff, re-exported so
/// that an embedder names the same version).
pub use jiff;

pub use error::InputError;
pub use outcome::{ApiError, FailureClass, WriteOutcome};
pub use reconcile::{
    AwaitingOutcome, DeploymentWrite, PendingWrite, Plan, Requeue, Settlement, StatusPatch,
    WriteKind, WriteRecord, plan,
};
pub use reconcile::{Driver, Port, Reader};
pub use settings::{Label, Settings, format_duration, parse_duration};
pub use snapshot::{NamespaceLabels, Snapshot, UnreadableConfiguration};
