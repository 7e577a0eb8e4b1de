//! The articles' public test vectors, asserted against the core's public API.

mod planning;
mod sim;
