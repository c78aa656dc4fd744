//! The write record: what a controller keeps of its last successful Deployment write, so
//! that what the API server itself changed in that write is not fought.
//!
//! Mutating admission (a webhook or policy that rewrites `image` to a mirror registry,
//! injects a toleration, an env var or a sidecar) can change the LB Deployment inside the
//! very write the crate asked for. By the drift rules the stored object then differs from
//! the desired one after every write, and a controller that enforces drift would write on
//! every reconcile, forever. The record breaks that loop: while the Deployment's
//! `metadata.generation` is still the one the write left and the crate still wants the same
//! object, the drift left is the server's own doing, and nothing is written.
//!
//! The record lives in the caller's memory, one per Gateway: a restarted controller has
//! none, writes once more, and learns again (at most one extra write per Gateway per
//! restart). Anyone else's later edit of the Deployment's spec or annotations moves its
//! generation, and a new desired object moves the fingerprint: both are enforced as before.
//!
//! The record also holds a fingerprint of the drifted paths the server left at the write
//! ([`WriteRecord::changed`]), and the drift is held back only while it is that same set. An
//! edit that moves no generation (apps/v1 does not count a `metadata.labels` edit) would
//! otherwise hide behind the record: a label someone removed would stay removed, although
//! a change to an owned field is always drift. With it, such an edit is reverted at once.

use std::io;

use serde::{Deserialize, Serialize};

use crate::wire::Deployment;
use crate::wire::tree::Value;

/// What the caller keeps of its last successful write of a Gateway's LB Deployment
/// ([`Settlement::write_record`](crate::Settlement::write_record)), and hands back to the
/// next [`plan`](crate::plan) of that Gateway
/// ([`Snapshot::with_write_record`](crate::Snapshot::with_write_record)).
///
/// ```
/// use gateway_reconcile::WriteRecord;
/// let record = WriteRecord { generation: 4, fingerprint: 0x1234, changed: 7 };
/// let json = serde_json::to_string(&record).unwrap();
/// assert_eq!(json, r#"{"generation":4,"fingerprint":4660,"changed":7}"#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WriteRecord {
    /// The stored Deployment's `metadata.generation` right after the write.
    pub generation: i64,
    /// The fingerprint of the desired object that was written: of its owned parts as a
    /// create renders them, from the crate's inputs alone.
    pub fingerprint: u64,
    /// The fingerprint of the drifted paths the API server left in the stored object (the
    /// same hash over the sorted paths).
    pub changed: u64,
}

impl WriteRecord {
    /// Whether the record accounts for this drift of the observed Deployment: it still has
    /// the generation the write left, the crate still wants the object it wrote, and the
    /// drift is the server's change to that write, path for path.
    pub(crate) fn holds(
        &self,
        observed_generation: Option<i64>,
        desired: impl FnOnce() -> u64,
        drift: &[String],
    ) -> bool {
        observed_generation == Some(self.generation)
            && paths_fingerprint(drift) == self.changed
            && desired() == self.fingerprint
    }
}

/// The fingerprint of a list of drifted paths (sorted, as drift returns them).
pub(crate) fn paths_fingerprint(paths: &[String]) -> u64 {
    let mut hash = Fnv1a::default();
    for path in paths {
        hash.bytes(path.as_bytes());
        hash.bytes(b"\n");
    }
    hash.0
}

/// The fingerprint of a desired LB Deployment as rendered for a create: a 64-bit FNV-1a
/// hash of its `apiVersion`, `kind`, `metadata` (name, namespace, labels, annotations,
/// owner references) and `spec`, in the canonical JSON of the compact tree (object keys
/// sorted).
///
/// It covers what the crate decides, from its inputs alone (the Gateway, the
/// GatewayConfiguration, the template, the settings), never from the observed Deployment:
/// a create and the updates after it share it, and the same inputs give the same value in
/// any process running the same crate version. It is not stored in the cluster.
pub(crate) fn fingerprint(rendered: &Deployment) -> u64 {
    const METADATA: [&str; 5] = [
        "name",
        "namespace",
        "labels",
        "annotations",
        "ownerReferences",
    ];
    let mut hash = Fnv1a::default();
    let mut part = |name: &str, value: Option<&Value>| {
        hash.bytes(name.as_bytes());
        hash.bytes(b"=");
        match value {
            // Serializing a tree into a hasher cannot fail: `write` never does.
            Some(value) => {
                let _ = serde_json::to_writer(&mut hash, value);
            }
            None => hash.bytes(b"-"),
        }
        hash.bytes(b";");
    };
    part("apiVersion", rendered.get(&["apiVersion"]));
    part("kind", rendered.get(&["kind"]));
    for key in METADATA {
        part(key, rendered.get(&["metadata", key]));
    }
    part("spec", rendered.get(&["spec"]));
    hash.0
}

/// 64-bit FNV-1a: small, fixed by its definition (unlike std's hasher, whose algorithm may
/// change between Rust versions), and enough to tell one desired object from the next.
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn bytes(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Hashes what serde writes; nothing leaves memory.
impl io::Write for Fnv1a {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(json: serde_json::Value) -> Deployment {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn fnv1a_matches_its_reference_values() {
        // The published FNV-1a 64 test vectors.
        let of = |s: &str| {
            let mut h = Fnv1a::default();
            h.bytes(s.as_bytes());
            h.0
        };
        assert_eq!(of(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(of("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(of("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_fingerprint_follows_the_owned_parts_only() {
        let base = serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "lb", "namespace": "ns", "labels": {"app": "lb"}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}
        });
        let f = fingerprint(&deployment(base.clone()));
        // Key order does not matter (the tree is sorted); bookkeeping and status do not count.
        let mut same = base.clone();
        same["metadata"]["resourceVersion"] = "9".into();
        same["status"] = serde_json::json!({"replicas": 1});
        assert_eq!(fingerprint(&deployment(same)), f);
        // Any decided value does.
        for (path, value) in [
            ("/spec/replicas", serde_json::json!(2)),
            ("/metadata/labels/app", serde_json::json!("other")),
            (
                "/spec/template/spec/containers/0/image",
                serde_json::json!("i:2"),
            ),
        ] {
            let mut changed = base.clone();
            *changed.pointer_mut(path).unwrap() = value;
            assert_ne!(fingerprint(&deployment(changed)), f, "{path}");
        }
        let mut annotated = base;
        annotated["metadata"]["annotations"] = serde_json::json!({"k": "v"});
        assert_ne!(fingerprint(&deployment(annotated)), f);
    }
}
