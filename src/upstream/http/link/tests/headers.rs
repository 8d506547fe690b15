//! What each request carries in its headers: the protocol version a stateless request
//! names, and a session id only from a success.

use super::*;

/// A stateless (2026-07-28) request names its protocol version in its body; the header
/// must say the same, or a server routes it as an old-era request.
#[tokio::test]
async fn a_stateless_request_carries_the_protocol_version_its_body_names() {
    let (url, mut seen_rx) = server(|_| done(status(200, ANSWER))).await;
    let mut link = link(&url);
    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    link.send(msg(discover)).await.expect("sent");
    let probe = seen(&mut seen_rx).await;
    assert_eq!(
        probe.protocol,
        ["2026-07-28"],
        "one header, the body's version"
    );
    // A message that names none carries none before a version is negotiated.
    link.send(msg(REQUEST)).await.expect("sent");
    assert!(seen(&mut seen_rx).await.protocol.is_empty());
}

/// A session id that comes with a refusal (FastMCP answers an old-era probe `400` with a
/// fresh `mcp-session-id`) is not the client's session: later requests must not carry it.
#[tokio::test]
async fn a_session_id_from_a_failed_answer_is_not_adopted() {
    let (url, mut seen_rx) = server(|seen| {
        if seen.body.contains("server/discover") {
            let mut refused = status(400, "bad request");
            refused.headers_mut().insert(
                "mcp-session-id",
                hyper::header::HeaderValue::from_static("from-a-refusal"),
            );
            return done(refused);
        }
        done(status(200, ANSWER))
    })
    .await;
    let mut link = link(&url);
    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#;
    link.send(msg(discover)).await.expect("sent");
    let _ = seen(&mut seen_rx).await;
    link.send(msg(REQUEST)).await.expect("sent");
    let next = seen(&mut seen_rx).await;
    assert_eq!(next.session, None, "{:?}", next.body);
}
