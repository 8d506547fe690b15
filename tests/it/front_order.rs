//! The replay front's order over HTTP: requests a client had in flight together came on
//! POSTs of their own, which have no order on the wire, so any request of such a
//! recorded burst may come first.

use crate::get_stream::{authority, post, read_to, session_of};
use crate::http::Front;
use crate::support::*;

/// A session recorded through the front: `slow` was sent, then `fast` while `slow` was
/// still running; `fast` was answered first.
const BURST: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}},"_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}},"_meta":{"dir":"recv","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized","_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}},"_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast","arguments":{}},"_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"fast done"}]},"_meta":{"dir":"recv","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"slow done"}]},"_meta":{"dir":"recv","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"reason":"session ended"},"_meta":{"dir":"lifecycle","server":"s","conn":"c-1"}}"#,
    "\n",
);

#[test]
fn requests_recorded_in_flight_together_may_come_in_either_order_through_the_front() {
    let env = Env::new();
    let tape = env.path("burst.ndjson");
    std::fs::write(&tape, BURST).expect("write the tape");
    let front = Front::start_as(&env, "s", &["--replay", &tape.display().to_string()]);
    let authority = authority(&front.url);
    let post = |session: Option<&str>, body: &str| post(&authority, session, body);
    let init = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let head = read_to(&mut post(None, init), "serverInfo");
    let session = session_of(&head);
    let done = read_to(
        &mut post(
            Some(&session),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ),
        "\r\n",
    );
    assert!(done.starts_with("HTTP/1.1 202"), "{done}");

    // The second request of the burst arrives first, and is answered.
    let fast = read_to(
        &mut post(
            Some(&session),
            r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"fast","arguments":{}}}"#,
        ),
        "fast done",
    );
    assert!(
        fast.contains(r#""id":20"#) && fast.contains("fast done"),
        "{fast}"
    );
    let slow = read_to(
        &mut post(
            Some(&session),
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#,
        ),
        "slow done",
    );
    assert!(
        slow.contains(r#""id":10"#) && slow.contains("slow done"),
        "{slow}"
    );
    let status = front.stop();
    assert!(status.success(), "the replay's verdict failed: {status:?}");
}

/// A session recorded through the front whose client closed the stream of call 1 (the
/// stateless revision's cancel), then made call 2.
const CLOSED: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}},"_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}},"_meta":{"dir":"recv","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized","_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}},"_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":3},"_meta":{"dir":"recv","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"$http/cancelled","params":{"reason":"the client closed its stream","requestId":1},"_meta":{"dir":"lifecycle","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast","arguments":{}},"_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"fast done"}]},"_meta":{"dir":"recv","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"reason":"session ended"},"_meta":{"dir":"lifecycle","server":"s","conn":"c-1"}}"#,
    "\n",
);

/// Replays `CLOSED` through the front; the live client closes call 1's stream or keeps
/// it open. The front's exit status says whether the verdict held.
fn replay_closed(close_it: bool) -> std::process::ExitStatus {
    let env = Env::new();
    let tape = env.path("closed.ndjson");
    std::fs::write(&tape, CLOSED).expect("write the tape");
    let front = Front::start_as(&env, "s", &["--replay", &tape.display().to_string()]);
    let authority = authority(&front.url);
    let post = |session: Option<&str>, body: &str| post(&authority, session, body);
    let init = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let session = session_of(&read_to(&mut post(None, init), "serverInfo"));
    let session = Some(session.as_str());
    read_to(
        &mut post(
            session,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ),
        "\r\n",
    );
    let mut slow = post(
        session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"q"}}}"#,
    );
    // Its stream is open: its progress came (with the live token).
    let said = read_to(&mut slow, r#""progressToken":"q""#);
    assert!(said.starts_with("HTTP/1.1 200"), "{said}");
    if close_it {
        drop(slow);
        let fast = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast","arguments":{}}}"#;
        let said = read_to(&mut post(session, fast), "fast done");
        assert!(said.contains("fast done"), "{said}");
        front.stop()
    } else {
        let fast = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast","arguments":{}}}"#;
        let said = read_to(&mut post(session, fast), "fast done");
        assert!(said.contains("fast done"), "{said}");
        let status = front.stop();
        drop(slow);
        status
    }
}

#[test]
fn a_stream_the_recorded_client_closed_is_a_cancel_the_live_client_makes_by_closing_it_too() {
    assert!(replay_closed(true).success(), "closed as recorded");
    assert!(
        !replay_closed(false).success(),
        "the recorded client cancelled call 1; this one did not"
    );
}

/// A stream its client closed as its answer came: the tape holds the answer, then
/// `$http/cancelled` naming the request (as an older build wrote it). That cancelled
/// nothing, and the live client, which reads the answer, owes no cancel.
#[test]
fn a_stream_closed_after_its_answer_came_is_no_cancel_the_live_client_owes() {
    let env = Env::new();
    let tape = env.path("late.ndjson");
    let lines: Vec<&str> = CLOSED.lines().collect();
    let late = [
        lines[0],
        lines[1],
        lines[2],
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}},"_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"slow done"}]},"_meta":{"dir":"recv","server":"s","conn":"c-1"}}"#,
        r#"{"jsonrpc":"2.0","method":"$http/cancelled","params":{"reason":"the client closed its stream","requestId":1},"_meta":{"dir":"lifecycle","server":"s","conn":"c-1"}}"#,
        lines[lines.len() - 1],
    ];
    std::fs::write(&tape, late.join("\n") + "\n").expect("write the tape");
    let front = Front::start_as(&env, "s", &["--replay", &tape.display().to_string()]);
    let authority = authority(&front.url);
    let init = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let session = session_of(&read_to(&mut post(&authority, None, init), "serverInfo"));
    let session = Some(session.as_str());
    read_to(
        &mut post(
            &authority,
            session,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ),
        "\r\n",
    );
    let call =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#;
    let said = read_to(&mut post(&authority, session, call), "slow done");
    assert!(said.contains("slow done"), "{said}");
    assert!(front.stop().success(), "the verdict failed");
}
