//! A fleet of 10,000 Gateways in steady state through the simulated cluster, one thread:
//! reconciles per second and peak memory. `cargo bench --bench fleet` (set `FLEET_SIZE` for
//! another size). Each Gateway has its own simulated API server, as a controller would see
//! many independent objects; the figure includes the simulator's own cost of building each
//! snapshot from stored JSON, so it is a lower bound for the crate alone.

use std::time::{Duration, Instant};

use gateway_reconcile::Settings;
use gateway_reconcile::sim::cluster::{Cluster, Objects, RolloutState};
use serde_json::json;

fn objects(i: usize) -> Objects {
    let name = format!("gw-{i}");
    Objects {
        gateway_class: Some(json!({"metadata": {"name": "meridio"},
                                   "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}}).into()),
        gateway: json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{i}"), "generation": 1},
            "spec": {"gatewayClassName": "meridio",
                "listeners": [{"name": "all", "port": 4000, "protocol": "TCP"}],
                "infrastructure": {"parametersRef": {
                "group": "meridio-2.nordix.org", "kind": "GatewayConfiguration", "name": "conf"}}}
        }).into(),
        configuration: Some(json!({
            "metadata": {"name": "conf", "namespace": "ns", "generation": 3},
            "spec": {
                "networkAttachments": [{"type": "NAD", "nad": {"name": "vlan-100", "interface": "net1"}},
                                       {"type": "NAD", "nad": {"name": "vlan-200", "interface": "net2"}}],
                "internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"},
                                    {"attachmentType": "NAD", "cidr": "fd00:100::/64"}],
                "horizontalScaling": {"replicas": 2, "enforceReplicas": true}
            }
        }).into()),
        deployment: None,
        template: None,
        routes: (0..5)
            .map(|r| json!({"metadata": {"name": format!("r{r}"), "namespace": "ns"},
                            "spec": {"parentRefs": [{"name": name}], "destinationCIDRs": [format!("20.0.{r}.1/32")]}}))
            .map(|r| serde_json::from_value(r).unwrap())
            .collect(),
        namespaces: Default::default(),
    }
}

/// Peak resident memory of this process, from the kernel (Linux only).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    // `cargo test --all-targets` runs benches once in test mode: keep that quick.
    let quick = std::env::args().all(|a| a != "--bench");
    let size: usize = std::env::var("FLEET_SIZE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 100 } else { 10_000 });
    let t0 = "2026-01-01T00:00:00Z".parse().unwrap();
    let mut fleet: Vec<Cluster> = (0..size)
        .map(|i| {
            let mut c = Cluster::new(Settings::default(), t0, objects(i)).expect("cluster");
            c.reconcile().expect("create");
            c.rollout(RolloutState::Complete).expect("rollout");
            c.reconcile().expect("settle");
            c
        })
        .collect();
    let writes: u64 = fleet
        .iter()
        .map(|c| c.deployment_writes() + c.status_writes())
        .sum();
    let rounds = if quick { 1 } else { 5 };
    let start = Instant::now();
    for _ in 0..rounds {
        for c in &mut fleet {
            c.advance(Duration::from_secs(30)).expect("advance");
            c.reconcile().expect("reconcile");
        }
    }
    let elapsed = start.elapsed();
    let after: u64 = fleet
        .iter()
        .map(|c| c.deployment_writes() + c.status_writes())
        .sum();
    assert_eq!(after, writes, "steady state writes nothing");
    let reconciles = (size * rounds) as f64;
    println!(
        "fleet: {size} Gateways, {} steady-state reconciles in {:.2?}: {:.0} reconciles/s, peak RSS {} MiB",
        size * rounds,
        elapsed,
        reconciles / elapsed.as_secs_f64(),
        peak_rss_kib().map_or_else(|| "unknown".to_owned(), |k| (k / 1024).to_string()),
    );
}
