//! Heap allocations per reconcile, counted by a global allocator.
//!
//! `cargo bench --bench alloc` prints allocations and bytes allocated per steady-state
//! reconcile (plan + settle, action None) and per update-path reconcile (GatewayConfiguration
//! edited, Update planned, settled Applied), next to parsing the inputs from JSON, for the
//! realistic Gateway and for templates scaled 10× and 100×.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use common::{
    Inputs, edited, elements, parse, realistic, realistic_with, reconcile, scaled_template,
};
use gateway_reconcile::{Settings, WriteOutcome};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size as u64, Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and bytes of one run of `f` (averaged over a few runs).
fn count(mut f: impl FnMut()) -> (u64, u64) {
    const RUNS: u64 = 10;
    f();
    let (a, b) = (ALLOCATIONS.load(Relaxed), BYTES.load(Relaxed));
    for _ in 0..RUNS {
        f();
    }
    (
        (ALLOCATIONS.load(Relaxed) - a) / RUNS,
        (BYTES.load(Relaxed) - b) / RUNS,
    )
}

fn row(what: &str, (allocations, bytes): (u64, u64)) {
    println!("{what:<28} {allocations:>8} {bytes:>10}");
}

fn report(label: &str, steady: &Inputs, settings: &Settings) {
    let updated = edited(realistic_with(steady.template.clone()));
    assert!(reconcile(settings, steady, None).status.is_none());
    let json = common::to_json(steady);
    println!("{label} ({} template elements)", elements(&steady.template));
    row("  parse_inputs", count(|| drop(black_box(parse(&json)))));
    row(
        "  steady_state",
        count(|| drop(black_box(reconcile(settings, black_box(steady), None)))),
    );
    row(
        "  update_path",
        count(|| {
            let applied = Some(&WriteOutcome::Applied);
            drop(black_box(reconcile(settings, black_box(&updated), applied)))
        }),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is ignored, the run is short.
    let settings = Settings::default();
    println!("{:<28} {:>8} {:>10}", "per reconcile", "allocs", "bytes");
    report("realistic", &realistic(), &settings);
    for k in [10, 100] {
        report(
            &format!("scaled {k}x"),
            &realistic_with(scaled_template(k)),
            &settings,
        );
    }
}
