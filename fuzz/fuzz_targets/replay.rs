//! The replay engine fed a tape plus a client script: the input is a tape, a line
//! `---`, then the client's lines. Every recorded connection is replayed against the
//! script; nothing panics, and every answer it gives is one line of JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcptape::Tape;
use mcptape::{MatchMode, Replay, ReplayOptions as Options, ServerFacts};

fuzz_target!(|data: &[u8]| {
    let split = data.windows(5).position(|w| w == b"\n---\n");
    let (tape_bytes, script) = match split {
        Some(i) => (&data[..i + 1], &data[i + 5..]),
        None => (data, &b""[..]),
    };
    let Ok(tape) = Tape::parse(std::path::Path::new("fuzz.ndjson"), tape_bytes) else {
        return;
    };
    let conns = tape.connections();
    for conn in &conns {
        let same: Vec<_> = conns
            .iter()
            .filter(|c| c.server == conn.server)
            .cloned()
            .collect();
        let facts = ServerFacts::of(&tape, &same);
        for matching in [MatchMode::Strict, MatchMode::Unordered] {
            let opts = Options {
                matching,
                ..Options::default()
            };
            let mut replay = Replay::new(&tape, conn, &facts, opts);
            let mut outs = replay.start();
            for line in script.split(|&b| b == b'\n') {
                outs.extend(replay.on_client(line));
            }
            for out in &outs {
                assert!(out.line.ends_with(b"\n"), "an answer without its line end");
                assert!(
                    !out.line[..out.line.len() - 1].contains(&b'\n'),
                    "an answer of two lines"
                );
            }
            let _ = replay.finish();
        }
    }
});
