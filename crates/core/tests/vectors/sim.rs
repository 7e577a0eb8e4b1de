//! Roofline and simulator vectors.
