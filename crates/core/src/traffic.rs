//! Synthetic and replayed request streams, from `goodput_engine::traffic`.

pub use goodput_engine::traffic::*;
