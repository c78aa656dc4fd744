use super::*;

fn types() -> ConditionTypes {
    ConditionTypes::new(&Settings::default()).unwrap()
}

#[test]
fn timestamps_have_second_precision() {
    let now: Timestamp = "2026-01-01T00:00:01.987Z".parse().unwrap();
    assert_eq!(timestamp(now), "2026-01-01T00:00:01Z");
}

#[test]
fn api_validation_rules() {
    for r in [
        reason::ACCEPTED,
        reason::PENDING,
        reason::INVALID_PARAMETERS,
        reason::PROGRAMMED,
        reason::INVALID,
        reason::APPLIED,
        reason::APPLY_FAILED,
        reason::APPLY_REJECTED,
        reason::APPLY_FAILING,
        reason::ROLLOUT_STALLED,
    ] {
        assert!(is_valid_reason(r), "{r}");
    }
    for bad in ["", "1abc", "a-b", "ab,", "a b"] {
        assert!(!is_valid_reason(bad), "{bad}");
    }
    let t = types();
    for ok in [ACCEPTED, PROGRAMMED, &t.configuration_applied, &t.degraded] {
        assert!(is_valid_type(ok), "{ok}");
    }
    for bad in ["", "Bad Type", "UPPER.io/X", "a/", "/x"] {
        assert!(!is_valid_type(bad), "{bad}");
    }
    let bad_domain = Settings {
        condition_domain: "Not A Domain".into(),
        ..Settings::default()
    };
    assert_eq!(
        ConditionTypes::new(&bad_domain).unwrap_err().to_string(),
        "settings: conditionDomain: \"Not A Domain\" is not a DNS subdomain (lowercase, at most 253 characters)"
    );
}

#[test]
fn condition_types_name_all_four_kinds_with_the_domain() {
    let settings = Settings {
        condition_domain: "example.com".into(),
        ..Settings::default()
    };
    let types = ConditionTypes::new(&settings).unwrap();
    let conditions: Vec<Condition> = ["Accepted", "Programmed", "example.com/Degraded"]
        .into_iter()
        .map(|type_| Condition {
            type_: type_.into(),
            status: "True".into(),
            ..Condition::default()
        })
        .collect();
    assert_eq!(
        types.type_of(ConditionKind::Degraded),
        "example.com/Degraded"
    );
    assert_eq!(
        types
            .find(&conditions, ConditionKind::Degraded)
            .map(|c| c.type_.as_str()),
        Some("example.com/Degraded")
    );
    assert_eq!(
        types
            .find(&conditions, ConditionKind::Accepted)
            .map(|c| c.type_.as_str()),
        Some("Accepted")
    );
    assert!(
        types
            .find(&conditions, ConditionKind::ConfigurationApplied)
            .is_none()
    );
    // The name part alone is not a type: it finds nothing.
    assert!(conditions.iter().all(|c| c.type_ != DEGRADED_NAME));
    for kind in ConditionKind::ALL {
        assert_eq!(types.kind_of(types.type_of(kind)), Some(kind));
        assert!(types.owns(types.type_of(kind)));
    }
    assert_eq!(types.kind_of("Degraded"), None);
    assert!(!types.owns("meridio-2.nordix.org/Degraded"));
}

#[test]
fn the_default_domain_constants_are_the_default_settings_types() {
    let types = ConditionTypes::new(&Settings::default()).unwrap();
    assert_eq!(DEFAULT_CONFIGURATION_APPLIED, types.configuration_applied);
    assert_eq!(DEFAULT_DEGRADED, types.degraded);
}

#[test]
fn a_transition_time_is_read_as_a_time_out_of_range_or_invalid() {
    assert!(matches!(
        transition_time("2026-01-01T00:00:00Z"),
        TransitionTime::At(_)
    ));
    assert_eq!(
        transition_time("9999-12-31T23:59:59Z"),
        TransitionTime::OutOfRange
    );
    assert_eq!(transition_time("yesterday"), TransitionTime::Invalid);
}

proptest::proptest! {
    /// The condition timestamp of any time is an RFC 3339 time the crate reads back, to the
    /// second.
    #[test]
    fn any_now_formats_as_a_condition_time(second in Timestamp::MIN.as_second()..=Timestamp::MAX.as_second(), nanos in 0..1_000_000_000i32) {
        let Ok(now) = Timestamp::new(second, nanos) else { return Ok(()) };
        let text = timestamp(now);
        let back: Timestamp = text.parse().unwrap();
        proptest::prop_assert_eq!(back.as_second(), now.as_second());
        proptest::prop_assert_eq!(transition_time(&text), TransitionTime::At(back));
    }
}
