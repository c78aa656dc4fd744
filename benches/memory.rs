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
//!
//! Beside the resident figure, a counting allocator gives the bytes live at the peak of
//! each phase, as multiples of the input: reading the file, and the reconcile (above what
//! the read left). It also counts what the input costs parsed once as a `serde_json::Value`,
//! and as a compact tree (boxed slices, no spare capacity), to show what is representation
//! and what is copies.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};

use gateway_reconcile::sim::scenario::Scenario;
use gateway_reconcile::wire::tree;

/// Counts the bytes live, and the most live since the last [`Counting::reset`].
struct Counting;

static LIVE: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);

impl Counting {
    fn grew(by: i64) {
        let live = LIVE.fetch_add(by, Relaxed) + by;
        PEAK.fetch_max(live, Relaxed);
    }

    /// Starts a phase: the bytes live now, from which its peak is counted.
    fn reset() -> i64 {
        let live = LIVE.load(Relaxed);
        PEAK.store(live, Relaxed);
        live
    }

    /// The phase's peak above where it started.
    fn peak_since(start: i64) -> i64 {
        PEAK.load(Relaxed) - start
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Counting::grew(layout.size() as i64);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as i64, Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Counting::grew(new_size as i64 - layout.size() as i64);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The objects every input shares (class, Gateway, GatewayConfiguration), then `extra`.
/// Written as text: building a `Value` first would be the peak being measured.
fn scenario(extra: &str) -> String {
    format!(
        r#"{{"objects": {{"gatewayClass": {{"metadata": {{"name": "meridio"}},
  "spec": {{"controllerName": "meridio-2.nordix.org/gateway-controller"}}}},
"gateway": {{"metadata": {{"name": "gw", "namespace": "red", "uid": "gw-uid", "generation": 1}},
  "spec": {{"gatewayClassName": "meridio",
    "listeners": [{{"name": "all", "port": 4000, "protocol": "TCP"}}],
    "infrastructure": {{"parametersRef": {{
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
    template_of(&containers.join(",\n"))
}

/// The same containers as a person or a formatter writes them, one key per line, indented
/// (about the 77 bytes per container of the hostile-input report's 7.7 MB file).
fn with_indented_containers(n: usize) -> String {
    let containers: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "            {{\n              \"name\": \"c{i}\",\n              \"image\": \"registry.example/lb:1.0\"\n            }}"
            )
        })
        .collect();
    template_of(&containers.join(",\n"))
}

fn template_of(containers: &str) -> String {
    scenario(&format!(
        r#""template": {{"apiVersion": "apps/v1", "kind": "Deployment", "spec": {{"template": {{"spec": {{"containers": [
{containers}]}}}}}}}}"#
    ))
}

/// Peak resident memory of this process in bytes, on Linux.
fn peak() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The environment variables that make this binary run one case and print its peak: the
/// case, and the file that holds its input.
const CASE: &str = "GATEWAY_RECONCILE_MEMORY_CASE";
const INPUT: &str = "GATEWAY_RECONCILE_MEMORY_INPUT";

/// One case in this (fresh) process, as the command line runs a scenario file: read the
/// file, parse it, drop the text, run the scenario. Prints the input size, the resident
/// peak and the counted peaks.
fn measure(path: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let size = text.len();
    let start = Counting::reset();
    let scenario = Scenario::from_json(&text).unwrap();
    let read = Counting::peak_since(start);
    drop(text);
    let start = Counting::reset();
    let report = scenario.into_report();
    let reconcile = Counting::peak_since(start);
    assert!(report.passed(), "{path}");
    drop(report);
    // The resident peak is taken before the two parses below, which are counted only.
    let resident = peak().unwrap_or(0);
    let text = std::fs::read_to_string(path).unwrap();
    let start = Counting::reset();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let as_value = Counting::peak_since(start);
    drop(value);
    let start = Counting::reset();
    let tree: tree::Value = serde_json::from_str(&text).unwrap();
    let as_tree = Counting::peak_since(start);
    drop(tree);
    println!("{size} {resident} {read} {reconcile} {as_value} {as_tree}");
}

fn main() {
    if let (Ok(_), Ok(path)) = (std::env::var(CASE), std::env::var(INPUT)) {
        return measure(&path);
    }
    // `cargo test --all-targets` runs benches without `--bench`: skip the measurement there.
    if peak().is_none() || !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    println!(
        "input                elements      bytes    peak RSS  ratio   counted, x input: read reconcile  as Value  as tree"
    );
    let dir = std::env::temp_dir();
    for n in [1_000, 10_000, 100_000] {
        for name in ["routes", "containers", "containers-indented"] {
            let text = match name {
                "routes" => with_routes(n),
                "containers" => with_containers(n),
                _ => with_indented_containers(n),
            };
            let input = dir.join(format!(
                "gateway-reconcile-memory-{}-{name}-{n}.json",
                std::process::id()
            ));
            std::fs::write(&input, text).unwrap();
            let out = std::process::Command::new(&exe)
                .env(CASE, format!("{name}:{n}"))
                .env(INPUT, &input)
                .output();
            let _ = std::fs::remove_file(&input);
            let out = out.unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            let mut fields = text
                .split_whitespace()
                .map(|f| f.parse::<u64>().unwrap_or(0));
            let mut next = || fields.next().unwrap_or(0);
            let (size, used) = (next().max(1), next());
            let times = |bytes: u64| bytes as f64 / size as f64;
            let (read, reconcile, as_value, as_tree) = (next(), next(), next(), next());
            println!(
                "{:<19} {:>9}  {:>9}  {:>10}  {:>4.1}x  {:>26.1}x {:>8.1}x {:>8.1}x {:>7.1}x",
                name,
                n,
                size,
                used,
                times(used),
                times(read),
                times(reconcile),
                times(as_value),
                times(as_tree),
            );
        }
    }
}
