//! `mcptape view`'s page: a tape as one self-contained HTML file.
//!
//! - [`data`] turns the tape (its entries, the exchanges [`crate::exchange`] pairs, its
//!   notes) and an optional receipt into one JSON document;
//! - [`page`] wraps it with the inline style and script and a Content-Security-Policy
//!   that allows only those two, by hash.
//!
//! Invariants: the page needs no network and no other file (it works from `file://`);
//! every string from the tape reaches the page as JSON data and is inserted by the
//! script as text (`textContent`, canvas `fillText`), never parsed as HTML. What the page
//! does not do: it does not run, replay or verify anything; it shows what the tape and
//! the receipt say.

pub mod data;
pub mod page;

use crate::receipt::Receipt;
use crate::tape::Tape;

/// The page for `tape`, with `receipt` beside it when given.
pub fn render(tape: &Tape, receipt: Option<&Receipt>) -> String {
    page::html(&data::of(tape, receipt))
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: &str =
        r#""_meta":{"dir":"DIR","server":"s<b>","conn":"c1","ts":"2026-12-01T10:00:0SECZ"}"#;

    fn line(dir: &str, sec: &str, body: &str) -> String {
        format!("{{{body},{}}}", M.replace("DIR", dir).replace("SEC", sec))
    }

    fn tape() -> Tape {
        let lines = [
            line("lifecycle", "0.000", r#""jsonrpc":"2.0","method":"$transport/start","params":{}"#),
            line("send", "0.100", r#""jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"</script><script>alert(1)</script>","arguments":{"t":"a\u2028b"}}"#),
            r#"{"jsonrpc":"2.0","method":"$note","params":{"text":"after the call </textarea>"},"_meta":{"dir":"lifecycle","server":"","ts":"2026-12-01T10:00:00.150Z"}}"#.to_owned(),
            line("recv", "0.400", "\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"x\u{2028}y\"}]}"),
        ];
        let text = lines.join("\n") + "\n";
        Tape::parse(std::path::Path::new("t.ndjson"), text.as_bytes()).expect("a valid tape")
    }

    #[test]
    fn the_data_has_the_exchange_the_note_and_each_raw_line() {
        let t = tape();
        let d = data::of(&t, None);
        let entries = d["entries"].as_array().expect("entries");
        assert_eq!(entries.len(), 4);
        // The request: line 2, send, connection 0, 100 ms in, exchange 0.
        assert_eq!(entries[1][0], 2);
        assert_eq!(entries[1][1], "s");
        assert_eq!(entries[1][2], 0);
        assert_eq!(entries[1][3], 100);
        assert_eq!(entries[1][4], 0);
        assert_eq!(entries[1][5], "q");
        // The note: in no connection, its text as the label.
        assert_eq!(entries[2][2], -1);
        assert_eq!(entries[2][5], "N");
        assert_eq!(entries[2][6], "after the call </textarea>");
        assert_eq!(d["notes"], serde_json::json!([2]));
        // The raw line is the tape's, byte for byte (the \u2028 escape stays an escape).
        let raw = t.original().expect("parsed from bytes");
        let second = std::str::from_utf8(&raw)
            .expect("utf-8")
            .lines()
            .nth(1)
            .expect("line 2");
        assert_eq!(entries[1][7], second);
        let x = &d["exchanges"][0];
        assert_eq!(x[2], 3, "answered by entry 3");
        assert_eq!((x[3].as_u64(), x[4].as_u64()), (Some(100), Some(400)));
        assert_eq!(x[5], "ok");
    }

    #[test]
    fn nothing_from_the_tape_reaches_the_page_as_markup() {
        let page = render(&tape(), None);
        let body = page
            .split("<script type=\"application/json\"")
            .nth(1)
            .expect("data block");
        let data = body.split("</script>").next().expect("closed");
        for bad in ["<script>alert", "</textarea>", "<b>", "\u{2028}"] {
            assert!(!data.contains(bad), "{bad:?} in the data block");
        }
        // The data block is closed once, by the page, and the note is still there, escaped.
        assert!(
            data.contains("after the call \\u003c/textarea\\u003e"),
            "{data}"
        );
        assert_eq!(
            page.matches("</script>").count(),
            2,
            "the data block and the script"
        );
    }
}
