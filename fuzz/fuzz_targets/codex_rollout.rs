//! The Codex rollout reader (`mcptape import codex`): any bytes parse or fail with an
//! error naming the file, never a panic, at any depth or size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcptape::transcripts::{Answer, parse_codex};

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("fuzz-rollout.jsonl");
    match parse_codex(path, data) {
        Ok(read) => {
            for call in &read.session.calls {
                // What the tape writer serializes must serialize.
                let _ = call.arguments.to_string();
                if let Some(Answer::Result(v) | Answer::Error(v)) = &call.answer {
                    let _ = v.to_string();
                }
            }
        }
        Err(e) => assert!(e.to_string().contains("fuzz-rollout.jsonl"), "{e}"),
    }
});
