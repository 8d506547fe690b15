//! The replay engine as a [`Link`]: client messages go to the [`Picker`], its answers
//! come back from [`Link::next`] — at once, or with `--pace` after their recorded delays.
//! Answers outside the script (a ping's, a parse error's) go ahead of paced ones. A held
//! message ([`Out::hold`]) waits apart, on its own timer, holding up nothing; the client's
//! end of input drops what is still held (it was recorded leaving before it came).

use std::collections::VecDeque;

use bytes::Bytes;
use tokio::time::Instant;

use crate::error::{LinkError, Result};
use crate::message::Message;
use crate::tape::close::CloseReason;
use crate::upstream::pick::Picker;
use crate::upstream::replay::Out;
use crate::upstream::{Closed, Incoming, Link};

/// One live client's replay: the picker, and what it owes the client.
pub struct ReplayLink {
    picker: Picker,
    queue: VecDeque<Out>,
    /// Held messages, each with the instant it is due.
    held: Vec<(Instant, Out)>,
    pace: bool,
    /// With `--pace`, when the message at the head of the queue is due.
    due: Option<Instant>,
    /// The client closed its side: nothing more is owed.
    ended: bool,
}

impl ReplayLink {
    /// Replays through `picker`; with `pace`, keeps the recorded delays.
    pub fn new(picker: Picker, pace: bool) -> ReplayLink {
        let mut link = ReplayLink {
            picker,
            queue: VecDeque::new(),
            held: Vec::new(),
            pace,
            due: None,
            ended: false,
        };
        let out = link.picker.start();
        link.take(out);
        link
    }

    /// Why nothing can be replayed at all, if so (said once, by the caller).
    pub fn problem(&self) -> Option<&str> {
        self.picker.problem()
    }

    /// True when the tape would answer the client message `msg` ([`Picker::accepts`]):
    /// `--record-mode new` forwards a request it would not to the real server.
    pub fn accepts(&self, msg: &Message) -> bool {
        self.picker.accepts(msg)
    }

    /// True when nothing is queued for the client: until it sends more, [`Link::next`]
    /// would wait for ever (the built-in client, which waits for one answer at a time,
    /// then knows the tape holds none).
    pub fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.held.is_empty()
    }

    fn take(&mut self, out: Vec<Out>) {
        for o in out {
            if let Some(hold) = o.hold {
                self.held.push((Instant::now() + hold, o));
            } else if o.immediate {
                let at = self.queue.iter().take_while(|q| q.immediate).count();
                self.queue.insert(at, o);
            } else {
                self.queue.push_back(o);
            }
        }
    }

    fn line(out: Out) -> Incoming {
        let mut line = out.line;
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        Incoming::Message(Message::new(line).on(out.stream))
    }
}

impl Link for ReplayLink {
    async fn send(&mut self, msg: Message) -> Result<(), LinkError> {
        let out = self.picker.on_client(msg.raw());
        self.take(out);
        Ok(())
    }

    async fn next(&mut self) -> Option<Incoming> {
        loop {
            // A held message that is due goes out at once, ahead of a paced queue.
            let now = Instant::now();
            if let Some(at) = self.held.iter().position(|(due, _)| *due <= now) {
                let (_, out) = self.held.remove(at);
                return Some(Self::line(out));
            }
            let held = self.held.iter().map(|(due, _)| *due).min();
            if let Some(head) = self.queue.front() {
                if self.pace && !head.immediate && !head.delay.is_zero() {
                    let at = *self.due.get_or_insert_with(|| Instant::now() + head.delay);
                    match held.filter(|&h| h < at) {
                        Some(h) => {
                            tokio::time::sleep_until(h).await;
                            continue;
                        }
                        None => tokio::time::sleep_until(at).await,
                    }
                }
                self.due = None;
                let out = self.queue.pop_front().expect("a head");
                return Some(Self::line(out));
            }
            // What the client was owed when it closed its side is given; then nothing is.
            if self.ended || self.picker.server_gone().is_some() {
                // The recorded server ended the connection here: so does the replay.
                return None;
            }
            if let Some(due) = held {
                tokio::time::sleep_until(due).await;
                continue;
            }
            // Nothing is owed until the client says more.
            std::future::pending::<()>().await;
        }
    }

    async fn oversize(&mut self, _len: usize, prefix: Bytes) {
        // Never what a tape expects: the engine reports it as a divergence.
        let mut text = prefix[..prefix.len().min(80)].to_vec();
        text.extend_from_slice(b" (truncated)");
        let out = self.picker.on_client(&text);
        self.take(out);
    }

    async fn end_input(&mut self) {
        self.ended = true;
    }

    async fn cancel(&mut self, id: &str) {
        // A client of the HTTP front closed the request's stream: its cancel, as the tape
        // holds one recorded so.
        let out = self
            .picker
            .on_client(super::steps::cancel_by_stream(id).raw());
        self.take(out);
    }

    async fn close(self, _reason: CloseReason) -> Result<Closed> {
        let server_exit = self.picker.server_gone();
        Ok(Closed::Replayed {
            verdict: Box::new(self.picker.finish()),
            server_exit,
        })
    }
}
