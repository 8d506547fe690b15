//! (issue 17: being built)
