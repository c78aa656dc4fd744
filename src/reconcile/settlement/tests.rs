use super::*;
use crate::wire::Condition;

fn condition(type_: &str, generation: Option<i64>) -> Condition {
    Condition {
        type_: type_.into(),
        status: "True".into(),
        observed_generation: generation,
        last_transition_time: "2026-01-01T00:00:00Z".into(),
        reason: "R".into(),
        message: "m \"quoted\"".into(),
    }
}

fn settlement(status: GatewayStatus, addresses_owned: bool, rv: Option<&str>) -> Settlement {
    let mut settlement = Settlement::new(Some(status), Requeue::AwaitChange);
    settlement.addresses_owned = addresses_owned;
    settlement.resource_version = rv.map(str::to_owned);
    settlement
}

#[test]
fn the_patch_carries_every_condition_as_serde_writes_it() {
    let conditions = vec![
        condition("example.com/Foreign", Some(9)),
        condition("Accepted", None),
        condition("Programmed", Some(1)),
    ];
    let status = GatewayStatus {
        conditions: conditions.clone(),
        addresses: vec![GatewayAddress {
            type_: Some("IPAddress".into()),
            value: "20.0.0.1".into(),
        }],
        ..GatewayStatus::default()
    };
    let patch = settlement(status.clone(), true, Some("42"))
        .status_patch()
        .unwrap();
    assert_eq!(patch.resource_version(), Some("42"));
    let body = patch.body();
    assert_eq!(body["metadata"]["resourceVersion"], "42");
    assert_eq!(
        body["status"]["conditions"],
        serde_json::to_value(&conditions).unwrap()
    );
    assert_eq!(
        body["status"]["addresses"],
        serde_json::to_value(&status.addresses).unwrap()
    );
    // The patch, read back, is the settlement's status.
    let back: GatewayStatus = serde_json::from_value(patch.into_body()["status"].clone()).unwrap();
    assert_eq!(back, status);
}

#[test]
fn the_patch_never_removes_every_condition() {
    // Even an empty list is written as a list: a `null` would delete every condition.
    let patch = settlement(GatewayStatus::default(), false, None)
        .status_patch()
        .unwrap();
    assert_eq!(patch.body()["status"]["conditions"], serde_json::json!([]));
    assert!(patch.body()["status"].get("addresses").is_none());
    assert!(
        patch.body().get("metadata").is_none(),
        "no precondition known"
    );
    assert_eq!(patch.resource_version(), None);
}

#[test]
fn an_empty_owned_address_list_is_removed() {
    let status = GatewayStatus {
        conditions: vec![condition("Accepted", Some(1))],
        ..GatewayStatus::default()
    };
    let patch = settlement(status, true, Some("7")).status_patch().unwrap();
    assert!(patch.body()["status"]["addresses"].is_null());
    assert_eq!(patch.body()["status"]["conditions"][0]["type"], "Accepted");
}

#[test]
fn no_status_no_patch() {
    let mut s = settlement(GatewayStatus::default(), true, Some("1"));
    s.status = None;
    assert_eq!(s.status_patch(), None);
}
