//! `gateway-reconcile`: run scenarios against the simulated cluster, or explain a decision.
//!
//! ```text
//! gateway-reconcile simulate [FILE]
//! gateway-reconcile plan --gateway F [--gateway-class F] [--configuration F]
//!                        [--deployment F] [--template F] [--routes F] [--namespaces F]
//!                        [--outcome JSON|F] [--now RFC3339] [--settings F]
//! ```

use std::collections::BTreeMap;
use std::fmt::Display;
use std::process::ExitCode;

use gateway_reconcile::sim::scenario::{
    DEMO, Scenario, api_error_from_value, namespace_list, parse_time,
};
use gateway_reconcile::sim::strict_json::plain_message;
use gateway_reconcile::wire::{Deployment, Gateway, GatewayClass, GatewayConfiguration, L34Route};
use gateway_reconcile::{Plan, Requeue, Settings, Snapshot, WriteOutcome, format_duration};
use serde_json::Value;

const USAGE: &str = "\
gateway-reconcile: the decision logic of a Gateway API controller that runs one
load-balancer Deployment per Gateway.

Usage:
  gateway-reconcile simulate [FILE]   run a scenario file (no FILE: the built-in demo)
  gateway-reconcile plan --gateway F [options]
                                      print the decision for real objects
  gateway-reconcile help [simulate|plan]

Run `gateway-reconcile simulate --help` or `gateway-reconcile plan --help` for more.";

const SIMULATE_USAGE: &str = "\
Usage: gateway-reconcile simulate [--max-input-bytes N] [FILE]

Runs a scenario file (JSON: description, settings, now, objects, steps) against a
simulated API server and prints the timeline: each step's time, each reconcile's action
and drift, the Deployment write's outcome, whether the Gateway status was written, every
condition (type, status, reason, message), the addresses and the requeue hint.

Without FILE, runs a built-in demonstration: a GatewayConfiguration edit (generation
7 -> 8) that cannot reach the LB Deployment because updates fail with 503 for ten
minutes, and how the status tells the truth about it.

Exit status: 0 when every expectation held, 1 when one failed (each failure is printed
with its step, what was expected and what was found), 2 for a file that cannot be read
or is malformed (the message names the file, the step and the key).

FILE must be a regular file, or - for standard input, of at most 64 MiB
(--max-input-bytes N raises the cap).";

const PLAN_USAGE: &str = "\
Usage: gateway-reconcile plan --gateway F [options]

Reads objects as `kubectl get -o json` prints them (or `-o yaml`, in a build with the
`yaml` feature) and prints the decision as JSON:
the action (Create, Update or None), the drifted fields, the desired Deployment, the
Gateway status to write (or null), its merge patch, and the requeue hint.

Options:
  --gateway F          the Gateway (required)
  --gateway-class F    its GatewayClass (absent: not found)
  --configuration F    the GatewayConfiguration (absent: not found)
  --deployment F       the observed LB Deployment (absent: not found)
  --template F         the LB Deployment template (absent: the built-in one)
  --routes F           the L34Routes: a List (`kubectl get l34routes -A -o json`) or an array
  --namespaces F       the namespaces' labels, for allowedRoutes selectors: a List
                       (`kubectl get namespaces -o json`) or an array (absent: no labels)
  --outcome JSON|F     what happened to the Deployment write: \"Applied\", or an API error
                       {\"code\": 503, \"reason\": \"...\", \"message\": \"...\"} (a Kubernetes
                       Status object works too; no code = a transport error). Inline JSON
                       or a file. Absent: the write is assumed Applied.
  --now RFC3339        the time to decide at (absent: the system clock)
  --settings F         controller settings JSON (absent: the Meridio-2 defaults)
  --max-input-bytes N  the largest input read, per file (default 67108864, 64 MiB)

Every F is a regular file, or - for standard input (for one option only).

Exit status: 0 on success, 2 for a file that cannot be read or is malformed.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = match args.split_first() {
        Some((c, rest)) => (c.as_str(), rest),
        None => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match command {
        "-h" | "--help" => {
            out(USAGE);
            ExitCode::SUCCESS
        }
        "help" => {
            match rest.first().map(String::as_str) {
                Some("simulate") => out(SIMULATE_USAGE),
                Some("plan") => out(PLAN_USAGE),
                _ => out(USAGE),
            }
            ExitCode::SUCCESS
        }
        "simulate" => simulate(rest),
        "plan" => match plan(rest) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("gateway-reconcile plan: {message}");
                ExitCode::from(2)
            }
        },
        other => {
            eprintln!("gateway-reconcile: unknown command {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn simulate(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        out(SIMULATE_USAGE);
        return ExitCode::SUCCESS;
    }
    let (limit, args) = match max_input_bytes(args) {
        Ok(split) => split,
        Err(e) => {
            eprintln!("gateway-reconcile simulate: {e}");
            return ExitCode::from(2);
        }
    };
    let (name, text) = match args.as_slice() {
        [] => ("the built-in demo".to_owned(), DEMO.to_owned()),
        [file] => match read_input(file, limit) {
            Ok(text) => (display_name(file), text),
            Err(e) => {
                eprintln!("gateway-reconcile simulate: {}: {e}", display_name(file));
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("gateway-reconcile simulate: expected at most one FILE\n\n{SIMULATE_USAGE}");
            return ExitCode::from(2);
        }
    };
    // JSON goes through the strict reader (duplicate keys, lines); YAML, when built in,
    // through serde_yaml_ng, which refuses duplicate keys itself.
    let looks_like_json = text.trim_start().starts_with(['{', '[']);
    let parsed = if looks_like_json || !cfg!(feature = "yaml") {
        match Scenario::from_json(&text) {
            Err(e) if !looks_like_json => parse_value(&text)
                .map_err(|e| e.to_string())
                .and_then(|_| Err(e.to_string())),
            other => other.map_err(|e| e.to_string()),
        }
    } else {
        parse_value(&text)
            .map_err(|e| e.to_string())
            .and_then(|v| Scenario::from_value(&v).map_err(|e| e.to_string()))
    };
    let scenario = match parsed {
        Ok(s) => s,
        Err(e) => {
            eprintln!("gateway-reconcile simulate: {name}: {e}");
            return ExitCode::from(2);
        }
    };
    // The text is not needed once read: a large file is not held through the run.
    drop(text);
    let report = scenario.into_report();
    out(&report.to_string());
    if report.passed() {
        ExitCode::SUCCESS
    } else if let Some(skipped) = &report.skipped {
        eprintln!(
            "gateway-reconcile simulate: {name}: skipped at step {}: {}",
            skipped.step, skipped.why
        );
        ExitCode::from(1)
    } else {
        eprintln!(
            "gateway-reconcile simulate: {name}: {} expectation(s) failed",
            report.failures.len()
        );
        ExitCode::from(1)
    }
}

const PLAN_FLAGS: [&str; 10] = [
    "--gateway",
    "--gateway-class",
    "--configuration",
    "--deployment",
    "--template",
    "--routes",
    "--namespaces",
    "--outcome",
    "--now",
    "--settings",
];

fn plan(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        out(PLAN_USAGE);
        return Ok(());
    }
    let (limit, args) = max_input_bytes(args)?;
    let mut flags: BTreeMap<&str, &str> = BTreeMap::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let (flag, inline) = match flag.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (flag.as_str(), None),
        };
        let Some(known) = PLAN_FLAGS.iter().find(|f| **f == flag) else {
            return Err(format!("unknown option {flag:?} (see --help)"));
        };
        let value = match inline {
            Some(v) => v,
            None => it
                .next()
                .map(String::as_str)
                .ok_or_else(|| format!("{flag} needs a value"))?,
        };
        if flags.insert(known, value).is_some() {
            return Err(format!("{flag} given twice"));
        }
    }
    if flags.values().filter(|v| **v == "-").count() > 1 {
        return Err("standard input (-) can be given to one option only".into());
    }
    let gateway_file = flags
        .get("--gateway")
        .ok_or("--gateway is required (see --help)")?;
    let gateway: Gateway = read_object("--gateway", gateway_file, limit)?;
    let gateway_class: Option<GatewayClass> = optional(&flags, limit, "--gateway-class")?;
    let configuration: Option<GatewayConfiguration> = optional(&flags, limit, "--configuration")?;
    let deployment: Option<Deployment> = optional(&flags, limit, "--deployment")?;
    if let Some(deployment) = &deployment {
        deployment_metadata("--deployment", &flags, deployment)?;
    }
    let routes: Vec<L34Route> = match flags.get("--routes") {
        None => Vec::new(),
        Some(file) => read_routes(file, limit)?,
    };
    let namespaces = match flags.get("--namespaces") {
        None => gateway_reconcile::NamespaceLabels::new(),
        Some(file) => read_namespaces(file, limit)?,
    };
    let settings: Settings = optional(&flags, limit, "--settings")?.unwrap_or_default();
    let now: jiff::Timestamp = match flags.get("--now") {
        None => jiff::Timestamp::now(),
        Some(text) => parse_time(text).map_err(|e| format!("--now: {e}"))?,
    };
    let outcome = flags
        .get("--outcome")
        .map(|o| read_outcome(o, limit))
        .transpose()?;
    let template: Deployment = match optional(&flags, limit, "--template")? {
        Some(t) => t,
        None => gateway_reconcile::template::default_template(),
    };

    let snapshot = Snapshot::new(&gateway, &template)
        .with_gateway_class(gateway_class.as_ref())
        .with_configuration(configuration.as_ref())
        .with_deployment(deployment.as_ref())
        .with_routes(&routes)
        .with_namespace_labels(&namespaces);
    let plan = gateway_reconcile::plan(&settings, snapshot, now).map_err(|e| e.to_string())?;
    let action = plan.write_kind().as_str();
    let assumed = plan.write().is_some() && outcome.is_none();
    let (write, used, settlement) = match plan {
        Plan::Write(pending) => {
            let (write, awaiting) = pending.into_write();
            let used = outcome.unwrap_or(WriteOutcome::Applied);
            (Some(write), Some(used.clone()), awaiting.settle(used))
        }
        Plan::Settled(settlement) => (None, None, settlement),
    };
    let desired = write.as_ref().map(|w| w.desired());
    let drift = write.as_ref().map(|w| w.drift()).unwrap_or_default();
    let requeue = match settlement.requeue {
        Requeue::AwaitChange => "none".to_owned(),
        Requeue::Immediately => "immediately".to_owned(),
        Requeue::After(d) => format_duration(d),
    };
    // The small parts as values (their keys sorted, as the output has always had them);
    // the desired Deployment, which can be as large as the template, written straight from
    // its tree (sorted too), never copied into a `serde_json::Value`.
    let decision = Decision {
        action,
        desired,
        drift,
        events: to_value(&settlement.events)?,
        now: now.to_string(),
        outcome: to_value(&used)?,
        outcome_assumed: assumed.then_some(true),
        requeue,
        status: to_value(&settlement.status)?,
        status_patch: to_value(&settlement.status_patch().map(|p| p.into_body()))?,
    };
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    // A closed pipe (`| head`) is not an error worth reporting.
    let _ = serde_json::to_writer_pretty(&mut stdout, &decision)
        .map_err(std::io::Error::from)
        .and_then(|()| {
            use std::io::Write;
            writeln!(stdout).and_then(|()| stdout.flush())
        });
    Ok(())
}

fn to_value(value: &impl serde::Serialize) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| e.to_string())
}

/// What `plan` prints, its keys in sorted order (as a `serde_json::Map` keeps them).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Decision<'a> {
    action: &'a str,
    desired: Option<&'a Deployment>,
    drift: &'a [String],
    events: Value,
    now: String,
    outcome: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome_assumed: Option<bool>,
    requeue: String,
    status: Value,
    status_patch: Value,
}

/// An observed Deployment whose `metadata.name` or `namespace` is not a string is malformed:
/// the message names the flag, the file and the key path. (A template's own name and
/// namespace are never used: the LB Deployment gets its own.)
fn deployment_metadata(
    flag: &str,
    flags: &BTreeMap<&str, &str>,
    deployment: &Deployment,
) -> Result<(), String> {
    match deployment.metadata_type_error() {
        None => Ok(()),
        Some((path, why)) => {
            let file = flags.get(flag).copied().unwrap_or_default();
            Err(format!("{flag} {}: {path}: {why}", display_name(file)))
        }
    }
}

/// Prints to stdout; a closed pipe (`| head`) is not an error worth a panic.
fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
}

fn read(flag: &str, file: &str, limit: u64) -> Result<String, String> {
    read_input(file, limit).map_err(|e| format!("{flag} {}: {e}", display_name(file)))
}

/// The default cap on one input, in bytes (`--max-input-bytes` raises it).
const DEFAULT_MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Takes `--max-input-bytes N` (or `=N`) out of the arguments: the cap and the rest.
fn max_input_bytes(args: &[String]) -> Result<(u64, Vec<String>), String> {
    let mut limit = None;
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let value = if arg == "--max-input-bytes" {
            it.next().ok_or("--max-input-bytes needs a value")?.as_str()
        } else if let Some(value) = arg.strip_prefix("--max-input-bytes=") {
            value
        } else {
            rest.push(arg.clone());
            continue;
        };
        let n: u64 = value.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
            format!("--max-input-bytes {value:?}: expected a positive number of bytes")
        })?;
        if limit.replace(n).is_some() {
            return Err("--max-input-bytes given twice".into());
        }
    }
    Ok((limit.unwrap_or(DEFAULT_MAX_INPUT_BYTES), rest))
}

/// How a file argument is named in messages.
fn display_name(file: &str) -> String {
    if file == "-" {
        "standard input".into()
    } else {
        file.to_owned()
    }
}

/// Reads a regular file, or standard input for `-`, up to `limit` bytes, as UTF-8 text.
///
/// Devices, FIFOs and directories are refused before reading (`/dev/zero` would never end),
/// and no more than `limit + 1` bytes are ever read, so an endless stream on standard input
/// stops at the cap too.
fn read_input(file: &str, limit: u64) -> Result<String, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let read = if file == "-" {
        std::io::stdin()
            .lock()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
    } else {
        let handle = std::fs::File::open(file).map_err(|e| format!("cannot read: {e}"))?;
        // The opened file's own metadata: no race with a rename between check and read.
        let meta = handle.metadata().map_err(|e| format!("cannot read: {e}"))?;
        if !meta.is_file() {
            return Err(format!(
                "not a regular file ({}); give a file, or - for standard input",
                file_kind(&meta)
            ));
        }
        if meta.len() > limit {
            return Err(too_large(limit));
        }
        handle.take(limit.saturating_add(1)).read_to_end(&mut bytes)
    };
    read.map_err(|e| format!("cannot read: {e}"))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
        return Err(too_large(limit));
    }
    decode(bytes)
}

fn too_large(limit: u64) -> String {
    format!("larger than {limit} bytes, the input limit (raise it with --max-input-bytes)")
}

fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_fifo() {
            return "a named pipe";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

/// UTF-8 text without a byte-order mark; otherwise what is wrong and where.
fn decode(bytes: Vec<u8>) -> Result<String, String> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err("starts with a UTF-8 byte-order mark (EF BB BF): save it without one".into());
    }
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err("starts with a UTF-16 byte-order mark: the input must be UTF-8".into());
    }
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = 1 + bytes.iter().take(offset).filter(|b| **b == b'\n').count();
        let byte = bytes.get(offset).copied().unwrap_or(0);
        format!("not UTF-8: invalid byte 0x{byte:02X} at byte offset {offset} (line {line})")
    })
}

fn parse<T: serde::de::DeserializeOwned>(flag: &str, file: &str, text: &str) -> Result<T, String> {
    let value = parse_value(text).map_err(|e| format!("{flag} {}: {e}", display_name(file)))?;
    typed(&value).map_err(|e| format!("{flag} {}: {e}", display_name(file)))
}

/// A value read as `T` in place, an error naming the key path of the wrong value.
fn typed<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            plain_message(&e.into_inner().to_string())
        } else {
            format!("{path}: {}", plain_message(&e.into_inner().to_string()))
        }
    })
}

/// JSON without duplicate keys; with the `yaml` feature, YAML too (several documents are read as a list, so
/// `kubectl get -o yaml` output of many routes works). Text that starts like JSON is
/// reported as JSON.
fn parse_value(text: &str) -> Result<Value, String> {
    // The strict reader: a key given twice is refused with its key path and line, where
    // serde_json alone would keep the last one.
    match gateway_reconcile::sim::strict_json::parse(text) {
        Ok(value) => Ok(value),
        Err(e) if text.trim_start().starts_with(['{', '[']) => Err(e.to_string()),
        Err(e) => yaml(text).unwrap_or_else(|| Err(e.to_string())),
    }
}

#[cfg(feature = "yaml")]
fn yaml(text: &str) -> Option<Result<Value, String>> {
    use serde::Deserialize;
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        match Value::deserialize(document) {
            Ok(Value::Null) => {}
            Ok(value) => documents.push(value),
            Err(e) => return Some(Err(format!("neither JSON nor YAML: {e}"))),
        }
    }
    Some(Ok(match documents.len() {
        1 => documents.remove(0),
        _ => Value::Array(documents),
    }))
}

/// Not JSON, and this build reads no YAML: say which feature would.
#[cfg(not(feature = "yaml"))]
fn yaml(text: &str) -> Option<Result<Value, String>> {
    let e = serde_json::from_str::<Value>(text).err()?;
    Some(Err(format!(
        "not JSON ({e}); YAML input needs a build with the `yaml` feature \
         (cargo install gateway-reconcile --features yaml)"
    )))
}

/// `T` read straight from JSON text that passes the strict check: no `serde_json::Value`
/// (about 20 times the text of small objects) is ever built. `None` for anything else (not
/// an object, not strict JSON, YAML, a wrong value), which the value path reads and explains
/// as before.
fn read_direct<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    gateway_reconcile::sim::strict_json::check(text).ok()?;
    serde_json::from_str(text).ok()
}

fn read_object<T: serde::de::DeserializeOwned>(
    flag: &str,
    file: &str,
    limit: u64,
) -> Result<T, String> {
    let text = read(flag, file, limit)?;
    if let Some(object) = read_direct(&text) {
        return Ok(object);
    }
    let value: Value = parse(flag, file, &text)?;
    if !value.is_object() {
        return Err(format!(
            "{flag} {}: expected a JSON object",
            display_name(file)
        ));
    }
    typed(&value).map_err(|e| format!("{flag} {}: {e}", display_name(file)))
}

fn optional<T: serde::de::DeserializeOwned>(
    flags: &BTreeMap<&str, &str>,
    limit: u64,
    flag: &str,
) -> Result<Option<T>, String> {
    flags
        .get(flag)
        .map(|f| read_object(flag, f, limit))
        .transpose()
}

/// A `List` of routes (`kubectl get l34routes -o json`), read straight from the text.
#[derive(serde::Deserialize)]
struct RouteList {
    #[serde(default)]
    items: Option<Vec<L34Route>>,
}

fn read_routes(file: &str, limit: u64) -> Result<Vec<L34Route>, String> {
    let text = read("--routes", file, limit)?;
    // As read_direct, for a List or an array.
    let start = text.trim_start();
    let direct = match gateway_reconcile::sim::strict_json::check(&text) {
        Ok(()) if start.starts_with('[') => serde_json::from_str::<Vec<L34Route>>(&text).ok(),
        Ok(()) if start.starts_with('{') => serde_json::from_str::<RouteList>(&text)
            .ok()
            .map(|list| list.items.unwrap_or_default()),
        _ => None,
    };
    if let Some(routes) = direct {
        return Ok(routes);
    }
    let value: Value = parse("--routes", file, &text)?;
    let items = match value {
        Value::Array(items) => items,
        Value::Object(mut list) => match list.remove("items") {
            Some(Value::Array(items)) => items,
            Some(Value::Null) | None => Vec::new(),
            Some(_) => return Err(format!("--routes {file}: \"items\" must be a list")),
        },
        _ => {
            return Err(format!(
                "--routes {file}: expected a List object or an array"
            ));
        }
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| typed(&item).map_err(|e| err_at("--routes", file, i, e)))
        .collect()
}

/// The namespaces' labels: a Namespace List (`kubectl get namespaces -o json`) or an
/// array, each name and label checked as a scenario file's `objects.namespaces` are.
fn read_namespaces(file: &str, limit: u64) -> Result<gateway_reconcile::NamespaceLabels, String> {
    let text = read("--namespaces", file, limit)?;
    let value =
        parse_value(&text).map_err(|e| format!("--namespaces {}: {e}", display_name(file)))?;
    namespace_list(&value).map_err(|(path, why)| match path.is_empty() {
        true => format!("--namespaces {}: {why}", display_name(file)),
        false => format!("--namespaces {}: {path}: {why}", display_name(file)),
    })
}

fn err_at(flag: &str, file: &str, index: usize, e: impl Display) -> String {
    format!("{flag} {file}: item {index}: {e}")
}

/// `Applied`, `"Applied"`, or `{code?, reason, message}` (a Kubernetes `Status` object
/// too), inline or in a file.
fn read_outcome(arg: &str, limit: u64) -> Result<WriteOutcome, String> {
    let trimmed = arg.trim();
    let (source, text) = if trimmed == "Applied" {
        return Ok(WriteOutcome::Applied);
    } else if trimmed.starts_with('{') || trimmed.starts_with('"') {
        ("inline JSON".to_owned(), trimmed.to_owned())
    } else {
        (display_name(arg), read("--outcome", arg, limit)?)
    };
    let value = parse_value(&text).map_err(|e| format!("--outcome {source}: {e}"))?;
    match value {
        Value::String(s) if s == "Applied" => Ok(WriteOutcome::Applied),
        Value::String(s) => Err(format!(
            "--outcome {source}: {s:?} is not an outcome (expected \"Applied\" or an API error)"
        )),
        // The reader the scenario files' failWrites.error uses: both accept the same.
        value => api_error_from_value(&value).map_err(|e| format!("--outcome {source}: {e}")),
    }
}

#[cfg(all(test, feature = "yaml"))]
mod yaml_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_yaml_object_reads_like_its_json() {
        let yaml = "metadata:\n  name: gw\n  namespace: ns\n  generation: 3\nspec:\n  gatewayClassName: meridio\n";
        let gateway: Gateway = parse("--gateway", "gw.yaml", yaml).unwrap();
        assert_eq!(gateway.metadata.name.as_deref(), Some("gw"));
        assert_eq!(gateway.metadata.generation, Some(3));
    }

    #[test]
    fn several_yaml_documents_are_a_list() {
        let yaml = "---\nmetadata: {name: a}\n---\nmetadata: {name: b}\n---\n";
        let value = parse_value(yaml).unwrap();
        assert_eq!(
            value,
            json!([{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}])
        );
    }

    #[test]
    fn bad_yaml_and_bad_json_say_so() {
        let e = parse_value("a: [1, 2").unwrap_err();
        assert!(e.starts_with("neither JSON nor YAML: "), "{e}");
        let e = parse_value("{\"a\": ").unwrap_err();
        assert_eq!(e, "EOF while parsing a value at line 1 column 6");
    }

    #[test]
    fn a_yaml_scenario_runs() {
        let demo: Value = serde_json::from_str(DEMO).unwrap();
        let yaml = serde_yaml_ng::to_string(&demo).unwrap();
        let scenario = Scenario::from_value(&parse_value(&yaml).unwrap()).unwrap();
        assert!(scenario.run().passed());
    }
}

#[cfg(test)]
mod direct_read_tests {
    use super::*;

    /// What the value path reads from `text`.
    fn through_value<T: serde::de::DeserializeOwned>(text: &str) -> T {
        typed(&parse_value(text).unwrap()).unwrap()
    }

    #[test]
    fn the_direct_read_gives_what_the_value_path_gives() {
        let gateway = r#"{"metadata": {"name": "gw", "namespace": "ns", "uid": "u", "generation": 2,
            "labels": {"a": "b"}, "creationTimestamp": "2026-01-01T00:00:00Z"},
          "spec": {"gatewayClassName": "c", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}], "infrastructure": {"labels": {"x": "y"},
            "parametersRef": {"group": "g", "kind": "k", "name": "n"}}},
          "status": {"conditions": [{"type": "A", "status": "True", "reason": "R", "message": "m\u00e9",
            "lastTransitionTime": "9999-12-31T23:59:59Z", "observedGeneration": 1}],
            "listeners": [{"name": "l"}]}}"#;
        let direct: Gateway = read_direct(gateway).unwrap();
        assert_eq!(direct, through_value::<Gateway>(gateway));
        let configuration = r#"{"metadata": {"name": "c"}, "spec": {
            "internalSubnets": [{"attachmentType": "NAD", "cidr": "10.0.0.0/24"}],
            "verticalScaling": {"containers": [{"name": "lb", "resources": {"requests": {"cpu": 0.5}}}]}}}"#;
        let direct: GatewayConfiguration = read_direct(configuration).unwrap();
        assert_eq!(direct, through_value::<GatewayConfiguration>(configuration));
        let deployment =
            r#"{"metadata": {"name": "d"}, "spec": {"replicas": 2, "x": [1, 2.5, null]}}"#;
        let direct: Deployment = read_direct(deployment).unwrap();
        assert_eq!(direct, through_value::<Deployment>(deployment));
    }

    #[test]
    fn anything_the_value_path_must_explain_is_left_to_it() {
        // A duplicate key, a wrong type, a list, YAML: no direct read.
        assert!(read_direct::<Gateway>(r#"{"metadata": {}, "metadata": {}}"#).is_none());
        assert!(read_direct::<Gateway>(r#"{"metadata": {"generation": "7"}}"#).is_none());
        assert!(read_direct::<Gateway>("[]").is_none());
        assert!(read_direct::<Gateway>("metadata: {}").is_none());
    }
}
