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
    for a in [ActionKind::Create, ActionKind::Update, ActionKind::None] {
        assert_eq!(ActionKind::from_name(a.as_str()), Some(a));
    }
}
