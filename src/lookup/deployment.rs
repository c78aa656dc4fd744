//! The LB Deployment: its name (shortened with a hash past a label value's 63 characters),
//! its labels and annotations, and the Gateway that owns it.

use std::borrow::Cow;

use super::parents::GATEWAY_API_GROUP;
use crate::settings::Settings;
use crate::wire::Deployment;

/// The label that names the Gateway.
pub const GATEWAY_NAME_LABEL: &str = "gateway.networking.k8s.io/gateway-name";
/// The label that names the managing controller.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// The value of [`MANAGED_BY_LABEL`].
pub const MANAGED_BY: &str = "gateway-controller.meridio-2.nordix.org";

/// The most characters a label value holds: the LB Deployment name (also the `app` label's
/// value) and the [`GATEWAY_NAME_LABEL`] value are kept within it.
const MAX_LABEL_VALUE: usize = 63;

/// The LB Deployment's name, also the value of its `app` label: `deploymentPrefix + gateway
/// name` when that is at most 63 characters (a label value's limit); otherwise
/// `deploymentPrefix + CUT + "-" + H`, where CUT is the first `63 - len(deploymentPrefix) -
/// 9` characters of the Gateway name with trailing `-` and `.` removed, and H the FNV-1a
/// 32-bit hash of the Gateway name's UTF-8 bytes as 8 lowercase hexadecimal digits (the
/// hash Kubernetes uses for its generated name suffixes). With the default prefix, Gateway
/// names of up to 57 characters keep the plain form. Two long names can meet on the same
/// shortened name: ownership is decided by the controller ownerReference's uid, never by
/// the name, so that is a name collision, reported as one.
///
/// ```
/// use gateway_reconcile::{Settings, lookup};
/// let settings = Settings::default();
/// assert_eq!(lookup::deployment_name(&settings, "gw"), "sllbr-gw");
/// let long = "a".repeat(253);
/// let name = lookup::deployment_name(&settings, &long);
/// assert_eq!(name.len(), 63);
/// assert!(name.starts_with(&format!("sllbr-{}-", "a".repeat(48))));
/// ```
pub fn deployment_name(settings: &Settings, gateway_name: &str) -> String {
    let prefix = settings.deployment_prefix.as_str();
    let prefix_length = prefix.chars().count();
    if prefix_length + gateway_name.chars().count() <= MAX_LABEL_VALUE {
        return format!("{prefix}{gateway_name}");
    }
    // Settings keep the prefix within 53 characters, so at least one character is kept.
    let keep = MAX_LABEL_VALUE.saturating_sub(prefix_length + HASH_SUFFIX);
    format!(
        "{prefix}{}-{}",
        cut_trimmed(gateway_name, keep, &['-', '.']),
        name_hash(gateway_name)
    )
}

/// The value of the [`GATEWAY_NAME_LABEL`] label: the Gateway name when it is at most
/// 63 characters (a label value's limit); otherwise its first 54 characters with trailing
/// `-`, `.` and `_` removed, then `-` and the FNV-1a 32-bit hash of the name (as in
/// [`deployment_name`]). GEP-1762 asks for the name itself; no label value can hold more.
/// Everything else that names the Gateway (`MERIDIO_GATEWAY_NAME`, the ownerReference)
/// carries the full name.
///
/// ```
/// use gateway_reconcile::lookup;
/// assert_eq!(lookup::gateway_name_label("gw"), "gw");
/// let long = format!("{}-{}", "a".repeat(53), "b".repeat(199));
/// assert_eq!(lookup::gateway_name_label(&long).len(), 62);
/// assert!(lookup::gateway_name_label(&long).starts_with(&format!("{}-", "a".repeat(53))));
/// ```
pub fn gateway_name_label(gateway_name: &str) -> Cow<'_, str> {
    if gateway_name.chars().count() <= MAX_LABEL_VALUE {
        return Cow::Borrowed(gateway_name);
    }
    let keep = MAX_LABEL_VALUE - HASH_SUFFIX;
    Cow::Owned(format!(
        "{}-{}",
        cut_trimmed(gateway_name, keep, &['-', '.', '_']),
        name_hash(gateway_name)
    ))
}

/// `-` and 8 hexadecimal digits: what a shortened name ends with.
const HASH_SUFFIX: usize = 9;

/// The Deployment annotation key that records the GatewayConfiguration generation.
pub fn generation_annotation(settings: &Settings) -> String {
    format!(
        "{}/gatewayconfiguration-generation",
        settings.condition_domain
    )
}

/// The Deployment annotation key that records the GatewayConfiguration's `metadata.uid`: a
/// GatewayConfiguration deleted and recreated restarts at generation 1 with a new uid.
pub fn uid_annotation(settings: &Settings) -> String {
    format!("{}/gatewayconfiguration-uid", settings.condition_domain)
}

/// The FNV-1a 32-bit hash of `bytes` (offset basis `0x811c9dc5`, prime `0x01000193`): the
/// hash Kubernetes uses for its own generated name suffixes. Fixed by definition, unlike
/// std's hasher.
fn fnv1a_32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
    })
}

/// [`fnv1a_32`] of `text`'s UTF-8 bytes as 8 lowercase hexadecimal digits.
fn name_hash(text: &str) -> String {
    format!("{:08x}", fnv1a_32(text.as_bytes()))
}

/// The first `count` characters of `text` (all of it when shorter), with the trailing
/// characters in `trailing` removed.
fn cut_trimmed<'t>(text: &'t str, count: usize, trailing: &[char]) -> &'t str {
    let end = text
        .char_indices()
        .nth(count)
        .map_or(text.len(), |(i, _)| i);
    text[..end].trim_end_matches(trailing)
}

/// The Gateway a Deployment's controller `ownerReference` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerGateway<'a> {
    /// The Deployment's namespace (an owner is always in its dependent's namespace);
    /// `None` when the Deployment has none.
    pub namespace: Option<&'a str>,
    /// The Gateway's name.
    pub name: &'a str,
    /// The Gateway's uid, which decides ownership: a Gateway deleted and recreated under
    /// the same name does not own the old one's Deployment.
    pub uid: &'a str,
}

/// The Gateway of a Deployment: its controller `ownerReference` (`controller: true`) when
/// that names a Gateway (`apiVersion` of group [`GATEWAY_API_GROUP`], kind `Gateway`);
/// `None` otherwise. Never from the Deployment's name, which is shortened for a long
/// Gateway name ([`deployment_name`]) and may meet another Gateway's.
///
/// ```
/// use gateway_reconcile::lookup;
/// use gateway_reconcile::wire::Deployment;
/// let deployment: Deployment = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "sllbr-gw", "namespace": "red", "ownerReferences": [{
///         "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
///         "name": "gw", "uid": "u-1", "controller": true}]}
/// })).unwrap();
/// let owner = lookup::deployment_gateway(&deployment).unwrap();
/// assert_eq!((owner.namespace, owner.name, owner.uid), (Some("red"), "gw", "u-1"));
/// ```
pub fn deployment_gateway(deployment: &Deployment) -> Option<OwnerGateway<'_>> {
    let refs = deployment
        .get(&["metadata", "ownerReferences"])?
        .as_array()?;
    let controller = refs.iter().find_map(|r| {
        let r = r.as_object()?;
        (r.get("controller").and_then(|c| c.as_bool()) == Some(true)).then_some(r)
    })?;
    let text = |key: &str| controller.get(key).and_then(|v| v.as_str());
    let group = text("apiVersion")?.split_once('/').map(|(group, _)| group);
    if group != Some(GATEWAY_API_GROUP) || text("kind") != Some("Gateway") {
        return None;
    }
    Some(OwnerGateway {
        namespace: deployment.namespace(),
        name: text("name").unwrap_or(""),
        uid: text("uid").unwrap_or(""),
    })
}

#[cfg(test)]
mod tests;
