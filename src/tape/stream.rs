//! Which HTTP stream a server message came on: the tape's `_meta.stream`
//! (`docs/FORMAT.md`).
//!
//! Over Streamable HTTP a server message comes on the event stream of the POST that
//! carried a request, or on the session's GET stream
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#listening-for-messages-from-the-server>).
//! The tape marks only the second: `"stream":"get"`. An absent member is the POST that
//! carried the request, or a transport with one stream (stdio), and is how every older
//! tape and every mcporter tape reads. A value this version does not know reads as
//! absent, so a newer tape still loads.

/// The stream a server message came on, when it is not the request's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// The session's GET stream: what the server sends outside any request.
    Get,
}

impl Stream {
    /// The word used in `_meta.stream`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stream::Get => "get",
        }
    }

    /// Reads the word used in `_meta.stream`; `None` for one this version does not know.
    pub fn parse(word: &str) -> Option<Stream> {
        match word {
            "get" => Some(Stream::Get),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_round_trips_and_an_unknown_one_reads_as_absent() {
        assert_eq!(Stream::parse(Stream::Get.as_str()), Some(Stream::Get));
        assert_eq!(Stream::parse("post"), None);
        assert_eq!(Stream::parse(""), None);
    }

    #[test]
    fn a_get_stream_message_keeps_its_mark_through_a_tape_line() {
        use crate::tape::format::{Direction, Meta, decode_cut, encode};
        let mut meta = Meta {
            dir: Direction::Recv,
            server: "s".into(),
            ts: None,
            conn: None,
            batch: None,
            stream: Some(Stream::Get),
            source: None,
        };
        let line = encode(br#"{"jsonrpc":"2.0","id":0,"method":"roots/list"}"#, &meta);
        let text = String::from_utf8(line).expect("utf-8");
        assert!(text.contains(r#""_meta":{"dir":"recv","server":"s","stream":"get"}"#));
        assert_eq!(decode_cut(&text).expect("a line").0, meta);
        meta.stream = None;
        let plain = String::from_utf8(encode(b"{}", &meta)).expect("utf-8");
        assert!(
            !plain.contains("stream"),
            "absent is the request's own stream"
        );
        for other in [r#""post""#, "1", "null"] {
            let line = format!(r#"{{"id":1,"_meta":{{"dir":"recv","stream":{other}}}}}"#);
            let read = decode_cut(&line).expect("a newer tape still loads").0;
            assert_eq!(read.stream, None, "{other}");
        }
    }
}
