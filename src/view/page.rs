//! The HTML assembly: the page's skeleton, its style and script inline, the tape's data in
//! one `application/json` block, and a Content-Security-Policy that allows exactly that
//! style and that script (by their SHA-256) and nothing else: no network, no other
//! script, no frame, no form.
//!
//! The data block is JSON whose `<`, `>`, `&`, U+2028 and U+2029 are written as `\u…`
//! escapes, so no string from a tape can end the block or open a tag: those characters
//! occur in JSON text only inside strings, where the escape means the same character.

use serde_json::Value;

/// The page's skeleton: `{{CSP}}`, `{{STYLE}}`, `{{DATA}}` and `{{SCRIPT}}` are filled in.
const TEMPLATE: &str = include_str!("assets/view.html");
/// The page's style.
const STYLE: &str = include_str!("assets/view.css");
/// The page's script: it reads the data block and builds the page with text nodes only.
const SCRIPT: &str = include_str!("assets/view.js");

/// The whole page for `data` ([`super::data::of`]).
pub fn html(data: &Value) -> String {
    let csp = format!(
        "default-src 'none'; script-src '{}'; style-src '{}'; img-src 'none'; \
         base-uri 'none'; form-action 'none'",
        hash(SCRIPT),
        hash(STYLE)
    );
    let data = script_safe(&data.to_string());
    // The data goes in last: nothing in it is read as a placeholder.
    TEMPLATE
        .replacen("{{CSP}}", &csp, 1)
        .replacen("{{STYLE}}", STYLE, 1)
        .replacen("{{SCRIPT}}", SCRIPT, 1)
        .replacen("{{DATA}}", &data, 1)
}

/// JSON text made safe inside a `<script>` element (see the module's note).
pub fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A CSP source for an inline element's text: `sha256-<base64 of its SHA-256>`.
fn hash(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    format!("sha256-{}", base64(digest.as_ref()))
}

/// Standard base64 with padding (RFC 4648 §4), for the CSP hashes: thirty-two bytes do
/// not need a crate.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ABC[(n >> (18 - 6 * k) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648() {
        // RFC 4648 §10's test vectors.
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain:?}");
        }
    }

    #[test]
    fn no_string_can_close_the_data_block() {
        let v = serde_json::json!({"a": "</script><!-- \u{2028}\u{2029} & >"});
        let safe = script_safe(&v.to_string());
        for bad in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
            assert!(!safe.contains(bad), "{bad:?} in {safe}");
        }
        let back: Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back, v);
    }

    #[test]
    fn the_policy_allows_exactly_the_inline_script_and_style() {
        let page = html(&serde_json::json!({}));
        let csp = page
            .split("http-equiv=\"Content-Security-Policy\" content=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("a CSP meta element");
        assert!(csp.starts_with("default-src 'none'"), "{csp}");
        assert!(
            csp.contains(&hash(SCRIPT)) && csp.contains(&hash(STYLE)),
            "{csp}"
        );
        // The hashed texts are the elements' whole text.
        assert!(page.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(page.contains(&format!("<style>{STYLE}</style>")));
        assert!(!page.contains("{{"), "a placeholder left");
    }
}
