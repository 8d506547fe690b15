//! Recording: the tap that turns passing lines into tape entries on a thread of its own
//! ([`tap`]), the tap as the first layer of the live path ([`layer`]), and a recording's
//! lifetime ([`session`]).

pub mod layer;
pub mod session;
pub mod tap;
