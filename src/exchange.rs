//! A tape read as exchanges: each request paired with its answer, how long it took, and
//! how it came out, per connection. The one pairing that `view`, `check` and `export`
//! share (`show` prints entries one by one and pairs as it goes).
//!
//! - A client request (a `send` request) is answered by the `recv` response or error of
//!   the same id on its connection; a server request (a `recv` request: sampling, roots,
//!   elicitation, ping) by the `send` answer of its id. A reused id pairs with the latest
//!   request of that id still open.
//! - A `$fault` or `$policy/decision` entry naming an id is joined to the open (or last)
//!   exchange of that id: it says why the answer is what it is.
//! - Notifications, lifecycle entries and notes are not exchanges; [`Exchanges::marks`]
//!   lists the first two per connection, and [`crate::tape::Tape::notes`] the notes.
//!
//! Nothing here prints: the outcome is typed ([`Status`]), for each caller to show.

use std::collections::HashMap;
use std::time::SystemTime;

use serde_json::Value;

use crate::message::Kind;
use crate::tape::lifecycle::Lifecycle;
use crate::tape::policy::Resolution;
use crate::tape::{Connection, Direction, Entry, Tape};

/// How an exchange came out.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// A result (not a tool error).
    Ok,
    /// A `tools/call` result with `isError: true`.
    ToolError,
    /// A JSON-RPC error, its code (when an integer) and message.
    Error {
        /// `error.code`.
        code: Option<i64>,
        /// `error.message`.
        message: String,
    },
    /// The policy gate answered instead of the server (refused, dry-run) or the call was
    /// withdrawn before a decision ([`crate::tape::policy`]).
    Policy(Resolution),
    /// An injected fault changed or withheld the answer ([`crate::tape::fault`]).
    Fault,
    /// No answer on the tape (the connection closed, the tape ended or was truncated).
    Unanswered,
}

impl Status {
    /// The word for it in reports and the view: `ok`, `tool-error`, `error`, `policy`,
    /// `fault`, `unanswered`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::ToolError => "tool-error",
            Status::Error { .. } => "error",
            Status::Policy(_) => "policy",
            Status::Fault => "fault",
            Status::Unanswered => "unanswered",
        }
    }
}

/// One request and what answered it.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// Index of its connection in [`Exchanges::connections`].
    pub conn: usize,
    /// Who asked: [`Direction::Send`] for the client, [`Direction::Recv`] for the server.
    pub from: Direction,
    /// The request's entry (an index into [`Tape::entries`]).
    pub request: usize,
    /// The answer's entry, when the tape has one.
    pub answer: Option<usize>,
    /// The request's id, as raw JSON (`1`, `"a"`).
    pub id: String,
    /// The request's method.
    pub method: String,
    /// For `tools/call`, the tool's name.
    pub tool: Option<String>,
    /// When the request was recorded.
    pub started: Option<SystemTime>,
    /// When the answer was recorded.
    pub ended: Option<SystemTime>,
    /// The `$fault` entry on this exchange, if any.
    pub fault: Option<usize>,
    /// The `$policy/decision` entry on this exchange, if any.
    pub policy: Option<usize>,
    /// How it came out.
    pub status: Status,
}

impl Exchange {
    /// How long the answer took, when both ends have a time.
    pub fn duration(&self) -> Option<std::time::Duration> {
        self.ended?.duration_since(self.started?).ok()
    }
}

/// The exchanges of a whole tape.
#[derive(Debug)]
pub struct Exchanges {
    /// The tape's connections ([`Tape::connections`]), in the order they started.
    pub connections: Vec<Connection>,
    /// Every exchange, connection by connection, each in the order its request was
    /// recorded.
    pub exchanges: Vec<Exchange>,
    /// Per connection (same index): its entries that are not part of an exchange
    /// (notifications, lifecycle entries), as indexes into [`Tape::entries`].
    pub marks: Vec<Vec<usize>>,
}

/// The time of an entry, when it has one that parses.
pub fn time(entry: &Entry) -> Option<SystemTime> {
    humantime::parse_rfc3339(entry.meta.ts.as_deref()?).ok()
}

impl Exchanges {
    /// Pairs every request of `tape` with its answer.
    pub fn of(tape: &Tape) -> Exchanges {
        let connections = tape.connections();
        let mut exchanges: Vec<Exchange> = Vec::new();
        let mut marks = Vec::with_capacity(connections.len());
        for (c, conn) in connections.iter().enumerate() {
            let mut mine = Vec::new();
            // (who asked, id) → the open exchange, an index into `exchanges`.
            let mut open: HashMap<(Direction, String), usize> = HashMap::new();
            // id → the latest exchange of that id, open or not (for `$fault`/`$policy`).
            let mut last: HashMap<String, usize> = HashMap::new();
            for &i in &conn.entries {
                let e = &tape.entries[i];
                let dir = e.meta.dir;
                match (dir, e.message.kind()) {
                    (Direction::Lifecycle, _) => {
                        mine.push(i);
                        match Lifecycle::of(e) {
                            Some(Lifecycle::Fault(f)) => {
                                if let Some(&x) = f.id.and_then(|id| last.get(&id)) {
                                    let ex = &mut exchanges[x];
                                    ex.fault = Some(i);
                                    // A fault that withheld the answer is why none came.
                                    if ex.status == Status::Unanswered {
                                        ex.status = Status::Fault;
                                    }
                                }
                            }
                            Some(Lifecycle::Policy(p)) => {
                                if let Some(&x) = p.id.as_ref().and_then(|id| last.get(id)) {
                                    let ex = &mut exchanges[x];
                                    ex.policy = Some(i);
                                    if p.resolution != Resolution::Allowed {
                                        ex.status = Status::Policy(p.resolution);
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                    (_, Kind::Request) => {
                        let id = id_of(e);
                        let method = e.message.method().unwrap_or("").to_owned();
                        let tool = (method == "tools/call")
                            .then(|| {
                                e.message.value()["params"]["name"]
                                    .as_str()
                                    .map(str::to_owned)
                            })
                            .flatten();
                        let x = exchanges.len();
                        exchanges.push(Exchange {
                            conn: c,
                            from: dir,
                            request: i,
                            answer: None,
                            id: id.clone(),
                            method,
                            tool,
                            started: time(e),
                            ended: None,
                            fault: None,
                            policy: None,
                            status: Status::Unanswered,
                        });
                        open.insert((dir, id.clone()), x);
                        last.insert(id, x);
                    }
                    (_, Kind::Response | Kind::Error) => {
                        let asker = match dir {
                            Direction::Send => Direction::Recv,
                            _ => Direction::Send,
                        };
                        let id = id_of(e);
                        match open.remove(&(asker, id)) {
                            Some(x) => answer(&mut exchanges[x], i, e),
                            None => mine.push(i),
                        }
                    }
                    _ => mine.push(i),
                }
            }
            marks.push(mine);
        }
        Exchanges {
            connections,
            exchanges,
            marks,
        }
    }
}

/// A message's id as compact JSON (`"a"`, `7`), the spelling `$fault` and
/// `$policy/decision` entries use; `null` when it has none.
fn id_of(e: &Entry) -> String {
    let raw = e.message.id().unwrap_or("null");
    serde_json::from_str::<Value>(raw).map_or_else(|_| raw.to_owned(), |v| v.to_string())
}

/// Records `e` (at index `i`) as the answer of `ex`, and how it came out (a policy or
/// fault already joined keeps its status).
fn answer(ex: &mut Exchange, i: usize, e: &Entry) {
    ex.answer = Some(i);
    ex.ended = time(e);
    if matches!(ex.status, Status::Policy(_)) {
        return;
    }
    let v = e.message.value();
    ex.status = if ex.fault.is_some() {
        Status::Fault
    } else if e.message.kind() == Kind::Error {
        Status::Error {
            code: v["error"]["code"].as_i64(),
            message: v["error"]["message"].as_str().unwrap_or("").to_owned(),
        }
    } else if v["result"]["isError"] == Value::Bool(true) {
        Status::ToolError
    } else {
        Status::Ok
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tape(lines: &[&str]) -> Tape {
        let text = lines.join("\n") + "\n";
        Tape::parse(std::path::Path::new("t.ndjson"), text.as_bytes()).expect("a valid tape")
    }

    const M: &str =
        r#""_meta":{"dir":"DIR","server":"s","conn":"c1","ts":"2026-12-01T10:00:0SECZ"}"#;

    fn line(dir: &str, sec: &str, body: &str) -> String {
        format!("{{{body},{}}}", M.replace("DIR", dir).replace("SEC", sec))
    }

    #[test]
    fn requests_pair_with_their_answers_and_say_how_they_came_out() {
        let lines = [
            line(
                "lifecycle",
                "0.000",
                r#""jsonrpc":"2.0","method":"$transport/start","params":{}"#,
            ),
            line(
                "send",
                "0.000",
                r#""jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}"#,
            ),
            line(
                "send",
                "0.100",
                r#""jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"boom"}"#,
            ),
            line(
                "recv",
                "0.200",
                r#""jsonrpc":"2.0","method":"notifications/progress","params":{}"#,
            ),
            line(
                "recv",
                "0.250",
                r#""jsonrpc":"2.0","id":2,"result":{"isError":true,"content":[]}"#,
            ),
            line(
                "recv",
                "0.500",
                r#""jsonrpc":"2.0","id":1,"result":{"content":[]}"#,
            ),
            line(
                "recv",
                "0.600",
                r#""jsonrpc":"2.0","id":"s1","method":"roots/list""#,
            ),
            line(
                "send",
                "0.700",
                r#""jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"no"}"#,
            ),
            line(
                "send",
                "0.800",
                r#""jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"del"}"#,
            ),
            line(
                "lifecycle",
                "0.800",
                r#""jsonrpc":"2.0","method":"$policy/decision","params":{"id":3,"method":"tools/call","tool":"del","decision":"deny","rules":["r"],"resolution":"refused"}"#,
            ),
            line(
                "recv",
                "0.800",
                r#""jsonrpc":"2.0","id":3,"result":{"isError":true,"content":[]}"#,
            ),
            line("send", "0.900", r#""jsonrpc":"2.0","id":4,"method":"ping""#),
        ];
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let t = tape(&refs);
        let x = Exchanges::of(&t);
        assert_eq!(x.connections.len(), 1);
        let got: Vec<(&str, &str, Option<&str>, &str)> = x
            .exchanges
            .iter()
            .map(|e| {
                (
                    e.id.as_str(),
                    e.method.as_str(),
                    e.tool.as_deref(),
                    e.status.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("1", "tools/call", Some("echo"), "ok"),
                ("2", "tools/call", Some("boom"), "tool-error"),
                ("\"s1\"", "roots/list", None, "error"),
                ("3", "tools/call", Some("del"), "policy"),
                ("4", "ping", None, "unanswered"),
            ]
        );
        assert_eq!(
            x.exchanges[0].duration(),
            Some(std::time::Duration::from_millis(500))
        );
        assert_eq!(x.exchanges[2].from, Direction::Recv);
        assert!(x.exchanges[3].policy.is_some());
        // start, the progress notification, the policy entry.
        assert_eq!(x.marks[0].len(), 3);
    }
}
