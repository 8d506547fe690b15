//! The HTTP upstream's cost per request: heap allocations per request, and bytes
//! allocated per server message — over the message's size, about how many times the
//! message is copied between the socket and the client — through the HTTP upstream
//! against an in-process HTTP server on a local port (a real socket).
//!
//! Run: `cargo bench --bench http` (`-- --smoke` for a tiny run). Only the client's
//! thread is counted: the server runs on a thread of its own. The client side is what
//! the stdio proxy does for `--url`: each request POSTed, each message of its SSE answer
//! written to the client as one line.
#![allow(unsafe_code)] // a counting global allocator

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Response;

/// Counts the allocations of the threads that ask to be counted.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn note(size: usize) {
    if COUNTED.with(Cell::get) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(size as u64, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Answers every POST with an SSE event carrying a result whose text is `text_bytes`
/// long. Returns the URL.
fn server(text_bytes: usize) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let text = "x".repeat(text_bytes);
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let text = text.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            let text = text.clone();
                            async move {
                                let body = req.into_body().collect().await.expect("body");
                                let v: serde_json::Value =
                                    serde_json::from_slice(&body.to_bytes()).expect("json");
                                let event = format!(
                                    "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}\n\n",
                                    v["id"]
                                );
                                let mut r = Response::new(Full::new(Bytes::from(event)));
                                r.headers_mut().insert(
                                    "content-type",
                                    hyper::header::HeaderValue::from_static("text/event-stream"),
                                );
                                Ok::<_, Infallible>(r)
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    url
}

/// Per request: allocations, and bytes allocated.
struct Figures {
    allocs: f64,
    bytes: f64,
}

fn measure(text_bytes: usize, n: u64) -> Figures {
    let url = server(text_bytes);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut client = drive::Client::new(&url);
        // Warm up: the connection pool, the runtime's buffers.
        for i in 0..20 {
            client.request(i).await;
        }
        ALLOCS.store(0, Ordering::Relaxed);
        BYTES.store(0, Ordering::Relaxed);
        COUNTED.with(|c| c.set(true));
        for i in 0..n {
            client.request(1000 + i).await;
        }
        COUNTED.with(|c| c.set(false));
        client.close().await;
    });
    Figures {
        allocs: ALLOCS.load(Ordering::Relaxed) as f64 / n as f64,
        bytes: BYTES.load(Ordering::Relaxed) as f64 / n as f64,
    }
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--smoke");
    let n = if smoke { 50 } else { 2000 };
    let big = 64 * 1024;
    let small = measure(16, n);
    let large = measure(big, n);
    println!("HTTP upstream ({}), {n} requests each", drive::NAME);
    println!(
        "  small answer (~90 B):   {:8.1} allocations/request, {:10.0} bytes allocated/request",
        small.allocs, small.bytes
    );
    println!(
        "  64 KiB answer:          {:8.1} allocations/request, {:10.0} bytes allocated/request",
        large.allocs, large.bytes
    );
    println!(
        "  copies of a server message ≈ (large − small bytes) / 64 KiB = {:.2}",
        (large.bytes - small.bytes) / big as f64
    );
}

/// The client side as the stdio proxy drives it.
mod drive {
    use bytes::Bytes;
    use mcptape::CloseReason;
    use mcptape::Message;
    use mcptape::{HttpLink, Remote};
    use mcptape::{Incoming, Link};

    pub const NAME: &str = "HttpLink";

    pub struct Client {
        link: HttpLink,
        /// The stdio pump's write buffer: one write per line.
        out: Vec<u8>,
    }

    impl Client {
        pub fn new(url: &str) -> Client {
            Client {
                link: HttpLink::new(Remote::new(url, vec![]).expect("client")),
                out: Vec::new(),
            }
        }

        pub async fn request(&mut self, id: u64) {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\"}}}}"
            );
            self.link
                .send(Message::new(Bytes::from(line)))
                .await
                .expect("sent");
            let want = id.to_string();
            loop {
                match self.link.next().await.expect("an answer") {
                    Incoming::Message(m) => {
                        self.out.clear();
                        self.out.extend_from_slice(m.raw());
                        self.out.push(b'\n');
                        std::hint::black_box(&self.out);
                        if m.id() == Some(want.as_str()) {
                            return;
                        }
                    }
                    Incoming::Event(_) => {}
                    Incoming::Refused { error, .. } => panic!("refused: {error}"),
                }
            }
        }

        pub async fn close(self) {
            let _ = self.link.close(CloseReason::ClientClosedStdin).await;
        }
    }
}
