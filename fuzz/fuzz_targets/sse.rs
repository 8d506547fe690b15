//! The Server-Sent Events parser: however the stream is cut, the same events come out.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcptape::Sse;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let mut whole = Sse::default();
    let all = whole.push(rest);
    let mut pieces = Sse::default();
    let mut got = Vec::new();
    for piece in rest.chunks(usize::from(cut) + 1) {
        got.extend(pieces.push(piece));
    }
    assert_eq!(all, got, "events depend on how the stream was cut");
    assert_eq!(whole.resumption(), pieces.resumption());
    let _ = whole.pending_len();
});
