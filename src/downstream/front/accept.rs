//! The front's accept loop: it takes connections (within [`crate::downstream::front::listen`]'s bound),
//! serves each on a task of its own with the [`handler`](super::handler), ends idle
//! sessions on the [`Reaper`]'s tick, and stops when the shutdown future resolves.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::downstream::front::idle::Reaper;
use crate::downstream::front::listen::Acceptor;

use super::handler;
use super::state::Front;

/// Accepts and serves connections until `shutdown` resolves; returns what it resolved
/// to. Connections already open go on being served on their own tasks.
pub async fn run<F: Future>(listener: TcpListener, front: Arc<Front>, shutdown: F) -> F::Output {
    let mut acceptor = Acceptor::new(listener, &front.limits);
    let http1 = crate::downstream::front::listen::http1(&front.limits);
    let mut reaper = Reaper::new(front.limits.session_idle);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            (stream, permit) = acceptor.accept() => {
                let (front, http1) = (Arc::clone(&front), http1.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        handler::handle(Arc::clone(&front), req)
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = http1.serve_connection(io, service).await;
                    drop(permit);
                });
            }
            limit = reaper.tick() => front.expire_idle(limit),
            rest = &mut shutdown => return rest,
        }
    }
}
