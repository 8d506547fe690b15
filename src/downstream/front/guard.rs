//! What the HTTP front refuses before a request reaches a session, and the one place
//! that maps each refusal ([`Rejection`]) to its HTTP status.
//!
//! - `Origin`: the spec asks servers to validate it on every request and to answer a
//!   present, invalid one with `403` (Streamable HTTP, "Security Warning":
//!   <https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#security-warning>).
//!   Allowed: none (a non-browser client), or an origin on this machine (`localhost`
//!   or a loopback address, any scheme and port).
//! - `Host`, when the front listens on a loopback address: a page that rebinds its own
//!   name to 127.0.0.1 (DNS rebinding) still sends its name as `Host`, so only
//!   `localhost` and loopback addresses are served (any port: `ssh -L` and other port
//!   forwards keep the name). A missing `Host` is a `400` (RFC 9112 §3.2). On another
//!   address the names the front is reached by are unknown, and `Host` is not checked.
//! - The body: at most [`MAX_BODY_BYTES`], all of it within the body timeout; a client
//!   that stalls mid-body gets `408` and the connection is closed.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::{Request, Response, StatusCode};
use thiserror::Error;

/// Largest request body the front accepts.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Why the front refused a request.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// An `Origin` that is not on this machine.
    #[error("Origin `{0}` is not allowed (only localhost and loopback addresses)")]
    Origin(String),
    /// A `Host` that is not a name of this machine, on a loopback listener.
    #[error("Host `{0}` is not allowed here (only localhost and loopback addresses)")]
    Host(String),
    /// No `Host` header, on a loopback listener.
    #[error("a Host header is required")]
    NoHost,
    /// The body did not arrive whole in time.
    #[error("the request body did not arrive within {} (--body-timeout)", humantime::format_duration(*.0))]
    BodyTimeout(Duration),
    /// The body is larger than [`MAX_BODY_BYTES`].
    #[error("the request body is larger than {0} bytes")]
    TooLarge(usize),
    /// The body could not be read (the client went away mid-body).
    #[error("the request body could not be read")]
    BodyBroken,
    /// A method the front does not serve.
    #[error("GET, POST or DELETE")]
    Method,
    /// A body that is not one JSON-RPC message.
    #[error("the body is not a JSON-RPC message")]
    NotJsonRpc,
    /// No `Mcp-Session-Id` on a request other than `initialize` that names no protocol
    /// version of the stateless revision either (those are served on their own:
    /// [`crate::downstream::front::stateless`]).
    #[error("Mcp-Session-Id is required after initialize")]
    SessionRequired,
    /// An `Mcp-Session-Id` the front does not know: never given, deleted, or expired
    /// (`--session-idle`); the client starts a new session.
    #[error("no such session")]
    NoSession,
    /// A `GET` whose `Accept` does not take `text/event-stream`.
    #[error("a GET must accept text/event-stream")]
    NotEventStream,
    /// A second GET stream of a session while one is open, not resuming (no
    /// `Last-Event-ID`).
    #[error("this session's GET stream is already open")]
    GetStreamOpen,
    /// The upstream refused its GET stream with this status (`405`: it offers none).
    #[error("the upstream server offers no GET stream (it answered {0})")]
    NoUpstreamGet(u16),
}

impl Rejection {
    /// The HTTP status of this refusal.
    pub fn status(&self) -> StatusCode {
        match self {
            Rejection::Origin(_) | Rejection::Host(_) => StatusCode::FORBIDDEN,
            Rejection::NoHost
            | Rejection::BodyBroken
            | Rejection::NotJsonRpc
            | Rejection::SessionRequired => StatusCode::BAD_REQUEST,
            Rejection::Method => StatusCode::METHOD_NOT_ALLOWED,
            Rejection::NoSession => StatusCode::NOT_FOUND,
            Rejection::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Rejection::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Rejection::NotEventStream => StatusCode::NOT_ACCEPTABLE,
            Rejection::GetStreamOpen => StatusCode::CONFLICT,
            Rejection::NoUpstreamGet(status) => {
                StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_GATEWAY)
            }
        }
    }

    /// The response: the status, and the reason as text. A body left unread closes the
    /// connection.
    pub fn response(&self) -> Response<BoxBody<Bytes, Infallible>> {
        let text = format!("mcptape: {self}\n");
        let mut r = Response::new(Full::new(Bytes::from(text)).map_err(|e| match e {}).boxed());
        *r.status_mut() = self.status();
        if *self == Rejection::Method || *self == Rejection::NoUpstreamGet(405) {
            let allow = match self {
                Rejection::Method => "GET, POST, DELETE",
                _ => "POST, DELETE",
            };
            r.headers_mut().insert(
                hyper::header::ALLOW,
                hyper::header::HeaderValue::from_static(allow),
            );
        }
        if matches!(
            self,
            Rejection::BodyTimeout(_) | Rejection::TooLarge(_) | Rejection::BodyBroken
        ) {
            r.headers_mut().insert(
                hyper::header::CONNECTION,
                hyper::header::HeaderValue::from_static("close"),
            );
        }
        r
    }
}

/// The header checks of one listener.
#[derive(Debug, Clone, Copy)]
pub struct Guard {
    /// Check `Host`: the front listens on a loopback address.
    check_host: bool,
}

impl Guard {
    /// The checks for a front listening on `local`.
    pub fn new(local: SocketAddr) -> Guard {
        Guard {
            check_host: local.ip().is_loopback(),
        }
    }

    /// Refuses a request whose `Origin` or `Host` is not allowed.
    pub fn check<B>(&self, req: &Request<B>) -> Result<(), Rejection> {
        let text = |name: &str| {
            req.headers()
                .get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        };
        if let Some(origin) = text("origin") {
            let authority = origin.split_once("://").map_or("", |(_, a)| a);
            if !is_local(authority) {
                return Err(Rejection::Origin(origin));
            }
        }
        if self.check_host {
            match text("host") {
                None => return Err(Rejection::NoHost),
                Some(host) if !is_local(&host) => return Err(Rejection::Host(host)),
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// True for `localhost` or a loopback address, with or without a port:
/// `localhost:8080`, `127.0.0.1`, `[::1]:9`.
fn is_local(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((v6, "")) => v6,
            Some((v6, port)) if port.strip_prefix(':').is_some_and(is_port) => v6,
            _ => return false,
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return false,
            None => authority,
        },
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Digits, at least one.
fn is_port(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// Reads a request's whole body, at most [`MAX_BODY_BYTES`], within `deadline`.
pub async fn read_body<B>(body: B, deadline: Duration) -> Result<Bytes, Rejection>
where
    B: hyper::body::Body,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let limited = http_body_util::Limited::new(body, MAX_BODY_BYTES);
    match tokio::time::timeout(deadline, limited.collect()).await {
        Err(_) => Err(Rejection::BodyTimeout(deadline)),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            Err(Rejection::TooLarge(MAX_BODY_BYTES))
        }
        Ok(Err(_)) => Err(Rejection::BodyBroken),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request<()> {
        let mut b = Request::builder().method("POST").uri("/mcp");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).expect("a request")
    }

    fn loopback() -> Guard {
        Guard::new(SocketAddr::from(([127, 0, 0, 1], 8080)))
    }

    #[test]
    fn local_names_with_any_port_are_local() {
        for ok in [
            "localhost",
            "LocalHost:3000",
            "127.0.0.1",
            "127.0.0.1:8080",
            "127.1.2.3:9",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_local(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "localhost:80x",
            "localhost:",
            "10.0.0.1:8080",
            "[::2]:80",
            "[::1]x",
            "::1",
            "",
        ] {
            assert!(!is_local(bad), "{bad}");
        }
    }

    #[test]
    fn a_rebinding_host_is_refused_on_loopback_only() {
        let evil = request(&[("host", "rebind.evil.example:8080")]);
        assert_eq!(
            loopback().check(&evil),
            Err(Rejection::Host("rebind.evil.example:8080".into()))
        );
        assert_eq!(
            loopback().check(&evil).map_err(|r| r.status()),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            loopback().check(&request(&[("host", "localhost:8080")])),
            Ok(())
        );
        assert_eq!(loopback().check(&request(&[])), Err(Rejection::NoHost));
        let public = Guard::new(SocketAddr::from(([0, 0, 0, 0], 8080)));
        assert_eq!(public.check(&evil), Ok(()));
    }

    #[test]
    fn each_refusal_has_its_status_and_a_slow_body_closes_the_connection() {
        let r = Rejection::BodyTimeout(Duration::from_secs(30)).response();
        assert_eq!(r.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(r.headers()["connection"], "close");
        let r = Rejection::Method.response();
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(r.headers()["allow"], "GET, POST, DELETE");
        let r = Rejection::NoUpstreamGet(405).response();
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(r.headers()["allow"], "POST, DELETE");
        assert_eq!(Rejection::NoSession.status(), StatusCode::NOT_FOUND);
        assert_eq!(
            Rejection::TooLarge(1).status(),
            StatusCode::PAYLOAD_TOO_LARGE
        );
        assert_eq!(Rejection::NoHost.status(), StatusCode::BAD_REQUEST);
    }

    #[test]
    fn a_foreign_origin_is_refused_everywhere() {
        let req = request(&[("host", "localhost"), ("origin", "https://evil.example")]);
        assert!(matches!(loopback().check(&req), Err(Rejection::Origin(_))));
        let public = Guard::new(SocketAddr::from(([0, 0, 0, 0], 8080)));
        assert!(matches!(public.check(&req), Err(Rejection::Origin(_))));
        let null = request(&[("host", "localhost"), ("origin", "null")]);
        assert!(matches!(loopback().check(&null), Err(Rejection::Origin(_))));
        let local = request(&[("host", "localhost"), ("origin", "http://localhost:5173")]);
        assert_eq!(loopback().check(&local), Ok(()));
    }
}
