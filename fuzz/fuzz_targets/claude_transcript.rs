//! The Claude Code transcript reader (`mcptape import claude-code`): any bytes, as a
//! session file, read or fail with an error naming the file, never a panic. The reader
//! works on files (a session, its subagents and stored-aside results beside it), so each
//! input is written to one file in a private directory first.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcptape::transcripts::{Answer, read_claude};

/// The session file every input is written to (one per fuzzing process).
fn session_file() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("mcptape-fuzz-claude-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("fuzz dir");
        dir.join("0f1e2d3c-fuzz.jsonl")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = session_file();
    std::fs::write(path, data).expect("write the input");
    match read_claude(path) {
        Ok(read) => {
            for call in &read.session.calls {
                let _ = call.arguments.to_string();
                if let Some(Answer::Result(v) | Answer::Error(v)) = &call.answer {
                    let _ = v.to_string();
                }
            }
        }
        Err(e) => assert!(e.to_string().contains("0f1e2d3c-fuzz.jsonl"), "{e}"),
    }
});
