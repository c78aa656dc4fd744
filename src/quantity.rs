//! Kubernetes resource quantities (`500m`, `1Gi`, `1e3`), compared by value.
//!
//! Grammar (as apimachinery's `ParseQuantity`): an optional sign (`+` or `-`), a decimal
//! number (`5`, `5.`, `.5`, `1.25`; at least one digit), then one suffix:
//!
//! - binary: `Ki` `Mi` `Gi` `Ti` `Pi` `Ei` (powers of 1024);
//! - decimal SI: `n` `u` `m` (none) `k` `M` `G` `T` `P` `E` (powers of 1000);
//! - decimal exponent: `e` or `E` followed by a signed integer (`1e3`, `1.5E-2`); a bare `E`
//!   is exa.
//!
//! A [`Quantity`] holds the value the API server stores: exactly, except that a value finer
//! than a nano is rounded up (away from zero) to a nano, as the server does, so that a request
//! written with more precision is equal to what the server returns. It is an integer mantissa times a power of ten with the
//! trailing zeros of the mantissa moved into the exponent, so equality is by value:
//! `0.5` == `500m`, `1Gi` == `1024Mi`, `1e3` == `1k`, `1000m` == `1`. The only thing kept from
//! the spelling is whether a binary suffix was used, which [`Quantity::canonical`] needs.
//!
//! Bounds, so that hostile input can neither panic nor cost much: at most 40 significant
//! digits, a normalized decimal exponent within ±100, and a value that fits an `i128` once
//! binary suffixes are multiplied out; anything else is a [`QuantityError`]. Parsing is one pass
//! over the bytes without allocating (the error message quotes at most the first 64 bytes of
//! the input, then `...`).

use std::fmt;
use std::hash::{Hash, Hasher};

/// Most significant digits accepted in the number part.
const MAX_SIGNIFICANT_DIGITS: usize = 40;
/// Largest normalized decimal exponent (in absolute value) accepted.
const MAX_EXPONENT: i64 = 100;
/// How much of a malformed input the error message repeats.
const MAX_ERROR_INPUT: usize = 64;

/// A parsed quantity, compared by value.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    /// Signed mantissa without trailing zeros (0 for zero).
    mantissa: i128,
    /// Power of ten (0 for zero).
    exponent: i32,
    /// Written with a binary suffix (`Ki`..`Ei`); only affects [`Quantity::canonical`].
    binary: bool,
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.mantissa == other.mantissa && self.exponent == other.exponent
    }
}

impl Eq for Quantity {}

impl Hash for Quantity {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.mantissa.hash(state);
        self.exponent.hash(state);
    }
}

/// Why a quantity string is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid quantity {0:?}")]
pub struct QuantityError(pub String);

impl QuantityError {
    fn of(input: &str) -> Self {
        if input.len() <= MAX_ERROR_INPUT {
            return QuantityError(input.to_owned());
        }
        let mut end = MAX_ERROR_INPUT;
        while !input.is_char_boundary(end) {
            end -= 1;
        }
        QuantityError(format!("{}...", input.get(..end).unwrap_or_default()))
    }
}

/// The suffix of a quantity: a power of ten, or a power of 1024.
enum Suffix {
    Decimal(i64),
    Binary(u32),
}

fn parse_suffix(suffix: &str) -> Option<Suffix> {
    let s = match suffix {
        "" => Suffix::Decimal(0),
        "n" => Suffix::Decimal(-9),
        "u" => Suffix::Decimal(-6),
        "m" => Suffix::Decimal(-3),
        "k" => Suffix::Decimal(3),
        "M" => Suffix::Decimal(6),
        "G" => Suffix::Decimal(9),
        "T" => Suffix::Decimal(12),
        "P" => Suffix::Decimal(15),
        "E" => Suffix::Decimal(18),
        "Ki" => Suffix::Binary(1),
        "Mi" => Suffix::Binary(2),
        "Gi" => Suffix::Binary(3),
        "Ti" => Suffix::Binary(4),
        "Pi" => Suffix::Binary(5),
        "Ei" => Suffix::Binary(6),
        _ => {
            let rest = suffix.strip_prefix(['e', 'E'])?;
            return parse_exponent(rest).map(Suffix::Decimal);
        }
    };
    Some(s)
}

/// A signed decimal integer; `None` when malformed or far beyond any accepted exponent.
fn parse_exponent(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, text.get(1..)?),
        b'+' => (false, text.get(1..)?),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
        // Far out of range already: stop instead of overflowing on a long digit string.
        if value > 1_000_000 {
            return None;
        }
    }
    Some(if negative { -value } else { value })
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s).ok_or_else(|| QuantityError::of(s))
    }
}

fn parse(s: &str) -> Option<Quantity> {
    let bytes = s.as_bytes();
    let (negative, start) = match bytes.first()? {
        b'-' => (true, 1),
        b'+' => (false, 1),
        _ => (false, 0),
    };
    let rest = bytes.get(start..)?;
    let int_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let (frac, after) = match rest.get(int_len) {
        Some(b'.') => {
            let f = rest.get(int_len + 1..)?;
            let frac_len = f.iter().take_while(|b| b.is_ascii_digit()).count();
            (f.get(..frac_len)?, int_len + 1 + frac_len)
        }
        _ => (&[][..], int_len),
    };
    let int = rest.get(..int_len)?;
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let suffix = parse_suffix(s.get(start + after..)?)?;

    // Significant digits: strip leading zeros of the whole digit string, then trailing ones.
    let digits = || int.iter().chain(frac.iter()).copied();
    let total = int.len() + frac.len();
    let leading = digits().take_while(|&b| b == b'0').count();
    if leading == total {
        return Some(Quantity::zero(matches!(suffix, Suffix::Binary(_))));
    }
    let trailing = digits().rev().take_while(|&b| b == b'0').count();
    let significant = total - leading - trailing;
    if significant > MAX_SIGNIFICANT_DIGITS {
        return None;
    }
    let mut mantissa: i128 = 0;
    for b in digits().skip(leading).take(significant) {
        mantissa = mantissa
            .checked_mul(10)?
            .checked_add(i128::from(b - b'0'))?;
    }
    // value = mantissa × 10^(trailing − frac.len()) × suffix
    let mut exponent = i64::try_from(trailing)
        .ok()?
        .checked_sub(i64::try_from(frac.len()).ok()?)?;
    let binary = match suffix {
        Suffix::Decimal(e) => {
            exponent = exponent.checked_add(e)?;
            false
        }
        Suffix::Binary(k) => {
            mantissa = mantissa.checked_mul(1024i128.checked_pow(k)?)?;
            true
        }
    };
    while mantissa % 10 == 0 {
        mantissa /= 10;
        exponent = exponent.checked_add(1)?;
    }
    if exponent.abs() > MAX_EXPONENT {
        return None;
    }
    // The API server stores at most nano precision, rounding the magnitude up; holding the
    // stored value makes a finer request equal to what the server gives back.
    if exponent < -9 {
        mantissa = round_away_from_zero(mantissa, i32::try_from(-9 - exponent).ok()?);
        exponent = -9;
        while mantissa != 0 && mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
    }
    if negative {
        mantissa = -mantissa;
    }
    Some(Quantity {
        mantissa,
        exponent: i32::try_from(exponent).ok()?,
        binary,
    })
}

impl Quantity {
    const fn zero(binary: bool) -> Quantity {
        Quantity {
            mantissa: 0,
            exponent: 0,
            binary,
        }
    }

    /// The value rounded up (away from zero) to a milli, as the API server's defaulting
    /// stores every request and limit (`SetDefaults_ResourceList`: `100u` → `1m`); values
    /// already whole millis are returned as they are.
    pub fn rounded_up_to_milli(&self) -> Quantity {
        if self.exponent >= -3 {
            return *self;
        }
        let mut mantissa = round_away_from_zero(self.mantissa, -3 - self.exponent);
        let mut exponent = -3;
        while mantissa != 0 && mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
        if mantissa == 0 {
            exponent = 0;
        }
        Quantity {
            mantissa,
            exponent,
            binary: self.binary,
        }
    }

    /// Whether the value is below zero (the API server refuses negative resources).
    pub fn is_negative(&self) -> bool {
        self.mantissa < 0
    }

    /// The canonical form the API server writes (`0.5` → `500m`, `1024Mi` → `1Gi`).
    ///
    /// - Written with a binary suffix, an integer value of at least 1024 in magnitude: the
    ///   largest binary suffix that divides it exactly (`1024Mi` → `1Gi`, `1536Mi` stays
    ///   `1536Mi`, `1.5Ki` → `1536`).
    /// - Otherwise decimal SI with the largest suffix that keeps the mantissa an integer
    ///   (`0.5` → `500m`, `1000` → `1k`, `1500` → `1500`, `2000m` → `2`), values finer than
    ///   a nano rounded away from zero to a nano (`0.1n` → `1n`), as Kubernetes does.
    ///
    /// This is close to, not exactly, apimachinery's canonicalization: apimachinery keeps
    /// the exponent spelling (`1e3` stays `1e3`) where this writes decimal SI (`1k`), and
    /// values beyond exa that do not fit an `E` mantissa are written here as `<m>e<exp>`.
    pub fn canonical(&self) -> String {
        let binary = if self.binary {
            self.binary_canonical()
        } else {
            None
        };
        binary.unwrap_or_else(|| self.decimal_canonical())
    }

    fn binary_canonical(&self) -> Option<String> {
        let exponent = u32::try_from(self.exponent).ok()?;
        let mut n = self.mantissa.checked_mul(10i128.checked_pow(exponent)?)?;
        if n > -1024 && n < 1024 {
            return None;
        }
        let mut k = 0;
        while k < 6 && n % 1024 == 0 {
            n /= 1024;
            k += 1;
        }
        let suffix = match k {
            0 => "",
            1 => "Ki",
            2 => "Mi",
            3 => "Gi",
            4 => "Ti",
            5 => "Pi",
            _ => "Ei",
        };
        Some(format!("{n}{suffix}"))
    }

    fn decimal_canonical(&self) -> String {
        if self.mantissa == 0 {
            return "0".to_owned();
        }
        let (mut m, mut e) = (self.mantissa, self.exponent);
        if e < -9 {
            m = round_away_from_zero(m, -9 - e);
            e = -9;
            while m % 10 == 0 {
                m /= 10;
                e += 1;
            }
        }
        if e > 18 {
            // Beyond exa: an `E` mantissa when it fits, else the exponent spelling.
            return match 10i128
                .checked_pow((e - 18).unsigned_abs())
                .and_then(|p| m.checked_mul(p))
            {
                Some(v) => format!("{v}E"),
                None => format!("{m}e{e}"),
            };
        }
        // Lower the exponent to a multiple of three (the SI suffixes).
        let r = e.rem_euclid(3);
        let Some(scaled) = 10i128
            .checked_pow(r.unsigned_abs())
            .and_then(|p| m.checked_mul(p))
        else {
            return format!("{m}e{e}");
        };
        let (m, e) = (scaled, e - r);
        let suffix = match e {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            0 => "",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            _ => return format!("{m}e{e}"),
        };
        format!("{m}{suffix}")
    }
}

/// `m / 10^places`, any lost fraction rounding the magnitude up (apimachinery's rule).
fn round_away_from_zero(m: i128, places: i32) -> i128 {
    let mut value = m;
    let mut fraction = false;
    for _ in 0..places {
        if value % 10 != 0 {
            fraction = true;
        }
        value /= 10;
        if value == 0 {
            break;
        }
    }
    if fraction { value + m.signum() } else { value }
}

impl fmt::Display for Quantity {
    /// Writes [`Quantity::canonical`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

#[cfg(test)]
mod tests;
