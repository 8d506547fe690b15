//! `--pace` on the HTTP front: a replayed answer keeps the delay it was recorded with
//! after its request; without `--pace` it comes as soon as it is asked for.

use std::time::{Duration, Instant};

use crate::get_stream::{authority, post, read_to, session_of};
use crate::http::Front;
use crate::support::*;

/// How long after its request the call's answer was recorded.
const GAP: Duration = Duration::from_millis(900);

/// A session recorded through the front: the call's answer came [`GAP`] after it.
const PACED: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}},"_meta":{"dir":"send","server":"s","ts":"2026-01-01T00:00:00.000Z","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}},"_meta":{"dir":"recv","server":"s","ts":"2026-01-01T00:00:00.010Z","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized","_meta":{"dir":"send","server":"s","ts":"2026-01-01T00:00:00.020Z","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}},"_meta":{"dir":"send","server":"s","ts":"2026-01-01T00:00:00.100Z","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"slow done"}]},"_meta":{"dir":"recv","server":"s","ts":"2026-01-01T00:00:01.000Z","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"reason":"session ended"},"_meta":{"dir":"lifecycle","server":"s","conn":"c-1"}}"#,
    "\n",
);

/// Replays [`PACED`] through the front with `args`; how long the call's answer took.
fn call_takes(args: &[&str]) -> Duration {
    let env = Env::new();
    let tape = env.path("paced.ndjson");
    std::fs::write(&tape, PACED).expect("write the tape");
    let tape = tape.display().to_string();
    let mut all = vec!["--replay", tape.as_str()];
    all.extend_from_slice(args);
    let front = Front::start_as(&env, "s", &all);
    let authority = authority(&front.url);
    let post = |session: Option<&str>, body: &str| post(&authority, session, body);
    let init = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let session = session_of(&read_to(&mut post(None, init), "serverInfo"));
    let done = read_to(
        &mut post(
            Some(&session),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ),
        "\r\n",
    );
    assert!(done.starts_with("HTTP/1.1 202"), "{done}");
    let asked = Instant::now();
    let answer = read_to(
        &mut post(
            Some(&session),
            r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#,
        ),
        "slow done",
    );
    let took = asked.elapsed();
    assert!(answer.contains("slow done"), "{answer}");
    assert!(front.stop().success(), "the replay's verdict failed");
    took
}

#[test]
fn with_pace_the_front_gives_an_answer_no_sooner_than_it_was_recorded() {
    let took = call_takes(&["--pace"]);
    assert!(
        took >= GAP,
        "answered after {took:?}, recorded {GAP:?} after"
    );
}

#[test]
fn without_pace_the_front_gives_the_answer_at_once() {
    let took = call_takes(&[]);
    assert!(took < GAP, "answered after {took:?}: paced without --pace");
}
