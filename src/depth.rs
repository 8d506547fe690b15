//! How deep JSON nests, and a bounded view of JSON that nests too deep.
//!
//! A peer may send a message nested a million levels deep (`[[[[…]]]]`, 2 MB). Every walk
//! of JSON in mcptape is either iterative (the redactor's scanner, this module's scans,
//! serde_json's skipping of raw values) or works on a [`serde_json::Value`] that holds at
//! most [`MAX_JSON_DEPTH`] levels: [`shallow`] replaces each array or object that starts
//! deeper than that by a marker string ([`TOO_DEEP`]) naming its own depth, its size and a
//! hash of its bytes, so that two deep parts compare equal exactly when their bytes (outside
//! whitespace) are equal. Building, comparing, printing and dropping such a value recurses
//! at most [`MAX_JSON_DEPTH`] levels.
//!
//! Nothing here is used on the live path's bytes: a message is forwarded and recorded as it
//! came, at any depth. The scans are linear in the input and never fail; text that is not
//! JSON goes through unchanged (serde_json decides what it is).

use std::borrow::Cow;

/// The most levels of nested arrays and objects a JSON value mcptape builds may have (a
/// message's top-level object is level 1). Below serde_json's own limit (128), so that the
/// marker, not a parse error, is what a reader sees of a deeper part.
pub const MAX_JSON_DEPTH: usize = 100;

/// How the marker that stands for a too-deep part begins:
/// `[too deep: 999901 levels, 1999802 bytes, fnv1a 0123456789abcdef]`.
pub const TOO_DEEP: &str = "[too deep: ";

/// From an opening quote at `start`, the position after the closing one (or the end).
pub(crate) fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while let Some(j) = memchr::memchr2(b'"', b'\\', &b[i.min(b.len())..]) {
        i += j;
        if b[i] == b'"' {
            return i + 1;
        }
        i += 2;
    }
    b.len()
}

/// The deepest nesting of arrays and objects in `text` (0 for a scalar).
pub fn depth(text: &[u8]) -> usize {
    let (mut level, mut max) = (0usize, 0usize);
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                i = string_end(text, i);
                continue;
            }
            b'{' | b'[' => {
                level += 1;
                max = max.max(level);
            }
            b'}' | b']' => level = level.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// True when `text` nests deeper than [`MAX_JSON_DEPTH`].
pub fn too_deep(text: &[u8]) -> bool {
    depth(text) > MAX_JSON_DEPTH
}

/// One array or object skipped whole: where it ends, how deep it nests, and the count and
/// a hash of its bytes outside whitespace (FNV-1a, 64 bits: stable from run to run).
struct Skipped {
    end: usize,
    depth: usize,
    bytes: usize,
    hash: u64,
}

fn skip(b: &[u8], start: usize) -> Skipped {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let (mut hash, mut size) = (OFFSET, 0usize);
    let mut eat = |bytes: &[u8]| {
        size += bytes.len();
        for &x in bytes {
            hash = (hash ^ u64::from(x)).wrapping_mul(PRIME);
        }
    };
    let (mut level, mut max) = (0usize, 0usize);
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let end = string_end(b, i);
                eat(&b[i..end]);
                i = end;
                continue;
            }
            b'{' | b'[' => {
                level += 1;
                max = max.max(level);
            }
            b'}' | b']' => level = level.saturating_sub(1),
            x if x.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => {}
        }
        eat(&b[i..i + 1]);
        i += 1;
        if level == 0 {
            break;
        }
    }
    Skipped {
        end: i,
        depth: max,
        bytes: size,
        hash,
    }
}

/// `text` with every array or object that starts deeper than `max_depth` levels replaced by
/// a [`TOO_DEEP`] marker string; borrowed when nothing is that deep.
pub fn shallow_within(text: &str, max_depth: usize) -> Cow<'_, str> {
    let b = text.as_bytes();
    let mut out = String::new();
    let (mut copied, mut level, mut i) = (0usize, 0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = string_end(b, i);
                continue;
            }
            b'{' | b'[' if level >= max_depth => {
                let skipped = skip(b, i);
                out.push_str(&text[copied..i]);
                out.push_str(&format!(
                    "\"{TOO_DEEP}{} levels, {} bytes, fnv1a {:016x}]\"",
                    skipped.depth, skipped.bytes, skipped.hash
                ));
                (copied, i) = (skipped.end, skipped.end);
                continue;
            }
            b'{' | b'[' => level += 1,
            b'}' | b']' => level = level.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// [`shallow_within`] at [`MAX_JSON_DEPTH`].
pub fn shallow(text: &str) -> Cow<'_, str> {
    shallow_within(text, MAX_JSON_DEPTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        let mut s = String::with_capacity(2 * levels);
        s.extend(std::iter::repeat_n('[', levels));
        s.extend(std::iter::repeat_n(']', levels));
        s
    }

    #[test]
    fn depth_counts_containers_not_brackets_in_strings() {
        assert_eq!(depth(b"1"), 0);
        assert_eq!(depth(br#"{"a":[1,{"b":"[[[["}]}"#), 3);
        assert_eq!(depth(br#"["\"[[", [[]]]"#), 3);
        assert_eq!(depth(nested(1_000_000).as_bytes()), 1_000_000);
        assert!(too_deep(nested(MAX_JSON_DEPTH + 1).as_bytes()));
        assert!(!too_deep(nested(MAX_JSON_DEPTH).as_bytes()));
    }

    #[test]
    fn shallow_keeps_what_fits_and_marks_the_rest() {
        let fits = nested(MAX_JSON_DEPTH);
        assert!(matches!(shallow(&fits), Cow::Borrowed(_)));
        let text = format!(
            r#"{{"id":1,"params":{{"name":"echo","d":{}}}}}"#,
            nested(1_000_000)
        );
        let view = shallow(&text);
        let v: serde_json::Value = serde_json::from_str(&view).expect("a value serde reads");
        assert_eq!(v["params"]["name"], "echo");
        assert_eq!(
            depth(view.as_bytes()),
            MAX_JSON_DEPTH,
            "the marker is a string"
        );
        // `d` is level 3; the marker stands where level 101 began.
        let mut inner = &v["params"]["d"];
        for _ in 3..=MAX_JSON_DEPTH {
            inner = &inner[0];
        }
        let mark = inner.as_str().expect("a marker string");
        assert!(
            mark.starts_with(&format!(
                "{TOO_DEEP}{} levels, ",
                1_000_000 - MAX_JSON_DEPTH + 2
            )),
            "{mark}"
        );
    }

    #[test]
    fn markers_differ_exactly_when_the_deep_bytes_do() {
        let deep = |leaf: &str| {
            let n = MAX_JSON_DEPTH + 5;
            format!("{}{leaf}{}", "[".repeat(n), "]".repeat(n))
        };
        let a = shallow(&deep("1")).into_owned();
        assert_eq!(
            a,
            shallow(&deep(" 1 ")).into_owned(),
            "whitespace is not compared"
        );
        assert_ne!(a, shallow(&deep("2")).into_owned());
        assert_ne!(
            shallow(&deep(r#""a b""#)).into_owned(),
            shallow(&deep(r#""ab""#)).into_owned(),
            "blanks inside strings are"
        );
    }

    #[test]
    fn broken_text_never_panics() {
        for text in [
            "[[[[",
            "]]]]",
            "{\"a\":\"",
            "\\",
            "[\"\\",
            &nested(300)[..250],
        ] {
            let _ = shallow_within(text, 2);
            let _ = depth(text.as_bytes());
        }
    }
}
