//! Instruction counts per reconcile, for `valgrind --tool=callgrind`.
//!
//! Each operation runs on the realistic Gateway, or, with the suffix `_wide`
//! (`steady_wide`, ...), on the one at the CRD's listener bound with 1,000 routes, or with
//! `_wide:L:R` on that Gateway with L listeners and R routes, or with `_admission:L:R:S:N`
//! on `common::admission`'s (L listeners selecting namespaces by S `matchLabels` entries,
//! R routes from N namespaces).
//!
//! Times on a shared machine move with its load and with the allocator's state; instruction
//! counts do not. This bench runs one of `parse`, `steady` or `update` (the operations of
//! `benches/reconcile.rs`) `N` times, and nothing when asked for `none`, so the count of one
//! operation is `(count(op, N) - count(none, 0)) / N`:
//!
//! ```sh
//! cargo bench --bench instructions --no-run        # prints the executable's path
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null EXE steady 200
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null EXE none 0
//! ```
//!
//! Run without valgrind (as `cargo bench` does) it does nothing and exits.

mod common;

use std::hint::black_box;

use common::{Sizes, admission, edited, parse, realistic, reconcile, to_json, wide, wide_with};
use gateway_reconcile::{Settings, WriteOutcome};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let op = args.get(1).map(String::as_str).unwrap_or("none");
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let settings = Settings::default();
    // `OP_wide`, or `OP_wide:L:R` for L listeners and R routes; `OP_admission:L:R:S:N`.
    let (op, input, size) = ["_wide", "_admission"]
        .into_iter()
        .find_map(|input| {
            op.split_once(input)
                .map(|(op, size)| (op, input, Some(size)))
        })
        .unwrap_or((op, "", None));
    let numbers = |size: &str| -> Vec<usize> {
        size.split(':')
            .skip(1)
            .map(|n| n.parse().unwrap())
            .collect()
    };
    let inputs = || match (input, size.map(numbers).as_deref()) {
        ("_admission", Some(&[listeners, routes, entries, namespaces])) => admission(Sizes {
            listeners,
            routes,
            entries,
            namespaces,
        }),
        ("_admission", _) => panic!("expected OP_admission:L:R:S:N"),
        (_, Some(&[listeners, routes])) => wide_with(listeners, routes),
        (_, Some(_)) => wide(),
        (_, None) => realistic(),
    };
    let (steady, edited) = (inputs(), edited(inputs()));
    let json = to_json(&steady);
    for _ in 0..n {
        match op {
            "parse" => drop(black_box(parse(black_box(&json)))),
            "steady" => drop(black_box(reconcile(&settings, black_box(&steady), None))),
            "update" => drop(black_box(reconcile(
                &settings,
                black_box(&edited),
                Some(&WriteOutcome::Applied),
            ))),
            _ => {}
        }
    }
}
