//! A server's stderr passed through to ours as it comes, with its last lines kept: for
//! `verify`, which says why a server that failed to start (or went away) did.
//!
//! The relay is a task of its own: it copies every byte to our stderr at once (a healthy
//! server's diagnostics show as they did when stderr was inherited) and keeps the last
//! [`TAIL_LINES`] lines, each cut to [`TAIL_LINE_CHARS`] characters, so that memory stays
//! bounded whatever the server writes. [`Tail::lines`] waits for the end of the stream
//! (the server and what it left behind closed it) at most [`TAIL_SETTLE`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStderr;
use tokio::task::JoinHandle;

/// How many of the last stderr lines are kept.
pub const TAIL_LINES: usize = 10;
/// The most characters kept of one stderr line.
pub const TAIL_LINE_CHARS: usize = 300;
/// How long [`Tail::lines`] waits for the stream to end once the server is gone.
pub const TAIL_SETTLE: Duration = Duration::from_secs(1);

/// The last lines of a server's stderr, being relayed.
pub struct Tail {
    kept: Arc<Mutex<Kept>>,
    relay: Option<JoinHandle<()>>,
}

/// The lines kept so far, and the line being written.
#[derive(Default)]
struct Kept {
    lines: VecDeque<String>,
    partial: Vec<u8>,
}

impl Kept {
    fn push(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            let (text, ended) = match piece.strip_suffix(b"\n") {
                Some(text) => (text, true),
                None => (piece, false),
            };
            // Past the cut, the rest of a long line is not kept.
            let room = (TAIL_LINE_CHARS * 4).saturating_sub(self.partial.len());
            self.partial
                .extend_from_slice(&text[..text.len().min(room)]);
            if ended {
                self.end_line();
            }
        }
    }

    fn end_line(&mut self) {
        let line = String::from_utf8_lossy(&self.partial);
        let line = line.trim_end_matches('\r');
        let cut: String = line.chars().take(TAIL_LINE_CHARS).collect();
        let cut = if cut.len() < line.len() {
            format!("{cut}…")
        } else {
            cut
        };
        self.partial.clear();
        if self.lines.len() == TAIL_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(cut);
    }
}

impl Tail {
    /// Starts relaying `stderr` to ours, keeping its last lines.
    pub fn relay(mut stderr: ChildStderr) -> Tail {
        let kept = Arc::new(Mutex::new(Kept::default()));
        let keep = Arc::clone(&kept);
        let relay = tokio::spawn(async move {
            let mut out = tokio::io::stderr();
            let mut buf = vec![0u8; 8 * 1024];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let _ = out.write_all(&buf[..n]).await;
                let _ = out.flush().await;
                if let Ok(mut k) = keep.lock() {
                    k.push(&buf[..n]);
                }
            }
        });
        Tail {
            kept,
            relay: Some(relay),
        }
    }

    /// Waits until everything the server wrote on stderr has been passed on: the stream
    /// has ended, or [`TAIL_SETTLE`] has passed (something it left behind holds it open).
    pub async fn settle(&mut self) {
        if let Some(relay) = self.relay.take() {
            let _ = tokio::time::timeout(TAIL_SETTLE, relay).await;
        }
    }

    /// The last lines the server wrote on stderr (an unfinished last line too), once it
    /// has [settled](Tail::settle).
    pub async fn lines(&mut self) -> Vec<String> {
        self.settle().await;
        let Ok(mut k) = self.kept.lock() else {
            return Vec::new();
        };
        if !k.partial.is_empty() {
            k.end_line();
        }
        k.lines.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_are_kept_cut_and_bounded() {
        let mut k = Kept::default();
        for i in 0..25 {
            k.push(format!("line {i}\n").as_bytes());
        }
        k.push(b"half a ");
        k.push(b"line\r\n");
        k.push(&vec![b'x'; 10_000]);
        k.end_line();
        let lines: Vec<&str> = k.lines.iter().map(String::as_str).collect();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines[0], "line 17");
        assert_eq!(lines[8], "half a line");
        assert_eq!(lines[9].chars().count(), TAIL_LINE_CHARS + 1);
        assert!(lines[9].ends_with('…'));
    }
}
