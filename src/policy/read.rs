//! What the gate reads of a client line, and what it refuses because it cannot read it
//! as the servers do.
//!
//! A server acts on the whole message as its JSON parser reads it: the last of duplicate
//! keys (Python's `json`, `JSON.parse` and serde_json agree), escapes decoded, a lone
//! surrogate escape kept. The gate decides on the same reading ([`line`]: the full
//! parse, never a strict head that a duplicate `"method"` would make unreadable), and
//! what it cannot read whole is answered here and never forwarded, whatever its method:
//!
//! - a raw CR or LF inside the message ([`PARSE_ERROR`]): JSON whitespace to the gate, a
//!   line end to a stdio server (the Python SDK reads with universal newlines, so
//!   `{…ping…,"x":\r{…tools/call…}}` is a ping to the gate and a `tools/call` to it; an
//!   HTTP body's LF splits the same way on its way to a stdio server). The CRLF that ends
//!   a stdio line is the framing's, not the message's ([`crate::framing::content`]);
//! - text that is not UTF-8, not JSON, has bytes after the value, or a number out of
//!   range (`1e400`, which Python reads as `inf`) ([`PARSE_ERROR`]);
//! - a request of a gated method whose `id` is not a string or an integer (`true`,
//!   `[7]`, `{}`, `null`, `1.5`: the Python SDK reads `true` as the id 1)
//!   ([`INVALID_REQUEST`]);
//! - a message of a gated method nested deeper than [`crate::depth::MAX_JSON_DEPTH`]
//!   levels: the gate reads deeper parts as a marker, not whole ([`INVALID_REQUEST`]).
//!
//! Each refusal is a JSON-RPC error with `id: null` (the spec's id when the request's
//! own cannot be read) and a `$policy/decision` entry (`decision: deny`, the code in
//! `error`). docs/POLICY.md, "What the gate reads".

use serde_json::{Value, json};

use crate::message::Message;

/// JSON-RPC's parse error: the line is not JSON the gate can read whole.
pub const PARSE_ERROR: i64 = -32700;

/// JSON-RPC's invalid request: a gated request the gate cannot read as one.
pub const INVALID_REQUEST: i64 = -32600;

/// The method a `$policy/decision` names when the message's own cannot be read.
pub const UNKNOWN_METHOD: &str = "?";

/// Why the gate refuses a line it cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The JSON-RPC error code of the answer ([`PARSE_ERROR`], [`INVALID_REQUEST`]).
    pub code: i64,
    /// What is wrong, for the answer, the tape and people.
    pub why: String,
}

/// A line the gate read whole.
#[derive(Debug, Clone)]
pub struct Read {
    /// The whole line, parsed.
    pub value: Value,
    /// True when it is nested deeper than [`crate::depth::MAX_JSON_DEPTH`] levels (the
    /// deeper parts read as a marker string).
    pub deep: bool,
}

/// Reads one client line (without its line end) whole, or says why it cannot be.
pub fn line(raw: &[u8]) -> Result<Read, Unreadable> {
    let parse = |why: String| Unreadable {
        code: PARSE_ERROR,
        why,
    };
    if let Some(at) = memchr::memchr2(b'\r', b'\n', raw) {
        let what = if raw[at] == b'\r' {
            "carriage return"
        } else {
            "line feed"
        };
        return Err(parse(format!(
            "a raw {what} at byte {at} inside the message (a stdio server would read two lines)"
        )));
    }
    let text = std::str::from_utf8(raw)
        .map_err(|e| parse(format!("not UTF-8 (byte {})", e.valid_up_to())))?;
    let shallow = crate::depth::shallow(text);
    let deep = matches!(shallow, std::borrow::Cow::Owned(_));
    let value = match serde_json::from_str::<Value>(&shallow) {
        Ok(v) => v,
        Err(first) => serde_json::from_str(&crate::message::without_lone_surrogates(&shallow))
            .map_err(|_| parse(format!("not JSON the gate can read whole: {first}")))?,
    };
    Ok(Read { value, deep })
}

/// True when `id` is a request id the gate answers: a string or an integer.
pub fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// The method of a parsed message (a string `method`), when it has one.
pub fn method(v: &Value) -> Option<&str> {
    v.get("method").and_then(Value::as_str)
}

/// The JSON-RPC error (`id: null`) that answers a line the gate refused to read.
pub fn error(unreadable: &Unreadable) -> Message {
    let word = match unreadable.code {
        PARSE_ERROR => "Parse error",
        _ => "Invalid Request",
    };
    let message = format!(
        "{word}: {}; the policy gate forwards only what it reads whole",
        unreadable.why
    );
    let error = json!({"code": unreadable.code, "message": message});
    Message::new(json!({"jsonrpc": "2.0", "id": null, "error": error}).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(raw: &[u8]) -> Unreadable {
        line(raw).expect_err("refused")
    }

    #[test]
    fn duplicate_keys_read_as_the_last_one_as_servers_read_them() {
        let v = line(br#"{"id":1,"method":"ping","method":"tools/call","id":2}"#)
            .expect("read")
            .value;
        assert_eq!((method(&v), &v["id"]), (Some("tools/call"), &json!(2)));
        let v = line(br#"{"id":1,"method":"tools\/call","params":{"p":"\ud800"}}"#)
            .expect("read")
            .value;
        assert_eq!(method(&v), Some("tools/call"));
        assert_eq!(v["params"]["p"], "\u{fffd}");
    }

    #[test]
    fn what_does_not_parse_whole_is_a_parse_error() {
        for raw in [
            &br#"{"id":1,"method":"tools/call","params":{"a":1e400}}"#[..],
            br#"{"id":1,"method":"tools/call","params":{"a":"\xff"}}"#,
            br#"{"id":1,"method":"tools/call"} x"#,
            b"\xef\xbb\xbf{\"id\":1}",
            b"{\"id\":1}\x00",
            b"not json",
            br#"{"id":9,"method":"ping","x":}"#,
        ] {
            assert_eq!(
                refused(raw).code,
                PARSE_ERROR,
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
        let cr = refused(b"{\"id\":9,\"method\":\"ping\",\"x\":\r{\"id\":1}\r}");
        assert!(cr.why.contains("raw carriage return at byte 28"), "{cr:?}");
        let lf = refused(b"{\"id\":9,\n\"method\":\"ping\"}");
        assert!(lf.why.contains("raw line feed at byte 8"), "{lf:?}");
        assert!(
            refused(b"{\"a\":1e400}")
                .why
                .contains("number out of range")
        );
        let answer = error(&cr).value();
        assert_eq!(answer["id"], Value::Null);
        assert_eq!(answer["error"]["code"], PARSE_ERROR);
    }

    #[test]
    fn only_strings_and_integers_are_ids_and_depth_is_told() {
        for id in [json!(1), json!("a"), json!(u64::MAX), json!(-3)] {
            assert!(valid_id(&id), "{id}");
        }
        for id in [json!(true), json!([7]), json!({}), json!(null), json!(1.5)] {
            assert!(!valid_id(&id), "{id}");
        }
        let deep = format!(r#"{{"id":1,"a":{}{}}}"#, "[".repeat(200), "]".repeat(200));
        assert!(line(deep.as_bytes()).expect("read").deep);
        assert!(!line(br#"{"id":1}"#).expect("read").deep);
    }
}
