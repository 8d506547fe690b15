//! Table tests of the high-entropy heuristic, both ways: random tokens are possible
//! secrets, the look-alikes (ids, hashes, UUIDs, images, cursors, identifiers) are not.

use super::*;
use crate::redact::rules::tests::fake;

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

fn suspects(msg: &serde_json::Value) -> Vec<String> {
    possible_secrets(&msg.to_string())
        .into_iter()
        .map(|s| s.path)
        .collect()
}

#[test]
fn random_tokens_are_possible_secrets() {
    // The share of random tokens flagged, by charset and length, over 1000 of each; the
    // ones without a digit, a capital and a lowercase letter count as misses.
    let b64 = format!("{ALNUM}+/");
    let b64url = format!("{ALNUM}-_");
    for (charset, n, least) in [
        (ALNUM, 20, 900),
        (ALNUM, 32, 950),
        (ALNUM, 40, 970),
        (b64.as_str(), 40, 970),
        (b64.as_str(), 86, 990),
        (b64url.as_str(), 64, 980),
    ] {
        let hits = (1..=1000)
            .filter(|&seed| possible_secret("", &fake(charset, n, seed)))
            .count();
        println!("{n} of {charset}: {hits} of 1000");
        assert!(hits >= least, "{n} characters of {charset}: {hits} of 1000");
    }
}

#[test]
fn look_alikes_are_not() {
    for token in [
        "0b1d2c3e-4f50-6789-abcd-ef0123456789",
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "4B825DC642CB6EB9A060E54BF8D69288FBEE4904",
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
        "getUserProfileSettings2",
        "my_project_name_2024_final",
        "disk-utilization-report-2024",
        "task-0123456789abcdef0123456789",
        "SomeVeryLongClassNameFactory",
        "HelloWorld123HelloWorld",
        "msg_01XFDUDYJgAACzvnptvVoYEL",
        "toolu_01A09q90qw90lq917835lq9",
        "chatcmpl-8abcDEF123ghiJKL456mno",
        "eyJvZmZzZXQiOjEwMCwibGltaXQiOjUwfQ",
        "/Users/bob/Library/Application_Support/Code2",
        "node_modules/@modelcontextprotocol/sdk",
        "sk-learn",
        "maxTokens",
        "2026-11-30T04:35:01",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "short1A",
        "V1ValidatorWithValuesAndKwargs",
        "readBlockZip64EndOfCentralLocator",
        "testWriteAndConvertCallsWin32WithParamsAndCommand",
        "convertIPv4BinaryToString",
        "convertIPv4MappedIPv6ToIPv4",
    ] {
        assert!(!possible_secret("", token), "{token}");
    }
    for (before, token) in [
        (
            "x.py,sha256=",
            "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
        ),
        (
            "image@sha256:",
            "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
        ),
    ] {
        assert!(!possible_secret(before, token), "{before}{token}");
    }
    // `name=VALUE` in source code splits at `=`; neither half is random.
    let msg = serde_json::json!({"t": "char_to_order_map=ISO_8859_9_TURKISH_CHAR_TO_ORDER"});
    assert!(suspects(&msg).is_empty());
    // Longer than the longest token looked at: content, not a key.
    assert!(!possible_secret("", &fake(ALNUM, MAX_TOKEN_CHARS + 1, 3)));
    // After `;base64,`: a data URL's payload.
    assert!(!possible_secret("data:x;base64,", &fake(ALNUM, 40, 3)));
}

#[test]
fn paths_and_names() {
    let token = fake(ALNUM, 32, 11);
    let msg = serde_json::json!({
        "params": {
            "arguments": {
                "note": format!("use {token} to log in"),
                "list": ["plain words", token],
                "nextCursor": token,
                "requestId": token,
                "progressToken": token,
                "sha": token,
                "content": [{"type": "image", "data": token, "mimeType": "image/png"}],
                "inner": serde_json::json!({"deeper": {"v": token}}).to_string(),
                "uuid": "0b1d2c3e-4f50-6789-abcd-ef0123456789",
                "n": 12,
                "ok": true,
                "empty": {},
                "none": [],
            }
        }
    });
    assert_eq!(
        suspects(&msg),
        [
            "params.arguments.note",
            "params.arguments.list[1]",
            "params.arguments.inner.deeper.v"
        ]
    );
}

#[test]
fn deep_and_odd_input_never_crashes() {
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    assert!(possible_secrets(&deep).is_empty());
    let deep_objects = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    assert!(possible_secrets(&deep_objects).is_empty());
    // Truncated or odd text is walked without panicking.
    for text in [
        "",
        "{",
        "[\"abc",
        "{\"a\"",
        "\"\\u",
        "}}]]",
        "{\"a\":\"\\ud83d\"}",
    ] {
        let _ = possible_secrets(text);
    }
}

#[test]
fn certificates_and_public_keys_are_public() {
    let b64 = format!("{ALNUM}+/");
    let body: Vec<String> = (0..4).map(|i| fake(&b64, 64, 30 + i)).collect();
    let block = |label: &str| {
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            body.join("\n")
        )
    };
    let msg = serde_json::json!({
        "cert": format!("chain: {}{}", block("CERTIFICATE"), block("CERTIFICATE")),
        "pub": block("PUBLIC KEY"),
        "key": block("PRIVATE KEY"),
        "after": format!("{} then {}", block("CERTIFICATE"), body[0]),
        "torn": format!("-----BEGIN CERTIFICATE-----\n{}", body[0]),
    });
    // The same base64 outside a public block (or in a block with no end) is suspect.
    assert_eq!(suspects(&msg), ["key", "after", "torn"]);
}
