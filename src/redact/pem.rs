//! PEM blocks seen by the redaction rules: which are private (a key, redacted even when
//! base64-encoded again, as in a Kubernetes Secret's `tls.key`) and which are public (a
//! certificate or a public key, never a finding, not even a possible secret).
//!
//! A block's kind is its label: `-----BEGIN <LABEL>-----`. A label holding `PRIVATE KEY`
//! is a private key (`RSA PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`, `PGP PRIVATE KEY BLOCK`,
//! …); any other label (`CERTIFICATE`, `PUBLIC KEY`, `X509 CRL`, …) is public.

/// The base64 of `-----BEGIN` up to its first partial character: every base64-encoded
/// PEM file starts so (standard alphabet, as Kubernetes and most tools write it).
pub(crate) const BASE64_BEGIN: &str = "LS0tLS1CRUdJTi";

/// The longest PEM label looked at (`ENCRYPTED PRIVATE KEY` is 21).
const MAX_LABEL_BYTES: usize = 40;

/// How many base64 characters are decoded to read a label: `-----BEGIN `, a label of up
/// to 40 characters and `-----` fit in 56 bytes.
const LABEL_BASE64_CHARS: usize = 76;

/// The label of the PEM header `s` starts with (`-----BEGIN RSA PRIVATE KEY-----` gives
/// `RSA PRIVATE KEY`), if it does.
fn label(s: &[u8]) -> Option<&[u8]> {
    let rest = s.strip_prefix(b"-----BEGIN ")?;
    // A label is short: the search for its end is bounded, so many headers stay linear.
    let head = &rest[..rest.len().min(MAX_LABEL_BYTES + 5)];
    let end = head.windows(5).position(|w| w == b"-----")?;
    let label = &rest[..end];
    label
        .iter()
        .all(|&c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b' ')
        .then_some(label)
}

fn private(label: &[u8]) -> bool {
    label.windows(11).any(|w| w == b"PRIVATE KEY")
}

/// Decodes the standard base64 at the start of `s` (up to `max` characters, stopping at
/// the first character outside the alphabet).
fn decode_prefix(s: &str, max: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(max * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes().take(max) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// True when `s` is base64 of a PEM private key (its header decodes to
/// `-----BEGIN … PRIVATE KEY…-----`); base64 of a certificate is not.
pub(crate) fn is_base64_private_key(s: &str) -> bool {
    label(&decode_prefix(s, LABEL_BASE64_CHARS)).is_some_and(private)
}

/// The byte ranges of `s` inside public PEM blocks (`-----BEGIN CERTIFICATE-----` to its
/// `-----END CERTIFICATE-----`), in order. One pass: a header without its end line ends
/// the search (what follows is not skipped).
pub(crate) fn public_blocks(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memmem::find(&b[from..], b"-----BEGIN ") {
        let at = from + i;
        let Some(label) = label(&b[at..]) else {
            from = at + 1;
            continue;
        };
        let end_line = [b"-----END ".as_slice(), label, b"-----"].concat();
        let body = at + 11 + label.len() + 5;
        let Some(j) = memchr::memmem::find(&b[body..], &end_line) else {
            break;
        };
        let end = body + j + end_line.len();
        if !private(label) {
            out.push((at, end));
        }
        from = end;
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Standard base64 with padding, for the tests.
    pub(crate) fn encode(bytes: &[u8]) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &c)| n | u32::from(c) << (16 - 8 * i));
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(char::from(A[(n >> (18 - 6 * i) & 63) as usize]));
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    #[test]
    fn the_prefixes_are_computed_not_guessed() {
        assert_eq!(&encode(b"-----BEGIN PRIVATE KEY-----")[..14], BASE64_BEGIN);
        for (header, prefix) in [
            (
                "-----BEGIN PRIVATE KEY-----",
                "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----",
                "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVkt",
            ),
            (
                "-----BEGIN EC PRIVATE KEY-----",
                "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0t",
            ),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----",
                "LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0",
            ),
        ] {
            let full = encode(format!("{header}\nMIIE\n").as_bytes());
            assert!(full.starts_with(prefix), "{header}: {full}");
            assert!(is_base64_private_key(&full), "{header}");
        }
        let cert = encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        assert!(cert.starts_with("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t"));
        assert!(!is_base64_private_key(&cert));
    }

    #[test]
    fn public_blocks_are_certificates_and_public_keys_only() {
        let s = "a -----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE----- b \
                 -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY----- c \
                 -----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY----- d -----BEGIN X";
        let got: Vec<&str> = public_blocks(s).iter().map(|&(a, b)| &s[a..b]).collect();
        assert_eq!(
            got,
            [
                "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
                "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"
            ]
        );
    }
}
