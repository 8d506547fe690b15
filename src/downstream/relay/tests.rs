//! Unit tests of [`super`]: one direction of the byte relay between real sockets. The
//! runtime has one thread: while the test task reads, the relay cannot write, so what one
//! read returns shows what the relay wrote before it waited.

use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

use super::*;
use crate::downstream::apart::{Backlog, Spacing};

const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":3,"total":3}}"#;
const ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
const LOG: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;

/// Reads once from `client` (waiting for something to read).
async fn read_once(client: &UnixStream) -> String {
    loop {
        client.readable().await.expect("readable");
        let mut buf = [0; 4096];
        match client.try_read(&mut buf) {
            Ok(n) => return String::from_utf8(buf[..n].to_vec()).expect("utf-8"),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("read: {e}"),
        }
    }
}

/// Starts the server-to-client direction with what the server wrote in one write already
/// waiting, so that the relay reads it as one chunk.
async fn relay_of(written: &str) -> (UnixStream, UnixStream, JoinHandle<PumpEnd>) {
    let (mut server, src) = UnixStream::pair().expect("socketpair");
    let (client, dst) = UnixStream::pair().expect("socketpair");
    server.write_all(written.as_bytes()).await.expect("write");
    let spacing = Spacing::new(Backlog::of(&dst));
    let pump = tokio::spawn(pump(
        src,
        dst,
        Direction::Recv,
        None,
        1 << 20,
        Arc::default(),
        spacing,
    ));
    (server, client, pump)
}

#[tokio::test]
async fn a_chunk_is_cut_before_an_answer_that_follows_a_notification() {
    let (server, client, pump) = relay_of(&format!("{LOG}\n{PROGRESS}\n{ANSWER}\n")).await;
    // The notifications go out together; the answer waits for them to be read.
    assert_eq!(read_once(&client).await, format!("{LOG}\n{PROGRESS}\n"));
    assert_eq!(read_once(&client).await, format!("{ANSWER}\n"));
    drop(server);
    assert!(matches!(pump.await.expect("join"), PumpEnd::SourceClosed));
}

#[tokio::test]
async fn a_chunk_without_an_answer_after_a_notification_is_one_write() {
    let whole = format!("{ANSWER}\n{PROGRESS}\n{LOG}\n{PROGRESS}");
    let (server, client, pump) = relay_of(&whole).await;
    // Bytes as they came, the last line's head included.
    assert_eq!(read_once(&client).await, whole);
    drop(server);
    assert!(matches!(pump.await.expect("join"), PumpEnd::SourceClosed));
}
