//! Agents' MCP configs: where each agent keeps its servers, and the edits that wrap them
//! with `mcptape proxy` (`install`) and restore them (`uninstall`).
//!
//! Parts:
//! - `document.rs` — the [`Document`] interface every config format implements (JSON and
//!   JSONC, TOML, YAML): the server entries with the byte spans of their values, and
//!   [`Edit`]s that change one member of one entry in the file's own style. A file is
//!   edited, never rewritten: bytes outside the edits stay as they were.
//! - `toml.rs` — the TOML document (Codex CLI), over `toml_edit`'s spans.
//! - `yaml.rs` — the YAML document (Goose), over `yaml_tree.rs` (nodes with byte spans from
//!   `saphyr-parser`'s events) and `yaml_render.rs` (scalars and flow values in the
//!   file's quoting).
//! - `text.rs` — line arithmetic the TOML and YAML documents share.
//!
//! Invariants: an edit never touches bytes outside the entry it changes; a file that
//! cannot be parsed is an error naming the file and the line, and is left as it was.

pub mod document;
mod text;
pub mod toml;
pub mod yaml;
mod yaml_render;
mod yaml_tree;

#[allow(unused_imports)] // until install uses them (issue 15)
pub use document::{DocError, Document, Edit, Entry, Format, apply_edits};
