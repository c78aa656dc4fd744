//! Strict RFC 3339 times, as scenario files and the command line's `--now` write them.

use jiff::Timestamp;

/// Why a time is refused by [`parse_time`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// Not of the form `2026-01-01T00:00:00Z` (fraction and offset optional forms allowed).
    #[error("not an RFC 3339 time {0:?} (expected e.g. 2026-01-01T00:00:00Z)")]
    Syntax(String),
    /// A valid RFC 3339 time the crate's clock cannot hold.
    #[error("{0:?} is out of the supported range ({min} to {max})", min = Timestamp::MIN, max = Timestamp::MAX)]
    OutOfRange(String),
}

/// A strict RFC 3339 time: `YYYY-MM-DDTHH:MM:SS`, an optional fraction, then `Z` or
/// `±HH:MM`. Refused: a missing seconds field, a signed or six-digit year, a bracketed zone
/// annotation, a lowercase `t`/`z` or a space for `T`. A valid time the clock cannot hold
/// is [`TimeError::OutOfRange`].
///
/// ```
/// use gateway_reconcile::sim::scenario::parse_time;
/// assert!(parse_time("2026-01-01T00:00:00.5+02:00").is_ok());
/// assert!(parse_time("2026-01-01T00:00Z").is_err());
/// assert!(parse_time("2026-01-01T00:00:00Z[UTC]").is_err());
/// ```
pub fn parse_time(text: &str) -> Result<Timestamp, TimeError> {
    let syntax = || TimeError::Syntax(text.chars().take(64).collect());
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit))
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let shape = digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && at(10, b'T')
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19);
    if !shape {
        return Err(syntax());
    }
    let mut i = 19;
    if at(i, b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return Err(syntax());
        }
    }
    let zone = b.get(i..).unwrap_or_default();
    let zone_ok = zone == b"Z"
        || (zone.len() == 6
            && matches!(zone.first(), Some(b'+' | b'-'))
            && zone
                .get(1..3)
                .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
            && zone.get(3) == Some(&b':')
            && zone
                .get(4..6)
                .is_some_and(|d| d.iter().all(u8::is_ascii_digit)));
    if !zone_ok {
        return Err(syntax());
    }
    match text.parse::<Timestamp>() {
        Ok(t) => Ok(t),
        // The shape is right: if the date and time of day are valid, only the range is not.
        Err(_) => match text.get(..19).map(str::parse::<jiff::civil::DateTime>) {
            Some(Ok(_)) => Err(TimeError::OutOfRange(text.to_owned())),
            _ => Err(syntax()),
        },
    }
}
