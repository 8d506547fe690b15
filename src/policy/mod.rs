//! The policy gate: rules a person writes (`--policy FILE`, docs/POLICY.md) that decide,
//! for each `tools/call` (and any method a rule names), `allow`, `deny`, `ask` or
//! `dry-run`; a layer ([`crate::layer`]) that acts on the decision on every front; and
//! the approvals desk where a person decides on a held call.
//!
//! - [`rule`], [`file`]: the rule language and the file — [`Policy::load`],
//!   [`Policy::decide`].
//! - [`layer`]: the [`PolicyLayer`]: answers a refusal or a dry run itself, holds an
//!   `ask` without holding up the rest of the connection, and tells the tap what it
//!   decided (`$policy/decision`, [`crate::tape::policy`]).
//! - [`approvals`]: the desk — pending calls as files only the user can read, decided by
//!   `mcptape approve`/`deny` from another terminal.

pub mod approvals;
pub mod file;
pub mod layer;
pub mod rule;

#[allow(unused_imports)] // until the layer uses them (issue 17)
pub use crate::tape::policy::{Decision, PolicyEntry, Resolution};
