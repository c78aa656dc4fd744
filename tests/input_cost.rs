//! What a scenario costs, counted, not timed (issue #45): the bytes allocated and the peak
//! of bytes live while the library reads and runs one, on the test's own thread, by a
//! counting global allocator (in a test binary of its own, so that it wraps nothing else).

// ---- issue #45: cost follows the input (allocations counted, not time) ----------------------

/// A global allocator counting, per thread, the bytes allocated and the peak of the bytes
/// live: what one scenario costs on the test's own thread, whatever the other tests do.
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static BYTES: Cell<u64> = const { Cell::new(0) };
        static LIVE: Cell<i64> = const { Cell::new(0) };
        static PEAK: Cell<i64> = const { Cell::new(0) };
    }

    pub struct Counting;

    fn note(live: i64, allocated: u64) {
        // `try_with`: nothing is counted while the thread's locals are being destroyed.
        let _ = BYTES.try_with(|b| b.set(b.get() + allocated));
        let _ = LIVE.try_with(|l| {
            let now = l.get() + live;
            l.set(now);
            let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
        });
    }

    // SAFETY: every call is forwarded unchanged to the system allocator; only this
    // thread's counters are added to (const-initialized, so counting never allocates).
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            note(layout.size() as i64, layout.size() as u64);
            unsafe { System.alloc(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            note(-(layout.size() as i64), 0);
            unsafe { System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            note(new_size as i64 - layout.size() as i64, new_size as u64);
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    /// Bytes allocated, and the most bytes live at once above those live before, while
    /// `f` runs on this thread.
    pub fn measure(f: impl FnOnce()) -> (u64, u64) {
        let bytes = BYTES.with(Cell::get);
        let live = LIVE.with(Cell::get);
        PEAK.with(|p| p.set(live));
        f();
        (
            BYTES.with(Cell::get) - bytes,
            u64::try_from(PEAK.with(Cell::get) - live).unwrap_or(0),
        )
    }
}

#[global_allocator]
static COUNTING: counting::Counting = counting::Counting;

/// Reads and runs a scenario through the library, as `simulate` does: the bytes allocated
/// and the peak of bytes live. Every expectation must hold.
fn scenario_cost(text: &str) -> (u64, u64) {
    let mut passed = None;
    let cost = counting::measure(|| {
        let scenario = gateway_reconcile::sim::scenario::Scenario::from_json(text).unwrap();
        passed = Some(scenario.into_report().failures.len());
    });
    assert_eq!(passed, Some(0), "every expectation holds");
    cost
}

/// The bytes each step past the first `steps` allocates, `scenario(n)` being the scenario
/// of `n` steps: the cost of `2 * steps` less that of `steps`, a step.
fn per_step(scenario: impl Fn(usize) -> String, steps: usize) -> u64 {
    let (some, _) = scenario_cost(&scenario(steps));
    let (more, _) = scenario_cost(&scenario(2 * steps));
    more.saturating_sub(some) / steps as u64
}

/// Fails unless a step over the larger input (`what` at `sizes.1`) costs less than `bound`
/// times one over the smaller (`sizes.0`).
fn grows_less_than(bound: f64, what: &str, sizes: (&str, &str), (small, large): (u64, u64)) {
    println!(
        "{what} allocates {large} bytes over {}, {small} over {} ({:.2} times)",
        sizes.1,
        sizes.0,
        large as f64 / small as f64
    );
    assert!(
        (large as f64) < bound * small as f64,
        "{what} costs {large} bytes over {}, {small} over {}",
        sizes.1,
        sizes.0
    );
}

/// [`scenario_cost`]'s peak for a scenario whose expectations may fail (its size is what
/// counts), or that the reader refuses (the peak of reading it, and the error).
fn scenario_peak(text: &str) -> (u64, Option<String>) {
    let mut refused = None;
    let (_, peak) = counting::measure(
        || match gateway_reconcile::sim::scenario::Scenario::from_json(text) {
            Ok(scenario) => drop(scenario.into_report()),
            Err(e) => refused = Some(e.to_string()),
        },
    );
    (peak, refused)
}

/// A scenario as JSON: a class, a Gateway with `listeners` listeners, a configuration, the
/// `namespaces` given, and `steps`.
fn costed(listeners: usize, namespaces: usize, steps: &[serde_json::Value]) -> String {
    use serde_json::json;
    let listeners: Vec<_> = (0..listeners)
        .map(|i| {
            json!({"name": format!("listener-{i}"), "port": 1000 + i, "protocol": "TCP",
                "allowedRoutes": {"namespaces": {"from": "Selector",
                    "selector": {"matchLabels": {"team": "blue"}}}}})
        })
        .collect();
    let namespaces: serde_json::Map<String, serde_json::Value> = (0..namespaces)
        .map(|i| {
            (
                format!("namespace-{i}"),
                json!({"team": if i % 2 == 0 { "blue" } else { "red" }}),
            )
        })
        .collect();
    json!({
        "now": "2026-01-01T00:00:00Z",
        "objects": {
            "gatewayClass": {"metadata": {"name": "meridio"},
                "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"}},
            "gateway": {"metadata": {"name": "gw", "namespace": "red", "uid": "u", "generation": 1},
                "spec": {"gatewayClassName": "meridio", "listeners": listeners,
                    "infrastructure": {"parametersRef": {"group": "meridio-2.nordix.org",
                        "kind": "GatewayConfiguration", "name": "gwconf"}}}},
            "configuration": {"metadata": {"name": "gwconf", "namespace": "red", "generation": 1},
                "spec": {"networkAttachments": [{"type": "NAD", "nad": {"name": "v", "namespace": "red",
                    "interface": "ext-vlan0"}}],
                    "internalSubnets": [{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}]}},
            "namespaces": namespaces
        },
        "steps": steps
    })
    .to_string()
}

/// `count` patches of one annotation each on `kind`.
fn annotation_patches(kind: &str, count: usize) -> Vec<serde_json::Value> {
    (0..count)
        .map(|i| serde_json::json!({"patch": {kind: {"metadata": {"annotations": {format!("a{i}"): "v"}}}}}))
        .collect()
}

/// H2: a `patch` step costs its own size. Twice the steps cost twice (not four times, as
/// when each step read the object its predecessors grew whole), and a step on an object
/// four times larger costs no more (not four times, as when each step copied and read the
/// object whole, before the run and in it).
#[test]
fn h2_a_patch_step_costs_its_own_size() {
    let (n, _) = scenario_cost(&costed(1, 0, &annotation_patches("configuration", 1500)));
    let (twice, _) = scenario_cost(&costed(1, 0, &annotation_patches("configuration", 3000)));
    let ratio = twice as f64 / n as f64;
    println!("3,000 patch steps allocate {ratio:.2} times what 1,500 do");
    assert!(
        ratio < 2.6,
        "3,000 patches cost {ratio:.2} times 1,500 ({n} bytes)"
    );

    // The bytes each patch past the 300th costs (the first copies the object, once), on a
    // Gateway of 2,000 and of 8,000 labels or annotations (no reconcile: it is only stored
    // and patched; its listeners are bounded at 64 by its CRD, its maps are not). The
    // annotations are the map each patch grows by one key: held as one exact slice, each
    // insert would copy it whole.
    for map in ["labels", "annotations"] {
        let per_patch = |entries: usize| {
            let scenario = |patches: usize| {
                let mut file: serde_json::Value =
                    serde_json::from_str(&costed(1, 0, &annotation_patches("gateway", patches)))
                        .unwrap();
                file["objects"]["gateway"]["metadata"][map] = (0..entries)
                    .map(|i| (format!("key-{i}"), serde_json::json!("v")))
                    .collect();
                file.to_string()
            };
            per_step(scenario, 300)
        };
        grows_less_than(
            1.5,
            "a patch step",
            (&format!("2,000 {map}"), &format!("8,000 {map}")),
            (per_patch(2000), per_patch(8000)),
        );
    }
}

/// H3: a `reconcile` step reads what the Gateway's snapshot needs: with no route, the
/// namespaces' labels are not read, and a reconcile over 8,000 namespaces costs what one
/// over 2,000 does.
#[test]
fn h3_a_reconcile_step_reads_what_its_snapshot_needs() {
    let reconciles: Vec<_> = (0..100)
        .map(|_| serde_json::json!({"reconcile": {}}))
        .collect();
    let per_reconcile =
        |namespaces: usize| per_step(|n| costed(1, namespaces, &reconciles[..n]), 50);
    grows_less_than(
        1.3,
        "a reconcile step",
        ("2,000 namespaces", "8,000 namespaces"),
        (per_reconcile(2000), per_reconcile(8000)),
    );
}

/// M1: what a scenario holds at its peak stays within ten times its text plus 20 MiB: 100,000
/// namespaces (once held as a map of maps, about 80 times their text), 1,000 steps each
/// expecting a large Deployment, 9,999 one-annotation `patch` steps and 5,000 `unreadable`
/// steps (each step and its patch once held as JSON values, about 50 times their text),
/// 2,500 reconciles over 5,000 namespaces, a Gateway of 50,000 listeners (once held as
/// JSON values beside a typed read, 11 times its text; now refused while it is read, past
/// the CRD's 64), and single large values of several MB: a `template` patch, a failed
/// write's message, a failed write's `details` (once read as a JSON value, 11 times its
/// text), a GatewayClass's conditions (once held as JSON values, 10.9 times their text; now
/// refused while they are read, past the CRD's 8), a `mutateWrites` patch and an
/// `expect.deployment`. `--nocapture` shows each ratio.
#[test]
fn m1_memory_within_ten_times_the_input() {
    use serde_json::json;
    let gateway = json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u", "generation": 1},
        "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP",
            "allowedRoutes": {"namespaces": {"from": "Selector", "selector": {"matchLabels": {"t": "b"}}}}}]}});
    let configuration =
        json!({"metadata": {"name": "gwconf", "namespace": "red", "generation": 1}});
    let namespaces = |count: usize| -> serde_json::Map<String, serde_json::Value> {
        (0..count)
            .map(|i| {
                (
                    format!("n{i}"),
                    json!({"t": if i % 2 == 0 { "b" } else { "r" }}),
                )
            })
            .collect()
    };
    let reconciles = |count: usize| vec![json!({"reconcile": {}}); count];
    let unreadable: Vec<_> = (0..5000)
        .map(|i| json!({"unreadable": {"configuration": {"metadata": {"annotations": {format!("a{i}"): "v"}}}}}))
        .collect();
    let listeners: Vec<_> = (0..50_000)
        .map(|i| json!({"name": format!("listener-{i}"), "port": 1 + i % 65535, "protocol": "TCP", "hostname": "x.example.com"}))
        .collect();
    let many = json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u", "generation": 1},
        "spec": {"gatewayClassName": "meridio", "listeners": listeners}});
    let deployment = json!({"metadata": {"labels": (0..250).map(|i| (format!("l{i}"), json!("v".repeat(40)))).collect::<serde_json::Map<_, _>>()}});
    // Large values a person may put in one place (each several MB, where ten times the
    // text, not the 20 MiB, is the bound): a `template` patch, a failed write's message and
    // `details`, a class's conditions, a `mutateWrites` patch, an `expect.deployment`.
    let big = |count: usize| -> serde_json::Map<String, serde_json::Value> {
        (0..count)
            .map(|i| (format!("annotation-{i}"), json!("v".repeat(40))))
            .collect()
    };
    let class_conditions: Vec<_> = (0..40_000)
        .map(|i| json!({"type": format!("Foreign{i}"), "status": "True", "reason": "Other",
            "message": "another controller's condition", "lastTransitionTime": "2026-01-01T00:00:00Z"}))
        .collect();
    let class = json!({"metadata": {"name": "meridio"},
        "spec": {"controllerName": "meridio-2.nordix.org/gateway-controller"},
        "status": {"conditions": class_conditions}});
    let causes: Vec<_> = (0..50_000)
        .map(|i| json!({"reason": "FieldValueInvalid", "message": "Invalid value", "field": format!("spec.f{i}")}))
        .collect();
    // Each input, and the start of the error the reader refuses it with (None: it runs).
    let inputs = [
        (
            "50,000 listeners",
            json!({"objects": {"gateway": many}, "steps": reconciles(1)}),
            Some(
                r#"line 1: "objects.gateway.spec.listeners": must have at most 64 items (has 50000)"#,
            ),
        ),
        (
            "1,000 expect.deployment",
            json!({"objects": {"gateway": gateway},
                "steps": vec![json!({"reconcile": {}, "expect": {"deployment": deployment}}); 1000]}),
            None,
        ),
        (
            "100,000 namespaces",
            json!({"objects": {"gateway": gateway, "namespaces": namespaces(100_000)},
                "steps": reconciles(1)}),
            None,
        ),
        (
            "9,999 patch steps",
            json!({"objects": {"gateway": gateway, "configuration": configuration},
                "steps": annotation_patches("configuration", 9999)}),
            None,
        ),
        (
            "5,000 unreadable steps",
            json!({"objects": {"gateway": gateway, "configuration": configuration},
                "steps": unreadable}),
            None,
        ),
        (
            "2,500 reconciles over 5,000 namespaces",
            json!({"objects": {"gateway": gateway, "namespaces": namespaces(5000)},
                "steps": reconciles(2500)}),
            None,
        ),
        (
            "a template patch of 80,000 annotations",
            json!({"objects": {"gateway": gateway},
                "steps": [{"patch": {"template": {"metadata": {"annotations": big(80_000)}}}},
                    {"reconcile": {}}]}),
            None,
        ),
        (
            "5,000 one-annotation patches of a template of 400,000 annotations",
            json!({"objects": {"gateway": gateway, "template": {"metadata": {"annotations": big(400_000)},
                    "spec": {"template": {"spec": {"containers": []}}}}},
                "steps": (0..5000)
                    .map(|i| json!({"patch": {"template": {"metadata": {"annotations": {format!("a{i}"): "v"}}}}}))
                    .collect::<Vec<_>>()}),
            None,
        ),
        (
            "a failed write's message of 5 MB",
            json!({"objects": {"gateway": gateway},
                "steps": [{"failWrites": {"count": 1, "error": {"code": 503,
                    "reason": "ServiceUnavailable", "message": "m".repeat(5 << 20)}}},
                    {"reconcile": {}}]}),
            None,
        ),
        (
            "a failed write's details of 50,000 causes",
            json!({"objects": {"gateway": gateway},
                "steps": [{"failWrites": {"count": 1, "error": {"kind": "Status", "apiVersion": "v1",
                    "status": "Failure", "code": 422, "reason": "Invalid", "message": "invalid",
                    "details": {"name": "gw", "kind": "deployments", "causes": causes}}}},
                    {"reconcile": {}}]}),
            None,
        ),
        (
            "a GatewayClass of 40,000 conditions",
            json!({"objects": {"gateway": gateway, "gatewayClass": class}, "steps": reconciles(1)}),
            Some(
                r#"line 1: "objects.gatewayClass.status.conditions": must have at most 8 items (has 40000)"#,
            ),
        ),
        (
            "a mutateWrites patch of 80,000 annotations",
            json!({"objects": {"gateway": gateway},
                "steps": [{"mutateWrites": {"patch": {"metadata": {"annotations": big(80_000)}}}},
                    {"reconcile": {}}]}),
            None,
        ),
        (
            "an expect.deployment of 80,000 annotations",
            json!({"objects": {"gateway": gateway},
                "steps": [{"reconcile": {}, "expect": {"deployment": {"metadata": {"annotations": big(80_000)}}}}]}),
            None,
        ),
    ];
    within_ten_times_the_input(inputs);
}

/// Reads and runs each input (named, with the start of the error the reader refuses it
/// with, `None`: it runs) and prints its peak; fails, once every input is measured, when
/// one peaks over ten times its text plus 20 MiB, or is refused otherwise than said.
fn within_ten_times_the_input(
    inputs: impl IntoIterator<Item = (&'static str, serde_json::Value, Option<&'static str>)>,
) {
    let mut over = Vec::new();
    for (what, input, refused) in inputs {
        let text = input.to_string();
        let (peak, error) = scenario_peak(&text);
        let bound = 10 * text.len() as u64 + (20 << 20);
        println!(
            "{what}: {} bytes of text, {peak} bytes at the peak ({:.1} times)",
            text.len(),
            peak as f64 / text.len() as f64
        );
        match (refused, error) {
            (None, None) => {}
            (Some(want), Some(error)) => assert!(error.starts_with(want), "{what}: {error}"),
            (want, error) => panic!("{what}: expected the error {want:?}, got {error:?}"),
        }
        if peak > bound {
            over.push(format!(
                "{what}: {peak} bytes at the peak, over {bound} ({} bytes of text)",
                text.len()
            ));
        }
    }
    assert!(
        over.is_empty(),
        "over ten times the text plus 20 MiB: {over:#?}"
    );
}

/// M1: a GatewayConfiguration with a long list (50,000 `verticalScaling` containers, 3.3 MB)
/// stays within the bound: the reader and the simulated cluster hold it as a compact tree
/// (as a `serde_json::Value`, where each container's small objects are a B-tree node each,
/// it peaked at 32.6 times its text).
#[test]
fn m1_memory_of_a_long_configuration_within_ten_times_the_input() {
    use serde_json::json;
    let gateway = json!({"metadata": {"name": "gw", "namespace": "red", "uid": "u", "generation": 1},
        "spec": {"gatewayClassName": "meridio", "listeners": [{"name": "tcp", "port": 4000, "protocol": "TCP"}]}});
    let containers: Vec<_> = (0..50_000)
        .map(|i| json!({"name": format!("container-{i}"), "resources": {"requests": {"cpu": "100m"}}}))
        .collect();
    let configuration = json!({"metadata": {"name": "gwconf", "namespace": "red", "generation": 1},
        "spec": {"verticalScaling": {"containers": containers}}});
    within_ten_times_the_input([(
        "a configuration of 50,000 verticalScaling containers",
        json!({"objects": {"gateway": gateway, "configuration": configuration},
            "steps": [{"reconcile": {}}]}),
        None,
    )]);
}

/// H3: a `reconcile` step hands the driver the stored template, not a copy of it: what a
/// reconcile allocates does not grow with a part of the template the render never reads
/// (its `status`, 1,000 against 4,000 entries).
#[test]
fn h3_a_reconcile_step_does_not_copy_the_template() {
    use serde_json::json;
    let per_reconcile = |entries: usize| {
        let scenario = |reconciles: usize| {
            let mut file: serde_json::Value =
                serde_json::from_str(&costed(1, 0, &vec![json!({"reconcile": {}}); reconciles]))
                    .unwrap();
            let mut template =
                serde_json::to_value(gateway_reconcile::template::default_template()).unwrap();
            template["status"] =
                json!({"entries": (0..entries).map(|i| format!("entry-{i}")).collect::<Vec<_>>()});
            file["objects"]["template"] = template;
            file.to_string()
        };
        per_step(scenario, 20)
    };
    grows_less_than(
        1.1,
        "a reconcile step",
        (
            "a template of 1,000 status entries",
            "a template of 4,000 status entries",
        ),
        (per_reconcile(1000), per_reconcile(4000)),
    );
}
