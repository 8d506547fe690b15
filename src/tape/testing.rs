//! Tapes for unit tests: a recorded line from a message, and a tape of server `s` on disk.

use crate::tape::ServerTape;

/// The tape line of `msg` (a JSON object, one line) with its `_meta`: direction `dir`,
/// server `s`, connection `conn`, and the RFC 3339 time `ts` when given.
pub(crate) fn line(msg: &str, dir: &str, conn: &str, ts: Option<&str>) -> String {
    let ts = ts.map_or(String::new(), |ts| format!(r#","ts":"{ts}""#));
    let body = msg.strip_suffix('}').expect("a JSON object");
    format!(r#"{body},"_meta":{{"dir":"{dir}","server":"s"{ts},"conn":"{conn}"}}}}"#) + "\n"
}

/// `text` written as a tape and loaded as server `s`'s; the directory holds the file.
pub(crate) fn load(text: &str) -> (ServerTape, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.ndjson");
    std::fs::write(&path, text).expect("write the tape");
    let tape = ServerTape::load(&path, "s").expect("load the tape");
    (tape, dir)
}
