//! Unit tests of [`super`]: `--update`.

use super::*;
use crate::error::Error;

#[test]
fn update_leaves_a_tape_that_changed_since_it_was_loaded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.ndjson");
    let line = "{\"id\":1,\"result\":{},\"_meta\":{\"dir\":\"recv\",\"server\":\"s\"}}\n";
    std::fs::write(&path, line).expect("write");
    let tape = Tape::load(&path).expect("load");
    // Another writer appends after verify loaded the tape.
    std::fs::write(&path, format!("{line}{line}")).expect("append");
    let err = update(&tape, &[]).expect_err("changed");
    assert!(
        matches!(err, Error::Tape(TapeError::Changed { was, now, .. }) if now == 2 * was),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        format!("{line}{line}")
    );
    assert!(!store::prev_path(&path).exists());
}
