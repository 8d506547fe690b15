//! The YAML config document (install's): parsing never panics, and an edit of any entry
//! keeps the bytes outside it and reads back as what was set.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcptape::config_documents::YamlDocument;

#[path = "config_document.rs"]
mod config_document;

fuzz_target!(|data: &[u8]| {
    config_document::check(data, YamlDocument::parse);
});
