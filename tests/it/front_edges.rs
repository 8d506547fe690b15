//! The HTTP front at its edges, over real sockets: a stopped front deletes the upstream
//! sessions it still held, a refused tape under `mcptape record` leaves the front serving
//! unrecorded (and `record` exits 3).

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
