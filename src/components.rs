//! Page components, one public component per file.

pub mod alerts_panel;
pub mod analytic_panel;
pub mod best_settings;
pub mod calibrate_panel;
pub mod calibration_overlay;
pub mod calibration_result;
pub mod cards;
pub mod chart_canvas;
pub mod charts_panel;
pub mod choices;
pub mod copy_button;
pub mod export_panel;
pub mod glossary;
pub mod header;
pub mod header_actions;
pub mod inputs;
pub mod length_preview;
pub mod number_field;
pub mod planner;
pub mod presets;
pub mod roofline_panel;
pub mod run_status;
pub mod saved_panel;
pub mod share_banner;
pub mod shootout_panel;
pub mod sweep_field;
