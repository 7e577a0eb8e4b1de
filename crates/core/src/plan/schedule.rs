//! What a plan carries about traffic over a day: the hourly rate profile and the
//! autoscaler's options, with their checks. The schedule itself, worked out from them,
//! is `schedule`'s.

use serde::{Deserialize, Serialize};

/// Longest lag, cool-down or lead accepted [minutes].
pub const MAX_MINUTES: f64 = 1440.0;

/// Most replicas the autoscaler's floor (`min_replicas`) may ask for.
pub const MAX_MIN_REPLICAS: u32 = 100_000;
/// Most replications per hour.
pub const MAX_SCHEDULE_REPLICATIONS: u32 = 20;
/// Largest hourly value a profile may hold.
pub const MAX_PROFILE_VALUE: f64 = 1e9;

/// What is wrong with a profile or the autoscaler's options, in the user's words.
#[derive(Debug, Clone, PartialEq)]
pub enum ScheduleSpecError {
    /// The rate profile is unusable.
    Profile(String),
    /// An option is out of range.
    Option {
        /// The option.
        field: &'static str,
        /// What it must be.
        message: String,
    },
}

impl std::fmt::Display for ScheduleSpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScheduleSpecError::Profile(m) => write!(f, "rate profile: {m}"),
            ScheduleSpecError::Option { field, message } => write!(f, "{field}: {message}"),
        }
    }
}

impl std::error::Error for ScheduleSpecError {}

/// An hourly rate profile: 24 values (a day) or 168 (a week from Monday 0:00).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateProfile {
    /// One value per hour.
    pub hourly: Vec<f64>,
    /// True: the values are fleet rates in req/s as they stand. False (the default): the
    /// values are a shape, scaled so that its highest hour equals the plan's forecast
    /// peak (`traffic.peak_rate_rps`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absolute: bool,
    /// Where the profile came from, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

impl RateProfile {
    /// Checks the length and the values.
    pub fn validate(&self) -> Result<(), ScheduleSpecError> {
        let n = self.hourly.len();
        if n != 24 && n != 168 {
            return Err(ScheduleSpecError::Profile(format!(
                "{n} hourly values; give 24 (a day) or 168 (a week)"
            )));
        }
        if let Some((h, v)) = self
            .hourly
            .iter()
            .enumerate()
            .find(|(_, v)| !(v.is_finite() && **v >= 0.0 && **v <= MAX_PROFILE_VALUE))
        {
            return Err(ScheduleSpecError::Profile(format!(
                "hour {h}: {v} must be a number in [0, {MAX_PROFILE_VALUE:e}]"
            )));
        }
        if self.hourly.iter().all(|&v| v == 0.0) {
            return Err(ScheduleSpecError::Profile("every hour is 0".into()));
        }
        Ok(())
    }

    /// The fleet rate per hour [req/s]: the values as they stand when absolute, else scaled
    /// so the highest equals `peak_rps`.
    pub fn rates_rps(&self, peak_rps: f64) -> Vec<f64> {
        if self.absolute {
            return self.hourly.clone();
        }
        let max = self.hourly.iter().cloned().fold(0.0, f64::max);
        if max <= 0.0 {
            return vec![0.0; self.hourly.len()];
        }
        self.hourly.iter().map(|v| v / max * peak_rps).collect()
    }
}

/// What a plan carries about traffic over a day (and a share link with it): the
/// profile (a trace travels as its hourly shape, never its rows) and the autoscaler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleSpec {
    /// The hourly rate profile.
    pub profile: RateProfile,
    /// The autoscaler and simulation options.
    #[serde(default)]
    pub options: ScheduleOptions,
}

/// How the autoscaler behaves and what is simulated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScheduleOptions {
    /// Minutes from ordering a replica to its serving: provisioning plus weight loading.
    pub scale_up_lag_min: f64,
    /// Minutes the autoscaler waits, after wanting fewer replicas, before removing them.
    pub cooldown_min: f64,
    /// Minutes ahead of an hour that its replicas are ordered (scheduled scaling on a
    /// known profile); 0 = reactive, ordering only when the hour starts.
    pub lead_min: f64,
    /// Fewest replicas ever running.
    pub min_replicas: u32,
    /// Simulate every hour's attainment (false: arithmetic only).
    pub simulate: bool,
    /// Simulations per hour (seeds `replication_seed(run.seed, i)`), averaged.
    pub replications: u32,
}

impl Default for ScheduleOptions {
    fn default() -> Self {
        ScheduleOptions {
            scale_up_lag_min: 10.0,
            cooldown_min: 30.0,
            lead_min: 0.0,
            min_replicas: 1,
            simulate: true,
            replications: 1,
        }
    }
}

impl ScheduleOptions {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), ScheduleSpecError> {
        for (field, v) in [
            ("scale_up_lag_min", self.scale_up_lag_min),
            ("cooldown_min", self.cooldown_min),
            ("lead_min", self.lead_min),
        ] {
            if !(v.is_finite() && (0.0..=MAX_MINUTES).contains(&v)) {
                return Err(ScheduleSpecError::Option {
                    field,
                    message: format!(
                        "must be a number of minutes from 0 to {}; it is {}",
                        crate::format::thousands(MAX_MINUTES as i64),
                        crate::format::sig(v)
                    ),
                });
            }
        }
        let whole = |max: u32, got: u32| {
            format!(
                "must be a whole number from 1 to {}; it is {}",
                crate::format::thousands(i64::from(max)),
                crate::format::thousands(i64::from(got))
            )
        };
        if self.min_replicas == 0 || self.min_replicas > MAX_MIN_REPLICAS {
            return Err(ScheduleSpecError::Option {
                field: "min_replicas",
                message: whole(MAX_MIN_REPLICAS, self.min_replicas),
            });
        }
        if self.replications == 0 || self.replications > MAX_SCHEDULE_REPLICATIONS {
            return Err(ScheduleSpecError::Option {
                field: "replications",
                message: whole(MAX_SCHEDULE_REPLICATIONS, self.replications),
            });
        }
        Ok(())
    }
}
