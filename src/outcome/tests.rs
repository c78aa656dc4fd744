use super::*;

fn class(code: Option<u16>, reason: &str) -> Option<FailureClass> {
    WriteOutcome::from_parts(code, reason, "m").class()
}

#[test]
fn classification_follows_the_spec_table() {
    use FailureClass::*;
    let table: &[(Option<u16>, &str, FailureClass)] = &[
        (Some(409), "Conflict", Conflict),
        (Some(409), "", Conflict),
        (Some(409), "AlreadyExists", AlreadyExists),
        (Some(404), "NotFound", NotFound),
        (Some(400), "BadRequest", Rejected),
        (Some(403), "Forbidden", Rejected),
        (Some(405), "MethodNotAllowed", Rejected),
        (Some(413), "RequestEntityTooLarge", Rejected),
        (Some(415), "UnsupportedMediaType", Rejected),
        (Some(422), "Invalid", Rejected),
        (Some(401), "Unauthorized", Transient),
        (Some(408), "Timeout", Transient),
        (Some(429), "TooManyRequests", Transient),
        (Some(500), "InternalError", Transient),
        (Some(503), "ServiceUnavailable", Transient),
        (Some(504), "Timeout", Transient),
        (None, "", Transient),
    ];
    for (code, reason, want) in table {
        assert_eq!(class(*code, reason), Some(*want), "{code:?} {reason}");
    }
    assert_eq!(WriteOutcome::Applied.class(), None);
}
