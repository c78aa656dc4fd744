//! The reconcile state machine: [`plan`] decides, the caller writes, [`PendingWrite::settle`]
//! reads the outcome and says what status to write and when to look again.
//!
//! Like a sans-I/O protocol state machine, nothing here talks to the API server or reads a
//! clock: the caller passes the objects it saw and the time, performs the one write the plan
//! asks for, and hands back what happened. The types carry the protocol: a [`Plan`] either
//! needs a write ([`Plan::Write`], settled by value with that write's outcome, exactly once)
//! or is settled already ([`Plan::Settled`]). A caller that sends the desired Deployment by
//! value takes the write out with [`PendingWrite::into_write`] and settles the
//! [`AwaitingOutcome`] it returns instead: a Deployment can be large, and it is not copied.
//!
//! ```
//! use gateway_reconcile::{
//!     DeploymentWrite, Plan, Requeue, Settings, Snapshot, WriteOutcome, plan, template,
//! };
//! use gateway_reconcile::wire::{Gateway, GatewayClass, GatewayConfiguration};
//!
//! let gateway: Gateway = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "gw", "namespace": "ns", "uid": "u1", "generation": 1},
//!     "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"parametersRef": {
//!         "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
//! })).unwrap();
//! let class: GatewayClass = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "meridio"},
//!     "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}
//! })).unwrap();
//! let conf: GatewayConfiguration = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "conf", "namespace": "ns", "generation": 7},
//!     "spec": {"internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}
//! })).unwrap();
//! let template = template::default_template();
//! let settings = Settings::default();
//! let now = "2026-01-01T00:00:00Z".parse().unwrap();
//!
//! // One reconcile: plan, perform the write it asks for, settle with what happened.
//! let snapshot = Snapshot::new(&gateway, &template)
//!     .with_gateway_class(Some(&class))
//!     .with_configuration(Some(&conf));
//! let settlement = match plan(&settings, snapshot, now).unwrap() {
//!     Plan::Write(pending) => {
//!         let outcome = match pending.write() {
//!             DeploymentWrite::Create(_desired) => WriteOutcome::Applied, // client.create(desired)
//!             DeploymentWrite::Update { .. } => WriteOutcome::Applied,    // client.replace(desired)
//!         };
//!         pending.settle(outcome)
//!     }
//!     Plan::Settled(settlement) => settlement, // nothing to write
//! };
//! if let Some(patch) = settlement.status_patch() {
//!     // client.patch_status(name, &PatchParams::default(), &Patch::Merge(patch.body()))
//!     assert_eq!(patch.body()["status"]["conditions"][1]["type"], "Programmed");
//! }
//! assert_eq!(settlement.requeue, Requeue::AwaitChange);
//! ```
//!
//! A pending write is settled once; a second settle does not compile:
//!
//! ```compile_fail,E0382
//! use gateway_reconcile::{PendingWrite, Settlement, WriteOutcome};
//!
//! fn settle_twice(pending: PendingWrite<'_>) -> (Settlement, Settlement) {
//!     let first = pending.settle(WriteOutcome::Applied);
//!     let second = pending.settle(WriteOutcome::Applied); // use of moved value
//!     (first, second)
//! }
//! ```
//!
//! # The rules a plan applies
//!
//! [`plan`] runs four steps, in this order, and these sections state their rules (the
//! conditions, Events and requeue that follow are in the [crate docs](crate)), and the
//! settlement a fifth:
//!
//! 1. [validation](#validation) of the Gateway's parameters (GatewayConfiguration,
//!    template, infrastructure labels and annotations, listeners and addresses), first
//!    failure wins;
//! 2. the desired [LB Deployment](#the-lb-deployment), rendered from the template or the
//!    observed Deployment;
//! 3. [drift](#drift): the desired against the observed Deployment, by meaning;
//! 4. [addresses](#addresses): the Gateway's `status.addresses` from its L34Routes;
//! 5. [listeners](#listeners): the Gateway's `status.listeners`, once its conditions are
//!    settled (a listener's `Programmed` follows the Gateway's).
//!
//! ## Validation
//!
//! The Gateway's parameters are validated, first failure wins: the checks run in this
//! order, the first that fails is the one reported, and its message is the exact condition
//! message (of `Accepted` and `ConfigurationApplied`, both False with reason
//! `InvalidParameters` — `UnsupportedAddress` and `ListenersNotValid` for the two failures
//! of step 11 — and of `Programmed`, False/`Invalid`, after the words `Gateway not
//! accepted:` and a space):
//!
//! 1. a parameters reference applies
//!    ([`lookup::parameters_ref`](crate::lookup::parameters_ref)): the Gateway's own
//!    `spec.infrastructure.parametersRef` (naming a GatewayConfiguration in the Gateway's
//!    namespace), else its GatewayClass's `spec.parametersRef` (the class's default, in the
//!    namespace the class's reference names, which may differ from the Gateway's);
//! 2. its `group` and `kind` are `Settings::parameters_group` / `parameters_kind` (exact,
//!    case-sensitive; [`lookup::is_ours`](crate::lookup::is_ours)); the message is the same
//!    for a class's reference. A class's reference without `namespace` is refused next with
//!    the class's own message, `parametersRef.namespace is required for a
//!    GatewayConfiguration`;
//! 3. the GatewayConfiguration exists, and is the one referenced: a configuration whose
//!    `metadata.name` differs from the reference's name, or whose `metadata.namespace`
//!    differs from the reference's namespace, is reported as not found, as if the caller
//!    had passed none (a caller bug or a stale cache must not make the Gateway run with
//!    someone else's parameters). A missing name or namespace on either side is not a
//!    mismatch. When the caller hands the referenced configuration as unreadable
//!    ([`UnreadableConfiguration`](crate::UnreadableConfiguration): it exists but does not
//!    read into the crate's type), the failure is `GatewayConfiguration "NAME" cannot be
//!    read: WHY` (WHY the reader's error), whatever readable configuration is also given.
//!    Messages naming a configuration the class provides name it `NS/NAME`
//!    ([`ConfigurationRef`](crate::lookup::ConfigurationRef)'s `Display`);
//! 4. `spec.internalSubnets`: at most 2 (the CRD's `maxItems`: `GatewayConfiguration
//!    spec.internalSubnets: must have at most 2 items (has 3)`), at least one; then each
//!    subnet in list order, completely, before the next: attachment type `NAD`, the CIDR
//!    parses (an IPv4 or IPv6 address as `std::net::IpAddr` reads it, without a zone, and a
//!    prefix of plain decimal digits without sign or leading zero, at most 32 or 128; host
//!    bits may be set), is not a default route, holds no IPv6 link-local address, and does
//!    not overlap any earlier subnet (the first earlier one it overlaps is named). So the
//!    reported failure is always the one of the earliest bad subnet, as in the Meridio-2
//!    controller this models: with `[10.0.0.0/8, 10.1.0.0/16, junk]` the overlap is
//!    reported, not the junk;
//! 5. `spec.networkAttachments`: at most 10 (the CRD's `maxItems`: `GatewayConfiguration
//!    spec.networkAttachments: must have at most 10 items (has 11)`); then each in list
//!    order, completely, before the next: type `NAD` (exact), `nad` present, `nad.name`
//!    non-empty, `nad.interface` non-empty, interface not used by an earlier attachment;
//! 6. `spec.verticalScaling.containers`, in list order: no ResourceClaims. A `claims` entry
//!    in `resources` that is anything but `null` or an empty list counts as claims; then no
//!    container named twice (`verticalScaling container "NAME": duplicate entry`), and
//!    every request and limit must be a quantity (additions to the spec's list:
//!    `verticalScaling container "NAME": invalid quantity "X" for requests.cpu`), and none
//!    negative (`verticalScaling container "NAME": negative quantity "-1" for limits.memory
//!    (must be greater than or equal to 0)`); then `horizontalScaling.replicas` not
//!    negative (`horizontalScaling.replicas: invalid value -1: must be greater than or
//!    equal to 0`) and within a Deployment's `int32` (`horizontalScaling.replicas: invalid
//!    value 2147483648: must be less than or equal to 2147483647`: the CRD's `type:
//!    integer` has no format, so the API server stores such a GatewayConfiguration). These
//!    and the checks of steps 8 and 9 refuse render values the API server would refuse (it
//!    would answer 422 Invalid), so the Gateway says what is wrong rather than carry a
//!    write rejection;
//! 7. the merged network selections (the template's pod-template
//!    `k8s.v1.cni.cncf.io/networks` annotation, merged with the GatewayConfiguration's as
//!    [the LB Deployment](#the-lb-deployment) says): no two entries share a non-empty
//!    interface (an empty interface lets Multus pick a free name, so it cannot clash).
//!    Selections without a namespace get the GatewayConfiguration's namespace (a
//!    class-provided configuration's is the class's, not the Gateway's), else the namespace
//!    the reference names, else `default`. A networks annotation that is not a string is
//!    ignored;
//! 8. the template is usable: `spec.template.spec.containers` is a non-empty list of
//!    objects, each with a non-empty string `name`, names unique (rendering and drift pair
//!    containers by name). This comes last, as the spec lists it; a template failure backs
//!    off and is tried again (the transient backoff), since the controller's template file
//!    may be fixed without any object changing. The template's render values are checked
//!    here too, each failure naming the field and the value: `spec.replicas` a non-negative
//!    integer; every request and limit of its containers and init containers a quantity,
//!    not negative (`spec.template.spec.containers[NAME].resources.limits.memory: negative
//!    quantity "-1Gi"`); the label values of `metadata.labels` and
//!    `spec.template.metadata.labels` of the label-value form, at most 63 characters;
//! 9. the Gateway's own name is a DNS-1123 subdomain of at most 253 characters, checked
//!    whole (`Gateway name "NAME": WHY`, in the API server's words: only a hand-written
//!    snapshot has another, and a bad character past what the shortened names keep must
//!    not pass); then the LB Deployment name ([`deployment_name`](crate::lookup::deployment_name):
//!    `deploymentPrefix + Gateway name`, shortened with a hash past 63 characters), which
//!    is also the value of its `app` label, is a DNS-1123 subdomain and a label value: `LB
//!    Deployment name "NAME" (deploymentPrefix + Gateway name): WHY` (the API server's
//!    explanation of the form, e.g. for an upper-case name in a hand-written snapshot); and
//!    the `gateway.networking.k8s.io/gateway-name` label's value
//!    ([`gateway_name_label`](crate::lookup::gateway_name_label)) is a label value: `label
//!    gateway.networking.k8s.io/gateway-name: invalid value "V" (the Gateway name): WHY` (a
//!    hand-written name starting with `-`). A long Gateway name is not a failure: it is
//!    shortened;
//! 10. the Gateway's `spec.infrastructure.labels`, then its `annotations`, which go onto
//!     the LB Deployment and its pods: each map at most 8 entries (the Gateway API CRD's
//!     `maxProperties`: `Gateway spec.infrastructure.labels: must have at most 8 entries
//!     (has 9)`), then every key a valid label key and every label value a valid label
//!     value (`infrastructure.labels["KEY"]: invalid key: WHY`);
//! 11. (SPEC revision 5) the listeners: at most 64 (the Gateway CRD's `maxItems`: `Gateway
//!     spec.listeners: must have at most 64 items (has 65)`), each with at most 8
//!     `allowedRoutes.kinds` (`Gateway spec.listeners[].allowedRoutes.kinds: must have at
//!     most 8 items (has 9)`); then no `spec.addresses`
//!     (reason `UnsupportedAddress`, `spec.addresses is not supported: the Gateway's
//!     addresses come from its L34Routes`: the Gateway API requires an address that cannot
//!     be honoured to show in the conditions, where Meridio-2 ignores it); then at least
//!     one accepted listener ([listeners](#listeners); reason `ListenersNotValid`, `no
//!     listener is accepted: listener "NAME": protocol "P" is not supported` naming the
//!     first listener in spec order, or `no listener is accepted: the Gateway has no
//!     listener` for a Gateway without listeners, which only a hand-written snapshot has).
//!     The listener status is written whatever the validation says.
//!
//! The bounds of steps 4, 5, 10 and 11 are those of the CRDs (this project's copies in
//! `e2e/crds` and Meridio-2's agree on them; the Gateway API's own for the Gateway), so an
//! object the API server took is never refused by them (the real API server refuses one
//! over a bound, `Too many: 3: must have at most 2 items`, as the e2e smoke test shows); a
//! hand-written snapshot over a bound is refused before any of its items is looked at.
//! `spec.verticalScaling.containers` has no bound in either GatewayConfiguration CRD, so
//! none is enforced here (its checks are linear, and an entry that names no container is
//! ignored by rendering). The Gateway's `status.conditions` (8 items in the Gateway API)
//! has its own rule, not a failure (the 8-item limit of [`crate::conditions`]), and its
//! `status.addresses` (16) is replaced whole by the crate's own list, which keeps to 16
//! ([Addresses](#addresses)).
//!
//! Quoted values in messages (`"T"`, `"C"`, `"IF"`, ...) are written with Rust's string
//! escaping, so control characters and quotes cannot break a message.
//!
//! ## The LB Deployment
//!
//! The plan renders the template (create) or the observed Deployment (update) into the
//! Deployment the controller wants (the [`DeploymentWrite`]). The Deployment is JSON, and
//! every field the crate does not own is carried through untouched.
//!
//! ### Rules
//!
//! - Name [`deployment_name`](crate::lookup::deployment_name): `deploymentPrefix + gateway
//!   name`, shortened with a hash when that passes 63 characters; the Gateway's namespace,
//!   `apps/v1` `Deployment`.
//! - **Start.** Create: a copy of the template. Update: the observed Deployment, with the
//!   template's `initContainers`, `containers` and `volumes` put in place in
//!   `spec.template.spec` (a list the template lacks is removed), and each observed
//!   container's `resources` and `resizePolicy` kept by container name (init containers
//!   too). A container the observed Deployment did not have yet gets the template's. Every
//!   other field the template sets in `spec.template.spec` (tolerations, affinity,
//!   nodeSelector, securityContext, terminationGracePeriodSeconds, ...) is put in place
//!   whole, so a new template reaches existing Deployments; the rules below then apply
//!   (`serviceAccountName`, `readinessGates` and the anti-affinity values are theirs).
//! - **Labels and annotations**, on the Deployment and on the pod template: observed
//!   (update) ← template ← Gateway `spec.infrastructure.labels/annotations` ← controller
//!   labels `app=NAME`, `gateway.networking.k8s.io/gateway-name=GATEWAY` (the name,
//!   shortened with a hash past 63 characters:
//!   [`gateway_name_label`](crate::lookup::gateway_name_label)),
//!   `app.kubernetes.io/managed-by=gateway-controller.meridio-2.nordix.org`; later wins.
//! - **Pod-cache label** ([`Settings::pod_cache_label`](crate::Settings::pod_cache_label))
//!   on the pod template labels.
//! - **Generation annotation**
//!   [`generation_annotation`](crate::lookup::generation_annotation) on the Deployment: the
//!   GatewayConfiguration's `metadata.generation`, in decimal; **uid annotation**
//!   [`uid_annotation`](crate::lookup::uid_annotation): its `metadata.uid`, none when it
//!   has no uid.
//! - **Owner reference**: the controller reference to the Gateway (`controller` and
//!   `blockOwnerDeletion` true) replaces any other controller reference; non-controller
//!   references are kept.
//! - **Selector** `{matchLabels: {app: NAME}}`, replacing the whole selector; pod
//!   `serviceAccountName` =
//!   [`Settings::service_account`](crate::Settings::service_account).
//! - **Anti-affinity**: in every `requiredDuringSchedulingIgnoredDuringExecution` pod
//!   anti-affinity term, each `labelSelector.matchExpressions` entry with key `app` gets
//!   `values: [NAME]`.
//! - **Env**: every `MERIDIO_GATEWAY_NAME` entry (containers and init containers) gets
//!   `value: GATEWAY`; container `router` gets `POD_NAME`, `POD_NAMESPACE`, `POD_UID` from
//!   the downward API (`metadata.name`, `metadata.namespace`, `metadata.uid`), each
//!   appended in that order when no entry of that name exists.
//! - **Replicas**: `horizontalScaling.replicas` on create (else the template's), and on
//!   every update when `enforceReplicas`; otherwise the observed value stays.
//! - **Resources**: each `verticalScaling.containers` entry that names a container sets, on
//!   create or always when `enforceResources`, its `resources.requests`, `resources.limits`
//!   and `resizePolicy`; an empty or missing one removes the key.
//! - **Networks annotation** (Multus) `k8s.v1.cni.cncf.io/networks` on the pod template:
//!   the validated selections as a JSON list of `{"name", "namespace", "interface"}`;
//!   removed when there are none; an observed value that lists the same set keeps its text.
//!   The template's own annotation holds either such a JSON list or the comma shorthand
//!   `ns/name@if, name@if2`; its selections come first (those the GatewayConfiguration does
//!   not repeat), then the GatewayConfiguration's in spec order.
//! - **Readiness gates**, authoritative: `meridio-2.nordix.org/ipv4-connectivity` if an
//!   internal subnet is IPv4, then `meridio-2.nordix.org/ipv6-connectivity` if one is IPv6;
//!   the key is removed when there is none.
//!
//! The output is deterministic: the same inputs give byte-identical JSON. Rendering over
//! the crate's own output gives that output again.
//!
//! ### Choices where the spec is silent
//!
//! - An observed container's `resources` are kept *as they are*, absence included: a
//!   container whose resources were cleared stays without, until an enforced
//!   `verticalScaling` entry says otherwise. `claims` in a template's or observed
//!   `resources` are left alone; a `verticalScaling` entry's `claims` are never copied
//!   (validation rejects them).
//! - `verticalScaling` entries also apply to init containers (Kubernetes names are unique
//!   across both lists, and sidecars need resources too). Entries naming no container are
//!   ignored; for a repeated name the last entry wins.
//! - `enforceReplicas` without `replicas` enforces the template's count; if the template
//!   has none either, the observed value stays.
//! - The pod-cache label is written before the controller labels, so a pod-cache key that
//!   collides with `app` (or another controller label) can never break the selector.
//! - The generation annotation is written after the Gateway's annotations, and the networks
//!   annotation after the pod template's, so neither can be overridden. A
//!   GatewayConfiguration without `metadata.generation` (the caller rejects it before
//!   rendering) removes the generation annotation rather than leave an old one standing;
//!   likewise one without `metadata.uid` (a hand-written snapshot) removes the uid
//!   annotation.
//! - The controller reference replaces the first controller reference in place (the list
//!   keeps its order, so re-rendering does not reorder it); further controller references
//!   and non-controller references to the same Gateway UID are dropped (they would be
//!   duplicates).
//! - `MERIDIO_GATEWAY_NAME` entries lose any `valueFrom` (Kubernetes rejects both set).
//! - The downward-API env is added to the container named `router` only, not to an init
//!   container of that name.
//! - The networks annotation of an update is compared with the observed one with
//!   unnamespaced selections read in the Gateway's namespace (the Pods' namespace, where
//!   Multus resolves them).
//! - A field the template stops setting in its pod spec stays on existing Deployments as it
//!   is: nothing tells it from a field another writer set (the kube crate may remove such
//!   fields through server-side apply field ownership). A field the template sets to `null`
//!   sets nothing. The template's `affinity` replaces the observed one whole (its required
//!   anti-affinity terms with the `app` values rendered); without one, the observed
//!   `affinity` stays, its required anti-affinity terms rendered as before.
//! - Empty `annotations` maps are removed. Everything else the observed Deployment has is
//!   kept, including `resourceVersion` (optimistic concurrency) and `status` (the API
//!   server ignores it on update).
//!
//! ## Drift
//!
//! Drift is semantic, between the desired and the observed Deployment. The observed
//! Deployment has been through the API server: defaulted (strategy,
//! `terminationMessagePath`, `fieldRef.apiVersion`, ...), normalized (quantities in
//! canonical form) and annotated by other controllers. The plan therefore compares by
//! meaning, not by bytes; the paths that differ are the `drift` of a
//! [`DeploymentWrite::Update`] (none: no update needed).
//!
//! ### Rules
//!
//! - **Subset.** Every value the desired object sets must be present and equal in the
//!   observed one. A field only the observed object has is not drift (server defaults,
//!   other controllers' labels and annotations).
//! - **Unset and empty.** A desired `null` sets nothing and is never drift. A desired empty
//!   value (`{}`, `[]`, `""`, `false`, `0`, or an object of such values) against an absent
//!   or `null` observed value is not drift: the API server drops empty (`omitempty`)
//!   fields.
//! - **Lists** are compared whole. Lists of objects with a merge key are paired by it,
//!   whatever the order: `containers`, `initContainers`, `ephemeralContainers`, `env`,
//!   `volumes`, `ports`, `imagePullSecrets` by `name`; `volumeMounts` by `mountPath`;
//!   `volumeDevices` by `devicePath`; `readinessGates` by `conditionType`;
//!   `ownerReferences` by `uid`. A desired element with no observed partner, and an
//!   observed element with no desired partner, are drift at that element (`env[POD_UID]`);
//!   when a key occurs a different number of times on each side, that key is drift. If any
//!   element of either side lacks a string key (unnamed ports, say) the list is paired by
//!   index instead, as are all other lists: different lengths are drift at the list itself,
//!   otherwise element `i` is compared with element `i` (`args[1]`). So a list without a
//!   merge key (`tolerations`, `args`, `command`, ...) is atomic: compared whole, in order;
//!   its elements are compared by the same rules as any object (a field only the observed
//!   element has, a server default, is not drift).
//! - **Env value source** is compared exactly: in a container's `env` entry, a `value` or
//!   `valueFrom` only the observed entry has is drift (`value` against `valueFrom` is drift
//!   in both directions). An empty `value` is no value (the API server drops it).
//! - **String maps keep empty values**: an entry of `nodeSelector`, `labels`, `annotations`
//!   or `matchLabels` whose desired value is `""` must be present (the API server keeps map
//!   entries; the empty rule above is for struct fields).
//! - **Quantities** (values under `resources.requests` and `resources.limits`, and any
//!   `sizeLimit`) are compared by value (as the API server parses quantities): `0.5` ==
//!   `500m`, `1Gi` == `1024Mi`. A JSON number counts as its decimal text; a malformed
//!   quantity is compared as written. Requests and limits are compared rounded up to a
//!   milli, as the API server stores them (`100u` == `1m`). Other numbers are compared by
//!   value (`1` == `1.0`).
//! - **Owned fields whose absence matters** are compared exactly, in both directions:
//!   - the Deployment's generation and uid annotations
//!     ([`generation_annotation`](crate::lookup::generation_annotation) and
//!     [`uid_annotation`](crate::lookup::uid_annotation), the keys of the condition
//!     domain): present on one side only is drift;
//!   - the pod-template annotation `k8s.v1.cni.cncf.io/networks` (compared as text: the
//!     renderer keeps the observed text when it is equal as a set);
//!   - `spec.template.spec.readinessGates`: observed gates the desired object lacks are
//!     drift even when the desired list is absent;
//!   - `spec.selector`: equal, with no extra keys (an empty map equals an absent one);
//!   - `spec.replicas` when `horizontalScaling.enforceReplicas`, an absent value meaning
//!     the server's default 1; when not enforced, `spec.replicas` is not compared at all
//!     (an autoscaler owns it, and the renderer keeps the observed value);
//!   - `requests` and `limits` of `spec.template.spec.containers` named by a
//!     `verticalScaling` entry with `enforceResources`: the same resource names, equal
//!     quantities.
//! - **Server-owned** fields are ignored on both sides: top-level `status`, `apiVersion`
//!   and `kind` (typed clients strip the last two), and `metadata.resourceVersion`,
//!   `managedFields`, `creationTimestamp`, `uid`, `generation`, `selfLink`,
//!   `deletionTimestamp`, `deletionGracePeriodSeconds`.
//!
//! ### Paths
//!
//! Object keys are joined with `.`; a key containing `.`, `/`, `[` or `]` (or empty) is
//! written in brackets instead
//! (`metadata.annotations[meridio-2.nordix.org/gatewayconfiguration-generation]`,
//! `resources.limits[nvidia.com/gpu]`). A merge-keyed list element is `[key]`
//! (`spec.template.spec.containers[router].env[POD_UID]`), an index-paired one `[i]`. Drift
//! is reported at the deepest meaningful place: the changed scalar
//! (`containers[router].image`), each missing desired leaf when the observed object lacks a
//! whole sub-object, the element for a missing or extra keyed element, the list for an
//! index-paired length mismatch, the object itself for a type mismatch. The result is
//! sorted and deduplicated.
//!
//! ### Cost
//!
//! One walk over the desired tree, following the observed one alongside, without cloning;
//! path strings are only built for drifted fields. Keyed lists are paired by sorting `(key,
//! index)` pairs, so long lists cost `O(n log n)`. Which owned fields are compared apart,
//! and how, is declared once with the fields. The reconcile walks the owned part of an
//! update render where it lies: its values borrowed from the observed Deployment until a
//! rule changes one, its containers the template's with the few fields the rules change
//! laid over them. A steady-state reconcile copies nothing the rules leave alone.
//!
//! ## Addresses
//!
//! The Gateway's `status.addresses` come from the L34Routes attached to it: every attached
//! route gives the IP of each of its `destinationCIDRs`, unique by IP, sorted as strings,
//! of type `IPAddress`, at most 16 (the Gateway CRD's limit; only the 16 smallest are ever
//! held, however many routes there are). Unparsable CIDRs are skipped.
//!
//! A route is attached when one of its `parentRefs` names the Gateway
//! ([`lookup::parent_gateway`](crate::lookup::parent_gateway)) **and a listener admits it**
//! ([`lookup::route_attaches`](crate::lookup::route_attaches), the Gateway API's
//! `allowedRoutes`; without it any namespace's route could put addresses into, or push the
//! owner's addresses out of, another namespace's Gateway):
//!
//! - the listener: the one the parentRef's `sectionName` names (none of that name: not
//!   attached), or any listener when it names none; only an accepted listener (a protocol
//!   the LB carries, [listeners](#listeners)) admits routes. A Gateway without listeners
//!   (the Gateway API's CRD requires at least one, so only a hand-written snapshot has
//!   none) admits no route;
//! - `allowedRoutes.namespaces.from`: `Same` (the default, also when `allowedRoutes`,
//!   `namespaces` or `from` is absent or empty) admits routes of the Gateway's namespace;
//!   `All` every namespace; `Selector` the namespaces whose labels, as the caller hands
//!   them ([`Snapshot::namespace_labels`](crate::Snapshot::namespace_labels)), match
//!   `selector` (`matchLabels`, and `matchExpressions` with `In`, `NotIn`, `Exists`,
//!   `DoesNotExist`); a namespace whose labels are not handed is admitted by no selector,
//!   and neither is any namespace when `selector` is absent or is one the API server would
//!   call invalid (an unknown operator, `In`/`NotIn` without values,
//!   `Exists`/`DoesNotExist` with values: Kubernetes' `LabelSelectorAsSelector` refuses
//!   those). `{}` selects every namespace whose labels are handed. Any other `from` admits
//!   nothing;
//! - `allowedRoutes.kinds`: absent or empty admits L34Route (this implementation's own
//!   kind, whatever the listener's protocol); otherwise an entry of kind `L34Route` and
//!   group `meridio-2.nordix.org` must be listed (an entry's group defaults to
//!   `gateway.networking.k8s.io`, as in the Gateway API).
//!
//! A route holding more `parentRefs` than 1 or more `destinationCIDRs` than 100 (the
//! L34Route CRD's `maxItems`, the same in this project's copy and in Meridio-2's) is one
//! the API server refuses, so it can come only from a hand-written snapshot: it is skipped
//! whole, as an unparsable CIDR is skipped, since a route is not the Gateway's own
//! parameter and must not make the Gateway invalid. Only its list lengths are looked at, so
//! a long list costs nothing. The route's other lists are not read by the crate and so not
//! bounded here (where this project's CRD copy and Meridio-2's differ, it is on those:
//! `sourcePorts` and `destinationPorts` 1,000 items against 20, `byteMatches` 100 against
//! 10; and on the length of one `destinationCIDRs` item, 64 against 50 characters, which
//! the crate does not bound either: an item of any length is parsed or skipped).
//!
//! ## Listeners
//!
//! (SPEC revision 5.) Meridio-2's LB binds no listener: its traffic is steered by the
//! L34Routes at layer 4 and nothing is terminated. A listener here is where routes attach
//! ([addresses](#addresses)). Whenever the Gateway is ours (invalid or not; not when it is
//! being deleted or is another controller's, whose `status.listeners` are left as they
//! are), the status carries one entry per listener of `spec.listeners`, in spec order
//! (the first listener of a name, at most 64: the CRD's bounds), matched to the observed
//! entries by `name` (an entry of a listener no longer in the spec goes):
//!
//! - `supportedKinds`: `[{"group": "meridio-2.nordix.org", "kind": "L34Route"}]` when the
//!   listener is accepted and its `allowedRoutes.kinds` is absent, empty or lists that kind;
//!   otherwise `[]`;
//! - `attachedRoutes`: how many L34Routes attach through this listener by the rule of
//!   [addresses](#addresses): a parentRef naming the Gateway with this listener's
//!   `sectionName` or none, admitted by this listener's `allowedRoutes`. A route without
//!   `sectionName` counts on every listener that admits it, a route counts whether or not
//!   its CIDRs give an address, and a route over its CRD's bounds counts nowhere. (The
//!   Gateway API counts the routes whose own status says they are accepted; an L34Route
//!   has no status, so attaching is its acceptance.)
//! - `conditions`, with the bookkeeping of the Gateway's own (`observedGeneration` the
//!   Gateway's generation, `lastTransitionTime` moved only on a status change, foreign
//!   conditions on the entry kept, at most 8 with `Accepted`, then `Programmed`, then
//!   `ResolvedRefs` kept first; one of them with an `observedGeneration` above the
//!   Gateway's makes the snapshot stale, as for the Gateway's conditions):
//!
//! | condition | when | status / reason / message |
//! |---|---|---|
//! | `Accepted` | the protocol is `HTTP`, `HTTPS`, `TLS`, `TCP`, `UDP` or `SCTP` (the LB forwards their packets at layer 4; HTTP, HTTPS and TLS travel as TCP, and no HTTPRoute attaches: `supportedKinds` says so) | `True`/`Accepted`/`Listener accepted` |
//! | | any other protocol | `False`/`UnsupportedProtocol`/`protocol "P" is not supported (supported: HTTP, HTTPS, SCTP, TCP, TLS, UDP)` |
//! | `ResolvedRefs` | `allowedRoutes.kinds` lists a kind other than L34Route | `False`/`InvalidRouteKinds`/`route kinds not supported: G/K, G/K (supported: meridio-2.nordix.org/L34Route)`, each other kind once, in the order of its first entry |
//! | | otherwise (TLS `certificateRefs` are not read: nothing is terminated) | `True`/`ResolvedRefs`/`Listener references resolved` |
//! | `Programmed` | accepted, and the Gateway's `Programmed` after this reconcile is True | `True`/`Programmed`/`Listener programmed` |
//! | | not accepted | `False`/`Invalid`/`listener not accepted` |
//! | | accepted, the Gateway not programmed | `False`, the Gateway's `Programmed` reason, `Gateway not programmed` |
//!
//! When some listeners are accepted and others not, the Gateway stays `Accepted` (its
//! message unchanged: other controllers match it) and the entries say which; when none
//! is, validation fails with `ListenersNotValid`. The status write is one merge patch of
//! `status` (conditions, addresses and listeners), and there is none when all three equal
//! the observed ones.
//!
//! # Modules
//!
//! `plan` makes the decisions up to the Deployment write; `situation` classifies
//! what happened (decision × write × outcome class); `table` maps a situation to its row of
//! the condition table (the crate docs state its rules); `settle` merges the row into the observed conditions, with events and requeue.

mod driver;
mod gather;
mod in_memory;
mod plan;
mod port;
mod record;
mod settle;
pub(crate) mod settlement;
mod situation;
mod table;
mod write;

pub use driver::{Decided, Driver, NotReady, ReconcileError, Reconciled, ready};
pub use gather::{Gathered, gather};
pub use in_memory::{InMemory, ObjectKey};
pub use plan::{AwaitingOutcome, PendingWrite, Plan, plan};
pub use port::{Held, Labels, Port, Reader, StatusWrite, View};
pub use record::WriteRecord;
pub use settlement::{Requeue, Settlement, StatusPatch};
pub use write::{DeploymentWrite, WriteKind};
