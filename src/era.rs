//! The two protocol eras a message may belong to, and what the stateless revision
//! (2026-07-28) adds to results.
//!
//! - [`Era`] of a request: [`Era::Legacy`] (a session opened by `initialize`, 2025-11-25
//!   and earlier) or [`Era::Stateless`] (2026-07-28 and later: no session, no handshake,
//!   every request names its protocol version — the `MCP-Protocol-Version` header over
//!   HTTP, `params._meta["io.modelcontextprotocol/protocolVersion"]` in the body —
//!   <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports>).
//! - [`ResultType`] of a result (`resultType`; absent means `complete`).
//! - The multi-round-trip request (MRTR): a result with `resultType: "input_required"`
//!   carries `inputRequests` and an opaque `requestState`; the client answers with a
//!   retry of the same request under a new id, with `inputResponses` and that
//!   `requestState` echoed. [`request_state`], [`is_retry`] and [`with_request_state`]
//!   read and write those members without touching any other byte.
//!
//! Cancellation in the stateless revision is structural: the client closes the request's
//! stream (over HTTP) and no `notifications/cancelled` is sent. Nothing here decides
//! routing; the HTTP front, the replay and verify ask.

use crate::message::{self, Kind, Message};

/// The first protocol version of the stateless revision.
pub const STATELESS_VERSION: &str = "2026-07-28";
/// Where a stateless request names its protocol version in its body.
pub const VERSION_META: [&str; 3] = ["params", "_meta", "io.modelcontextprotocol/protocolVersion"];

/// The protocol era of a client message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// A session opened by `initialize` (2025-11-25 and earlier).
    Legacy,
    /// No session: each request stands alone (2026-07-28 and later).
    Stateless,
}

impl Era {
    /// The era of `msg`, sent with the `MCP-Protocol-Version` header `header` (when it
    /// came over HTTP): stateless when the header or the body names a version at or after
    /// [`STATELESS_VERSION`]. An `initialize` always opens a legacy session.
    pub fn of(msg: &Message, header: Option<&str>) -> Era {
        if msg.method() == Some("initialize") {
            return Era::Legacy;
        }
        let body = body_version(msg);
        let named = header.into_iter().chain(body.as_deref());
        if named.into_iter().any(is_stateless_version) {
            Era::Stateless
        } else {
            Era::Legacy
        }
    }
}

/// True for a version string of the stateless revision (versions are dates: their text
/// order is their time order).
pub fn is_stateless_version(version: &str) -> bool {
    version.len() == STATELESS_VERSION.len() && version >= STATELESS_VERSION
}

/// The protocol version `msg` names in its body ([`VERSION_META`]); only a plain token.
pub fn body_version(msg: &Message) -> Option<String> {
    let raw = message::raw_member(msg.text(), &VERSION_META)?;
    serde_json::from_str::<String>(raw)
        .ok()
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_graphic()))
}

/// What a result says it is (`result.resultType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultType {
    /// The final result (also when `resultType` is absent).
    Complete,
    /// The server needs input first: the client retries with `inputResponses`.
    InputRequired,
    /// Another type (the tasks extension reserves `task`), kept as written.
    Other(String),
}

impl ResultType {
    /// The type of a response's result; `None` for anything but a response.
    pub fn of(msg: &Message) -> Option<ResultType> {
        if msg.kind() != Kind::Response {
            return None;
        }
        let raw = message::raw_member(msg.text(), &["result", "resultType"]);
        let named = raw.and_then(|r| serde_json::from_str::<String>(r).ok());
        Some(match named.as_deref() {
            None | Some("complete") => ResultType::Complete,
            Some("input_required") => ResultType::InputRequired,
            Some(other) => ResultType::Other(other.to_owned()),
        })
    }
}

/// The `requestState` (raw JSON) of an `input_required` result.
pub fn request_state(answer: &Message) -> Option<&str> {
    if ResultType::of(answer) != Some(ResultType::InputRequired) {
        return None;
    }
    message::raw_member(answer.text(), &["result", "requestState"])
}

/// True for a request that retries an `input_required` one: it carries
/// `params.inputResponses` or `params.requestState`.
pub fn is_retry(msg: &Message) -> bool {
    msg.kind() == Kind::Request
        && (message::raw_member(msg.text(), &["params", "requestState"]).is_some()
            || message::raw_member(msg.text(), &["params", "inputResponses"]).is_some())
}

/// The retry `msg` with `params.requestState` replaced by `state` (raw JSON); every other
/// byte kept. `None` when it carries none.
pub fn with_request_state(msg: &Message, state: &str) -> Option<Message> {
    message::replace_member(msg.text(), &["params", "requestState"], state).map(Message::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(text: &str) -> Message {
        Message::new(text.as_bytes().to_vec())
    }

    #[test]
    fn a_request_is_stateless_by_its_header_or_its_body() {
        let plain = msg(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert_eq!(Era::of(&plain, None), Era::Legacy);
        assert_eq!(Era::of(&plain, Some("2025-11-25")), Era::Legacy);
        assert_eq!(Era::of(&plain, Some("2026-07-28")), Era::Stateless);
        assert_eq!(Era::of(&plain, Some("2027-01-01")), Era::Stateless);
        let body = msg(
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert_eq!(Era::of(&body, None), Era::Stateless);
        let init = msg(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
        assert_eq!(Era::of(&init, Some("2026-07-28")), Era::Legacy);
        assert!(!is_stateless_version("2026-07-2"));
    }

    #[test]
    fn result_types_and_the_mrtr_members_are_read_and_written_in_place() {
        let done = msg(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#);
        assert_eq!(ResultType::of(&done), Some(ResultType::Complete));
        let task = msg(r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task"}}"#);
        assert_eq!(
            ResultType::of(&task),
            Some(ResultType::Other("task".into()))
        );
        let asks = msg(
            r#"{"jsonrpc":"2.0","id":5,"result":{"inputRequests":{"ok":{"method":"elicitation/create"}},"requestState":"v1.abc","resultType":"input_required"}}"#,
        );
        assert_eq!(ResultType::of(&asks), Some(ResultType::InputRequired));
        assert_eq!(request_state(&asks), Some(r#""v1.abc""#));
        assert_eq!(request_state(&done), None);
        let retry = msg(
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"inputResponses":{"ok":{"action":"accept"}},"requestState":"v1.abc","name":"confirm"}}"#,
        );
        assert!(is_retry(&retry));
        assert!(!is_retry(&done));
        let live = with_request_state(&retry, r#""v1.live""#).expect("a retry");
        assert_eq!(
            live.text(),
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"inputResponses":{"ok":{"action":"accept"}},"requestState":"v1.live","name":"confirm"}}"#
        );
    }
}
