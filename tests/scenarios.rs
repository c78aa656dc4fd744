//! Runs every scenario in `tests/scenarios/` and the built-in demo against the simulated
//! cluster (built in, and handed to the runner as a backend), and checks the `simulate`
//! command's exit codes.

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;

use gateway_reconcile::sim::cluster::{
    Cluster, ClusterError, Kind, Objects, ReconcileReport, RolloutState,
};
use gateway_reconcile::sim::scenario::{
    Backend, DEMO, Effect, Scenario, StaleReads, StepError, WriteCounts,
};
use gateway_reconcile::{Settings, WriteOutcome};
use jiff::Timestamp;
use serde_json::Value;

fn scenario_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Every failed expectation of one scenario, each line prefixed with its name.
fn problems(name: &str, text: &str) -> Vec<String> {
    let scenario = match Scenario::from_json(text) {
        Ok(s) => s,
        Err(e) => return vec![format!("{name}: malformed: {e}")],
    };
    match panic::catch_unwind(AssertUnwindSafe(|| scenario.run())) {
        Ok(report) => report
            .failures
            .iter()
            .map(|f| format!("{name}: {f}"))
            .collect(),
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            vec![format!("{name}: panicked: {why}")]
        }
    }
}

#[test]
fn every_scenario_and_the_demo_hold() {
    let files = scenario_files();
    // The panics are caught and reported per scenario; the default hook would only add noise.
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    assert!(files.len() >= 20, "scenario files missing: {files:?}");
    let mut all = Vec::new();
    let mut failing = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(file).unwrap();
        let found = problems(&name, &text);
        if !found.is_empty() {
            failing.push(name);
        }
        all.extend(found);
    }
    let demo = problems("built-in demo", DEMO);
    if !demo.is_empty() {
        failing.push("built-in demo".into());
    }
    all.extend(demo);
    panic::set_hook(hook);
    assert!(
        all.is_empty(),
        "{} of {} scenarios failed ({}):\n{}",
        failing.len(),
        files.len() + 1,
        failing.join(", "),
        all.join("\n")
    );
}

/// The simulated cluster, recording what the runner asks of it and at which clock.
struct Recorded {
    cluster: Cluster,
    calls: Vec<(&'static str, Timestamp)>,
}

impl Backend for Recorded {
    type Error = ClusterError;

    fn create(
        &mut self,
        settings: &Settings,
        objects: Objects,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.calls.push(("create", now));
        self.cluster.create(settings, objects, now)
    }

    fn reconcile(&mut self, now: Timestamp) -> Result<ReconcileReport, StepError<ClusterError>> {
        self.calls.push(("reconcile", now));
        Backend::reconcile(&mut self.cluster, now)
    }

    fn patch(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.calls.push(("patch", now));
        Backend::patch(&mut self.cluster, kind, patch, now)
    }

    fn delete(&mut self, kind: Kind, now: Timestamp) -> Result<(), StepError<ClusterError>> {
        self.calls.push(("delete", now));
        Backend::delete(&mut self.cluster, kind, now)
    }

    fn rollout(
        &mut self,
        state: RolloutState,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.calls.push(("rollout", now));
        Backend::rollout(&mut self.cluster, state, now)
    }

    fn fail_writes(
        &mut self,
        count: u32,
        outcome: &WriteOutcome,
    ) -> Result<(), StepError<ClusterError>> {
        Backend::fail_writes(&mut self.cluster, count, outcome)
    }

    fn mutate_writes(
        &mut self,
        patch: Option<&Value>,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.calls.push(("mutateWrites", now));
        Backend::mutate_writes(&mut self.cluster, patch, now)
    }

    fn restart(&mut self, now: Timestamp) -> Result<(), StepError<ClusterError>> {
        self.calls.push(("restart", now));
        Backend::restart(&mut self.cluster, now)
    }

    fn unreadable(
        &mut self,
        kind: Kind,
        patch: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.calls.push(("unreadable", now));
        Backend::unreadable(&mut self.cluster, kind, patch, now)
    }

    fn snapshot(&mut self, name: &str, now: Timestamp) -> Result<(), StepError<ClusterError>> {
        self.calls.push(("snapshot", now));
        Backend::snapshot(&mut self.cluster, name, now)
    }

    fn stale_reads(
        &mut self,
        reads: Option<&StaleReads>,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.calls.push(("staleReads", now));
        Backend::stale_reads(&mut self.cluster, reads, now)
    }

    fn recreate(
        &mut self,
        kind: Kind,
        object: &Value,
        now: Timestamp,
    ) -> Result<(), StepError<ClusterError>> {
        self.calls.push(("recreate", now));
        Backend::recreate(&mut self.cluster, kind, object, now)
    }

    fn read(&self, kind: Kind) -> Result<Option<Value>, StepError<ClusterError>> {
        self.cluster.read(kind)
    }

    fn write_counts(&self) -> WriteCounts {
        self.cluster.write_counts()
    }
}

/// Through the backend seam, every file gives the report the built-in run gives, and the
/// runner asks for each reconcile at the clock its timeline shows.
#[test]
fn every_scenario_runs_alike_through_the_backend_seam() {
    for file in scenario_files() {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let scenario = Scenario::from_json(&text).unwrap();
        let mut backend = Recorded {
            cluster: Cluster::default(),
            calls: Vec::new(),
        };
        let report = scenario.run_on(&mut backend);
        assert_eq!(report, scenario.run(), "{name}");
        assert_eq!(
            backend.calls.first(),
            Some(&("create", scenario.now)),
            "{name}"
        );
        let reconciles: Vec<Timestamp> = report
            .timeline
            .iter()
            .filter(|e| matches!(e.effect, Effect::Reconciled(_)))
            .map(|e| e.time)
            .collect();
        let asked: Vec<Timestamp> = backend
            .calls
            .iter()
            .filter(|(verb, _)| *verb == "reconcile")
            .map(|(_, now)| *now)
            .collect();
        assert!(!asked.is_empty(), "{name}: no reconcile");
        assert_eq!(asked, reconciles, "{name}");
    }
}

fn simulate(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gateway-reconcile"))
        .arg("simulate")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("gateway-reconcile-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

const TEMPLATE: &str = r#"{"spec": {"template": {"spec": {"containers": [{"name": "lb"}]}}}}"#;

#[test]
fn simulate_exit_codes() {
    let ok = temp_file(
        "ok.json",
        &format!(
            r#"{{"objects": {{"gateway": {{"metadata": {{"name": "gw", "namespace": "ns", "uid": "u"}}}}, "template": {TEMPLATE}}}, "steps": [{{"advance": "90s"}}]}}"#
        ),
    );
    let (code, stdout, _) = simulate(&[ok.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("step  1  2026-01-01T00:01:30Z  advance 1m 30s"),
        "{stdout}"
    );

    let failing = temp_file(
        "failing.json",
        &format!(
            r#"{{"objects": {{"gateway": {{"metadata": {{"name": "gw", "namespace": "ns", "uid": "u"}}}}, "template": {TEMPLATE}}}, "steps": [{{"rollout": "complete"}}]}}"#
        ),
    );
    let (code, stdout, stderr) = simulate(&[failing.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("step 1: rollout: expected the step to run, found cannot roll out: there is no deployment"),
        "{stdout}"
    );

    let malformed = temp_file(
        "malformed.json",
        r#"{"objects": {"gateway": {"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}}, "steps": [{"advance": "1s"}, {"reconcile": {}, "expct": {}}]}"#,
    );
    let (code, _, stderr) = simulate(&[malformed.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("malformed.json: line 1: step 2: unknown key \"expct\" in reconcile step"),
        "{stderr}"
    );

    let (code, _, stderr) = simulate(&["/nonexistent/scenario.json"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("/nonexistent/scenario.json: cannot read: "),
        "{stderr}"
    );

    let (code, stdout, _) = simulate(&["--help"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Usage: gateway-reconcile simulate [--max-input-bytes N] [FILE]"));
    for file in [ok, failing, malformed] {
        let _ = std::fs::remove_file(file);
    }
}
