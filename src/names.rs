//! Kubernetes name, key and label-value rules, with the API server's explanations.

/// Why `value` is not a valid label value (at most 63 characters, alphanumeric at both
/// ends, `-`, `_` and `.` inside; empty is valid), in the API server's words.
pub(crate) fn label_value_error(value: &str) -> Option<&'static str> {
    let b = value.as_bytes();
    if b.len() > 63 {
        return Some("must be no more than 63 characters");
    }
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    let ok = match (b.first(), b.last()) {
        (None, _) | (_, None) => true,
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric() && b.iter().all(inner)
        }
    };
    (!ok).then_some(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' \
         or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or \
         'my_value',  or '12345', regex used for validation is \
         '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    )
}

/// Why `name` is not a DNS-1123 subdomain (at most 253 characters, lowercase alphanumeric,
/// `-` and `.`, alphanumeric at both ends of each dot-separated part), in the API server's
/// words.
pub(crate) fn subdomain_error(name: &str) -> Option<&'static str> {
    if name.len() > 253 {
        return Some("must be no more than 253 characters");
    }
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let ok = name.split('.').all(|part| {
        let b = part.as_bytes();
        match (b.first(), b.last()) {
            (Some(f), Some(l)) => alnum(f) && alnum(l) && b.iter().all(|c| alnum(c) || *c == b'-'),
            _ => false,
        }
    });
    (!ok).then_some(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' \
         or '.', and must start and end with an alphanumeric character (e.g. 'example.com', \
         regex used for validation is \
         '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    )
}

/// Why `key` is not a valid label or annotation key (an optional DNS-subdomain prefix and
/// `/`, then a name of at most 63 characters, alphanumeric at both ends, `-`, `_` and `.`
/// inside), in the API server's words.
pub(crate) fn key_error(key: &str) -> Option<&'static str> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(why) = prefix.and_then(subdomain_error) {
        return Some(why);
    }
    if prefix == Some("") {
        return Some("prefix part must be non-empty");
    }
    if name.is_empty() {
        return Some("name part must be non-empty");
    }
    if name.len() > 63 {
        return Some("name part must be no more than 63 characters");
    }
    label_value_error(name).map(|_| {
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start \
         and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', \
         regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    })
}

#[cfg(test)]
mod tests;
