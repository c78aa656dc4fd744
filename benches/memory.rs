//! Peak memory of loading a scenario and running one reconcile, against the input's size.
//!
//! `cargo bench --bench memory` generates the two inputs of the hostile-input report (a
//! scenario with 100,000 L34Routes, and one whose template has 100,000 containers), at
//! 1,000 to 100,000 elements, and for each prints the input size, the peak resident memory
//! of a fresh process that holds the text, runs `Scenario::from_json` and
//! `Scenario::into_report` (one reconcile), and their ratio (Linux `VmHWM`). The process
//! includes the generation of the input and the binary itself, so small inputs show a
//! large ratio. It is a measurement, not a timed benchmark. Elsewhere than Linux it prints
//! nothing.

use gateway_reconcile::sim::scenario::Scenario;

/// The objects every input shares (class, Gateway, GatewayConfiguration), then `extra`.
/// Written as text: building a `Value` first would be the peak being measured.
fn scenario(extra: &str) -> String {
    format!(
        r#"{{"objects": {{"gatewayClass": {{"metadata": {{"name": "meridio"}},
  "spec": {{"controllerName": "meridio-2.nordix.org/gateway-controller"}}}},
"gateway": {{"metadata": {{"name": "gw", "namespace": "red", "uid": "gw-uid", "generation": 1}},
  "spec": {{"gatewayClassName": "meridio", "infrastructure": {{"parametersRef": {{
    "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "gwconf"}}}}}}}},
"configuration": {{"metadata": {{"name": "gwconf", "namespace": "red", "generation": 1}},
  "spec": {{"internalSubnets": [{{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}}]}}}},
{extra}}},
"steps": [{{"reconcile": {{}}}}]}}"#
    )
}

fn with_routes(n: usize) -> String {
    let routes: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"metadata": {{"name": "route-{i}", "namespace": "red"}}, "spec": {{"parentRefs": [{{"name": "gw"}}], "destinationCIDRs": ["20.{}.{}.{}/32"]}}}}"#,
                i >> 16,
                (i >> 8) & 255,
                i & 255
            )
        })
        .collect();
    scenario(&format!("\"routes\": [\n{}]", routes.join(",\n")))
}

fn with_containers(n: usize) -> String {
    let containers: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"name": "c{i}", "image": "registry.example/lb:1.0"}}"#))
        .collect();
    scenario(&format!(
        r#""template": {{"apiVersion": "apps/v1", "kind": "Deployment", "spec": {{"template": {{"spec": {{"containers": [
{}]}}}}}}}}"#,
        containers.join(",\n")
    ))
}

/// Peak resident memory of this process in bytes, on Linux.
fn peak() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The environment variable that makes this binary run one case and print its peak.
const CASE: &str = "GATEWAY_RECONCILE_MEMORY_CASE";

/// One case in this (fresh) process: the input size and the peak resident memory.
fn measure(case: &str) {
    let (name, n) = case.split_once(':').unwrap();
    let n: usize = n.parse().unwrap();
    let text = match name {
        "routes" => with_routes(n),
        _ => with_containers(n),
    };
    let report = Scenario::from_json(&text).map(Scenario::into_report);
    assert!(report.is_ok_and(|r| r.passed()), "{case}");
    println!("{} {}", text.len(), peak().unwrap_or(0));
}

fn main() {
    if let Ok(case) = std::env::var(CASE) {
        return measure(&case);
    }
    // `cargo test --all-targets` runs benches without `--bench`: skip the measurement there.
    if peak().is_none() || !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    println!("input                elements      bytes    peak RSS  ratio");
    for n in [1_000, 10_000, 100_000] {
        for name in ["routes", "containers"] {
            let out = std::process::Command::new(&exe)
                .env(CASE, format!("{name}:{n}"))
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            let mut fields = text
                .split_whitespace()
                .map(|f| f.parse::<u64>().unwrap_or(0));
            let (size, used) = (fields.next().unwrap_or(1), fields.next().unwrap_or(0));
            println!(
                "{:<19} {:>9}  {:>9}  {:>10}  {:>4.1}x",
                name,
                n,
                size,
                used,
                used as f64 / size.max(1) as f64
            );
        }
    }
}
