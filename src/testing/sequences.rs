//! Desired-state sequences (Acto's method, SOSP '23): a sequence of valid edits of what a
//! user declares (the GatewayConfiguration, the Gateway's listeners, labels, routes and
//! `parametersRef`, the LB template, the class), each followed by the loop's convergence
//! and a check of the whole state against the crate itself: a plan made on the objects as
//! they are, with the loop's write record, must ask for no Deployment write and no status
//! change. The oracle is the crate's own decision on the final objects, so any state the
//! loop leaves that the crate would not have left (a stale Deployment, a status that does
//! not match the objects) fails, whatever path led there.
//!
//! [`run_sequence`] runs one on any [`ControllerLoop`] (the simulated cluster, the kit's
//! store, or a loop on a real API server), its reconciles checked by the kit's
//! [`Invariants`]; [`sequence`] draws them.
//!
//! ```
//! use gateway_reconcile::testing::invariants::Invariants;
//! use gateway_reconcile::testing::sequences::{self, Edit};
//! use gateway_reconcile::testing::strategies;
//!
//! let mut cluster = strategies::cluster().unwrap();
//! let mut invariants = Invariants::new(&cluster).unwrap();
//! let edits = [Edit::Replicas(3), Edit::Listeners(2), Edit::ParametersRef(false), Edit::ParametersRef(true)];
//! let report = sequences::run_sequence(&mut cluster, &mut invariants, &edits).unwrap();
//! assert_eq!(report.edits, 4);
//! ```

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::reconcile::{Plan, plan};
use crate::sim::cluster::{Kind, RolloutState};
use crate::sim::scenario::StepError;
use crate::snapshot::Snapshot;

use super::ControllerLoop;
use super::invariants::{Invariants, Violation};
use super::schedule::{self, Op};

/// One edit of the declared state, always valid (the CRDs accept it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Edit {
    /// The configuration's replicas (`1 + n % 4`) and `enforceReplicas` (`n` even).
    Replicas(u8),
    /// The configuration's internal subnet: one of four `/24`s of `169.254.0.0/16`.
    Subnet(u8),
    /// The Gateway's listeners: `1 + n % 3` of them, TCP, UDP and SCTP.
    Listeners(u8),
    /// An infrastructure label of the Gateway (`edit: n`).
    Label(u8),
    /// The Gateway's `parametersRef`: to the configuration (`true`), or none (`false`: the
    /// Gateway names no configuration, and the crate refuses it). Not one that does not
    /// exist: a loop on a real server edits the configuration its Gateway names, and the
    /// configuration edits after it would make one.
    ParametersRef(bool),
    /// The Gateway's routes: `n % 3` of them.
    Routes(u8),
    /// A label of the LB template's Pods (`edit: n`).
    Template(u8),
    /// The class's `description`.
    ClassDescription(u8),
}

impl Edit {
    /// A short stable description, e.g. `configuration replicas 3`.
    pub fn describe(&self) -> String {
        match self {
            Edit::Replicas(n) => format!(
                "configuration replicas {}, enforceReplicas {}",
                1 + n % 4,
                n % 2 == 0
            ),
            Edit::Subnet(n) => format!("configuration subnet 169.254.{}.0/24", 100 + n % 4),
            Edit::Listeners(n) => format!("{} listeners", 1 + n % 3),
            Edit::Label(n) => format!("Gateway label edit={n}"),
            Edit::ParametersRef(true) => "parametersRef to the configuration".into(),
            Edit::ParametersRef(false) => "no parametersRef".into(),
            Edit::Routes(n) => format!("{} routes", n % 3),
            Edit::Template(n) => format!("template Pod label edit={n}"),
            Edit::ClassDescription(n) => format!("class description {n}"),
        }
    }

    /// The merge patch of the edit, and the object it patches.
    fn patch(&self) -> (Kind, Value) {
        match *self {
            Edit::Replicas(n) => (
                Kind::Configuration,
                json!({"spec": {"horizontalScaling": {"replicas": 1 + n % 4, "enforceReplicas": n % 2 == 0}}}),
            ),
            Edit::Subnet(n) => (
                Kind::Configuration,
                json!({"spec": {"internalSubnets": [{"attachmentType": "NAD",
                    "cidr": format!("169.254.{}.0/24", 100 + n % 4)}]}}),
            ),
            Edit::Listeners(n) => {
                let listeners: Vec<Value> = ["TCP", "UDP", "SCTP"]
                    .iter()
                    .zip(4000..)
                    .take(1 + usize::from(n % 3))
                    .map(|(protocol, port)| {
                        json!({"name": protocol.to_lowercase(), "port": port, "protocol": protocol})
                    })
                    .collect();
                (Kind::Gateway, json!({"spec": {"listeners": listeners}}))
            }
            Edit::Label(n) => (
                Kind::Gateway,
                json!({"spec": {"infrastructure": {"labels": {"edit": n.to_string()}}}}),
            ),
            Edit::ParametersRef(true) => (
                Kind::Gateway,
                json!({"spec": {"infrastructure": {"parametersRef": {
                    "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}}),
            ),
            Edit::ParametersRef(false) => (
                Kind::Gateway,
                json!({"spec": {"infrastructure": {"parametersRef": null}}}),
            ),
            Edit::Routes(n) => (
                Kind::Routes,
                Value::Array(
                    (0..n % 3)
                        .map(|i| {
                            json!({"metadata": {"name": format!("r{i}"), "namespace": "ns"},
                                "spec": {"parentRefs": [{"name": "gw"}],
                                    "destinationCIDRs": [format!("20.0.0.{}/32", i + 1)],
                                    "protocols": ["TCP"], "priority": 1}})
                        })
                        .collect(),
                ),
            ),
            Edit::Template(n) => (
                Kind::Template,
                json!({"spec": {"template": {"metadata": {"labels": {"edit": n.to_string()}}}}}),
            ),
            Edit::ClassDescription(n) => (
                Kind::GatewayClass,
                json!({"spec": {"description": format!("edit {n}")}}),
            ),
        }
    }
}

/// Any [`Edit`].
pub fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<u8>().prop_map(Edit::Replicas),
        any::<u8>().prop_map(Edit::Subnet),
        any::<u8>().prop_map(Edit::Listeners),
        any::<u8>().prop_map(Edit::Label),
        any::<bool>().prop_map(Edit::ParametersRef),
        any::<u8>().prop_map(Edit::Routes),
        any::<u8>().prop_map(Edit::Template),
        any::<u8>().prop_map(Edit::ClassDescription),
    ]
}

/// A sequence of `len` edits.
pub fn sequence(len: usize) -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(edit(), len)
}

/// What a sequence did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SequenceReport {
    /// The edits applied.
    pub edits: usize,
    /// The reconciles run (each checked).
    pub reconciles: usize,
    /// The most reconciles one edit took to converge (its quiet one included).
    pub longest_convergence: usize,
}

/// The most reconciles an edit may take to converge: one to write, one to see the rollout,
/// one quiet, and room for a conflict's retry.
const CONVERGE_WITHIN: usize = 6;

/// Applies `edits` to the loop one after the other, each followed by its convergence (the
/// loop reconciled until a reconcile writes nothing, the rollout completed after each
/// Deployment write where the loop can play the Deployment controller) and the oracle (a
/// plan on the objects as they are asks for nothing). Every reconcile is checked by
/// `invariants`. The first property that fails, naming the edit.
pub fn run_sequence<L: ControllerLoop + ?Sized>(
    controller: &mut L,
    invariants: &mut Invariants,
    edits: &[Edit],
) -> Result<SequenceReport, Violation> {
    let mut report = SequenceReport::default();
    converge(controller, invariants, "the start", &mut report)?;
    for (i, edit) in edits.iter().enumerate() {
        let (kind, patch) = edit.patch();
        let what = format!("edit {} ({})", i + 1, edit.describe());
        let refused = |invariants: &Invariants, e| {
            super::invariants::refused(invariants.steps(), "backend", &what, e)
        };
        // The configuration edited is the one the Gateway names: with none named (or none
        // there), there is nothing to edit, as in the kit's schedules.
        let absent = kind == Kind::Configuration
            && controller
                .read(Kind::Configuration)
                .map_err(|e| refused(invariants, e))?
                .is_none();
        if !absent {
            controller
                .patch(kind, &patch, invariants.now())
                .map_err(|e| refused(invariants, e))?;
        }
        converge(controller, invariants, &what, &mut report)?;
        report.edits += 1;
    }
    Ok(report)
}

/// Reconciles until a reconcile writes nothing, then checks the state against a plan.
fn converge<L: ControllerLoop + ?Sized>(
    controller: &mut L,
    invariants: &mut Invariants,
    what: &str,
    report: &mut SequenceReport,
) -> Result<(), Violation> {
    for round in 1..=CONVERGE_WITHIN {
        let before = controller.write_counts();
        schedule::apply(controller, invariants, &Op::Reconcile)?;
        report.reconciles += 1;
        let after = controller.write_counts();
        if after == before {
            report.longest_convergence = report.longest_convergence.max(round);
            return settled_by_plan(controller, invariants, what);
        }
        if after.deployment_writes > before.deployment_writes {
            match controller.rollout(RolloutState::Complete, invariants.now()) {
                Ok(()) | Err(StepError::Unsupported(_)) => {}
                Err(e) => {
                    return Err(super::invariants::refused(
                        invariants.steps(),
                        "backend",
                        &format!("roll out after {what}"),
                        e,
                    ));
                }
            }
        }
    }
    Err(invariants.violation(
        "desired-state",
        format!("after {what}, the loop still writes after {CONVERGE_WITHIN} reconciles"),
    ))
}

/// The oracle: a plan made now on the loop's target Gateway's objects as they are, with the
/// loop's write record, asks for no Deployment write and no status change (`what` names
/// the point of the run in the violation). [`run_sequence`] checks it after each edit; a
/// test of a loop over several Gateways checks each, the loop targeted at it.
///
/// ```
/// use gateway_reconcile::testing::invariants::Invariants;
/// use gateway_reconcile::testing::{Run, sequences, strategies::{self, Op}};
///
/// let mut run = Run::new(strategies::cluster().unwrap()).unwrap();
/// let fresh = sequences::settled_by_plan(run.controller(), run.invariants(), "the start");
/// assert_eq!(fresh.unwrap_err().property, "desired-state", "nothing is written yet");
/// for op in [Op::Reconcile, Op::rollout_complete(), Op::Reconcile] {
///     run.apply(&op).unwrap();
/// }
/// sequences::settled_by_plan(run.controller(), run.invariants(), "the end").unwrap();
/// ```
pub fn settled_by_plan<L: ControllerLoop + ?Sized>(
    controller: &L,
    invariants: &Invariants,
    what: &str,
) -> Result<(), Violation> {
    let objects = invariants.objects(controller)?;
    let snapshot = Snapshot::new(&objects.gateway, &objects.template)
        .with_gateway_class(objects.class.as_ref())
        .with_configuration(objects.configuration.as_ref())
        .with_deployment(objects.deployment.as_ref())
        .with_routes(&objects.routes)
        .with_write_record(controller.write_record());
    let planned = plan(invariants.settings(), snapshot, invariants.now()).map_err(|e| {
        invariants.violation(
            "desired-state",
            format!("after {what}, the crate cannot plan on the objects: {e}"),
        )
    })?;
    let settlement = match planned {
        Plan::Settled(settlement) => settlement,
        Plan::Write(pending) => {
            return Err(invariants.violation(
                "desired-state",
                format!(
                    "after {what}, converged, the crate still asks for a Deployment {:?}",
                    pending.write().kind()
                ),
            ));
        }
    };
    match settlement.status_patch() {
        None => Ok(()),
        Some(patch) => Err(invariants.violation(
            "desired-state",
            format!(
                "after {what}, converged, the crate would still change the status: {}",
                patch.body()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::scenario::Backend;
    use crate::testing::strategies;

    /// The oracle fails a state the crate would not leave: the Deployment edited by
    /// another writer after the loop converged, and not reconciled since.
    #[test]
    fn the_oracle_fails_a_state_the_crate_would_change() {
        let mut cluster = strategies::cluster().unwrap();
        let mut invariants = Invariants::new(&cluster).unwrap();
        run_sequence(&mut cluster, &mut invariants, &[Edit::Replicas(2)]).unwrap();
        settled_by_plan(&cluster, &invariants, "the sequence").unwrap();
        let edit = json!({"spec": {"template": {"spec": {"serviceAccountName": "hacked"}}}});
        Backend::patch(&mut cluster, Kind::Deployment, &edit, invariants.now()).unwrap();
        let violation = settled_by_plan(&cluster, &invariants, "the edit").unwrap_err();
        assert_eq!(violation.property, "desired-state", "{violation}");
        assert!(violation.message.contains("Deployment"), "{violation}");
    }

    /// Each edit changes what it says (a patch that changed nothing would test nothing).
    #[test]
    fn every_edit_changes_the_declared_state() {
        for edit in [
            Edit::Replicas(1),
            Edit::Subnet(1),
            Edit::Listeners(1),
            Edit::Label(1),
            Edit::ParametersRef(false),
            Edit::Routes(2),
            Edit::Template(1),
            Edit::ClassDescription(1),
        ] {
            let mut cluster = strategies::cluster().unwrap();
            let (kind, patch) = edit.patch();
            let before = cluster.read(kind).unwrap();
            Backend::patch(&mut cluster, kind, &patch, strategies::start()).unwrap();
            assert_ne!(cluster.read(kind).unwrap(), before, "{}", edit.describe());
        }
    }
}
