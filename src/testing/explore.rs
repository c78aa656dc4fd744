//! Exhaustive exploration of a bounded model: every sequence of up to `depth` operations
//! from an alphabet, applied to a controller loop, each reconcile checked, and from every
//! state reached, *eventually stable reconciliation* checked.
//!
//! A random schedule ([`strategies::schedule`](super::strategies::schedule)) samples the
//! sequences; [`explore`] enumerates them all, breadth first, so that a bug reachable in
//! `depth` operations cannot be missed. States are told apart by a fingerprint
//! ([`Explorable::fingerprint`]): a state reached again by another path is not explored
//! again, which is what makes a useful depth reachable (most sequences of a few operations
//! commute into states already seen).
//!
//! The properties:
//!
//! - at every reconcile of every path, the kit's [`Invariants`] (no status claiming a
//!   generation the Deployment does not carry, `Degraded` never flapping, no status write
//!   when nothing changed, the loop's schedule, ...), as [`schedule::apply`] checks them;
//! - after every reconcile whose writes all succeeded, `echo-idle`: the same Gateway
//!   reconciled again at once, nothing else changed, writes nothing (so the echo of the
//!   controller's own writes, coming back as watch events, needs no reconcile);
//! - from every state reached, `eventually-stable`: once the inputs stop changing and the
//!   writes succeed (the pending write failures cleared, nothing else changed: the class,
//!   the configuration and the rollout stay as they are), reconciling every Gateway in
//!   turn reaches a round that writes nothing within [`Bounds::settle_within`] rounds, and
//!   the next round writes nothing either; and then every accepted Gateway of ours says
//!   `ConfigurationApplied` True (with writes succeeding, the gap closes). This is the
//!   property Anvil proves of a controller (OSDI '24), here checked by enumeration on a
//!   bounded model rather than proved.
//!
//! The fingerprint is a 64-bit hash (SipHash with fixed keys: the same on every run): two
//! different states that collide would hide one of them. At ten million states the odds
//! are about one in three hundred thousand.
//!
//! ```
//! use gateway_reconcile::testing::explore::{self, Bounds};
//! use gateway_reconcile::testing::strategies;
//!
//! let exploration = explore::explore(
//!     strategies::cluster().unwrap(),
//!     &explore::one_gateway_ops(),
//!     Bounds::to_depth(1),
//! )
//! .unwrap();
//! // The start, and a state for each operation that changed something.
//! assert!(exploration.states > 1 && exploration.complete);
//! ```

use std::collections::HashSet;
use std::fmt;
use std::hash::{DefaultHasher, Hasher};

use crate::conditions::{self, ACCEPTED, CONFIGURATION_APPLIED_NAME};
use crate::outcome::WriteOutcome;
use crate::reconcile::ObjectKey;
use crate::sim::cluster::{Cluster, Kind, ReconcileReport, RolloutState};
use crate::wire::{Gateway, GatewayClass};

use super::invariants::{Invariants, Violation, find, read_typed};
use super::schedule::{self, Op, WriteFailure};
use super::{ControllerLoop, Reconciler, StoreLoop};

/// A controller loop the explorer can copy and tell apart: the simulated [`Cluster`], or a
/// [`StoreLoop`] over several Gateways.
pub trait Explorable: ControllerLoop + Clone {
    /// Feeds to `state` everything that decides what the loop and its cluster do next and
    /// what the checks see: the stored objects (not their `resourceVersion`s, which only
    /// count), the server's clock and pending faults, the loop's write records and
    /// schedule.
    fn fingerprint(&self, state: &mut DefaultHasher);

    /// Every Gateway the loop reconciles, by namespace and name.
    fn gateways(&self) -> Vec<ObjectKey>;
}

impl Explorable for Cluster {
    fn fingerprint(&self, state: &mut DefaultHasher) {
        Cluster::fingerprint(self, state);
    }

    fn gateways(&self) -> Vec<ObjectKey> {
        let part = |key: &str| {
            self.gateway()["metadata"][key]
                .as_str()
                .unwrap_or("")
                .to_owned()
        };
        vec![(part("namespace"), part("name"))]
    }
}

impl<R: Reconciler + Clone> Explorable for StoreLoop<R> {
    fn fingerprint(&self, state: &mut DefaultHasher) {
        StoreLoop::fingerprint(self, state);
    }

    fn gateways(&self) -> Vec<ObjectKey> {
        self.store()
            .gateways()
            .map(|(namespace, name)| (namespace.to_owned(), name.to_owned()))
            .collect()
    }
}

/// How far [`explore`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Bounds {
    /// The longest sequence of operations explored.
    pub depth: usize,
    /// The most rounds (every Gateway reconciled once) the `eventually-stable` check allows
    /// before a round that writes nothing.
    pub settle_within: usize,
    /// The most states explored: past it the exploration stops, incomplete
    /// ([`Exploration::complete`] false), rather than run out of memory.
    pub max_states: usize,
}

impl Bounds {
    /// The default bounds ([`Bounds::default`]) with sequences of up to `depth` operations.
    pub fn to_depth(depth: usize) -> Bounds {
        Bounds {
            depth,
            ..Bounds::default()
        }
    }

    /// These bounds with at most `max_states` states explored.
    pub fn with_max_states(self, max_states: usize) -> Bounds {
        Bounds { max_states, ..self }
    }
}

impl Default for Bounds {
    /// Depth 3, settled within 4 rounds, at most a million states.
    fn default() -> Self {
        Bounds {
            depth: 3,
            settle_within: 4,
            max_states: 1_000_000,
        }
    }
}

/// What [`explore`] went through.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Exploration {
    /// The distinct states reached, the start included.
    pub states: usize,
    /// The operations applied (each from a state explored, whether it led to a new state
    /// or not).
    pub transitions: usize,
    /// The reconciles run and checked, the `eventually-stable` checks' included.
    pub reconciles: usize,
    /// The new states found at each depth (index 0: the start).
    pub by_depth: Vec<usize>,
    /// The most rounds an `eventually-stable` check needed before its quiet round.
    pub longest_settle: usize,
    /// Whether every sequence up to the depth was explored (false: `max_states` stopped
    /// it).
    pub complete: bool,
}

/// A property that failed, and the operations from the start that lead to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counterexample {
    /// The operations, in order (the `eventually-stable` check's own steps not included).
    pub ops: Vec<Op>,
    /// What failed.
    pub violation: Violation,
}

impl fmt::Display for Counterexample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} after: ", self.violation)?;
        for (i, op) in self.ops.iter().enumerate() {
            let sep = if i == 0 { "" } else { "; " };
            write!(f, "{sep}{}", op.describe())?;
        }
        Ok(())
    }
}

impl std::error::Error for Counterexample {}

/// The operations of the one-Gateway model: a reconcile, two configuration edits, one
/// Deployment write failure of each kind, writes failing from now on (a persisting gap),
/// each rollout outcome, a restart, and the clock past `degradedAfter` (121 s, the kit's
/// [`settings`](super::strategies::settings) having 120 s).
pub fn one_gateway_ops() -> Vec<Op> {
    let mut ops = vec![
        Op::Reconcile,
        Op::ConfigurationEdit(1),
        Op::ConfigurationEdit(2),
    ];
    ops.extend(WriteFailure::ALL.map(|failure| Op::fail(1, failure)));
    ops.push(Op::fail(u32::MAX, WriteFailure::Unavailable));
    ops.extend(
        [
            RolloutState::Complete,
            RolloutState::Progressing,
            RolloutState::Stalled,
        ]
        .map(Op::Rollout),
    );
    ops.extend([Op::Restart, Op::advance(121)]);
    ops
}

/// The operations of the two-Gateway model (`ns/gw` and `ns/other` sharing the
/// GatewayConfiguration): which Gateway the next operations act on, a reconcile, two edits
/// of the shared configuration, a failure of the targeted Gateway's next Deployment write
/// (transient or conflicting) and of all its writes from now on, the rollout completed, a
/// restart and the clock past `degradedAfter`. A failure pending on one Gateway's writes
/// while the other reconciles the edit is the "write in flight" of the model.
pub fn two_gateway_ops() -> Vec<Op> {
    vec![
        Op::target("ns", "gw"),
        Op::target("ns", "other"),
        Op::Reconcile,
        Op::ConfigurationEdit(1),
        Op::ConfigurationEdit(2),
        Op::fail(1, WriteFailure::Unavailable),
        Op::fail(1, WriteFailure::Conflict),
        Op::fail(u32::MAX, WriteFailure::Unavailable),
        Op::rollout_complete(),
        Op::Restart,
        Op::advance(121),
    ]
}

/// One state of the search: the loop, its checker, and how it was reached.
struct Node<L> {
    controller: L,
    invariants: Invariants,
    ops: Vec<Op>,
}

/// Explores every sequence of up to `bounds.depth` operations from `alphabet` applied to
/// `start` (see the [module docs](self)): the first property that fails, with the
/// operations that lead to it, or what was explored.
pub fn explore<L: Explorable>(
    start: L,
    alphabet: &[Op],
    bounds: Bounds,
) -> Result<Exploration, Counterexample> {
    let fail = |ops: &[Op], violation| Counterexample {
        ops: ops.to_vec(),
        violation,
    };
    let invariants = Invariants::new(&start).map_err(|v| fail(&[], v))?;
    let mut exploration = Exploration {
        complete: true,
        ..Exploration::default()
    };
    let mut seen = HashSet::new();
    let first = Node {
        controller: start,
        invariants,
        ops: Vec::new(),
    };
    seen.insert(fingerprint(&first));
    settles(&first, bounds, &mut exploration).map_err(|v| fail(&first.ops, v))?;
    exploration.states = 1;
    exploration.by_depth.push(1);
    let mut level = vec![first];
    for _ in 0..bounds.depth {
        let mut next = Vec::new();
        for node in &level {
            for op in alphabet {
                let mut child = Node {
                    controller: node.controller.clone(),
                    invariants: node.invariants.clone(),
                    ops: node.ops.iter().cloned().chain([op.clone()]).collect(),
                };
                exploration.transitions += 1;
                let records = schedule::apply(&mut child.controller, &mut child.invariants, op)
                    .map_err(|v| fail(&child.ops, v))?;
                exploration.reconciles += records.len();
                if !seen.insert(fingerprint(&child)) {
                    continue;
                }
                if *op == Op::Reconcile {
                    echo_idle(&child, &records, &mut exploration)
                        .map_err(|v| fail(&child.ops, v))?;
                }
                settles(&child, bounds, &mut exploration).map_err(|v| fail(&child.ops, v))?;
                exploration.states += 1;
                next.push(child);
                if exploration.states >= bounds.max_states {
                    exploration.complete = false;
                    exploration.by_depth.push(next.len());
                    return Ok(exploration);
                }
            }
        }
        exploration.by_depth.push(next.len());
        if next.is_empty() {
            break;
        }
        level = next;
    }
    Ok(exploration)
}

/// `echo-idle` after a reconcile whose writes all succeeded: reconciling the same Gateway
/// again at once, nothing else changed, writes nothing. The controller's own writes coming
/// back as watch events are then events it can drop unreconciled (the kube crate does).
fn echo_idle<L: Explorable>(
    node: &Node<L>,
    records: &[ReconcileReport],
    exploration: &mut Exploration,
) -> Result<(), Violation> {
    let Some(last) = records.last() else {
        return Ok(());
    };
    let wrote_deployment = last.outcome.as_ref().is_some_and(|o| o.class().is_none());
    let failed = last.outcome.as_ref().is_some_and(|o| o.class().is_some()) || last.status_refused;
    if failed || !(wrote_deployment || last.status_written) {
        return Ok(());
    }
    let mut controller = node.controller.clone();
    let mut invariants = node.invariants.clone();
    let again = schedule::apply(&mut controller, &mut invariants, &Op::Reconcile)?;
    exploration.reconciles += again.len();
    match again.last() {
        Some(echo) if echo.outcome.is_some() || echo.status_written => Err(invariants.violation(
            "echo-idle",
            format!(
                "a reconcile right after one whose writes succeeded wrote again ({:?}, status written: {})",
                echo.action, echo.status_written
            ),
        )),
        _ => Ok(()),
    }
}

/// A state's fingerprint: the loop's and its checker's.
fn fingerprint<L: Explorable>(node: &Node<L>) -> u64 {
    let mut state = DefaultHasher::new();
    node.controller.fingerprint(&mut state);
    node.invariants.hash_memory(&mut state);
    state.finish()
}

/// `eventually-stable` from `node` (see the [module docs](self)), on a copy of it.
fn settles<L: Explorable>(
    node: &Node<L>,
    bounds: Bounds,
    exploration: &mut Exploration,
) -> Result<(), Violation> {
    let mut controller = node.controller.clone();
    let mut invariants = node.invariants.clone();
    let gateways = controller.gateways();
    let property = "eventually-stable";
    let refused = |invariants: &Invariants, what: &str, e| {
        super::invariants::refused(invariants.steps(), property, what, e)
    };
    // Writes succeed from now on: the failures still pending are cleared (of every
    // Gateway: the blanket failures are one slot of the server).
    controller
        .fail_writes(0, &WriteOutcome::Applied)
        .map_err(|e| refused(&invariants, "stop the write failures", e))?;
    let mut quiet = 0;
    let mut rounds = 0;
    while quiet < 2 {
        if rounds == bounds.settle_within + 1 {
            return Err(invariants.violation(
                property,
                format!(
                    "the loop still writes after {} rounds of reconciles with no input changing and every write succeeding",
                    bounds.settle_within
                ),
            ));
        }
        rounds += 1;
        let before = controller.write_counts();
        for gateway in &gateways {
            aim(&mut controller, &mut invariants, &gateways, gateway)?;
            schedule::apply(&mut controller, &mut invariants, &Op::Reconcile)?;
            exploration.reconciles += 1;
        }
        match controller.write_counts() == before {
            true => quiet += 1,
            false => quiet = 0,
        }
    }
    exploration.longest_settle = exploration.longest_settle.max(rounds - 2);
    // Stable, and true: with every write succeeding, an accepted Gateway of ours carries
    // its configuration.
    let domain = &invariants.settings().condition_domain;
    let applied_type = format!("{domain}/{CONFIGURATION_APPLIED_NAME}");
    let ours = read_typed::<L, GatewayClass>(&controller, Kind::GatewayClass, invariants.steps())?
        .is_some_and(|c| c.spec.controller_name == invariants.settings().controller_name);
    for key @ (namespace, name) in &gateways {
        aim(&mut controller, &mut invariants, &gateways, key)?;
        let gateway: Gateway =
            read_typed(&controller, Kind::Gateway, invariants.steps())?.unwrap_or_default();
        let conditions = &gateway.status.conditions;
        let accepted =
            find(conditions, ACCEPTED).is_some_and(|c| c.status == conditions::status::TRUE);
        let applied = find(conditions, &applied_type);
        if ours && accepted {
            invariants.ensure(
                applied.is_some_and(|c| c.status == conditions::status::TRUE),
                property,
                || format!("{namespace}/{name} settled with ConfigurationApplied {applied:?}"),
            )?;
        }
    }
    Ok(())
}

/// Makes `gateway` the loop's target, when it has more than one of `gateways`.
fn aim<L: Explorable>(
    controller: &mut L,
    invariants: &mut Invariants,
    gateways: &[ObjectKey],
    (namespace, name): &ObjectKey,
) -> Result<(), Violation> {
    if gateways.len() > 1 {
        schedule::apply(controller, invariants, &Op::target(namespace, name))?;
    }
    Ok(())
}
