//! The HTTP front at its edges, over real sockets: a stopped front deletes the upstream
//! sessions it still held, a refused tape under `mcptape record` leaves the front serving
//! unrecorded (and `record` exits 3), and `verify`'s receipt is private and redacted.

use std::os::unix::fs::{PermissionsExt, symlink};

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

#[test]
fn verify_writes_its_receipt_0600_with_the_command_redacted() {
    let env = Env::new();
    record_py(&env, "t.ndjson", "example", "example", &[example_server()]);
    let tape = env.path("t.ndjson");
    let receipt = env.path("t.verify.json");
    // An earlier receipt, readable by all: it is tightened too.
    std::fs::write(&receipt, "{}\n").expect("write");
    std::fs::set_permissions(&receipt, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    const SECRET: &str = "hunter2-do-not-keep-0123456789";
    // `sh` runs the server and ignores the flags after it; the receipt names them all.
    let out = run(env
        .mcptape(["verify"])
        .arg(&tape)
        .args(["--", "sh", "-c", "exec \"$0\""])
        .arg(example_server())
        .args(["--api-key", SECRET]));
    assert!(out.status.success(), "{}", text(&out));
    let mode = std::fs::metadata(&receipt)
        .expect("stat")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "receipt mode {mode:o}");
    let written = std::fs::read_to_string(&receipt).expect("receipt");
    assert!(!written.contains(SECRET), "{written}");
    assert!(written.contains("--api-key [REDACTED]"), "{written}");
    assert!(written.contains("example-server"), "{written}");
    assert!(
        !text(&out).contains(SECRET),
        "the report shows it: {}",
        text(&out)
    );
}

#[test]
fn verify_against_a_url_redacts_its_credentials_in_the_receipt() {
    let env = Env::new();
    record_everything(&env, "s");
    let server = HttpServer::start();
    const SECRET: &str = "Zq8rT3vX9kLm2Wp7Yb4Nc6Hd";
    // The server ignores both; a URL in an agent's config may well carry them.
    let url = server
        .url
        .replacen("http://", &format!("http://user:{SECRET}@"), 1)
        + &format!("?access_token={SECRET}");
    let out = run(env.mcptape(["verify", "s", "--allow-writes", "--url", &url]));
    assert!(out.status.success(), "{}", text(&out));
    let receipt = env.mcptape_home().join("recordings/s.verify.json");
    let written = std::fs::read_to_string(&receipt).expect("receipt");
    assert!(!written.contains(SECRET), "{written}");
    assert!(written.contains("127.0.0.1"), "{written}");
    let mode = std::fs::metadata(&receipt)
        .expect("stat")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "receipt mode {mode:o}");
}
