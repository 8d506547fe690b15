//! Where the HTTP front gives a server's messages: the progress of a request goes on that
//! request's own stream (by its `progressToken`), also while another request's stream is
//! newer or once that one was answered — against server-everything over Streamable HTTP.

use crate::get_stream::{read_to, request, session_of};
use crate::http::{Front, HttpServer};
use crate::support::*;

/// The front's `host:port`.
fn authority(front: &Front) -> String {
    front
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

/// A POST of `body` to the front, in session `session` when given.
fn post(authority: &str, session: Option<&str>, body: &str) -> std::net::TcpStream {
    let id = session.map_or(String::new(), |s| {
        format!("\r\nMcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-06-18")
    });
    let head = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream{id}"
    );
    request(authority, &head, body)
}

/// A session with the front, initialized; its id.
fn initialized(authority: &str) -> String {
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let head = read_to(&mut post(authority, None, init), "serverInfo");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let session = session_of(&head);
    let done = read_to(
        &mut post(
            authority,
            Some(&session),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ),
        "\r\n",
    );
    assert!(done.starts_with("HTTP/1.1 202"), "{done}");
    session
}

#[test]
fn progress_goes_on_its_own_requests_stream_while_another_request_comes_and_goes() {
    let env = Env::new();
    let server = HttpServer::start();
    let front = Front::start(&env, &["--url", &server.url]);
    let authority = authority(&front);
    let session = initialized(&authority);

    // A: four steps of progress, a quarter of a second apart.
    let mut slow = post(
        &authority,
        Some(&session),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":4},"_meta":{"progressToken":"slow"}}}"#,
    );
    let mut seen = read_to(&mut slow, r#""progress":1"#);
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    // B, while A runs: a newer stream, answered at once.
    let fast = read_to(
        &mut post(
            &authority,
            Some(&session),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"fast"}}}"#,
        ),
        "Echo: fast",
    );
    assert!(fast.contains(r#""id":2"#), "{fast}");
    assert!(
        !fast.contains("notifications/progress"),
        "A's progress is not on B's stream: {fast}"
    );
    seen.push_str(&read_to(&mut slow, "operation completed"));
    let steps: Vec<&str> = seen
        .split("data: ")
        .filter(|e| e.contains("notifications/progress"))
        .collect();
    assert_eq!(steps.len(), 4, "every step on A's stream: {seen}");
    assert!(
        steps
            .iter()
            .all(|s| s.contains(r#""progressToken":"slow""#))
    );
    assert!(
        seen.contains(r#""id":1}"#),
        "A's answer ends its stream: {seen}"
    );
    assert!(front.stop().success());
}

/// How many log messages the flood's server sends on the GET stream, and how big each is:
/// more than the front queues for a stream (4 MiB) and the kernel buffers between.
const FLOOD: (usize, usize) = (600, 24 * 1024);

/// A tape whose server answers the tool `flood` after sending [`FLOOD`] log messages on
/// the GET stream.
fn flood_tape() -> String {
    let meta = |dir: &str, extra: &str| {
        format!(r#""_meta":{{"dir":"{dir}","server":"s","conn":"c-1"{extra}}}}}"#)
    };
    let mut tape = String::new();
    let mut line = |body: &str, dir: &str, extra: &str| {
        tape.push_str(&format!("{body},{}\n", meta(dir, extra)));
    };
    line(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}"#,
        "send",
        "",
    );
    line(
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"logging":{},"tools":{}},"serverInfo":{"name":"s","version":"1"}}"#,
        "recv",
        "",
    );
    line(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized""#,
        "send",
        "",
    );
    line(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","arguments":{}}"#,
        "send",
        "",
    );
    let pad = "x".repeat(FLOOD.1);
    for n in 1..=FLOOD.0 {
        line(
            &format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"log {n} {pad}"}}"#
            ),
            "recv",
            r#","stream":"get""#,
        );
    }
    line(
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"flooded"}]}"#,
        "recv",
        "",
    );
    tape
}

/// A replaying front whose stderr lines the test reads as they come.
struct Listening {
    child: std::process::Child,
    authority: String,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Listening {
    fn replay(env: &Env, tape: &std::path::Path) -> Listening {
        use std::io::BufRead;
        let mut child = env
            .mcptape([
                "proxy",
                "--server",
                "s",
                "--listen",
                "127.0.0.1:0",
                "--replay",
            ])
            .arg(tape)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn the front");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        let mut front = Listening {
            child,
            authority: String::new(),
            lines,
        };
        let said = front.said("listening on ");
        let url = said.split("listening on ").nth(1).unwrap_or("");
        front.authority = url
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        front
    }

    /// The first stderr line from now that has `needle`, waited for with a deadline.
    fn said(&self, needle: &str) -> String {
        let until = std::time::Instant::now() + DEADLINE;
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(_) => panic!("the front did not say `{needle}` on stderr"),
            }
        }
    }

    /// The front's resident memory, in KiB (`VmRSS`).
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the front's status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .expect("VmRSS")
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A GET stream's connection whose client buffers little: one that stops reading makes
/// the front queue what it sends, instead of the kernel.
fn small_get(authority: &str, session: &str, extra: &str) -> std::net::TcpStream {
    use std::io::Write;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("a runtime");
    let stream = rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.set_recv_buffer_size(4096).expect("a small buffer");
        let addr = authority.parse().expect("an address");
        socket.connect(addr).await.expect("connect")
    });
    let mut s = stream.into_std().expect("a std stream");
    s.set_nonblocking(false).expect("blocking");
    s.set_read_timeout(Some(DEADLINE)).expect("a read deadline");
    write!(
        s,
        "GET /mcp HTTP/1.1\r\nHost: {authority}\r\nMcp-Session-Id: {session}\r\nAccept: text/event-stream{extra}\r\n\r\n"
    )
    .expect("write");
    s
}

/// What `s` says up to and including `needle` (or all it said, if it ended first): read
/// in large pieces, looking for `needle` only where it can newly be.
fn read_long(s: &mut std::net::TcpStream, needle: &str) -> String {
    use std::io::Read;
    let needle = needle.as_bytes();
    let mut seen = Vec::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let from = seen.len().saturating_sub(needle.len());
                seen.extend_from_slice(&buf[..n]);
                if seen[from..].windows(needle.len()).any(|w| w == needle) {
                    break;
                }
            }
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// The SSE event ids in what a stream said, in order.
fn ids(said: &str) -> Vec<usize> {
    said.lines()
        .filter_map(|l| l.strip_prefix("id: ")?.trim().parse().ok())
        .collect()
}

#[test]
fn a_get_stream_whose_client_stops_reading_is_closed_past_the_bound_and_resumes() {
    let env = Env::new();
    let tape = env.path("flood.ndjson");
    std::fs::write(&tape, flood_tape()).expect("write the tape");
    let front = Listening::replay(&env, &tape);
    let authority = front.authority.clone();
    let session = initialized(&authority);

    let mut get = small_get(&authority, &session, "");
    let head = read_to(&mut get, "\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    // The client stops reading its GET stream; the server floods it.
    let answer = read_long(
        &mut post(
            &authority,
            Some(&session),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","arguments":{}}}"#,
        ),
        "flooded",
    );
    assert!(
        answer.contains("flooded"),
        "{}",
        &answer[..answer.len().min(300)]
    );
    eprintln!("front VmRSS after the flood: {} KiB", front.rss_kib());
    let cut = front.said("reads too slowly");

    // It reads on: what was queued, then the end of the stream.
    let first = read_long(&mut get, "\r\n0\r\n\r\n");
    assert!(first.ends_with("\r\n0\r\n\r\n"), "the stream ended");
    let seen = ids(&first);
    let last = *seen.last().expect("some events");
    assert!(last < FLOOD.0, "not all {} were queued: {last}", FLOOD.0);
    assert_eq!(seen, (1..=last).collect::<Vec<_>>());
    assert!(cut.contains(&format!("before event {}", last + 1)), "{cut}");
    // With the GET stream closed, the rest went where the server's messages go while
    // none is open: the newest POST stream, the flood's own.
    let later = format!("log {} ", last + 2);
    assert!(answer.contains(&later) && answer.contains(&format!("log {} ", FLOOD.0)));

    // It resumes after the last id it saw: what was kept since (the one that did not fit).
    let mut again = small_get(&authority, &session, &format!("\r\nLast-Event-ID: {last}"));
    let rest = read_long(&mut again, &format!("log {} ", last + 1));
    assert!(
        rest.starts_with("HTTP/1.1 200"),
        "{}",
        &rest[..rest.len().min(300)]
    );
    assert_eq!(ids(&rest), [last + 1]);
}
