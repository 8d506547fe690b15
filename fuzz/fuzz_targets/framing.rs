//! Framing and classification: the codec gives back every byte it was fed, in order,
//! however the stream is cut, and every line classifies without a panic.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use mcptape::Message;
use mcptape::lines as message;
use mcptape::{Frame, LineCodec};
use tokio_util::codec::Decoder;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    // A small maximum so the over-long path is reached too.
    let mut codec = LineCodec::new(usize::from(cut % 64) + 1);
    let chunk = usize::from(cut / 64) + 1;
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let take = |frame: Frame, out: &mut Vec<u8>| {
        if let Frame::Line(line) = &frame {
            let text = mcptape::lines::content(line);
            let _ = message::shape(text);
            let m = Message::new(text.to_vec());
            let _ = (m.kind(), m.method(), m.id(), m.is_object());
        }
        out.extend_from_slice(frame.bytes());
    };
    for piece in rest.chunks(chunk) {
        buf.extend_from_slice(piece);
        while let Some(frame) = codec.decode(&mut buf).expect("decode never fails") {
            take(frame, &mut out);
        }
    }
    while let Some(frame) = codec.decode_eof(&mut buf).expect("decode never fails") {
        take(frame, &mut out);
    }
    assert_eq!(out, rest, "framing lost or changed bytes");
});
