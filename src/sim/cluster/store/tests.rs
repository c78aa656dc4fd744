//! Unit tests of the object store.

use crate::sim::cluster::*;

#[test]
fn kinds_and_rollouts_round_trip_their_keys() {
    for kind in Kind::ALL {
        assert_eq!(Kind::from_key(kind.key()), Some(kind));
    }
    assert_eq!(Kind::from_key("Gateway"), None);
    for r in [
        RolloutState::Complete,
        RolloutState::Progressing,
        RolloutState::Stalled,
    ] {
        assert_eq!(RolloutState::from_key(r.key()), Some(r));
    }
    for a in [WriteKind::Create, WriteKind::Update, WriteKind::None] {
        assert_eq!(WriteKind::from_name(a.as_str()), Some(a));
    }
}
