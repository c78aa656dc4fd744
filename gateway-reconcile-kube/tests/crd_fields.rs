//! No CRD field is dropped silently: the controller caches GatewayConfigurations and
//! L34Routes as the core's wire types, which read only what the core uses. Every field of
//! the CRDs the controller installs (`e2e/crds/`) is either read by the core's type (it
//! survives a read and a write back) or listed here as deliberately ignored. A field added
//! to a CRD and forgotten in the core fails this test, and so does an entry below that the
//! core has started to read.

use std::collections::BTreeSet;

use gateway_reconcile::wire;
use serde_json::{Value, json};

/// `spec` fields of the GatewayConfiguration CRD the core does not read: none.
const CONFIGURATION_IGNORED: &[&str] = &[];

/// `spec` fields of the L34Route CRD the core does not read: it gives the Gateway the
/// addresses of the routes attached to it, and only `parentRefs` (which Gateway, and with
/// `sectionName` which listener must admit it) and `destinationCIDRs` (which address) say
/// that; the traffic match is the LB's business.
const ROUTE_IGNORED: &[&str] = &[
    "spec.backendRefs[].group",
    "spec.backendRefs[].kind",
    "spec.backendRefs[].name",
    "spec.backendRefs[].namespace",
    "spec.backendRefs[].port",
    "spec.backendRefs[].weight",
    "spec.byteMatches[]",
    "spec.destinationPorts[]",
    "spec.parentRefs[].port",
    "spec.priority",
    "spec.protocols[]",
    "spec.sourceCIDRs[]",
    "spec.sourcePorts[]",
];

/// The CRD's stored version's schema.
fn schema(file: &str) -> Value {
    let path = format!("{}/../e2e/crds/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let crd: Value = serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let versions = crd["spec"]["versions"].as_array().expect("versions");
    let stored = versions
        .iter()
        .find(|v| v["storage"] == json!(true))
        .expect("a stored version");
    stored["schema"]["openAPIV3Schema"].clone()
}

/// A value for every field the schema allows (one item per list, one entry per map).
fn sample(schema: &Value) -> Value {
    if schema["x-kubernetes-int-or-string"] == json!(true) {
        return json!("1");
    }
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match schema["type"].as_str() {
        Some("object") => match schema["properties"].as_object() {
            Some(properties) => Value::Object(
                properties
                    .iter()
                    .map(|(name, field)| (name.clone(), sample(field)))
                    .collect(),
            ),
            None if schema["additionalProperties"].is_object() => {
                json!({ "key": sample(&schema["additionalProperties"]) })
            }
            None => json!({}),
        },
        Some("array") => json!([sample(&schema["items"])]),
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(true),
        _ => json!("x"),
    }
}

/// The paths of a value's leaves (`[]` for a list's items).
fn leaves(value: &Value, path: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(fields) if !fields.is_empty() => {
            for (name, field) in fields {
                leaves(field, &format!("{path}.{name}"), out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                leaves(item, &format!("{path}[]"), out);
            }
        }
        _ => {
            out.insert(path.to_owned());
        }
    }
}

/// The `spec` paths the core's type `T` drops from an object holding every CRD field.
fn dropped<T: serde::de::DeserializeOwned + serde::Serialize>(file: &str) -> BTreeSet<String> {
    let spec = sample(&schema(file)["properties"]["spec"]);
    let read: T = serde_json::from_value(json!({
        "metadata": {"name": "n", "namespace": "ns"}, "spec": spec
    }))
    .unwrap_or_else(|e| panic!("{file}: the core's type refuses a valid object: {e}"));
    let back = serde_json::to_value(&read).expect("json");
    let (mut all, mut kept) = (BTreeSet::new(), BTreeSet::new());
    leaves(&spec, "spec", &mut all);
    leaves(&back["spec"], "spec", &mut kept);
    all.difference(&kept).cloned().collect()
}

fn listed(ignored: &[&str]) -> BTreeSet<String> {
    ignored.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn every_gateway_configuration_field_is_read_or_listed_as_ignored() {
    assert_eq!(
        dropped::<wire::GatewayConfiguration>("meridio-2.nordix.org_gatewayconfigurations.yaml"),
        listed(CONFIGURATION_IGNORED)
    );
}

#[test]
fn every_l34route_field_is_read_or_listed_as_ignored() {
    assert_eq!(
        dropped::<wire::L34Route>("meridio-2.nordix.org_l34routes.yaml"),
        listed(ROUTE_IGNORED)
    );
}
