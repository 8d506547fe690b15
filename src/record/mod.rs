//! Recording: the tap that turns passing lines into tape entries on a thread of its own
//! ([`tap`]), and a recording's lifetime ([`session`]).

pub mod session;
pub mod tap;
