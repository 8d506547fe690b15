use super::*;

fn is_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[test]
fn session_ids_are_32_hex_digits_and_differ() {
    let ids: Vec<String> = (0..64)
        .map(|_| session_id().expect("the OS generator works here"))
        .collect();
    for id in &ids {
        assert_eq!(id.len(), 32, "{id}");
        assert!(is_hex(id), "{id}");
    }
    let mut distinct = ids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), ids.len(), "no id repeats");
}

#[test]
fn conn_ids_are_8_hex_digits_then_one_and_differ() {
    let a = conn_id().expect("the OS generator works here");
    let b = conn_id().expect("the OS generator works here");
    for id in [&a, &b] {
        let hex = id.strip_suffix("-1").expect("ends in -1");
        assert_eq!(hex.len(), 8, "{id}");
        assert!(is_hex(hex), "{id}");
    }
    // 32 random bits: two draws agree once in four billion.
    assert_ne!(a, b);
}

#[test]
fn the_error_names_the_id() {
    let e = IdError {
        what: "session id",
        source: getrandom::Error::UNSUPPORTED,
    };
    assert_eq!(
        e.to_string(),
        "cannot draw a random session id from the operating system"
    );
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn approval_ids_are_six_base32_characters_and_are_recognised() {
    let ids: Vec<String> = (0..64)
        .map(|_| approval_id().expect("the OS generator works here"))
        .collect();
    for id in &ids {
        assert!(is_approval_id(id), "{id}");
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b))
        );
    }
    let mut distinct = ids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(
        distinct.len() > 60,
        "30 random bits rarely repeat in 64 draws"
    );
    for bad in ["", "abc", "abcdefg", "ABCDEF", "abc1ef", "../abc", "abcde/"] {
        assert!(!is_approval_id(bad), "{bad}");
    }
}
