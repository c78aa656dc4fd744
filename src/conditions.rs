//! The condition vocabulary and the bookkeeping of `status.conditions`.
