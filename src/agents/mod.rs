//! Agents' MCP configs: where each agent keeps its servers, and the edits that wrap them
//! with `mcptape proxy` (`install`) and restore them (`uninstall`).
//!
//! Parts:
//! - `agent.rs` — the registry: each agent's files per scope, format, containers and
//!   [`Dialect`]; `dialect.rs` — how an agent spells an entry.
//! - `document.rs` — the [`Document`] interface every config format implements (JSON and
//!   JSONC, TOML, YAML): the server entries with the byte spans of their values, and
//!   [`Edit`]s that change one member of one entry in the file's own style. A file is
//!   edited, never rewritten: bytes outside the edits stay as they were. `json.rs` is the
//!   JSON/JSONC one; [`open`] picks the one of a [`Format`].
//! - `toml.rs` — the TOML document (Codex CLI), over `toml_edit`'s spans.
//! - `yaml.rs` — the YAML document (Goose), over `yaml_tree.rs` (nodes with byte spans from
//!   `saphyr-parser`'s events) and `yaml_render.rs` (scalars and flow values in the
//!   file's quoting).
//! - `text.rs` — line arithmetic the TOML and YAML documents share.
//! - `wrap.rs` — wrapping and unwrapping one entry's value (pure).
//! - `plan.rs` — one file's edits for `install` or `uninstall`, from its entries;
//!   `record.rs` — the install record (each entry's original bytes and what was
//!   installed); `write.rs` — backups and the atomic replace.
//!
//! Invariants: an edit never touches bytes outside the entry it changes; a file that
//! cannot be parsed is an error naming the file and the line, and is left as it was;
//! nothing is written through a symbolic link.

pub mod agent;
pub mod dialect;
pub mod document;
pub mod error;
pub mod json;
pub mod plan;
pub mod record;
mod text;
pub mod toml;
mod toml_render;
pub mod wrap;
pub mod write;
pub mod yaml;
mod yaml_render;
mod yaml_tree;

pub use document::{DocError, Document, Format};
pub use error::AgentError;

/// The [`Document`] of `text` in `format`. The one place a format is chosen.
pub fn open(format: Format, text: &str) -> Result<Box<dyn Document>, DocError> {
    // Named rather than read past: an edit would have to keep it, and the parsers'
    // own message (`Unexpected token`) does not say what is there.
    if text.starts_with('\u{feff}') {
        return Err(DocError::Syntax {
            line: 1,
            column: 1,
            message: "the file opens with a byte-order mark (U+FEFF); save it without one".into(),
        });
    }
    match format {
        Format::Json => Ok(Box::new(json::JsonDocument::parse(text)?)),
        Format::Toml => Ok(Box::new(toml::TomlDocument::parse(text)?)),
        Format::Yaml => Ok(Box::new(yaml::YamlDocument::parse(text)?)),
    }
}
