//! Recording: the tap that turns passing lines into tape entries on a thread of its own
//! ([`tap`]), the tap as the first layer of the live path ([`layer`]), a recording's
//! lifetime ([`session`]), and the `$commit` entries the tap holds until their answers
//! ([`commits`]).

pub mod commits;
pub mod layer;
pub mod session;
pub mod tap;
