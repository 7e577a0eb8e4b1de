//! Search, capacity, analytic and alert vectors.
