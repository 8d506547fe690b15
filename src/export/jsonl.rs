//! `--format jsonl`: each entry as one plain JSON object per line, in tape order:
//! `{"line","dir","server","conn","ts","batch"?,"stream"?,"message"}`, the message as
//! parsed with the tape's `_meta` split out (a part nested too deep to read becomes
//! [`crate::depth`]'s marker string, never a crash). Notes are included (`dir:
//! lifecycle`, `conn: null`: they belong to no connection).

use serde_json::{Value, json};

use crate::tape::Tape;

/// Every entry, one JSON object per line.
pub fn render(tape: &Tape) -> String {
    let mut conn_of: Vec<Option<&str>> = vec![None; tape.entries.len()];
    let conns = tape.connections();
    for c in &conns {
        for &i in &c.entries {
            conn_of[i] = Some(c.id.as_str());
        }
    }
    let mut out = String::new();
    for (i, e) in tape.entries.iter().enumerate() {
        let mut v = json!({
            "line": e.line,
            "dir": e.meta.dir.as_str(),
            "server": e.meta.server,
            "conn": conn_of[i].map(str::to_owned).or_else(|| e.meta.conn.clone()),
            "ts": e.meta.ts,
        });
        if let Some(b) = e.meta.batch {
            v["batch"] = json!(b);
        }
        if let Some(s) = e.meta.stream {
            v["stream"] = json!(s.as_str());
        }
        v["message"] = match e.message.value() {
            Value::Null if !e.message.text().trim().eq("null") => {
                Value::String(e.message.text().to_owned())
            }
            m => m,
        };
        out.push_str(&crate::term::json_compact(&v));
        out.push('\n');
    }
    out
}
