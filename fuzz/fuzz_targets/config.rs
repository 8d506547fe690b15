//! The MCP config parser: any text parses or fails with an error naming the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcptape::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = std::path::Path::new("fuzz-mcp.json");
    if let Ok(config) = Config::parse(path, text) {
        let _ = config.server("everything");
    }
});
