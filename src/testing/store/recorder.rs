//! The store's recorder: what the driver did through the ports, per Gateway.
//!
//! The Events the driver records ([`Port::record`](crate::reconcile::Port::record)) are
//! kept with the Gateway they are about ([`Store::events`], [`Store::recorded`]), and each
//! Gateway's Deployment and status writes are counted ([`Store::write_counts`]). The
//! [`StorePort`](super::StorePort) writes them; this file reads them back for a test.

use super::{Store, key};
use crate::events::Event;
use crate::reconcile::ObjectKey;
use crate::sim::scenario::WriteCounts;

impl Store {
    /// The event recorder: the Events recorded through the ports (the driver's
    /// [`Port::record`](crate::reconcile::Port::record)) about the Gateway
    /// `namespace/name`, in order.
    ///
    /// ```
    /// use gateway_reconcile::reconcile::{Driver, ready};
    /// use gateway_reconcile::testing::strategies;
    ///
    /// let mut store = strategies::store().unwrap();
    /// let driver = Driver::new(store.settings().clone());
    /// let now = store.now();
    /// ready(driver.reconcile(&mut store.port("ns", "gw").unwrap(), now)).unwrap().unwrap();
    /// let reasons: Vec<_> = store.events("ns", "gw").map(|e| e.reason.as_str()).collect();
    /// assert!(!reasons.is_empty(), "a first reconcile records its transitions");
    /// assert_eq!(store.events("ns", "other").count(), 0);
    /// ```
    pub fn events<'s>(
        &'s self,
        namespace: &'s str,
        name: &'s str,
    ) -> impl Iterator<Item = &'s Event> {
        self.events
            .iter()
            .filter(move |(about, _)| (about.0.as_str(), about.1.as_str()) == (namespace, name))
            .map(|(_, event)| event)
    }

    /// Every Event recorded, with the Gateway it is about, in order.
    pub fn recorded(&self) -> &[(ObjectKey, Event)] {
        &self.events
    }

    /// Forgets the Events recorded so far (to assert on what comes next).
    pub fn clear_events(&mut self) {
        self.events.clear();
    }

    /// The writes sent for the Gateway `namespace/name`: its Deployment writes (failed or
    /// not) and its status writes.
    pub fn write_counts(&self, namespace: &str, name: &str) -> WriteCounts {
        self.counts
            .get(&key(namespace, name))
            .copied()
            .unwrap_or_default()
    }
}
