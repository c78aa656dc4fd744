//! Hostile and malformed input to the command line, each with the exact message expected
//! and exit status 2: what cannot be read (devices, directories, endless streams, inputs
//! over the cap), what is not UTF-8 JSON, and scenario files that break SPEC §7's rules.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_gateway-reconcile");
const GATEWAY: &str = r#"{"metadata": {"name": "gw", "namespace": "ns", "uid": "u"}}"#;

/// Runs the binary; the exit status and the standard error.
fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A file in a directory of this test process; the path is printed in messages, so the
/// tests compare the message after it.
fn file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("gateway-reconcile-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `simulate FILE` on `text`: exit status 2 and the message after `FILE: `.
fn malformed(name: &str, text: &str) -> String {
    let path = file(name, text.as_bytes());
    let path = path.to_str().unwrap();
    let (code, stderr) = run(&["simulate", path]);
    assert_eq!(code, 2, "{stderr}");
    let prefix = format!("gateway-reconcile simulate: {path}: ");
    stderr
        .trim_end()
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{stderr:?} does not start with {prefix:?}"))
        .to_owned()
}

/// A scenario with the test Gateway, `rest` after the objects (starting on line 2).
fn scenario(rest: &str) -> String {
    format!("{{\"objects\": {{\"gateway\": {GATEWAY}}},\n{rest}}}")
}

// ---- what is read -----------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn a_device_is_refused_before_reading() {
    let (code, stderr) = run(&["simulate", "/dev/zero"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        "gateway-reconcile simulate: /dev/zero: not a regular file (a character device); \
         give a file, or - for standard input"
    );
    let (code, stderr) = run(&["plan", "--gateway", "/dev/zero"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        "gateway-reconcile plan: --gateway /dev/zero: not a regular file (a character device); \
         give a file, or - for standard input"
    );
}

#[test]
fn a_directory_is_refused() {
    let dir = std::env::temp_dir();
    let dir = dir.to_str().unwrap();
    let (code, stderr) = run(&["simulate", dir]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "gateway-reconcile simulate: {dir}: not a regular file (a directory); give a file, \
             or - for standard input"
        )
    );
}

#[test]
fn a_file_over_the_cap_is_refused_and_the_flag_raises_it() {
    let text = scenario(r#""steps": [{"advance": "1s"}]"#);
    let path = file("cap.json", text.as_bytes());
    let path = path.to_str().unwrap();
    let (code, stderr) = run(&["simulate", "--max-input-bytes", "100", path]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "gateway-reconcile simulate: {path}: larger than 100 bytes, the input limit \
             (raise it with --max-input-bytes)"
        )
    );
    let limit = format!("--max-input-bytes={}", text.len());
    let (code, stderr) = run(&["simulate", &limit, path]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stderr) = run(&["simulate", "--max-input-bytes", "0", path]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        "gateway-reconcile simulate: --max-input-bytes \"0\": expected a positive number of bytes"
    );
}

#[test]
fn an_endless_standard_input_stops_at_the_cap() {
    let mut child = Command::new(BIN)
        .args(["simulate", "--max-input-bytes", "4096", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Writes until the reader stops reading (a broken pipe): an endless stream.
    let writer = std::thread::spawn(move || {
        let chunk = [b' '; 1024];
        while stdin.write_all(&chunk).is_ok() {}
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "gateway-reconcile simulate: standard input: larger than 4096 bytes, the input limit \
         (raise it with --max-input-bytes)"
    );
}

#[test]
fn standard_input_is_read_for_one_option_only() {
    let (code, stderr) = run(&["plan", "--gateway", "-", "--configuration", "-"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        "gateway-reconcile plan: standard input (-) can be given to one option only"
    );
}

// ---- what is not UTF-8 JSON -------------------------------------------------------------

#[test]
fn a_byte_order_mark_is_named() {
    let path = file("bom.json", b"\xEF\xBB\xBF{}");
    let (code, stderr) = run(&["simulate", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.trim_end().ends_with(
            "bom.json: starts with a UTF-8 byte-order mark (EF BB BF): save it without one"
        ),
        "{stderr}"
    );
    let path = file("utf16.json", b"\xFF\xFE{\x00}\x00");
    let (_, stderr) = run(&["plan", "--gateway", path.to_str().unwrap()]);
    assert!(
        stderr
            .trim_end()
            .ends_with("utf16.json: starts with a UTF-16 byte-order mark: the input must be UTF-8"),
        "{stderr}"
    );
}

#[test]
fn invalid_utf8_gives_the_byte_offset() {
    let path = file("latin1.json", b"{\"a\":\n \"caf\xE9\"}");
    let (code, stderr) = run(&["simulate", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr
            .trim_end()
            .ends_with("latin1.json: not UTF-8: invalid byte 0xE9 at byte offset 11 (line 2)"),
        "{stderr}"
    );
}

#[cfg(not(feature = "yaml"))]
#[test]
fn yaml_without_the_feature_says_which_feature() {
    assert_eq!(
        malformed("s.yaml", "objects:\n  gateway: {}\nsteps: []\n"),
        "not JSON (expected value at line 1 column 1); YAML input needs a build with the \
         `yaml` feature (cargo install gateway-reconcile --features yaml)"
    );
}

// ---- scenario files that break SPEC §7 ---------------------------------------------------

#[test]
fn a_duplicate_key_is_malformed_with_its_line() {
    assert_eq!(
        malformed(
            "dup.json",
            &scenario("\"steps\": [],\n\"steps\": [{\"advance\": \"1s\"}]")
        ),
        r#"invalid JSON at line 3, column 7: duplicate key "steps""#
    );
    // Inside free-form object JSON too.
    assert_eq!(
        malformed(
            "dup-object.json",
            "{\"objects\": {\"gateway\": {\"metadata\": {\"name\": \"gw\",\n \"name\": \"gx\"}}},\n\"steps\": []}"
        ),
        r#"invalid JSON at line 2, column 7: duplicate key "objects.gateway.metadata.name""#
    );
    // In a template or Deployment, which are read straight into compact trees: a small
    // object is scanned for the key, one of more than 16 keys looks it up in a set.
    assert_eq!(
        malformed(
            "dup-template.json",
            "{\"objects\": {\"template\": {\"spec\": {\"replicas\": 1,\n \"replicas\": 2}}},\n\"steps\": []}"
        ),
        r#"invalid JSON at line 2, column 11: duplicate key "objects.template.spec.replicas""#
    );
    let labels: Vec<String> = (0..20).map(|i| format!("\"l{i}\": \"v\"")).collect();
    assert_eq!(
        malformed(
            "dup-deployment.json",
            &format!(
                "{{\"objects\": {{\"deployment\": {{\"metadata\": {{\"labels\": {{{},\n \"l3\": \"w\"}}}}}}}},\n\"steps\": []}}",
                labels.join(", ")
            )
        ),
        r#"invalid JSON at line 2, column 5: duplicate key "objects.deployment.metadata.labels.l3""#
    );
}

#[test]
fn an_unknown_key_is_malformed_with_step_and_line() {
    assert_eq!(
        malformed(
            "unknown.json",
            &scenario(
                "\"steps\": [\n {\"advance\": \"1s\"},\n {\"reconcile\": {},\n  \"expct\": {}}]"
            )
        ),
        r#"line 5: step 2: unknown key "expct" in reconcile step"#
    );
}

#[test]
fn a_wrong_type_names_the_key_path_and_line() {
    assert_eq!(
        malformed(
            "wrong-type.json",
            &format!(
                "{{\"objects\": {{\"gateway\": {GATEWAY},\n \"configuration\": {{\"spec\": {{\n  \"internalSubnets\": 5}}}}}},\n \"steps\": []}}"
            )
        ),
        r#"line 3: "objects.configuration.spec.internalSubnets": expected a list, found 5"#
    );
    assert_eq!(
        malformed(
            "wrong-type-patch.json",
            &scenario(
                "\"steps\": [\n {\"patch\": {\"configuration\": {\"spec\": {\n  \"internalSubnets\": 5}}}}]"
            )
        ),
        r#"line 4: step 1: "patch.configuration.spec.internalSubnets": expected a list, found 5"#
    );
    assert_eq!(
        malformed(
            "wrong-type-settings.json",
            &scenario("\"settings\": {\n  \"degradedAfter\": 5},\n\"steps\": []")
        ),
        r#"line 3: "settings.degradedAfter": expected a string, found 5"#
    );
}

#[test]
fn an_invalid_setting_is_malformed_naming_the_field_once() {
    assert_eq!(
        malformed(
            "invalid-setting.json",
            &scenario("\"settings\": {\n  \"resync\": \"0s\"},\n\"steps\": []")
        ),
        r#"line 2: "settings": resync: must be at least 1s and at most 8760h (got 0s)"#
    );
}

#[test]
fn a_wrong_value_in_a_route_names_its_key_path() {
    // Routes are read straight into L34Routes (no JSON value held for a long list).
    assert_eq!(
        malformed(
            "route.json",
            &format!(
                "{{\"objects\": {{\"gateway\": {GATEWAY},\n \"routes\": [{{}},\n  {{\"spec\": {{\"destinationCIDRs\": 5}}}}]}},\n \"steps\": []}}"
            )
        ),
        r#"invalid JSON at line 3, column 37: "objects.routes[1].spec.destinationCIDRs": expected a list, found 5"#
    );
    assert_eq!(
        malformed(
            "routes-twice.json",
            &format!(
                "{{\"objects\": {{\"gateway\": {GATEWAY}, \"routes\": [],\n \"routes\": []}},\n \"steps\": []}}"
            )
        ),
        r#"invalid JSON at line 2, column 9: duplicate key "objects.routes""#
    );
}

#[test]
fn a_gateway_without_namespace_or_uid_is_malformed() {
    assert_eq!(
        malformed(
            "no-uid.json",
            "{\"objects\": {\"gateway\": {\"metadata\": {\"name\": \"gw\", \"namespace\": \"ns\"}}},\n\"steps\": []}"
        ),
        r#"line 1: "objects.gateway.metadata.uid": is required (a Gateway always has one)"#
    );
    assert_eq!(
        malformed(
            "no-namespace.json",
            "{\"objects\": {\"gateway\": {\"metadata\": {\"name\": \"gw\", \"uid\": \"u\"}}},\n\"steps\": []}"
        ),
        r#"line 1: "objects.gateway.metadata.namespace": is required (a Gateway always has one)"#
    );
    assert_eq!(
        malformed(
            "patch-uid.json",
            &scenario(
                "\"steps\": [\n {\"patch\": {\"gateway\": {\"metadata\": {\"uid\": null}}}}]"
            )
        ),
        r#"line 3: step 1: "patch.gateway.metadata.uid": removed by the patch, but is required (a Gateway always has one)"#
    );
    // Any API object keeps its name, namespace and uid.
    assert_eq!(
        malformed(
            "patch-conf-name.json",
            &format!(
                "{{\"objects\": {{\"gateway\": {GATEWAY},\n \"configuration\": {{\"metadata\": {{\"name\": \"c\", \"namespace\": \"ns\"}}}}}},\n \"steps\": [{{\"delete\": \"deployment\"}},\n  {{\"patch\": {{\"configuration\": {{\"metadata\": {{\"namespace\": null}}}}}}}}]}}"
            )
        ),
        r#"line 4: step 2: "patch.configuration.metadata.namespace": cannot be removed (the API server keeps it)"#
    );
}

#[test]
fn times_are_strict_rfc_3339() {
    for (name, now) in [
        ("no-seconds.json", "2026-01-01T00:00Z"),
        ("signed-year.json", "-000001-01-01T00:00:00Z"),
        ("bracketed.json", "2026-01-01T00:00:00Z[UTC]"),
        ("space.json", "2026-01-01 00:00:00Z"),
        ("no-zone.json", "2026-01-01T00:00:00"),
    ] {
        assert_eq!(
            malformed(
                name,
                &scenario(&format!("\"now\": \"{now}\", \"steps\": []"))
            ),
            format!(
                "line 2: \"now\": not an RFC 3339 time \"{now}\" (expected e.g. 2026-01-01T00:00:00Z)"
            )
        );
    }
}

#[test]
fn a_valid_time_out_of_range_says_so() {
    assert_eq!(
        malformed(
            "far.json",
            &scenario("\"now\": \"9999-12-31T23:59:59Z\", \"steps\": []")
        ),
        "line 2: \"now\": \"9999-12-31T23:59:59Z\" is out of the supported range \
         (-009999-01-02T01:59:59Z to 9999-12-30T22:00:00.999999999Z)"
    );
    assert_eq!(
        malformed(
            "advance.json",
            &scenario(
                "\"now\": \"9999-12-30T00:00:00Z\", \"steps\": [\n {\"advance\": \"1h\"},\n {\"advance\": \"100h\"}]"
            )
        ),
        "line 4: step 2: \"advance\": moves the clock past 9999-12-30T22:00:00.999999999Z, \
         out of the supported range"
    );
    let gateway = file("gw.json", GATEWAY.as_bytes());
    let (code, stderr) = run(&[
        "plan",
        "--gateway",
        gateway.to_str().unwrap(),
        "--now",
        "9999-12-31T23:59:59Z",
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        "gateway-reconcile plan: --now: \"9999-12-31T23:59:59Z\" is out of the supported range \
         (-009999-01-02T01:59:59Z to 9999-12-30T22:00:00.999999999Z)"
    );
}

#[test]
fn fail_writes_count_and_code_are_bounded() {
    assert_eq!(
        malformed(
            "count.json",
            &scenario(
                "\"steps\": [\n {\"failWrites\": {\"count\": 0, \"error\": {\"code\": 503}}}]"
            )
        ),
        r#"line 3: step 1: "failWrites.count": must be between 1 and 4294967295 (found 0)"#
    );
    assert_eq!(
        malformed(
            "code.json",
            &scenario(
                "\"steps\": [\n {\"failWrites\": {\"count\": 1,\n  \"error\": {\"code\": 600}}}]"
            )
        ),
        r#"line 4: step 1: "failWrites.error.code": must be an HTTP error code, 400 to 599 (found 600)"#
    );
}

#[test]
fn plan_outcome_is_read_as_fail_writes_error_is() {
    let gateway = file("gw-outcome.json", GATEWAY.as_bytes());
    let gateway = gateway.to_str().unwrap();
    let cases = [
        (
            r#"{"code": 503, "reson": "x"}"#,
            r#"unknown key "reson" (expected code, reason, message, or a Kubernetes Status)"#,
        ),
        (
            r#"{"code": 200}"#,
            "code: must be an HTTP error code, 400 to 599 (found 200)",
        ),
        (
            r#"{"code": 399}"#,
            "code: must be an HTTP error code, 400 to 599 (found 399)",
        ),
        (
            r#"{"kind": "Status", "status": "Success", "code": 200}"#,
            r#"status: a Status of Success is not a failed write (give "Applied")"#,
        ),
        (
            r#"{"code": "503"}"#,
            r#"code: must be an HTTP error code, 400 to 599 (found "503")"#,
        ),
    ];
    for (outcome, why) in cases {
        let (code, stderr) = run(&["plan", "--gateway", gateway, "--outcome", outcome]);
        assert_eq!(code, 2, "{outcome}");
        assert_eq!(
            stderr.trim_end(),
            format!("gateway-reconcile plan: --outcome inline JSON: {why}"),
            "{outcome}"
        );
    }
    // The same text as a scenario's failWrites.error gives the same verdict.
    assert_eq!(
        malformed(
            "status-success.json",
            &scenario(
                "\"steps\": [\n {\"failWrites\": {\"count\": 1, \"error\": {\"kind\": \"Status\", \"status\": \"Success\", \"code\": 200}}}]"
            )
        ),
        r#"line 3: step 1: "failWrites.error.status": a Status of Success is not a failed write (give "Applied")"#
    );
}

#[test]
fn plan_names_the_key_path_of_a_wrong_type() {
    let gateway = file("gw-plan.json", GATEWAY.as_bytes());
    let configuration = file(
        "conf-plan.json",
        br#"{"metadata": {"name": "c"}, "spec": {"internalSubnets": 5}}"#,
    );
    let configuration = configuration.to_str().unwrap();
    let (code, stderr) = run(&[
        "plan",
        "--gateway",
        gateway.to_str().unwrap(),
        "--configuration",
        configuration,
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "gateway-reconcile plan: --configuration {configuration}: spec.internalSubnets: \
             expected a list, found 5"
        )
    );
}

#[test]
fn a_deployment_name_or_namespace_that_is_not_a_string_is_malformed() {
    let gateway = file(
        "gw-dep-meta.json",
        br#"{"metadata": {"name": "gw", "namespace": "ns", "uid": "u", "generation": 1}}"#,
    );
    let cases = [
        (
            r#"{"metadata": {"name": 5, "namespace": "ns"}}"#,
            "metadata.name: expected a string, found 5",
        ),
        (
            r#"{"metadata": {"name": "sllbr-gw", "namespace": ["ns"]}}"#,
            "metadata.namespace: expected a string, found a list",
        ),
        (
            r#"{"metadata": {"name": {"a": 1}}}"#,
            "metadata.name: expected a string, found an object",
        ),
        (
            r#"{"metadata": {"name": "sllbr-gw", "namespace": true}}"#,
            "metadata.namespace: expected a string, found true",
        ),
        (
            r#"{"metadata": 7}"#,
            "metadata: expected an object, found 7",
        ),
    ];
    for (i, (text, why)) in cases.into_iter().enumerate() {
        let deployment = file(&format!("dep-meta-{i}.json"), text.as_bytes());
        let deployment = deployment.to_str().unwrap();
        let (code, stderr) = run(&[
            "plan",
            "--gateway",
            gateway.to_str().unwrap(),
            "--deployment",
            deployment,
            "--now",
            "2026-01-01T00:00:00Z",
        ]);
        assert_eq!(code, 2, "{text}: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!("gateway-reconcile plan: --deployment {deployment}: {why}"),
        );
    }
    // Strings, or null (absent), are read as before.
    for (i, text) in [
        r#"{"metadata": {"name": "sllbr-gw", "namespace": "ns"}}"#,
        r#"{"metadata": {"name": null, "namespace": null}}"#,
    ]
    .into_iter()
    .enumerate()
    {
        let deployment = file(&format!("dep-meta-ok-{i}.json"), text.as_bytes());
        let (code, stderr) = run(&[
            "plan",
            "--gateway",
            gateway.to_str().unwrap(),
            "--deployment",
            deployment.to_str().unwrap(),
            "--now",
            "2026-01-01T00:00:00Z",
        ]);
        assert_eq!(code, 0, "{text}: {stderr}");
    }
}

/// SPEC §6 keeps a condition time past the supported range as written, so an expectation
/// may name one: it is compared as written. A time of another shape is still malformed.
#[test]
fn an_expected_transition_time_past_the_range_is_compared_as_written() {
    let with_expected = |name: &str, expected: &str| {
        let text = format!(
            r#"{{"objects": {{"gatewayClass": {{"metadata": {{"name": "c"}},
  "spec": {{"controllerName": "meridio-2.nordix.org/gateway-controller"}}}},
 "gateway": {{"metadata": {{"name": "gw", "namespace": "ns", "uid": "u", "generation": 1}},
  "spec": {{"gatewayClassName": "c", "listeners": [{{"name": "tcp", "port": 4000, "protocol": "TCP"}}]}},
  "status": {{"conditions": [{{"type": "Accepted", "status": "False", "reason": "InvalidParameters",
   "message": "GatewayConfiguration reference is required", "observedGeneration": 1,
   "lastTransitionTime": "9999-12-31T23:59:59-01:00"}}]}}}}}},
 "steps": [{{"reconcile": {{}}, "expect": {{"conditions": {{"Accepted": {{"status": "False",
  "lastTransitionTime": "{expected}"}}}}}}}}]}}"#
        );
        let path = file(name, text.as_bytes());
        run(&["simulate", path.to_str().unwrap()])
    };
    // Kept as written, offset included: the expectation holds.
    let (code, stderr) = with_expected("ltt-kept.json", "9999-12-31T23:59:59-01:00");
    assert_eq!(code, 0, "{stderr}");
    // The same instant written otherwise is another text: past the range, text is compared.
    let (code, stderr) = with_expected("ltt-other.json", "10000-01-01T00:59:59Z");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(r#"not an RFC 3339 time "10000-01-01T00:59:59Z""#),
        "{stderr}"
    );
    let (code, stderr) = with_expected("ltt-differs.json", "9999-12-31T23:59:58Z");
    assert_eq!(code, 1, "{stderr}");
}

#[test]
fn the_number_of_steps_is_bounded() {
    let steps = |n: usize| {
        scenario(&format!(
            "\"steps\": [{}]",
            vec![r#"{"advance": "1s"}"#; n].join(",\n")
        ))
    };
    let path = file("steps-at-limit.json", steps(10_000).as_bytes());
    let (code, stderr) = run(&["simulate", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    for n in [10_001, 200_000] {
        assert_eq!(
            malformed(&format!("steps-{n}.json"), &steps(n)),
            r#"line 2: "steps": more than 10000 steps, the most a scenario file may have"#,
            "{n}"
        );
    }
    // Past the bound the steps are still read as JSON: broken text is reported as such.
    let mut broken = steps(10_002);
    let last = broken.rfind("\"1s\"").unwrap();
    broken.replace_range(last..last + 4, "1s");
    assert_eq!(
        malformed("steps-broken.json", &broken),
        "invalid JSON at line 10003, column 14: expected `,` or `}`"
    );
}

// ---- issue #45: the scenario reader and the command line ------------------------------------

/// A scenario with the test Gateway given with `gateway` metadata and `rest` objects.
fn scenario_with(gateway_meta: &str, objects: &str, steps: &str) -> String {
    format!(
        "{{\"objects\": {{\"gateway\": {{\"metadata\": {gateway_meta}}}{objects}}},\n \"steps\": [{steps}]}}"
    )
}

const META: &str = r#"{"name": "gw", "namespace": "ns", "uid": "u", "generation": 1}"#;
const CONFIGURATION: &str = r#", "configuration": {"metadata": {"name": "c", "namespace": "ns", "uid": "cu", "generation": 7}}"#;

/// E1: a negative generation on the Gateway, the configuration or the class, given or
/// patched, is a malformed file (exit 2) naming the field, never a step that fails (1).
#[test]
fn e1_a_negative_generation_is_malformed_naming_the_field() {
    assert_eq!(
        malformed(
            "e1-gateway.json",
            &scenario_with(
                r#"{"name": "gw", "namespace": "ns", "uid": "u", "generation": -3}"#,
                "",
                r#"{"reconcile": {}}"#
            )
        ),
        r#"line 1: "objects.gateway.metadata.generation": must not be negative (got -3)"#
    );
    assert_eq!(
        malformed(
            "e1-configuration.json",
            &scenario_with(
                META,
                r#", "configuration": {"metadata": {"name": "c", "namespace": "ns", "generation": -1}}"#,
                r#"{"reconcile": {}}"#
            )
        ),
        r#"line 1: "objects.configuration.metadata.generation": must not be negative (got -1)"#
    );
    assert_eq!(
        malformed(
            "e1-class.json",
            &scenario_with(
                META,
                r#", "gatewayClass": {"metadata": {"name": "c", "generation": -1}, "spec": {"controllerName": "x"}}"#,
                r#"{"reconcile": {}}"#
            )
        ),
        r#"line 1: "objects.gatewayClass.metadata.generation": must not be negative (got -1)"#
    );
    // A patch that creates a deleted configuration with a negative generation.
    assert_eq!(
        malformed(
            "e1-patch.json",
            &scenario_with(
                META,
                CONFIGURATION,
                "{\"delete\": \"configuration\"},\n {\"patch\": {\"configuration\": {\"metadata\": {\"name\": \"c\", \"namespace\": \"ns\", \"generation\": -2}}}}"
            )
        ),
        r#"line 3: step 2: "patch.configuration.metadata.generation": must not be negative (got -2)"#
    );
    // Zero is a generation like any other.
    let path = file(
        "e1-zero.json",
        scenario_with(
            r#"{"name": "gw", "namespace": "ns", "uid": "u", "generation": 0}"#,
            "",
            "",
        )
        .as_bytes(),
    );
    let (code, stderr) = run(&["simulate", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
}

/// E2: an `unreadable` step stores any value, but not in the identity the API server
/// keeps (name, namespace, uid, generation); a patch renaming or moving the Gateway is
/// malformed too.
#[test]
fn e2_unreadable_keeps_the_identity_and_a_patch_keeps_the_gateway() {
    let cases = [
        (
            r#"{"metadata": {"name": null}}"#,
            r#""unreadable.configuration.metadata.name": cannot be removed (the API server keeps it)"#,
        ),
        (
            r#"{"metadata": {"namespace": null}}"#,
            r#""unreadable.configuration.metadata.namespace": cannot be removed (the API server keeps it)"#,
        ),
        (
            r#"{"metadata": {"uid": 5}}"#,
            r#""unreadable.configuration.metadata.uid": must be a string (found a number)"#,
        ),
        (
            r#"{"metadata": {"generation": "7"}}"#,
            r#""unreadable.configuration.metadata.generation": must be an integer from 0 to 9223372036854775807 (found "7")"#,
        ),
        (
            r#"{"metadata": {"generation": -1}}"#,
            r#""unreadable.configuration.metadata.generation": must not be negative (got -1)"#,
        ),
        (
            r#"{"metadata": 5}"#,
            r#""unreadable.configuration.metadata": must be an object (found a number): the API server keeps the object's name, namespace, uid and generation in it"#,
        ),
    ];
    for (i, (patch, why)) in cases.into_iter().enumerate() {
        assert_eq!(
            malformed(
                &format!("e2-unreadable-{i}.json"),
                &scenario_with(
                    META,
                    CONFIGURATION,
                    &format!("\n {{\"unreadable\": {{\"configuration\": {patch}}}}}")
                )
            ),
            format!("line 3: step 1: {why}"),
            "{patch}"
        );
    }
    // A value of the wrong type elsewhere is what the step is for.
    let path = file(
        "e2-unreadable-ok.json",
        scenario_with(
            META,
            CONFIGURATION,
            r#"{"unreadable": {"configuration": {"spec": {"horizontalScaling": {"replicas": "many"}}}}}"#,
        )
        .as_bytes(),
    );
    let (code, stderr) = run(&["simulate", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        malformed(
            "e2-rename.json",
            &scenario_with(
                META,
                "",
                "\n {\"patch\": {\"gateway\": {\"metadata\": {\"name\": \"other\"}}}}"
            )
        ),
        r#"line 3: step 1: "patch.gateway.metadata.name": cannot be changed (the API server refuses to rename an object; the Gateway is "gw")"#
    );
    assert_eq!(
        malformed(
            "e2-move.json",
            &scenario_with(
                META,
                "",
                "\n {\"patch\": {\"gateway\": {\"metadata\": {\"namespace\": \"elsewhere\"}}}}"
            )
        ),
        r#"line 3: step 1: "patch.gateway.metadata.namespace": cannot be changed (the API server refuses to move an object; the Gateway is "ns")"#
    );
    // The same name, written again, is no change.
    let path = file(
        "e2-same-name.json",
        scenario_with(
            META,
            "",
            r#"{"patch": {"gateway": {"metadata": {"name": "gw", "namespace": "ns"}}}}"#,
        )
        .as_bytes(),
    );
    let (code, stderr) = run(&["simulate", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
}

/// L1: the JSON reader's own refusals (a nesting past its limit, a number out of range)
/// name the step and the key path.
#[test]
fn l1_reader_errors_name_the_step_and_key_path() {
    let nested = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let message = malformed(
        "l1-nesting.json",
        &scenario(&format!(
            "\"steps\": [{{\"advance\": \"1s\"}},\n {{\"patch\": {{\"configuration\": {{\"spec\": {{\"a\": {nested}}}}}}}}}]"
        )),
    );
    assert!(
        message.starts_with(
            r#"invalid JSON at line 3, column 166: step 2: "patch.configuration.spec.a[0][0][0]"#
        ),
        "{message}"
    );
    assert!(
        message.ends_with(r#"… (389 characters): recursion limit exceeded"#),
        "{message}"
    );
    assert_eq!(
        malformed(
            "l1-number.json",
            &scenario(
                "\"steps\": [{\"advance\": \"1s\"},\n {\"patch\": {\"configuration\": {\"metadata\": {\"generation\": 1e400}}}}]"
            )
        ),
        r#"invalid JSON at line 3, column 62: step 2: "patch.configuration.metadata.generation": number out of range"#
    );
    // Outside the steps: the key path alone.
    assert_eq!(
        malformed(
            "l1-objects.json",
            &format!(
                "{{\"objects\": {{\"gateway\": {GATEWAY},\n \"configuration\": {{\"spec\": {{\"x\": -1e999}}}}}},\n \"steps\": []}}"
            )
        ),
        r#"invalid JSON at line 2, column 39: "objects.configuration.spec.x": number out of range"#
    );
    // plan: the key path before the reader's message.
    let gateway = file(
        "l1-gw.json",
        br#"{"metadata": {"name": "gw", "namespace": "ns", "uid": "u", "generation": 1e999}}"#,
    );
    let gateway = gateway.to_str().unwrap();
    let (code, stderr) = run(&["plan", "--gateway", gateway]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "gateway-reconcile plan: --gateway {gateway}: \"metadata.generation\": number out of range at line 1 column 78"
        )
    );
}

/// L2: a value quoted in a message is cut to 200 characters and its length; serde's words
/// are kept whole (`floating point`, never `point`).
#[test]
fn l2_quoted_values_are_cut_and_serde_words_whole() {
    assert_eq!(
        malformed(
            "l2-float.json",
            &scenario(
                "\"steps\": [\n {\"patch\": {\"configuration\": {\"metadata\": {\"name\": \"c\", \"generation\": 18446744073709551616}}}}]"
            )
        ),
        r#"line 3: step 1: "patch.configuration.metadata.generation": expected an integer, found 1.8446744073709552e+19"#
    );
    let huge = "x".repeat(1 << 20);
    let cut = format!("\"{}\"… (1048576 characters)", "x".repeat(200));
    assert_eq!(
        malformed(
            "l2-huge-string.json",
            &scenario(&format!(
                "\"steps\": [\n {{\"patch\": {{\"configuration\": {{\"spec\": {{\"horizontalScaling\": {{\"replicas\": \"{huge}\"}}}}}}}}}}]"
            ))
        ),
        format!(
            r#"line 3: step 1: "patch.configuration.spec.horizontalScaling.replicas": expected an integer, found {cut}"#
        )
    );
    // A word of the format (a time, a verb) and a key are cut the same way.
    assert_eq!(
        malformed(
            "l2-huge-time.json",
            &scenario(&format!("\"now\": \"{huge}\", \"steps\": []"))
        ),
        format!(
            "line 2: \"now\": not an RFC 3339 time \"{}\" (expected e.g. 2026-01-01T00:00:00Z)",
            "x".repeat(64)
        )
    );
    assert_eq!(
        malformed(
            "l2-huge-verb.json",
            &scenario(&format!("\"steps\": [\n {{\"{huge}\": {{}}}}]"))
        ),
        format!(
            "line 3: step 1: unknown step {cut} (expected one of reconcile, advance, patch, delete, failWrites, rollout, mutateWrites, restart, unreadable, snapshot, staleReads, catchUp, recreate)"
        )
    );
    assert_eq!(
        malformed(
            "l2-huge-error-key.json",
            &scenario(&format!(
                "\"steps\": [\n {{\"failWrites\": {{\"count\": 1, \"error\": {{\"{huge}\": 1}}}}}}]"
            ))
        ),
        format!(
            "line 3: step 1: \"failWrites.error\": unknown key {cut} (expected code, reason, message, or a Kubernetes Status)"
        )
    );
    let message = malformed(
        "l2-huge-advance.json",
        &scenario(&format!("\"steps\": [\n {{\"advance\": \"{huge}\"}}]")),
    );
    assert!(message.len() < 1000, "{} bytes", message.len());
    assert!(message.contains(&cut), "{message}");
}

/// W3: `plan --namespaces` takes the namespaces' labels as `kubectl get namespaces -o json`
/// prints them, and decides what `simulate` decides on the same objects.
#[test]
fn w3_plan_takes_the_namespaces_labels_as_simulate_does() {
    let class = r#"{"metadata": {"name": "meridio"}, "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}}"#;
    let gateway = r#"{"metadata": {"name": "gw", "namespace": "red", "uid": "u-1", "generation": 1},
 "spec": {"gatewayClassName": "meridio",
  "listeners": [{"name": "teams", "port": 4000, "protocol": "TCP",
    "allowedRoutes": {"namespaces": {"from": "Selector", "selector": {"matchLabels": {"team": "blue"}}}}}],
  "infrastructure": {"parametersRef": {"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "gwconf"}}}}"#;
    let configuration = r#"{"metadata": {"name": "gwconf", "namespace": "red", "generation": 1},
 "spec": {"networkAttachments": [{"type": "NAD", "nad": {"name": "vlan-100", "namespace": "red", "interface": "ext-vlan0"}}],
  "internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}}"#;
    let routes = r#"[{"metadata": {"name": "r-blue", "namespace": "tenant"},
  "spec": {"parentRefs": [{"name": "gw", "namespace": "red"}], "destinationCIDRs": ["30.0.0.1/32"], "priority": 1}},
 {"metadata": {"name": "r-green", "namespace": "other"},
  "spec": {"parentRefs": [{"name": "gw", "namespace": "red"}], "destinationCIDRs": ["40.0.0.1/32"], "priority": 1}}]"#;
    let namespaces = r#"{"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [
 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant",
   "labels": {"team": "blue", "kubernetes.io/metadata.name": "tenant"}},
   "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other", "labels": {"team": "green"}}}]}"#;
    // simulate: the same objects, the labels under objects.namespaces.
    let text = format!(
        r#"{{"now": "2026-01-01T00:00:00Z", "objects": {{"gatewayClass": {class}, "gateway": {gateway},
 "configuration": {configuration}, "routes": {routes},
 "namespaces": {{"tenant": {{"team": "blue", "kubernetes.io/metadata.name": "tenant"}}, "other": {{"team": "green"}}}}}},
 "steps": [{{"reconcile": {{}}, "expect": {{"action": "Create", "addresses": ["30.0.0.1"],
   "listeners": [{{"name": "teams", "attachedRoutes": 1}}]}}}}]}}"#
    );
    let path = file("w3-scenario.json", text.as_bytes());
    let (code, stderr) = run(&["simulate", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let files = [
        ("--gateway-class", file("w3-class.json", class.as_bytes())),
        ("--gateway", file("w3-gw.json", gateway.as_bytes())),
        (
            "--configuration",
            file("w3-conf.json", configuration.as_bytes()),
        ),
        ("--routes", file("w3-routes.json", routes.as_bytes())),
    ];
    let namespaces = file("w3-namespaces.json", namespaces.as_bytes());
    let plan = |with_namespaces: bool| {
        let mut args: Vec<&str> = vec!["plan", "--now", "2026-01-01T00:00:00Z"];
        for (flag, path) in &files {
            args.push(flag);
            args.push(path.to_str().unwrap());
        }
        if with_namespaces {
            args.push("--namespaces");
            args.push(namespaces.to_str().unwrap());
        }
        let out = Command::new(BIN).args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let decision: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let addresses: Vec<String> = decision["status"]["addresses"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|a| a["value"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        let attached = decision["status"]["listeners"][0]["attachedRoutes"].clone();
        (decision["action"].clone(), addresses, attached)
    };
    assert_eq!(
        plan(true),
        (
            serde_json::json!("Create"),
            vec!["30.0.0.1".to_owned()],
            serde_json::json!(1)
        )
    );
    // Without the labels no namespace is selected: what the flag changes.
    assert_eq!(plan(false).1, Vec::<String>::new());
    // The names and labels are checked as a scenario's are.
    let gateway = files[1].1.to_str().unwrap();
    for (i, (list, why)) in [
        (
            r#"{"kind": "NamespaceList", "items": [{"metadata": {"name": "Bad_NS"}}]}"#,
            "items[0].metadata.name: is not a namespace name (a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)",
        ),
        (
            r#"{"kind": "NamespaceList", "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "a"}}]}"#,
            "items[1].metadata.name: names a namespace listed before it",
        ),
        (
            r#"{"kind": "PodList", "items": []}"#,
            r#"kind: expected List or NamespaceList, found "PodList""#,
        ),
        (
            r#"{"items": [{"metadata": {"name": "a", "labels": {"team": 5}}}]}"#,
            "items[0].metadata.labels.team: expected a string, found 5",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let list = file(&format!("w3-bad-{i}.json"), list.as_bytes());
        let list = list.to_str().unwrap();
        let (code, stderr) = run(&["plan", "--gateway", gateway, "--namespaces", list]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!("gateway-reconcile plan: --namespaces {list}: {why}")
        );
    }
}

/// The namespaces are read straight from the text: a name or a label key given twice is a
/// duplicate key, a value of the wrong type names its key path, and names and keys in any
/// order read as sorted ones do.
#[test]
fn m1_namespaces_read_from_the_text_keep_the_rules() {
    let with = |namespaces: &str| {
        format!(
            "{{\"objects\": {{\"gateway\": {GATEWAY},\n \"namespaces\": {namespaces}}}, \"steps\": []}}"
        )
    };
    assert_eq!(
        malformed("ns-dup.json", &with(r#"{"a": {}, "b": {}, "a": {}}"#)),
        r#"invalid JSON at line 2, column 37: duplicate key "objects.namespaces.a""#
    );
    assert_eq!(
        malformed("ns-dup-label.json", &with(r#"{"a": {"x": "1", "x": "2"}}"#)),
        r#"invalid JSON at line 2, column 35: duplicate key "objects.namespaces.a.x""#
    );
    assert_eq!(
        malformed("ns-number.json", &with(r#"{"a": {"x": 1}}"#)),
        r#"invalid JSON at line 2, column 28: "objects.namespaces.a.x" must be a string (found a number)"#
    );
    assert_eq!(
        malformed("ns-list.json", &with(r#"{"a": []}"#)),
        r#"invalid JSON at line 2, column 23: "objects.namespaces.a" must be an object (found a list)"#
    );
    assert_eq!(
        malformed("ns-invalid.json", &with(r#"{"b": {}, "a": {"x": "-v"}}"#)),
        r#"line 2: "objects.namespaces.a.x": invalid value "-v": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#
    );
    let read = |namespaces: &str| {
        gateway_reconcile::sim::scenario::Scenario::from_json(&with(namespaces))
            .unwrap()
            .objects
            .namespaces
    };
    let unsorted = read(r#"{"c": {"z": "1", "a": "2"}, "a": {}, "b": {"k": "v"}}"#);
    let sorted = read(r#"{"a": {}, "b": {"k": "v"}, "c": {"a": "2", "z": "1"}}"#);
    assert_eq!(unsorted, sorted);
    assert_eq!(
        unsorted.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    assert_eq!(
        unsorted.labels("c").unwrap(),
        [
            ("a".to_owned(), "2".to_owned()),
            ("z".to_owned(), "1".to_owned())
        ]
    );
    // Out of order, and no name twice: no duplicate is found.
    assert_eq!(read(r#"{"b": {}, "a": {}, "c": {}}"#).len(), 3);
}
