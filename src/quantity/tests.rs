//! Unit tests of `quantity`.

use super::*;
use proptest::prelude::*;

fn q(s: &str) -> Quantity {
    s.parse()
        .unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
}

#[test]
fn equal_by_value() {
    let equal = [
        ("0.5", "500m"),
        ("1Gi", "1024Mi"),
        ("1e3", "1k"),
        ("1E3", "1k"),
        ("1000m", "1"),
        ("1.5Gi", "1536Mi"),
        ("1Ki", "1024"),
        ("0", "-0"),
        ("0", "0Gi"),
        ("0.000", "0n"),
        ("1E", "1e18"),
        ("100m", "0.1"),
        ("0.000000001", "1n"),
        ("1.5E-2", "15m"),
        ("+2", "2"),
        (".5", "0.5"),
        ("5.", "5"),
        ("0010", "10"),
        ("1e+3", "1000"),
        ("-1.5k", "-1500"),
        ("1Ei", "1152921504606846976"),
        // Finer than a nano: rounded up, as the API server stores it.
        ("0.1n", "1n"),
        ("13.1583330000000000000000000000000001", "13158333001n"),
        ("-1.5n", "-2n"),
    ];
    for (a, b) in equal {
        assert_eq!(q(a), q(b), "{a} == {b}");
    }
}

#[test]
fn unequal_by_value() {
    let unequal = [
        ("1", "1001m"),
        ("1Gi", "1G"),
        ("1Ki", "1k"),
        ("-1", "1"),
        ("2n", "1n"),
        ("1m", "1M"),
    ];
    for (a, b) in unequal {
        assert_ne!(q(a), q(b), "{a} != {b}");
    }
}

#[test]
fn canonical_forms() {
    let table = [
        ("0.5", "500m"),
        ("1024Mi", "1Gi"),
        ("1536Mi", "1536Mi"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("0.1", "100m"),
        ("2000m", "2"),
        ("1e3", "1k"),
        ("1.5E-2", "15m"),
        ("100Mi", "100Mi"),
        ("0.5Gi", "512Mi"),
        ("1Ki", "1Ki"),
        ("0.5Ki", "512"),
        ("1.5Ki", "1536"),
        ("-2048Ki", "-2Mi"),
        ("1n", "1n"),
        ("0.1n", "1n"),
        ("1.5n", "2n"),
        ("-1.5n", "-2n"),
        ("1e-10", "1n"),
        ("0.9999999999", "1"),
        ("-0.5", "-500m"),
        ("+1", "1"),
        ("0", "0"),
        ("-0", "0"),
        ("0Gi", "0"),
        ("1E", "1E"),
        ("1000E", "1000E"),
        ("1e21", "1000E"),
        ("12345", "12345"),
        ("1.000", "1"),
        (".5", "500m"),
        ("5.", "5"),
        ("1Ei", "1Ei"),
        ("1024Ei", "1024Ei"),
        ("1000000", "1M"),
        ("1100m", "1100m"),
        ("0.000001", "1u"),
        ("100u", "100u"),
        ("250m", "250m"),
        ("4G", "4G"),
        ("1e100", "1e100"),
    ];
    for (input, want) in table {
        assert_eq!(q(input).canonical(), want, "canonical of {input}");
        assert_eq!(q(input).to_string(), want, "display of {input}");
    }
}

#[test]
fn malformed() {
    let long_digits = "9".repeat(41);
    let long_zeros = format!("1{}", "0".repeat(1_000_000));
    let table = [
        "",
        "+",
        "-",
        ".",
        "+.",
        "1.2.3",
        "1K",
        "1Mi3",
        "abc",
        "1 ",
        " 1",
        "1e",
        "1e+",
        "1ee3",
        "1.5.Gi",
        "Gi",
        "1e101",
        "1e-200",
        "1gi",
        "--1",
        "1i",
        "1e3.5",
        "1.e",
        "1e99999999999999999999",
        "0x10",
        "1,5",
        "١",
    ];
    for input in table
        .iter()
        .copied()
        .chain([long_digits.as_str(), long_zeros.as_str()])
    {
        let err = input.parse::<Quantity>().expect_err(input);
        if input.len() <= MAX_ERROR_INPUT {
            assert_eq!(err.to_string(), format!("invalid quantity {input:?}"));
        }
    }
}

#[test]
fn overflow_is_an_error_not_a_panic() {
    // 38 nines fit an i128; times 1024^6 they do not.
    let big = "9".repeat(38);
    assert!(big.parse::<Quantity>().is_ok());
    assert!(format!("{big}Ei").parse::<Quantity>().is_err());
    assert!("9".repeat(40).parse::<Quantity>().is_err());
}

#[test]
fn long_input_error_is_truncated() {
    let input = "x".repeat(10_000);
    let err = input.parse::<Quantity>().expect_err("malformed");
    assert_eq!(err.0, format!("{}...", "x".repeat(MAX_ERROR_INPUT)));
    // A multi-byte character across the cut is not split.
    let input = format!("{}é{}", "x".repeat(MAX_ERROR_INPUT - 1), "y".repeat(100));
    let err = input.parse::<Quantity>().expect_err("malformed");
    assert_eq!(err.0, format!("{}...", "x".repeat(MAX_ERROR_INPUT - 1)));
}

fn quantity_text() -> impl Strategy<Value = String> {
    let suffix = prop::sample::select(vec![
        "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e3",
        "e-2", "E+5", "e0",
    ]);
    (
        prop::sample::select(vec!["", "+", "-"]),
        0u64..100_000,
        prop::option::of(0u32..10_000),
        suffix,
    )
        .prop_map(|(sign, int, frac, suffix)| match frac {
            // A fraction of a nano or micro would be finer than a nano: rounded.
            Some(f) if suffix != "n" && suffix != "u" => format!("{sign}{int}.{f}{suffix}"),
            _ => format!("{sign}{int}{suffix}"),
        })
}

proptest! {
    #[test]
    fn parse_never_panics(s in "\\PC{0,40}") {
        let _ = s.parse::<Quantity>();
    }

    #[test]
    fn canonical_keeps_the_value(s in quantity_text()) {
        let parsed = q(&s);
        let canonical = parsed.canonical();
        let again = q(&canonical);
        // Nothing in this generator is finer than a nano, so no rounding happens.
        prop_assert_eq!(again, parsed, "{} -> {}", s, canonical);
        prop_assert_eq!(again.canonical(), canonical);
    }
}

#[test]
fn quantities_compare_by_value() {
    let half: Quantity = "0.5".parse().unwrap();
    assert_eq!(half, "500m".parse().unwrap());
    assert_eq!(half.canonical(), "500m");
    let gib: Quantity = "1024Mi".parse().unwrap();
    assert_eq!(gib, "1Gi".parse().unwrap());
    assert_eq!(gib.canonical(), "1Gi");
}

#[test]
fn rounded_up_to_milli_as_defaulting_stores_it() {
    let q = |s: &str| s.parse::<Quantity>().unwrap();
    assert_eq!(q("100u").rounded_up_to_milli(), q("1m"));
    assert_eq!(q("1500u").rounded_up_to_milli().canonical(), "2m");
    assert_eq!(q("1Gi").rounded_up_to_milli(), q("1Gi"));
}

#[test]
fn canonical_spellings() {
    let canonical = |s: &str| s.parse::<Quantity>().unwrap().canonical();
    assert_eq!(canonical("1536Mi"), "1536Mi");
    assert_eq!(canonical("0.1"), "100m");
    assert_eq!(canonical("1e3"), "1k");
}
