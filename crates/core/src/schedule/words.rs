//! The schedule in words: the one verdict sentence the CLI prints and the app's planner
//! and finance view show.

use super::Schedule;
use crate::format::{percent_tenths, usd};

impl Schedule {
    /// "autoscaling saves $X per month (Y%), with Z% of requests within the SLO during
    /// ramps (A% over the period, M% in the worst hour)": what the day comes to, without
    /// a capital or a full stop so that callers can embed it. Without ramp hours the
    /// attainment is the period's; without simulations there is none.
    pub fn verdict(&self) -> String {
        let saves = if self.savings_per_month_usd > 0.0 {
            format!(
                "autoscaling saves {} per month ({})",
                usd(self.savings_per_month_usd),
                percent_tenths(self.savings_share)
            )
        } else {
            "autoscaling saves nothing on this profile".to_string()
        };
        let slo = match (self.attainment, self.ramp_attainment, self.min_attainment) {
            (Some(a), Some(r), Some(m)) => format!(
                ", with {} of requests within the SLO during ramps ({} over the {}, {} in the worst hour)",
                percent_tenths(r),
                percent_tenths(a),
                if self.period_hours == 168 { "week" } else { "day" },
                percent_tenths(m)
            ),
            (Some(a), _, _) => format!(
                ", with {} of requests within the SLO (no ramps)",
                percent_tenths(a)
            ),
            _ => String::new(),
        };
        format!("{saves}{slo}")
    }

    /// The verdict as a sentence: capital first, full stop last.
    pub fn verdict_sentence(&self) -> String {
        crate::format::sentence(&self.verdict())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{RateProfile, Schedule, ScheduleOptions, ScheduleRun};
    use crate::plan::Plan;

    /// The hand example of `docs/schedule.md`: goodput 10, 70%, N+1, $2 per GPU-hour;
    /// 0, 7, 30 and 7.01 req/s six hours each; no lag: 50% saved.
    fn hand_schedule() -> Schedule {
        let mut p = Plan::default();
        p.planning.utilization = 0.7;
        p.planning.redundancy = 1;
        p.planning.hours_per_month = 730.0;
        p.hardware.gpu_hour_usd = 2.0;
        p.hardware.tp_degree = 1;
        let hourly = [0.0, 7.0, 30.0, 7.01]
            .iter()
            .flat_map(|&r| std::iter::repeat_n(r, 6))
            .collect();
        let profile = RateProfile {
            hourly,
            absolute: true,
            source: String::new(),
        };
        let o = ScheduleOptions {
            scale_up_lag_min: 0.0,
            cooldown_min: 0.0,
            simulate: false,
            ..ScheduleOptions::default()
        };
        let run = ScheduleRun::new(&p, &profile, 10.0, &o).expect("a schedule");
        run.result().expect("nothing to simulate")
    }

    #[test]
    fn the_verdict_names_the_saving_and_the_ramp_attainment() {
        let mut s = hand_schedule();
        assert_eq!(s.verdict(), "autoscaling saves $4,380 per month (50.0%)");
        s.attainment = Some(0.99);
        s.ramp_attainment = Some(0.875);
        s.min_attainment = Some(0.5);
        assert_eq!(
            s.verdict_sentence(),
            "Autoscaling saves $4,380 per month (50.0%), with 87.5% of requests within the SLO during ramps (99.0% over the day, 50.0% in the worst hour)."
        );
        s.ramp_attainment = None;
        assert!(s
            .verdict()
            .ends_with(", with 99.0% of requests within the SLO (no ramps)"));
        s.savings_per_month_usd = 0.0;
        assert!(s
            .verdict()
            .starts_with("autoscaling saves nothing on this profile, with"));
    }
}
