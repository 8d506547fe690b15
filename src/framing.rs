//! Bounded newline framing for the live path.
//!
//! MCP's stdio transport delimits messages by `\n`
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio>).
//! [`LineCodec`] cuts a byte stream into frames without copying or changing a byte:
//! forwarding every frame in order reproduces the stream exactly, `\r` and all.
//!
//! A line up to `max` bytes is one [`Frame::Line`]. A longer one is never held whole: it
//! comes out as a run of [`Frame::Long`] pieces, forwarded as they arrive, so memory stays
//! bounded and nothing is lost. The codec is used through `FramedRead`, whose `next()` is
//! cancel-safe in `select!`.

use bytes::{Bytes, BytesMut};
use tokio_util::codec::Decoder;

/// Default longest line kept whole (64 MiB); longer lines are streamed, see the module doc.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// A piece of the byte stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A whole line, with its `\n` when it had one (the last line of a stream may not).
    Line(Bytes),
    /// A piece of a line longer than the maximum.
    Long {
        /// The bytes of this piece (the last piece ends with the `\n`, if any).
        bytes: Bytes,
        /// True for the first piece of the line.
        first: bool,
        /// True for the last piece of the line.
        last: bool,
    },
}

impl Frame {
    /// The bytes to forward.
    pub fn bytes(&self) -> &Bytes {
        match self {
            Frame::Line(b) | Frame::Long { bytes: b, .. } => b,
        }
    }
}

/// Strips one trailing `\n` and then one `\r`: the message text of a line.
pub fn content(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Newline framing with a maximum line length. See the module doc.
#[derive(Debug)]
pub struct LineCodec {
    max: usize,
    /// Bytes of the buffer already searched for `\n`: keeps decoding linear.
    scanned: usize,
    /// True while streaming the pieces of an over-long line.
    in_long: bool,
}

impl LineCodec {
    /// A codec that keeps lines of up to `max` bytes (newline included) whole.
    pub fn new(max: usize) -> Self {
        LineCodec {
            max: max.max(1),
            scanned: 0,
            in_long: false,
        }
    }
}

impl Default for LineCodec {
    fn default() -> Self {
        LineCodec::new(MAX_LINE_BYTES)
    }
}

impl Decoder for LineCodec {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, Self::Error> {
        if buf.is_empty() {
            return Ok(None);
        }
        if self.in_long {
            let end = memchr::memchr(b'\n', buf).map(|i| i + 1);
            let last = end.is_some();
            let bytes = match end {
                Some(end) => buf.split_to(end).freeze(),
                None => buf.split().freeze(),
            };
            self.in_long = !last;
            return Ok(Some(Frame::Long {
                bytes,
                first: false,
                last,
            }));
        }
        match memchr::memchr(b'\n', &buf[self.scanned..]) {
            Some(i) => {
                let end = self.scanned + i + 1;
                self.scanned = 0;
                let bytes = buf.split_to(end).freeze();
                if end > self.max {
                    return Ok(Some(Frame::Long {
                        bytes,
                        first: true,
                        last: true,
                    }));
                }
                Ok(Some(Frame::Line(bytes)))
            }
            None if buf.len() > self.max => {
                self.scanned = 0;
                self.in_long = true;
                Ok(Some(Frame::Long {
                    bytes: buf.split().freeze(),
                    first: true,
                    last: false,
                }))
            }
            None => {
                self.scanned = buf.len();
                Ok(None)
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, Self::Error> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        if buf.is_empty() {
            // A long line cut by the end of the stream still gets its last (empty) piece.
            return Ok(std::mem::take(&mut self.in_long).then(|| Frame::Long {
                bytes: Bytes::new(),
                first: false,
                last: true,
            }));
        }
        // The stream ended inside a line: hand over what there is, unterminated.
        self.scanned = 0;
        let bytes = buf.split().freeze();
        if std::mem::take(&mut self.in_long) {
            return Ok(Some(Frame::Long {
                bytes,
                first: false,
                last: true,
            }));
        }
        Ok(Some(Frame::Line(bytes)))
    }
}

/// How many bytes of an over-long line are kept to say what it was (its
/// `$transport/oversize` entry, the replay's divergence).
pub const OVERSIZE_PREFIX_BYTES: usize = 1024;

/// Collects the pieces of an over-long line on the live path: its length and a prefix.
#[derive(Debug, Default)]
pub struct LongLine {
    len: usize,
    prefix: Vec<u8>,
}

impl LongLine {
    /// Adds a forwarded piece; returns `(length, prefix)` when it was the last one. The
    /// length is the line's, without its `\n`.
    pub fn push(&mut self, piece: &[u8], last: bool) -> Option<(usize, Vec<u8>)> {
        self.len += piece.len() - usize::from(last && piece.ends_with(b"\n"));
        let room = OVERSIZE_PREFIX_BYTES.saturating_sub(self.prefix.len());
        self.prefix
            .extend_from_slice(&piece[..room.min(piece.len())]);
        last.then(|| {
            let done = std::mem::take(self);
            (done.len, done.prefix)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(max: usize, chunks: &[&[u8]]) -> Vec<Frame> {
        let mut codec = LineCodec::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            while let Some(f) = codec.decode(&mut buf).expect("decode") {
                out.push(f);
            }
        }
        while let Some(f) = codec.decode_eof(&mut buf).expect("decode_eof") {
            out.push(f);
        }
        out
    }

    fn joined(frames: &[Frame]) -> Vec<u8> {
        frames.iter().flat_map(|f| f.bytes().to_vec()).collect()
    }

    #[test]
    fn partial_lines_join() {
        let f = frames(100, &[b"{\"a\"", b":1}\n{\"b\":2}\n"]);
        assert_eq!(
            f,
            vec![
                Frame::Line(Bytes::from_static(b"{\"a\":1}\n")),
                Frame::Line(Bytes::from_static(b"{\"b\":2}\n"))
            ]
        );
    }

    #[test]
    fn crlf_is_kept_on_the_wire_and_stripped_from_content() {
        let f = frames(100, &[b"{}\r\n"]);
        assert_eq!(f, vec![Frame::Line(Bytes::from_static(b"{}\r\n"))]);
        assert_eq!(content(b"{}\r\n"), b"{}");
    }

    #[test]
    fn unterminated_last_line_is_delivered() {
        let f = frames(100, &[b"{}\n{\"x\":1}"]);
        assert_eq!(f.len(), 2);
        assert_eq!(f[1], Frame::Line(Bytes::from_static(b"{\"x\":1}")));
    }

    #[test]
    fn oversize_lines_stream_in_pieces_and_lose_nothing() {
        let input: Vec<&[u8]> = vec![b"0123456789", b"abcdef\nok\n", b"zzzzzzzzzzzzzzz"];
        let f = frames(8, &input);
        assert_eq!(joined(&f), input.concat());
        assert!(matches!(
            f[0],
            Frame::Long {
                first: true,
                last: false,
                ..
            }
        ));
        assert!(matches!(
            f[1],
            Frame::Long {
                first: false,
                last: true,
                ..
            }
        ));
        assert_eq!(f[2], Frame::Line(Bytes::from_static(b"ok\n")));
        assert!(matches!(f.last(), Some(Frame::Long { last: true, .. })));
    }

    #[test]
    fn a_whole_long_line_in_one_read_is_still_long() {
        let f = frames(4, &[b"0123456789\n"]);
        assert!(matches!(
            f[0],
            Frame::Long {
                first: true,
                last: true,
                ..
            }
        ));
    }

    #[test]
    fn scanning_is_incremental() {
        let mut codec = LineCodec::new(1 << 20);
        let mut buf = BytesMut::new();
        for _ in 0..1000 {
            buf.extend_from_slice(b"xxxxxxxxxx");
            assert!(codec.decode(&mut buf).expect("decode").is_none());
        }
        assert_eq!(codec.scanned, 10_000);
        buf.extend_from_slice(b"\n");
        assert!(matches!(codec.decode(&mut buf), Ok(Some(Frame::Line(_)))));
    }
}
