//! The simulator's specified pseudo-random generator and samplers, from
//! `goodput_engine::rng` (which explains the choice of generator and samplers).

pub use goodput_engine::rng::*;
