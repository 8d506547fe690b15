//! Which request a server's progress is for: the `progressToken` a client puts in a
//! request's `params._meta` and the server names in each `notifications/progress`'s
//! `params` (<https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress>).
//! The front routes such a notification to that request's answer stream
//! ([`super::session`]), not to whichever stream is newest.
//!
//! A token is compared as its JSON text: `1` and `"1"` are different tokens, as they are
//! different values.

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    params: Option<RequestParams<'a>>,
}

#[derive(Deserialize)]
struct Progress<'a> {
    #[serde(borrow)]
    params: Option<ProgressParams<'a>>,
}

#[derive(Deserialize)]
struct RequestParams<'a> {
    #[serde(borrow, rename = "_meta")]
    meta: Option<Meta<'a>>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(borrow, rename = "progressToken")]
    token: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ProgressParams<'a> {
    #[serde(borrow, rename = "progressToken")]
    token: Option<&'a RawValue>,
}

/// The `params._meta.progressToken` of a client's request, as JSON text; `None` when it
/// asks for no progress.
pub fn token_of_request(raw: &[u8]) -> Option<String> {
    let m: Request = serde_json::from_slice(raw).ok()?;
    Some(m.params?.meta?.token?.get().to_owned())
}

/// The `params.progressToken` of a `notifications/progress`, as JSON text.
pub fn token_of_progress(raw: &[u8]) -> Option<String> {
    let m: Progress = serde_json::from_slice(raw).ok()?;
    Some(m.params?.token?.get().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_read_as_their_json_text() {
        let req = br#"{"id":3,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"a"}}}"#;
        assert_eq!(token_of_request(req).as_deref(), Some(r#""a""#));
        let num = br#"{"id":3,"method":"tools/call","params":{"_meta":{"progressToken":7}}}"#;
        assert_eq!(token_of_request(num).as_deref(), Some("7"));
        assert_eq!(token_of_request(br#"{"id":3,"method":"ping"}"#), None);
        let note =
            br#"{"method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#;
        assert_eq!(token_of_progress(note).as_deref(), Some("7"));
        assert_eq!(token_of_progress(b"[1]"), None);
    }
}
