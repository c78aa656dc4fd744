//! Reading a value into a wire type with the key path of what is wrong
//! (`spec.horizontalScaling.replicas: expected an integer, found "many"`): the simulator's
//! store and scenario files, and the `kube` feature's watched objects, report an object
//! the wire type cannot read in the same words.

/// A JSON value the simulator reads into wire types: a `serde_json::Value` (a patch, an
/// object an embedder hands in) or a compact tree (an object the simulated cluster holds).
#[cfg(feature = "sim")]
pub(crate) trait Readable {
    /// Reads `T` from the value in place, tracking the key path of what is wrong.
    fn read_tracked<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Result<T, serde_path_to_error::Error<serde_json::Error>>;

    /// Whether the value is a JSON object.
    fn is_json_object(&self) -> bool;
}

#[cfg(feature = "sim")]
impl Readable for serde_json::Value {
    fn read_tracked<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
        serde_path_to_error::deserialize(self)
    }

    fn is_json_object(&self) -> bool {
        self.is_object()
    }
}

#[cfg(feature = "sim")]
impl Readable for crate::wire::tree::Value {
    fn read_tracked<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
        serde_path_to_error::deserialize(crate::wire::tree::de::Reader(self))
    }

    fn is_json_object(&self) -> bool {
        self.is_object()
    }
}

/// Reads `value` in place (no copy of a large object); on error, the key path of the wrong
/// value (`spec.internalSubnets[0].cidr`) and what is wrong with it.
#[cfg(feature = "sim")]
pub(crate) fn typed_at<T: serde::de::DeserializeOwned>(
    value: &impl Readable,
) -> Result<T, (Option<String>, String)> {
    value.read_tracked().map_err(split)
}

/// Reads a compact tree in place (a watched object, see `wire::resource`), with the key
/// path of what is wrong, in the words a read of the same `serde_json::Value` has (the tree's
/// reader mirrors serde_json's).
#[cfg(feature = "kube")]
pub(crate) fn typed_tree<T: serde::de::DeserializeOwned>(
    value: &crate::wire::tree::Value,
) -> Result<T, (Option<String>, String)> {
    serde_path_to_error::deserialize(crate::wire::tree::de::Reader(value)).map_err(split)
}

/// The error's key path (none at the root) and its message as a person reads it.
fn split(e: serde_path_to_error::Error<serde_json::Error>) -> (Option<String>, String) {
    let path = e.path().to_string();
    let why = plain_message(&e.into_inner().to_string());
    ((path != ".").then_some(path), why)
}

/// serde's `invalid type: integer `5`, expected a sequence` as a person reads it:
/// `expected a list, found 5`; other messages unchanged.
pub fn plain_message(message: &str) -> String {
    let Some(rest) = message.strip_prefix("invalid type: ") else {
        return message.to_owned();
    };
    let Some((found, expected)) = rest.rsplit_once(", expected ") else {
        return message.to_owned();
    };
    // serde quotes the value found: integer `5`, floating point `1.5`, string "x", map,
    // sequence, boolean `true`; its words are kept whole (`floating point`).
    const QUOTED: [&str; 5] = [
        "floating point ",
        "integer ",
        "boolean ",
        "character ",
        "string ",
    ];
    let found = match QUOTED.iter().find_map(|kind| found.strip_prefix(kind)) {
        Some(value) if value.starts_with('"') => cut_debug_quoted(value),
        Some(value) => cut_shown(value.trim_matches('`')),
        None => match found {
            "map" => "an object".to_owned(),
            "sequence" => "a list".to_owned(),
            "null" | "unit value" => "null".to_owned(),
            other => cut_shown(other),
        },
    };
    let expected = match expected {
        "a sequence" => "a list",
        "a map" => "an object",
        "a string" => "a string",
        e if e.starts_with("struct ") || e.starts_with("a map") => "an object",
        e if e.starts_with("i64")
            || e.starts_with("u64")
            || e.starts_with("i32")
            || e.starts_with("u32") =>
        {
            "an integer"
        }
        e => e,
    };
    format!("expected {expected}, found {found}")
}

/// The most characters of a value a message quotes; a longer one is cut there and its
/// length given (`"xxx…" (16777216 characters)`), so that a huge value never makes a huge
/// message.
pub(crate) const QUOTED_CHARACTERS: usize = 200;

/// `text` quoted for a message (`"text"`, escaped as Rust's `{:?}` does), cut to 200
/// characters with its length when longer (`"xxx…" (16777216 characters)`).
#[cfg_attr(not(feature = "sim"), allow(dead_code))]
pub fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARACTERS) {
        None => format!("{text:?}"),
        Some((at, _)) => format!("{:?}… ({} characters)", &text[..at], text.chars().count()),
    }
}

/// Text shown as it is (a number, a word), cut as [`quote`] cuts.
fn cut_shown(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARACTERS) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}… ({} characters)", &text[..at], text.chars().count()),
    }
}

/// A string serde already quoted with `{:?}` (`"a\\"b"`), cut as [`quote`] cuts: the
/// characters are counted as the string has them (an escape is one).
fn cut_debug_quoted(quoted: &str) -> String {
    let inner = quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or(quoted);
    // Where the character after the first QUOTED_CHARACTERS starts, and how many there are.
    let mut cut_at = None;
    let mut total = 0usize;
    let mut chars = inner.char_indices();
    while let Some((at, c)) = chars.next() {
        if total == QUOTED_CHARACTERS {
            cut_at = Some(at);
        }
        total += 1;
        // An escape is one character: `\"`, `\n`, `\u{1b}`.
        if c == '\\' && chars.next().is_some_and(|(_, e)| e == 'u') {
            for (_, c) in chars.by_ref() {
                if c == '}' {
                    break;
                }
            }
        }
    }
    match cut_at {
        Some(at) => format!("\"{}\"… ({total} characters)", &inner[..at]),
        None => quoted.to_owned(),
    }
}

#[cfg(test)]
mod quote_tests {
    use super::*;

    #[test]
    fn values_are_cut_with_their_length() {
        assert_eq!(quote("abc"), "\"abc\"");
        let long = "x".repeat(1000);
        assert_eq!(
            quote(&long),
            format!("\"{}\"… (1000 characters)", "x".repeat(200))
        );
        let message = format!("invalid type: string {long:?}, expected u32");
        assert_eq!(
            plain_message(&message),
            format!(
                "expected an integer, found \"{}\"… (1000 characters)",
                "x".repeat(200)
            )
        );
        let escaped = "\"".repeat(300);
        let message = format!("invalid type: string {escaped:?}, expected a map");
        assert_eq!(
            plain_message(&message),
            format!(
                "expected an object, found \"{}\"… (300 characters)",
                "\\\"".repeat(200)
            )
        );
    }

    #[test]
    fn serde_words_are_not_split() {
        assert_eq!(
            plain_message("invalid type: floating point `1.8446744073709552e19`, expected i64"),
            "expected an integer, found 1.8446744073709552e19"
        );
    }
}
