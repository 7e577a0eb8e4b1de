//! `goodput`: the capacity planner on the command line.

fn main() {
    let plan = goodput_core::Plan::default();
    let t = goodput_core::roofline::step_time_s(&plan, 110.0, 110.0 * 940.0);
    println!("{{\"decode_step_s\": {t}}}");
}
