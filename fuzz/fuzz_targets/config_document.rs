//! Shared by the config document targets: any text parses or fails with an error; on a
//! text that parses, every edit of every entry keeps the bytes outside that entry, and
//! the edited text parses again with the member set to what was asked.

use mcptape::config_documents::{Document, apply_edits};
use serde_json::json;

/// The containers the agents use.
const CONTAINERS: &[&[&str]] = &[&["mcpServers"], &["mcp_servers"], &["extensions"], &["servers"]];

/// Drives `parse` over `data` (the fuzzer's bytes).
pub fn check<D: Document>(data: &[u8], parse: impl Fn(&str) -> Result<D, mcptape::config_documents::DocError>) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(doc) = parse(text) else {
        return;
    };
    for container in CONTAINERS {
        let Ok(entries) = doc.entries(container) else {
            continue;
        };
        for entry in entries.iter().take(4) {
            assert!(entry.span.start <= entry.span.end && entry.span.end <= text.len());
            let name = entry.name().to_owned();
            let mut keys: Vec<String> = entry
                .value
                .as_object()
                .map(|o| o.keys().take(3).cloned().collect())
                .unwrap_or_default();
            keys.push("command".to_owned());
            let values = [
                Some(json!("/usr/bin/mcptape")),
                Some(json!(["proxy", "--server", name, "--", "@x/y", "yes", "a: b", "1.5"])),
                Some(json!({"MCPTAPE_HEADER_X": "v", "K": name})),
                None,
            ];
            for key in &keys {
                for value in &values {
                    let Ok(edits) = doc.set_member(entry, key, value.as_ref()) else {
                        continue;
                    };
                    let Ok(out) = apply_edits(text, edits) else {
                        continue;
                    };
                    let (before, after) = (&text[..entry.span.start], &text[entry.span.end..]);
                    assert!(out.starts_with(before), "bytes before the entry changed");
                    assert!(out.ends_with(after), "bytes after the entry changed");
                    let again = parse(&out).expect("an edited text parses again");
                    let now = again
                        .entries(container)
                        .expect("its entries read")
                        .into_iter()
                        .find(|e| e.path == entry.path);
                    let Some(now) = now else {
                        // Only removing an entry's one member (a TOML table that exists
                        // through its one subtable) may take the entry with it.
                        let only = entry.value.as_object().is_some_and(|o| o.len() == 1);
                        assert!(value.is_none() && only, "the entry went missing");
                        continue;
                    };
                    let got = now.value.get(key.as_str()).cloned();
                    assert_eq!(got.as_ref(), value.as_ref(), "member {key} of {name}");
                }
            }
        }
    }
}
