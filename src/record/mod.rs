//! Recording: the tap that turns passing lines into tape entries on a thread of its own
//! ([`tap`]), the tap as the first layer of the live path ([`layer`]), a recording's
//! lifetime ([`session`]), the `$commit` entries the tap holds until their answers
//! ([`commits`]), and what the tap keeps of the server's messages when result bodies are
//! dropped ([`results`]).

pub mod commits;
pub mod layer;
pub mod results;
pub mod session;
pub mod tap;
