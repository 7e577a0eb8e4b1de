//! Version 2 of the link payload: the body is written exactly as in version 1 (the
//! same modes, the same frozen dictionary); what changed is the plan it carries.
//!
//! Version 2 plans may hold what version 1 had no words for: a calibration
//! (`calibration`, the fitted step-model constants with their provenance and the
//! measured points), the SLO mode (`slo.mode`), closed-loop arrivals and a client
//! concurrency cap. A v1 body is a valid v2 body: every new field defaults to the v1
//! meaning, so v1 links decode unchanged. The tag moved so that an older release
//! refuses a calibrated link ("format version 2 … open it with a newer release")
//! instead of silently showing uncalibrated numbers.

/// The version tag this module reads and writes.
pub(crate) const VERSION: u32 = 2;

pub(crate) use super::v1::decode_body;
