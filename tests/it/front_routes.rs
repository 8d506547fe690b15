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
    assert!(steps.iter().all(|s| s.contains(r#""progressToken":"slow""#)));
    assert!(seen.contains(r#""id":1}"#), "A's answer ends its stream: {seen}");
    assert!(front.stop().success());
}
