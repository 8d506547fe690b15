//! The HTTP front's listening side: how many connections it serves at once, how it rides
//! out running out of file descriptors, and how long a client may take to send a
//! request's headers.
//!
//! - At most [`Limits::max_connections`] connections are served at once. Past that the
//!   front stops accepting: further connections wait in the kernel's listen backlog (they
//!   are neither refused nor read) until a served one closes. Said once on stderr.
//! - `accept` failing for lack of descriptors (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`)
//!   pauses accepting, [`FIRST_BACKOFF`] doubling up to [`MAX_BACKOFF`], instead of
//!   retrying at once: the waiting connection stays readable, so retrying at once spins
//!   at 100% CPU. Said once on stderr; the pause resets after the next accept. Every
//!   other `accept` error pauses too: one that concerns a single connection
//!   (`ECONNABORTED`, a reset) [`TRANSIENT_BACKOFF`], any other the same doubling pause
//!   as running out of descriptors (said once) — no error is retried at once.
//! - A connection that has not sent a request's whole header within
//!   [`Limits::header_timeout`] is closed — also an idle keep-alive connection between
//!   requests. (The body's deadline is [`crate::downstream::front::guard::read_body`]'s.)
//!
//! It does not decide what a request may do: that is [`crate::downstream::front::guard`].

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::cli;
use crate::error::{Error, Result};

/// The first pause after `accept` ran out of file descriptors.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// The longest pause after `accept` ran out of file descriptors.
pub const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// The pause after `accept` failed for one connection only (`ECONNABORTED`, a reset):
/// short, but never none, so that an error that keeps coming cannot spin.
pub const TRANSIENT_BACKOFF: Duration = Duration::from_millis(5);

/// The HTTP front's limits, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// How long a client may take to send a request's whole body.
    pub body_timeout: Duration,
    /// A session with no request (and no open stream) for this long is ended; `None`:
    /// never.
    pub session_idle: Option<Duration>,
}

impl Limits {
    /// The limits the flags give, or a usage error naming the flag.
    pub fn from_args(args: &cli::FrontLimits) -> Result<Limits> {
        if args.max_connections == 0 {
            return Err(Error::Usage("--max-connections must be at least 1".into()));
        }
        for (flag, d) in [
            ("--header-timeout", args.header_timeout),
            ("--body-timeout", args.body_timeout),
        ] {
            if d.is_zero() {
                return Err(Error::Usage(format!("{flag} must be longer than 0")));
            }
        }
        Ok(Limits {
            max_connections: args.max_connections,
            header_timeout: args.header_timeout,
            body_timeout: args.body_timeout,
            session_idle: Some(args.session_idle).filter(|d| !d.is_zero()),
        })
    }
}

/// The HTTP/1 server settings every connection gets: the header read timeout (which
/// needs hyper's timer to take effect at all).
pub fn http1(limits: &Limits) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    builder
}

/// The accept loop's state: the connection bound and the pause after `EMFILE`.
pub struct Acceptor {
    listener: TcpListener,
    permits: Arc<Semaphore>,
    max: usize,
    backoff: Option<Duration>,
    said_full: bool,
    said_fds: bool,
    said_other: bool,
}

impl Acceptor {
    /// Accepts from `listener`, at most `limits.max_connections` at once.
    pub fn new(listener: TcpListener, limits: &Limits) -> Acceptor {
        Acceptor {
            listener,
            permits: Arc::new(Semaphore::new(limits.max_connections)),
            max: limits.max_connections,
            backoff: None,
            said_full: false,
            said_fds: false,
            said_other: false,
        }
    }

    /// The next connection and its place among the ones served at once (held until the
    /// connection ends). Cancel-safe: a connection is never accepted and then dropped.
    pub async fn accept(&mut self) -> (TcpStream, OwnedSemaphorePermit) {
        loop {
            let permit = match Arc::clone(&self.permits).try_acquire_owned() {
                Ok(permit) => permit,
                Err(_) => {
                    if !std::mem::replace(&mut self.said_full, true) {
                        crate::term::eprintln_escaped!(
                            "mcptape: warning: {} connections open (--max-connections); further connections wait until one closes",
                            self.max
                        );
                    }
                    Arc::clone(&self.permits)
                        .acquire_owned()
                        .await
                        .expect("the semaphore is never closed")
                }
            };
            match self.listener.accept().await {
                Ok((stream, _)) => {
                    self.backoff = None;
                    return (stream, permit);
                }
                Err(e) => {
                    let kind = AcceptError::of(&e);
                    let (pause, backoff) = kind.pause(self.backoff);
                    self.backoff = backoff;
                    match kind {
                        AcceptError::Transient => {}
                        AcceptError::OutOfDescriptors => {
                            if !std::mem::replace(&mut self.said_fds, true) {
                                crate::term::eprintln_escaped!(
                                    "mcptape: warning: cannot accept a connection: out of file descriptors ({e}); pausing accepts, up to {} s at a time",
                                    MAX_BACKOFF.as_secs()
                                );
                            }
                        }
                        AcceptError::Other => {
                            if !std::mem::replace(&mut self.said_other, true) {
                                crate::term::eprintln_escaped!(
                                    "mcptape: warning: cannot accept a connection ({e}); pausing accepts, up to {} s at a time",
                                    MAX_BACKOFF.as_secs()
                                );
                            }
                        }
                    }
                    drop(permit);
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }
}

/// What an `accept` error says about the next try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AcceptError {
    /// One connection failed before we took it (aborted, reset, or a network error
    /// Linux passes on from the new socket, as accept(2) lists): the next may be fine.
    Transient,
    /// The process or the system is out of descriptors or memory for one: retrying at
    /// once cannot succeed while the waiting connection stays readable.
    OutOfDescriptors,
    /// Anything else: it may well persist, so it is never retried at once either.
    Other,
}

impl AcceptError {
    fn of(e: &std::io::Error) -> AcceptError {
        use nix::errno::Errno;
        let Some(code) = e.raw_os_error() else {
            return AcceptError::Other;
        };
        match Errno::from_raw(code) {
            Errno::EMFILE | Errno::ENFILE | Errno::ENOBUFS | Errno::ENOMEM => {
                AcceptError::OutOfDescriptors
            }
            Errno::ECONNABORTED
            | Errno::ECONNRESET
            | Errno::EINTR
            | Errno::EPROTO
            | Errno::ENETDOWN
            | Errno::ENOPROTOOPT
            | Errno::EHOSTDOWN
            | Errno::ENONET
            | Errno::EHOSTUNREACH
            | Errno::EOPNOTSUPP
            | Errno::ENETUNREACH => AcceptError::Transient,
            _ => AcceptError::Other,
        }
    }

    /// The pause before the next `accept`, and the escalating pause to remember: a
    /// transient error pauses [`TRANSIENT_BACKOFF`] and leaves it as it was; the others
    /// pause [`FIRST_BACKOFF`], doubling up to [`MAX_BACKOFF`] while they last.
    fn pause(self, previous: Option<Duration>) -> (Duration, Option<Duration>) {
        match self {
            AcceptError::Transient => (TRANSIENT_BACKOFF, previous),
            AcceptError::OutOfDescriptors | AcceptError::Other => {
                let pause = previous.map_or(FIRST_BACKOFF, |b| (b * 2).min(MAX_BACKOFF));
                (pause, Some(pause))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(e: nix::errno::Errno) -> std::io::Error {
        std::io::Error::from_raw_os_error(e as i32)
    }

    #[test]
    fn emfile_and_enfile_are_out_of_descriptors_but_a_reset_is_not() {
        use nix::errno::Errno;
        assert_eq!(
            AcceptError::of(&io(Errno::EMFILE)),
            AcceptError::OutOfDescriptors
        );
        assert_eq!(
            AcceptError::of(&io(Errno::ENFILE)),
            AcceptError::OutOfDescriptors
        );
        assert_eq!(
            AcceptError::of(&io(Errno::ECONNABORTED)),
            AcceptError::Transient
        );
        assert_eq!(AcceptError::of(&io(Errno::EINVAL)), AcceptError::Other);
    }

    #[test]
    fn every_accept_error_pauses_and_persistent_ones_back_off() {
        use nix::errno::Errno;
        // No error is retried at once: that is the spin.
        for errno in [
            Errno::ECONNABORTED,
            Errno::ECONNRESET,
            Errno::EPROTO,
            Errno::EMFILE,
            Errno::ENOMEM,
            Errno::EINVAL,
            Errno::EBADF,
            Errno::EPERM,
        ] {
            let (pause, _) = AcceptError::of(&io(errno)).pause(None);
            assert!(pause > Duration::ZERO, "{errno} is retried at once");
        }
        let no_errno = std::io::Error::other("no errno");
        assert_eq!(AcceptError::of(&no_errno), AcceptError::Other);
        // A transient error pauses briefly and leaves the back-off alone.
        let aborted = AcceptError::of(&io(Errno::ECONNABORTED));
        assert_eq!(aborted.pause(None), (TRANSIENT_BACKOFF, None));
        let held = Some(Duration::from_millis(400));
        assert_eq!(aborted.pause(held), (TRANSIENT_BACKOFF, held));
        assert!(TRANSIENT_BACKOFF < FIRST_BACKOFF);
        // A persistent one (unknown, or out of descriptors) doubles up to the maximum.
        for kind in [AcceptError::Other, AcceptError::OutOfDescriptors] {
            let mut backoff = None;
            let mut pauses = Vec::new();
            for _ in 0..6 {
                let (pause, next) = kind.pause(backoff);
                pauses.push(pause.as_millis());
                backoff = next;
            }
            assert_eq!(pauses, [100, 200, 400, 800, 1000, 1000], "{kind:?}");
        }
    }

    #[test]
    fn zero_limits_are_refused_and_a_zero_idle_is_never() {
        let args = cli::FrontLimits {
            max_connections: 1,
            header_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
            session_idle: Duration::ZERO,
        };
        assert_eq!(
            Limits::from_args(&args).map(|l| l.session_idle).ok(),
            Some(None)
        );
        let zero = cli::FrontLimits {
            max_connections: 0,
            ..args
        };
        assert!(Limits::from_args(&zero).is_err());
        let zero = cli::FrontLimits {
            header_timeout: Duration::ZERO,
            ..args
        };
        assert!(Limits::from_args(&zero).is_err());
    }
}
