//! Our own stdin and stdout as async streams that do not cost a thread hop per line.
//!
//! tokio's `stdin()`/`stdout()` run every read and write on the blocking pool. When the
//! descriptor is a pipe (Python clients) or a socket (Node clients: libuv's stdio pipes
//! are socketpairs), it is registered with the reactor instead, like the child's pipes.
//! Anything else (a terminal, a file) falls back to tokio's blocking-pool streams, and
//! so does a descriptor that is the same pipe or socket as our stderr (`2>&1`):
//! non-blocking mode belongs to the shared file description, and the server inherits our
//! stderr, which must stay blocking for it and for us.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

/// A boxed async reader.
pub type Reader = Pin<Box<dyn AsyncRead + Send>>;
/// A boxed async writer.
pub type Writer = Pin<Box<dyn AsyncWrite + Send>>;

enum Kind {
    Pipe,
    Socket,
    Other,
}

fn dup(fd: impl AsFd) -> io::Result<(OwnedFd, Kind)> {
    use std::os::unix::fs::MetadataExt;
    let owned = fd.as_fd().try_clone_to_owned()?;
    let file = File::from(owned);
    let meta = file.metadata()?;
    let ty = meta.file_type();
    let stderr = File::from(io::stderr().as_fd().try_clone_to_owned()?).metadata()?;
    let kind = if (meta.dev(), meta.ino()) == (stderr.dev(), stderr.ino()) {
        Kind::Other
    } else if ty.is_fifo() {
        Kind::Pipe
    } else if ty.is_socket() {
        Kind::Socket
    } else {
        Kind::Other
    };
    Ok((file.into(), kind))
}

fn socket(fd: OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let std = std::os::unix::net::UnixStream::from(fd);
    std.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(std)
}

/// Our stdin. Must be called inside the runtime.
pub fn stdin() -> Reader {
    let fast: io::Result<Option<Reader>> = (|| {
        let (fd, kind) = dup(io::stdin())?;
        Ok(match kind {
            Kind::Pipe => {
                Some(Box::pin(tokio::net::unix::pipe::Receiver::from_owned_fd(fd)?) as Reader)
            }
            Kind::Socket => Some(Box::pin(socket(fd)?) as _),
            Kind::Other => None,
        })
    })();
    match fast {
        Ok(Some(r)) => r,
        _ => Box::pin(tokio::io::stdin()),
    }
}

/// Our stdout. Must be called inside the runtime.
pub fn stdout() -> Writer {
    let fast: io::Result<Option<Writer>> = (|| {
        let (fd, kind) = dup(io::stdout())?;
        Ok(match kind {
            Kind::Pipe => {
                Some(Box::pin(tokio::net::unix::pipe::Sender::from_owned_fd(fd)?) as Writer)
            }
            Kind::Socket => Some(Box::pin(socket(fd)?) as _),
            Kind::Other => None,
        })
    })();
    match fast {
        Ok(Some(w)) => w,
        _ => Box::pin(tokio::io::stdout()),
    }
}
