//! Which page the root shows: a plain value that the address, the session and the
//! header all speak of, below every component.

/// Which page the root shows. The planner is the full view; a share link opens the
/// finance summary (or the embed card with `&embed`); see `url_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// Inputs on the left, results on the right.
    #[default]
    Planner,
    /// The answer in words with the assumptions: the default view of a shared link.
    Finance,
    /// The compact read-only card for an `<iframe>` (`&embed` in the link).
    Embed,
    /// Two plans side by side.
    Compare,
}
