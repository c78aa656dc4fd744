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
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

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

/// A JSON tree without spare capacity: what a compact Deployment could cost.
#[allow(dead_code)] // Built to be counted, never read.
enum Compact {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(Box<str>),
    Array(Box<[Compact]>),
    Object(Box<[(Box<str>, Compact)]>),
}

impl<'de> Deserialize<'de> for Compact {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Compact;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Compact, E> {
                Ok(Compact::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Compact, E> {
                Ok(Compact::Bool(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Compact, E> {
                Ok(Compact::Number(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Compact, E> {
                Ok(Compact::Number(v.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Compact, E> {
                serde_json::Number::from_f64(v)
                    .map(Compact::Number)
                    .ok_or_else(|| E::custom("not a JSON number"))
            }
            fn visit_str<E>(self, v: &str) -> Result<Compact, E> {
                Ok(Compact::String(v.into()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Compact, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Compact::Array(items.into_boxed_slice()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Compact, A::Error> {
                let mut entries = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Compact>()? {
                    entries.push((key.into_boxed_str(), value));
                }
                Ok(Compact::Object(entries.into_boxed_slice()))
            }
        }
        d.deserialize_any(V)
    }
}

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
    let start = Counting::reset();
    let scenario = Scenario::from_json(&text).unwrap();
    let read = Counting::peak_since(start);
    let start = Counting::reset();
    let report = scenario.into_report();
    let reconcile = Counting::peak_since(start);
    assert!(report.passed(), "{case}");
    drop(report);
    // The resident peak is taken before the two parses below, which are counted only.
    let resident = peak().unwrap_or(0);
    let start = Counting::reset();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let as_value = Counting::peak_since(start);
    drop(value);
    let start = Counting::reset();
    let compact: Compact = serde_json::from_str(&text).unwrap();
    let as_compact = Counting::peak_since(start);
    drop(compact);
    println!(
        "{} {resident} {read} {reconcile} {as_value} {as_compact}",
        text.len()
    );
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
    println!(
        "input                elements      bytes    peak RSS  ratio   counted, x input: read reconcile  as Value  compact"
    );
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
            let mut next = || fields.next().unwrap_or(0);
            let (size, used) = (next().max(1), next());
            let times = |bytes: u64| bytes as f64 / size as f64;
            let (read, reconcile, as_value, compact) = (next(), next(), next(), next());
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
                times(compact),
            );
        }
    }
}
