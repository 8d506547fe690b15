//! The policy gate: rules a person writes (`--policy FILE`, docs/POLICY.md) that decide,
//! for each `tools/call` (and any method a rule names), `allow`, `deny`, `ask` or
//! `dry-run`; a layer ([`crate::layer`]) that acts on the decision on every front; and
//! the approvals desk where a person decides on a held call.
//!
//! - [`rule`], [`args`], [`file`]: the rule language, its argument matchers and the file —
//!   [`Policy::load`], [`Policy::decide`].
//! - [`index`]: the tools each server listed (their annotations), shared by a stack's
//!   connections.
//! - [`gate`]: one server's policy, index, approval timeout and desk, loaded from the
//!   flags or the mode's environment before any server starts.
//! - [`read`]: what the gate reads of a client line (the whole of it, as the servers read
//!   it), and what it refuses because it cannot.
//! - [`layer`], [`answer`]: the [`PolicyLayer`]: answers a refusal or a dry run itself,
//!   holds an `ask` without holding up the rest of the connection, and tells the tap what
//!   it decided (`$policy/decision`, [`crate::tape::policy`]).
//! - [`approvals`]: the desk — pending calls as files only the user can read, decided by
//!   `mcptape approve`/`deny` from another terminal.
//!
//! Invariant: a policy that cannot be read or parsed never becomes an allow: it is an
//! error before the server starts, from a flag or from the environment.

pub mod answer;
pub mod approvals;
pub mod args;
pub mod file;
pub mod gate;
pub mod index;
pub mod layer;
pub mod read;
pub mod rule;

pub use gate::Gate;
pub use rule::Policy;
