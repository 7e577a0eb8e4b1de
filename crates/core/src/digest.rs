//! FNV-1a, the 64-bit hash the plan's comparison key, the golden report digests and the
//! embed snippet's frame id use.

/// The hash of no bytes: where a digest starts.
pub const FNV1A_START: u64 = 0xcbf2_9ce4_8422_2325;

/// `hash` with `bytes` folded in, byte by byte.
pub fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
