//! Text for people: what a tape, a server, a config or a client wrote, made safe to print.
//!
//! Everything mcptape prints for a person (the `show` trace, `list`, replay verdicts,
//! `verify`'s report, `call`'s text, `tools`, warnings and errors) may quote text that
//! came from outside. A terminal obeys some characters of that text: ESC and the C1 CSI
//! start escape sequences (set the window title, clear the screen, move the cursor), CR
//! and BS overwrite what is already on the line, and bidi controls reorder what is shown.
//! [`line`] and [`block`] replace each such character by a visible escape:
//!
//! - C0 controls U+0000–U+001F and DEL U+007F: `\n`, `\r`, `\t` by name, the others as
//!   `\x1b`;
//! - C1 controls U+0080–U+009F: `\u{9b}`;
//! - bidi controls U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, and the other
//!   invisible format characters that can hide or reorder text: U+200B (zero-width
//!   space), U+2028/U+2029 (line and paragraph separators, which some programs show as a
//!   line break), U+2060–U+2064 (word joiner, invisible operators), U+206A–U+206F,
//!   U+FEFF (BOM), U+FFF9–U+FFFB (interlinear annotation) and the tag characters
//!   U+E0000–U+E007F (invisible "ASCII smuggling"): `\u{202e}`.
//!
//! Left alone on purpose: U+200C/U+200D (zero-width (non-)joiners), which emoji and several
//! scripts need, and the soft hyphen U+00AD. A backslash is not doubled, so an escape is
//! visible but not reversible: the tape itself (or `--json`) is the exact record.
//!
//! [`line`] is for a value shown on one line (it escapes `\n` and `\t` too, so no value
//! can forge a line of its own); [`block`] keeps `\n` and `\t`, for text meant to span
//! lines (a tool's text result). Both borrow when nothing needs escaping.
//!
//! JSON printed for people (`show --json`, `list --json`, `verify --format json`, `call
//! --output json`) goes through [`json_pretty`] / [`json_compact`]: serde_json escapes C0
//! but writes C1, DEL and bidi controls raw, so these write them as `\u009b`, `\u007f`,
//! `\u202e` (a surrogate pair above U+FFFF). The document means the same; only its
//! spelling changes. `call --output raw` prints the wire bytes and is not escaped.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter};

/// True for a character a terminal may obey or that hides text, apart from `\n` and `\t`.
pub fn is_dangerous(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{200b}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}')
}

/// A value for one line: every dangerous character escaped, `\n` and `\t` too.
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// Text meant to span lines: dangerous characters escaped, `\n` and `\t` kept.
pub fn block(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

fn escape(s: &str, keep_lines: bool) -> Cow<'_, str> {
    let hit = |c: char| is_dangerous(c) || (!keep_lines && matches!(c, '\n' | '\t'));
    // Printable ASCII is the common case and cannot need escaping.
    let plain = s.bytes().all(|b| (0x20..0x7f).contains(&b) || b == b'\n');
    if (plain && keep_lines) || !s.chars().any(hit) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if !hit(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

/// `eprintln!` for a message that quotes outside text: one line on stderr, escaped with
/// [`line`], with any progress bar cleared around it ([`crate::progress::suspend`]).
macro_rules! eprintln_escaped {
    ($($arg:tt)*) => {
        $crate::progress::suspend(|| eprintln!("{}", $crate::term::line(&format!($($arg)*))))
    };
}
pub(crate) use eprintln_escaped;

/// A value as pretty JSON (two-space indent, as `{:#}`), C1, DEL and bidi escaped.
pub fn json_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    write_json(value, PrettyFormatter::new())
}

/// A value as compact JSON (as `to_string`), C1, DEL and bidi escaped.
pub fn json_compact<T: Serialize + ?Sized>(value: &T) -> String {
    write_json(value, CompactFormatter)
}

fn write_json<T: Serialize + ?Sized, F: Formatter>(value: &T, inner: F) -> String {
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, Escaping(inner));
    if let Err(e) = value.serialize(&mut ser) {
        // Our documents are `Value`s and derived structs: they always serialize.
        return format!("\"(cannot be shown as JSON: {e})\"");
    }
    // serde_json writes UTF-8 only, and the escapes are ASCII.
    String::from_utf8_lossy(&buf).into_owned()
}

/// Writes a string fragment with each dangerous character as a `\uXXXX` escape.
fn escaped_fragment<W: ?Sized + io::Write>(writer: &mut W, fragment: &str) -> io::Result<()> {
    escape_into(writer, fragment, false)
}

/// Writes `fragment` with each dangerous character as `\uXXXX`; with `raw` (a fragment of
/// JSON text, where a C0 control can only be whitespace between tokens) a tab, newline
/// or carriage return becomes a space instead: the same JSON, and no escape outside a
/// string, where it would not be JSON.
fn escape_into<W: ?Sized + io::Write>(writer: &mut W, fragment: &str, raw: bool) -> io::Result<()> {
    let mut start = 0;
    for (i, c) in fragment.char_indices() {
        if !is_dangerous(c) {
            continue;
        }
        writer.write_all(&fragment.as_bytes()[start..i])?;
        if raw && matches!(c, '\t' | '\n' | '\r') {
            writer.write_all(b" ")?;
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
        }
        start = i + c.len_utf8();
    }
    writer.write_all(&fragment.as_bytes()[start..])
}

/// A serde_json formatter that escapes what terminals obey, around another formatter.
struct Escaping<F>(F);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $name<W: ?Sized + io::Write>(&mut self, writer: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            self.0.$name(writer $(, $arg)*)
        }
    )*};
}

impl<F: Formatter> Formatter for Escaping<F> {
    delegate! {
        write_null();
        write_bool(value: bool);
        write_i8(value: i8);
        write_i16(value: i16);
        write_i32(value: i32);
        write_i64(value: i64);
        write_i128(value: i128);
        write_u8(value: u8);
        write_u16(value: u16);
        write_u32(value: u32);
        write_u64(value: u64);
        write_u128(value: u128);
        write_f32(value: f32);
        write_f64(value: f64);
        write_number_str(value: &str);
        begin_string();
        end_string();
        write_char_escape(char_escape: CharEscape);
        write_byte_array(value: &[u8]);
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        escaped_fragment(writer, fragment)
    }

    /// Raw JSON text (`RawValue`): C1 and bidi controls can only occur inside its strings,
    /// where the escape means the same character; C0 ones only as whitespace.
    fn write_raw_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        escape_into(writer, fragment, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn raw_json_keeps_its_whitespace_json() {
        let raw: Box<serde_json::value::RawValue> =
            serde_json::value::RawValue::from_string("{\"a\":\r\n\t\"\u{9b}\"}".into())
                .expect("raw");
        let text = json_compact(&raw);
        assert!(!text.chars().any(is_dangerous), "{text:?}");
        let v: Value = serde_json::from_str(&text).expect("still JSON");
        assert_eq!(v["a"], "\u{9b}");
    }

    #[test]
    fn plain_text_is_borrowed() {
        for s in ["", "hello world", "é ünïcødé 日本 👨‍👩‍👧", "{\"a\":[1,2]}"] {
            assert!(matches!(line(s), Cow::Borrowed(_)), "{s}");
            assert!(matches!(block(s), Cow::Borrowed(_)), "{s}");
        }
        assert!(matches!(block("two\nlines\tand a tab"), Cow::Borrowed(_)));
    }

    #[test]
    fn controls_are_escaped_visibly() {
        assert_eq!(
            line("\u{1b}]0;title\u{7}\u{1b}[2J"),
            "\\x1b]0;title\\x07\\x1b[2J"
        );
        assert_eq!(line("a\u{9b}31mb\u{85}"), "a\\u{9b}31mb\\u{85}");
        assert_eq!(line("x\u{7f}\u{0}\u{8}"), "x\\x7f\\x00\\x08");
        assert_eq!(line("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(
            line("\u{61c}\u{200e}\u{200f}\u{2066}\u{2069}"),
            "\\u{61c}\\u{200e}\\u{200f}\\u{2066}\\u{2069}"
        );
        assert_eq!(
            line("a\u{2028}b\u{feff}\u{200b}"),
            "a\\u{2028}b\\u{feff}\\u{200b}"
        );
        assert_eq!(line("hid\u{e0041}den"), "hid\\u{e0041}den");
    }

    #[test]
    fn line_escapes_newlines_block_keeps_them() {
        let forged = "name\n  ok \r\tx";
        assert_eq!(line(forged), "name\\n  ok \\r\\tx");
        assert_eq!(block(forged), "name\n  ok \\r\tx");
        assert_eq!(block("a\u{1b}[2J\nb"), "a\\x1b[2J\nb");
    }

    #[test]
    fn escaped_text_has_no_dangerous_character_left() {
        let all: String = (0u32..0x3000)
            .chain(0xfe00..0x10000)
            .chain(0xe0000..0xe0080)
            .filter_map(char::from_u32)
            .collect();
        assert!(!line(&all).chars().any(|c| is_dangerous(c) || c == '\n'));
        assert!(!block(&all).chars().any(is_dangerous));
    }

    #[test]
    fn json_escapes_c1_and_bidi_and_means_the_same() {
        let v = json!({"k\u{9b}": "a\u{1b}b\u{9b}c\u{202e}d\u{7f}e\u{e0041}", "n": [1, 2.5, null, true]});
        let compact = json_compact(&v);
        assert_eq!(
            compact,
            r#"{"k\u009b":"a\u001bb\u009bc\u202ed\u007fe\udb40\udc41","n":[1,2.5,null,true]}"#
        );
        assert!(!compact.chars().any(is_dangerous));
        let back: Value = serde_json::from_str(&compact).expect("valid JSON");
        assert_eq!(back, v);
        let pretty = json_pretty(&v);
        assert!(!pretty.chars().any(is_dangerous));
        assert_eq!(serde_json::from_str::<Value>(&pretty).expect("valid"), v);
        let plain = json!({"a": [1, {"b": "c"}], "d": {}});
        assert_eq!(json_pretty(&plain), format!("{plain:#}"));
        assert_eq!(json_compact(&plain), plain.to_string());
    }

    #[test]
    fn raw_json_is_escaped_too() {
        let raw =
            serde_json::value::RawValue::from_string("{\"t\":\"x\u{9b}y\"}".into()).expect("raw");
        assert_eq!(json_compact(&raw), "{\"t\":\"x\\u009by\"}");
    }
}
