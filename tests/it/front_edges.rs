//! The HTTP front at its edges, over real sockets: a stopped front deletes the upstream
//! sessions it still held, and closes their recordings even when a `DELETE` never gets
//! an answer; a refused tape under `mcptape record` leaves the front serving unrecorded
//! (and `record` exits 3).

use std::os::unix::fs::symlink;

use crate::http::HttpServer;
use crate::http_limits::{LimitedFront, post, status_line};
use crate::support::*;

const HOST: &str = "Host: 127.0.0.1\r\n";
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The `Mcp-Session-Id` header of an HTTP answer.
fn session_id(answer: &str) -> String {
    answer
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {answer}"))
}

/// Opens a session through `front` (initialize, then initialized).
fn open_session(front: &LimitedFront) -> String {
    let answer = post(front, HOST, INIT);
    assert!(status_line(&answer).contains("200"), "{answer}");
    let session = session_id(&answer);
    let with_session = format!("{HOST}Mcp-Session-Id: {session}\r\n");
    let answer = post(front, &with_session, INITIALIZED);
    assert!(status_line(&answer).contains("202"), "{answer}");
    session
}

#[test]
fn a_stopped_front_deletes_the_upstream_sessions_it_held() {
    // The upstream is a second front, recording, before server-everything: it closes a
    // session's tape connection when that session's DELETE reaches it (and only then,
    // while it runs). So its tape shows whether the first front's DELETE arrived.
    let env = Env::new();
    let server = HttpServer::start();
    let upstream_tape = env.path("upstream.ndjson");
    let upstream = LimitedFront::start(
        &env,
        &[
            "--url",
            &server.url,
            "--record",
            upstream_tape.to_str().expect("utf-8 path"),
        ],
        None,
    );
    let upstream_url = format!("http://{}/mcp", upstream.authority);
    let mut front = LimitedFront::start(&env, &["--url", &upstream_url], None);
    open_session(&front);
    let closes = |tape| lifecycle(&tape_entries(tape), "$transport/close").len();
    assert_eq!(closes(&upstream_tape), 0, "the upstream session is open");

    let status = front.stop_here();
    assert!(status.success(), "{status:?}");
    // Deleted before the front exited, while the upstream still runs.
    assert_eq!(
        closes(&upstream_tape),
        1,
        "the stopped front did not DELETE its upstream session"
    );
    drop(upstream);
}

#[test]
fn a_refused_tape_under_record_leaves_the_front_serving_unrecorded_and_record_exits_3() {
    let env = Env::new();
    let server = HttpServer::start();
    let victim = env.path("victim");
    std::fs::write(&victim, "untouched\n").expect("write victim");
    let link = env.path("link.ndjson");
    symlink(&victim, &link).expect("symlink");
    // `env` in between points the proxy's MCPTAPE_RECORD at the link; MCPTAPE_REPORT
    // stays the `record` parent's.
    let mut cmd = env.mcptape(["record", "s", "--", "env"]);
    cmd.arg(format!("MCPTAPE_RECORD={}", link.display()))
        .arg(bin())
        .args(["proxy", "--server", "everything", "--listen", "127.0.0.1:0"])
        .args(["--url", &server.url]);
    // (Its warning, `not recording server`, comes before it listens.)
    let mut front = LimitedFront::spawn(&mut cmd);
    // It serves: a session opens through it, to the live server.
    open_session(&front);

    // SIGTERM to `record`, which passes it on to the front.
    let status = front.stop_here();
    assert_eq!(status.code(), Some(3), "{status:?}");
    front.wait_line("the recording of server `everything` is incomplete");
    assert_eq!(
        std::fs::read_to_string(&victim).expect("read victim"),
        "untouched\n"
    );
    assert!(std::fs::symlink_metadata(&link).expect("link").is_symlink());
}

/// A Streamable HTTP upstream on a port-0 listener, on threads of the test: it answers
/// `initialize` with a session id and anything else POSTed with `202`; a `DELETE` it
/// reads, says so on the returned channel, and never answers. Its URL and that channel.
fn upstream_that_never_answers_delete() -> (String, std::sync::mpsc::Receiver<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (deleted, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let deleted = deleted.clone();
            std::thread::spawn(move || serve_upstream(stream, &deleted));
        }
    });
    (url, rx)
}

/// One connection of that upstream: its requests, one after another.
fn serve_upstream(stream: std::net::TcpStream, deleted: &std::sync::mpsc::Sender<()>) {
    use std::io::{BufRead, Read, Write};
    let mut reader = std::io::BufReader::new(stream.try_clone().expect("clone"));
    let mut stream = stream;
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"up","version":"0"}}}"#;
    loop {
        let (mut first, mut length) = (String::new(), 0);
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().expect("a length");
            }
            if first.is_empty() {
                first = line;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).expect("the body");
        if first.starts_with("DELETE") {
            let _ = deleted.send(());
            // Holds the connection open, and never answers: until the test ends.
            let _ = reader.read_to_end(&mut Vec::new());
            return;
        }
        let reply = if String::from_utf8_lossy(&body).contains(r#""initialize""#) {
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: up-1\r\nContent-Length: {}\r\n\r\n{answer}",
                answer.len()
            )
        } else {
            "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_owned()
        };
        stream.write_all(reply.as_bytes()).expect("reply");
    }
}

#[test]
fn a_recording_ends_with_its_close_and_exit_0_when_the_upstream_never_answers_the_delete() {
    let env = Env::new();
    let (url, deleted) = upstream_that_never_answers_delete();
    let tape = env.path("front.ndjson");
    let mut front = LimitedFront::start(
        &env,
        &[
            "--url",
            &url,
            "--record",
            tape.to_str().expect("utf-8 path"),
        ],
        None,
    );
    open_session(&front);
    let term = |front: &LimitedFront| {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(front.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("kill")
    };
    term(&front);
    deleted
        .recv_timeout(DEADLINE)
        .expect("the stopped front sent its DELETE");
    // The DELETE hangs: a second signal stops the wait for it.
    term(&front);
    let status = wait_child(&mut front.child);
    assert_eq!(status.code(), Some(0), "{status:?}");
    front.wait_line("1 upstream session(s) not deleted");
    let entries = tape_entries(&tape);
    let closes = lifecycle(&entries, "$transport/close");
    assert_eq!(closes.len(), 1, "{entries:?}");
    assert_eq!(
        closes[0]["params"]["reason"], "session ended",
        "{entries:?}"
    );
    assert_eq!(
        entries.last().map(|e| e["method"].clone()),
        Some("$transport/close".into()),
        "the close ends the connection"
    );
}
