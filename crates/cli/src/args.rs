//! Command-line arguments, parsed by clap.
//!
//! The plan flags are built from the core's field registry
//! ([`goodput_core::plan::fields::FIELDS`]): each row with a flag becomes one `--flag`
//! whose help is the row's label, help text, unit and range, so `--help` and
//! `Plan::validate` read the same table. Each command adds its own flags with
//! [`real`], [`whole`], [`text_flag`] and [`switch`]; [`Args`] then reads the parsed values
//! and builds the plan. Numbers accept scientific notation (`8e9`) and a minus sign
//! (`-1`, which the plan's check then words). Errors are one line and name the flag.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, ArgMatches, Command};
use goodput_core::calibrate::FitTerms;
use goodput_core::plan::classes::{classes_from_lines, parse_class_line};
use goodput_core::plan::fields::{
    self, by_flag, by_path, field, range_message, Field, Kind, Range,
};
use goodput_core::plan::{
    Arrival, KvPolicy, LengthDist, LengthSpec, Plan, PlanError, PrefixModel, TraceRow,
    MAX_CONCURRENCY,
};
use goodput_core::presets;

/// A value parser from a plain function; a bad value is one line naming the flag:
/// `--warmup-requests: expected a whole number, got 'lots'`.
#[derive(Clone, Copy)]
struct Parse<T>(fn(&str) -> Result<T, String>);

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Parse<T> {
    type Value = T;

    fn parse_ref(&self, _: &Command, arg: Option<&Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        (self.0)(&text).map_err(|why| {
            clap::Error::raw(
                ErrorKind::ValueValidation,
                format!("{}: {why}, got '{text}'", flag_of(arg)),
            )
        })
    }
}

/// One of a few names, listed in `--help` and the shell completions.
#[derive(Clone, Copy)]
struct Choices {
    names: goodput_core::plan::fields::Choices,
    /// How the names are joined in an error (`joint|marginal`).
    sep: &'static str,
}

impl TypedValueParser for Choices {
    type Value = String;

    fn parse_ref(
        &self,
        _: &Command,
        arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        let text = value.to_string_lossy();
        // `round-robin` is `round_robin`, as the core's parsers read it.
        let canonical = text.trim().replace('-', "_");
        if let Some((name, _)) = self.names.iter().find(|(n, _)| *n == canonical) {
            return Ok(name.to_string());
        }
        Err(clap::Error::raw(
            ErrorKind::ValueValidation,
            format!(
                "{}: expected {}, got '{text}'",
                flag_of(arg),
                self.names
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(self.sep)
            ),
        ))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            self.names.iter().map(|(n, _)| PossibleValue::new(*n)),
        ))
    }
}

fn flag_of(arg: Option<&Arg>) -> String {
    arg.and_then(Arg::get_long)
        .map_or_else(|| "value".to_string(), |l| format!("--{l}"))
}

fn parse_real(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err("expected a finite number".into()),
    }
}

/// A whole number in `0..=u32::MAX`, scientific notation allowed (`2.5e3`).
fn parse_whole(s: &str) -> Result<u32, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=u32::MAX as f64).contains(&x) && x.fract() == 0.0 => {
            Ok(x as u32)
        }
        Ok(x) if x.is_finite() && x.fract() == 0.0 && x > 0.0 => {
            Err(format!("expected a whole number, at most {}", u32::MAX))
        }
        Ok(x) if x < 0.0 => Err("expected a whole number, 0 or more".into()),
        _ => Err("expected a whole number".into()),
    }
}

/// A seed: a whole number in `0..=u64::MAX`, or scientific notation for one a double
/// holds exactly (`1e3`, up to 2^53).
fn parse_seed(s: &str) -> Result<u64, String> {
    const EXACT: f64 = (1u64 << 53) as f64;
    let s = s.trim();
    if let Ok(n) = s.parse::<u64>() {
        return Ok(n);
    }
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x.fract() == 0.0 && (0.0..=EXACT).contains(&x) => Ok(x as u64),
        Ok(x) if x < 0.0 => Err("expected a whole number, 0 or more".into()),
        Ok(x) if x.is_finite() && x.fract() == 0.0 => Err(format!(
            "expected a whole number, at most {}; write a seed above 2^53 in full digits",
            u64::MAX
        )),
        _ => Err("expected a whole number, 0 or more".into()),
    }
}

/// A registry field's whole number: as [`parse_whole`], but a value beyond what any
/// whole field holds gets the field's own range (`expected a whole number in
/// 1..=16384`); one inside is left to the plan's check, which words it the same way.
#[derive(Clone, Copy)]
struct FieldWhole(&'static Field);

impl TypedValueParser for FieldWhole {
    type Value = u32;

    fn parse_ref(
        &self,
        cmd: &Command,
        arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<u32, clap::Error> {
        let range = self.0.range_words(self.0.flag_units());
        let text = value.to_string_lossy();
        Parse(parse_whole).parse_ref(cmd, arg, value).map_err(|e| {
            if range.is_empty() {
                return e;
            }
            clap::Error::raw(
                ErrorKind::ValueValidation,
                format!("{}: expected a {range}, got '{text}'", flag_of(arg)),
            )
        })
    }
}

/// A flag that takes a number [`--name X`].
pub fn real(name: &'static str, value: &'static str, help: impl Into<String>) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(value)
        .help(help.into())
        .value_parser(Parse(parse_real))
        .allow_hyphen_values(true)
}

/// A flag that takes a whole number ≥ 0.
pub fn whole(name: &'static str, value: &'static str, help: impl Into<String>) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(value)
        .help(help.into())
        .value_parser(Parse(parse_whole))
}

/// A flag that takes text (a path, a list, a name).
pub fn text_flag(name: &'static str, value: &'static str, help: impl Into<String>) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(value)
        .help(help.into())
}

/// A flag without a value.
pub fn switch(name: &'static str, help: impl Into<String>) -> Arg {
    Arg::new(name)
        .long(name)
        .help(help.into())
        .action(ArgAction::SetTrue)
}

/// `--json`, which most commands take.
pub fn json(help: impl Into<String>) -> Arg {
    switch("json", help)
}

/// The help heading of a plan field's flag: its plan section.
fn heading(path: &str) -> &'static str {
    match path.split('.').next() {
        Some("model") => "Model flags",
        Some("hardware") => "Hardware flags",
        Some("traffic") => "Traffic flags",
        Some("slo") => "SLO flags",
        Some("engine") => "Engine flags",
        Some("planning") => "Planning flags",
        Some("run") => "Run flags",
        Some("disagg") => "Pool flags",
        Some("routing") => "Routing flags",
        _ => "Plan flags",
    }
}

/// The flag of one registry row, with its help: `Label: help [range in the flag's
/// units; what else it does]`.
fn field_arg(f: &'static Field) -> Option<Arg> {
    let flag = f.flag?;
    let units = f.flag_units();
    let mut bits = Vec::new();
    match f.range_words(units) {
        r if !r.is_empty() => bits.push(r),
        _ if !units.unit.is_empty() => bits.push(units.unit.to_string()),
        _ => {}
    }
    if !flag.note.is_empty() {
        bits.push(flag.note.to_string());
    }
    let help = if bits.is_empty() {
        format!("{}: {}", f.label, f.help)
    } else {
        format!("{}: {} [{}]", f.label, f.help, bits.join("; "))
    };
    let arg = Arg::new(flag.name)
        .long(flag.name)
        .visible_aliases(flag.aliases)
        .help(help)
        .help_heading(heading(f.path));
    Some(match f.kind {
        // A negative number (`-1e-3`) is a value, which the plan's check then words.
        Kind::Real => arg
            .value_name("X")
            .value_parser(Parse(parse_real))
            .allow_hyphen_values(true),
        Kind::Whole => arg.value_name("N").value_parser(FieldWhole(f)),
        Kind::Seed => arg.value_name("SEED").value_parser(Parse(parse_seed)),
        Kind::Preset => arg.value_name("ID"),
        Kind::Switch => arg.action(ArgAction::SetTrue),
        Kind::List => arg.value_name("LIST"),
        Kind::Choice(names) => arg.value_name("NAME").value_parser(Choices {
            names,
            // The router's error joins its two names with " or " (the others with "|").
            sep: if f.path == "disagg.router" {
                " or "
            } else {
                "|"
            },
        }),
    })
}

/// Most bytes a `--plan` file may have: a plan with the longest trace it may carry is
/// a few MB.
const MAX_PLAN_FILE_BYTES: u64 = 64 << 20;

/// Adds `--plan`, `--link` and the plan flags (with the disaggregated pool's when
/// `pools`) to `cmd`, except any flag the command defines itself (`shootout --tp` is a
/// list, `simulate --replications` counts seeds, not a plan field).
pub fn with_plan_flags(cmd: Command, pools: bool) -> Command {
    let own: Vec<String> = cmd
        .get_arguments()
        .filter_map(Arg::get_long)
        .map(str::to_string)
        .collect();
    let mut cmd = cmd
        .allow_negative_numbers(true)
        .arg(
            text_flag(
                "plan",
                "FILE",
                "Read the plan from a JSON file (as `goodput decode` prints it); - reads stdin",
            )
            .help_heading("Plan flags"),
        )
        .arg(text_flag("link", "URL", "Read the plan from a share link").help_heading("Plan flags"))
        .arg(
            text_flag(
                "replay",
                "FILE",
                "Replay a trace's requests (an Azure or BurstGPT CSV, Mooncake JSONL; its first \
                 100,000 rows): their arrival pattern at the simulated rate, their lengths, and \
                 Mooncake's block ids, from which the prefix cache's hits follow",
            )
            .help_heading("Plan flags"),
        )
        .arg(
            text_flag(
                "class",
                "NAME:KEY=VALUE,...",
                format!(
                    "A traffic class of the mix (repeat for each; replaces the plan's classes), e.g. \
                     'chat:share=0.7,ttft=0.5,tpot=0.025,priority=0'. Keys: {}. Lengths and \
                     objectives not given are the plan's; a class that gives any objective has \
                     only those it gives. Priority 0 is admitted first. replay=FILE replays a \
                     trace of the class's own (Azure, BurstGPT or Mooncake): its arrival \
                     pattern at the class's share of the rate, and its lengths",
                    goodput_core::plan::classes::class_keys().join(", ")
                ),
            )
            .action(ArgAction::Append)
            .help_heading("Plan flags"),
        );
    for f in fields::FIELDS {
        let is_pool = f.path.starts_with("disagg.");
        if is_pool && !pools {
            continue;
        }
        if f.flag.is_some_and(|g| own.iter().any(|o| o == g.name)) {
            continue;
        }
        if let Some(arg) = field_arg(f) {
            cmd = cmd.arg(arg);
        }
    }
    cmd
}

/// A parse failure as one line, naming the flag or the command.
pub fn one_line(e: &clap::Error) -> String {
    let ctx = |k: ContextKind| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    // "--max-num-seqs <N>" → "--max-num-seqs"
    let flag = |s: String| s.split([' ', '=']).next().unwrap_or_default().to_string();
    let did_you_mean =
        |k: ContextKind| ctx(k).map_or(String::new(), |s| format!("; did you mean '{s}'?"));
    match e.kind() {
        ErrorKind::UnknownArgument => match ctx(ContextKind::InvalidArg) {
            Some(a) if a.starts_with('-') => format!(
                "{}: unknown flag{}",
                flag(a),
                did_you_mean(ContextKind::SuggestedArg)
            ),
            Some(a) => format!("unexpected argument '{a}'"),
            None => first_line(e),
        },
        ErrorKind::InvalidSubcommand => {
            let name = ctx(ContextKind::InvalidSubcommand).unwrap_or_default();
            match ctx(ContextKind::SuggestedSubcommand) {
                Some(s) => format!("unknown command '{name}'; did you mean '{s}'?"),
                None => format!("unknown command '{name}'; run `goodput help`"),
            }
        }
        ErrorKind::InvalidValue if ctx(ContextKind::InvalidValue).is_none_or(|v| v.is_empty()) => {
            format!(
                "{}: missing value",
                flag(ctx(ContextKind::InvalidArg).unwrap_or_default())
            )
        }
        ErrorKind::InvalidValue => {
            let valid = match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(v)) => v.join("|"),
                _ => String::new(),
            };
            format!(
                "{}: expected {valid}, got '{}'",
                flag(ctx(ContextKind::InvalidArg).unwrap_or_default()),
                ctx(ContextKind::InvalidValue).unwrap_or_default()
            )
        }
        ErrorKind::MissingRequiredArgument => format!(
            "missing {}",
            ctx(ContextKind::InvalidArg).unwrap_or_default()
        ),
        ErrorKind::ArgumentConflict => {
            let a = flag(ctx(ContextKind::InvalidArg).unwrap_or_default());
            match ctx(ContextKind::PriorArg).map(flag) {
                Some(b) if b != a => format!("{b} and {a}: give one, not both"),
                _ => format!("{a}: given more than once"),
            }
        }
        _ => first_line(e),
    }
}

/// The first line of clap's own message, without its `error: ` prefix.
fn first_line(e: &clap::Error) -> String {
    let s = e.to_string();
    let line = s.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

/// A plan error as the user typed it: the flag first, and a range in the flag's own
/// units when they are not the plan's (`--kv-link-gbps` takes Gbit/s, the plan bytes/s).
pub fn flag_message(flag: &str, e: &PlanError) -> String {
    match (by_path(e.field), e.limits) {
        (Some(f), Some(l)) if f.flag_units().scale != 1.0 => {
            let u = f.flag_units();
            let r = Range {
                lo: l.lo,
                hi: l.hi,
                lo_open: l.lo_open,
            };
            let words = range_message(&r, l.whole, u.unit, l.got, u.scale);
            format!("{flag}: {}: {words}", e.field)
        }
        _ => format!("{flag}: {e}"),
    }
}

/// The parsed arguments of one command.
#[derive(Debug, Clone)]
pub struct Args {
    m: ArgMatches,
    /// Plan fields (dotted paths) set by a flag, with the flag that set them.
    set_by: Vec<(&'static str, String)>,
}

/// Flags `apply_overrides` sets with code of its own: the presets, the price offer and
/// the weight precision (read first, wherever they stand), flags that set more than their field
/// (`--params`), and those that need another flag beside them (the arrival process and a
/// closed loop's clients, a gamma spread). The length flags (`--input-len-*`,
/// `--output-len-*`) are read together, too.
pub(crate) const OWN_CODE: &[&str] = &[
    "model",
    "gpu",
    "price-offer",
    "weight-dtype",
    "params",
    "arrival",
    "arrival-cv",
    "concurrency",
    "think-time",
    "max-concurrency",
];

/// `--max-num-seqs` → `max-num-seqs`.
fn id(name: &str) -> &str {
    name.trim_start_matches('-')
}

impl Args {
    /// The arguments of a command as clap matched them.
    pub fn new(m: ArgMatches) -> Args {
        Args {
            m,
            set_by: Vec::new(),
        }
    }

    fn one<T: Clone + Send + Sync + 'static>(&self, name: &str) -> Option<T> {
        self.m.try_get_one::<T>(id(name)).ok().flatten().cloned()
    }

    /// Whether a flag without a value is present.
    pub fn flag(&self, name: &str) -> bool {
        self.one::<bool>(name).unwrap_or(false)
    }

    /// The text of `--name VALUE`.
    pub fn value(&self, name: &str) -> Option<String> {
        self.one::<String>(name)
    }

    /// The number of `--name X`.
    pub fn f64(&self, name: &str) -> Option<f64> {
        self.one::<f64>(name)
    }

    /// The whole number of `--name N`.
    pub fn u32(&self, name: &str) -> Option<u32> {
        self.one::<u32>(name)
    }

    /// The seed of `--name SEED`.
    pub fn u64(&self, name: &str) -> Option<u64> {
        self.one::<u64>(name)
    }

    /// The values of the positional argument `name`.
    pub fn positionals(&self, name: &str) -> Vec<String> {
        self.m
            .try_get_many::<String>(name)
            .ok()
            .flatten()
            .map(|v| v.cloned().collect())
            .unwrap_or_default()
    }

    /// Loads the plan: `--plan FILE` (JSON) or `--link URL`, else the defaults;
    /// then applies every plan-override flag and validates the result.
    pub fn plan(&mut self) -> Result<Plan, String> {
        let mut plan = self.base_plan()?;
        self.replay(&mut plan)?;
        self.apply_overrides(&mut plan)?;
        self.check(&plan)?;
        Ok(plan)
    }

    /// [`Args::plan`] for a command that replaces the hardware (the shootout): every
    /// check but whether the model fits the plan's own GPUs, which each option checks.
    pub fn plan_for_other_hardware(&mut self) -> Result<Plan, String> {
        let mut plan = self.base_plan()?;
        self.replay(&mut plan)?;
        self.apply_overrides(&mut plan)?;
        let mut probe = plan.clone();
        probe.engine.kv_policy = KvPolicy::None;
        self.check(&probe)?;
        Ok(plan)
    }

    /// A plan error, led by the flag that set the field when a flag did.
    pub fn plan_error(&self, e: &PlanError) -> String {
        match self.set_by.iter().find(|(field, _)| *field == e.field) {
            Some((_, flag)) => flag_message(flag, e),
            None => e.to_string(),
        }
    }

    fn check(&self, plan: &Plan) -> Result<(), String> {
        plan.validate().map_err(|e| self.plan_error(&e))
    }

    fn base_plan(&self) -> Result<Plan, String> {
        match (self.value("--plan"), self.value("--link")) {
            (Some(_), Some(_)) => Err("--plan and --link: give one, not both".into()),
            (Some(path), None) => {
                let text = crate::input::read_text("--plan", &path, MAX_PLAN_FILE_BYTES)?;
                let what = if path == "-" {
                    "stdin".to_string()
                } else {
                    format!("'{path}'")
                };
                Plan::from_json_sparse(&text)
                    .map_err(|e| format!("--plan: {what} is not a valid plan: {e}"))
            }
            (None, Some(url)) => load_link(&url),
            (None, None) => Ok(Plan::default()),
        }
    }

    /// `--replay FILE`: the trace's rows replace the plan's arrivals and lengths (and,
    /// with block ids, its prefix caching), before any single-field flag.
    fn replay(&mut self, plan: &mut Plan) -> Result<(), String> {
        let Some(path) = self.value("--replay") else {
            return Ok(());
        };
        let t = crate::input::read_trace("--replay", &path, None)?;
        t.replay_into(plan);
        for field in [
            "traffic.trace",
            "traffic.trace.blocks",
            "traffic.trace.tokens",
            "traffic.trace.arrival_s",
        ] {
            self.note_path(field, "--replay");
        }
        Ok(())
    }

    /// Records that `flag` set the registry field it belongs to.
    fn note(&mut self, flag: &str) {
        if let Some(f) = by_flag(id(flag)) {
            self.set_by.push((f.path, flag.to_string()));
        }
    }

    fn note_path(&mut self, path: &'static str, flag: &str) {
        self.set_by.push((path, flag.to_string()));
    }

    fn set_u32(&mut self, flag: &str, slot: &mut u32) {
        if let Some(x) = self.u32(flag) {
            *slot = x;
            self.note(flag);
        }
    }

    /// `--model ID` and `--gpu ID`: fill the model shape and the hardware from a preset,
    /// before any single-field flag, wherever they stand on the command line. The weight
    /// dtype is read first because the GPU's effective FLOP/s depend on it.
    fn apply_presets(&mut self, p: &mut Plan) -> Result<(), String> {
        if let Some(id) = self.value("--model") {
            let m = presets::model(&id).ok_or_else(|| {
                let known: Vec<&str> = presets::MODELS.iter().map(|m| m.id).collect();
                format!("--model: unknown model '{id}'; known: {}", known.join(", "))
            })?;
            field("model.preset").set_name(p, m.id);
        }
        if let Some(d) = self.value("--weight-dtype") {
            field("model.weight_dtype").set_name(p, &d);
        }
        if let Some(id) = self.value("--gpu") {
            let g = presets::gpu(&id).ok_or_else(|| {
                let known: Vec<&str> = presets::GPUS.iter().map(|g| g.id).collect();
                format!("--gpu: unknown GPU '{id}'; known: {}", known.join(", "))
            })?;
            field("hardware.preset").set_name(p, g.id);
        }
        if let Some(id) = self.value("--price-offer") {
            self.price_offer(p, &id)?;
        }
        Ok(())
    }

    /// `--price-offer ID`: the price from a published offer for the plan's GPU (after
    /// `--gpu`), or `own` to keep the price as the plan's own.
    fn price_offer(&mut self, p: &mut Plan, id: &str) -> Result<(), String> {
        if id != "own" && self.f64("--gpu-hour-usd").is_some() {
            return Err(
                "--price-offer: an offer sets the price; leave out --gpu-hour-usd, or the offer to price the GPU yourself"
                    .into(),
            );
        }
        let gpu = p.hardware.preset.clone();
        let listed = || {
            let ids: Vec<&str> = goodput_core::prices::offers_for(&gpu)
                .iter()
                .map(|o| o.id)
                .collect();
            if ids.is_empty() {
                format!("the catalogue has no offer for '{gpu}'")
            } else {
                format!("offers for the plan's GPU: {}", ids.join(", "))
            }
        };
        let row = field("hardware.price_offer");
        match goodput_core::prices::offer(id) {
            _ if id == "own" => row.set_name(p, ""),
            None => return Err(format!("--price-offer: unknown offer '{id}'; {}", listed())),
            Some(o) if o.gpu != gpu => {
                return Err(format!(
                    "--price-offer: {id} prices the {}, not the plan's GPU; {}",
                    presets::gpu_short_name(o.gpu),
                    listed()
                ))
            }
            Some(o) => row.set_name(p, o.id),
        }
        self.note("--price-offer");
        Ok(())
    }

    fn apply_overrides(&mut self, p: &mut Plan) -> Result<(), String> {
        self.apply_presets(p)?;
        // Scheduler.
        if self.flag("--no-chunked-prefill") {
            field("engine.chunked_prefill").set_on(p, false);
        }
        if self.flag("--plan-at-best") {
            field("run.plan_at_best").set_on(p, true);
        }
        // Lengths.
        self.lengths("--input-len", &mut p.traffic.prompt)?;
        self.lengths("--output-len", &mut p.traffic.output)?;
        let arrival = self.value("--arrival");
        if let (Some(v), Some(_)) = (&arrival, self.f64("--arrival-cv")) {
            if v != "gamma" {
                return Err(format!(
                    "--arrival-cv: only with --arrival gamma (it sets the spread of gamma gaps); --arrival {v} has none"
                ));
            }
        }
        // A closed loop the command line starts needs its clients stated.
        let opened = !matches!(p.traffic.arrival, Arrival::Closed { .. });
        if let Some(v) = arrival {
            field("traffic.arrival").set_name(p, &v);
        }
        if let Some(cv) = self.f64("--arrival-cv") {
            p.traffic.arrival = Arrival::Gamma { cv };
            self.note("--arrival-cv");
        }
        let concurrency = self.u32("--concurrency");
        let think = self.f64("--think-time");
        match &mut p.traffic.arrival {
            Arrival::Closed {
                concurrency: c,
                think_s,
            } => {
                match concurrency {
                    Some(n) => *c = n,
                    None if opened => {
                        return Err(format!(
                            "--arrival closed: needs --concurrency N (clients, 1..={MAX_CONCURRENCY})"
                        ))
                    }
                    None => {}
                }
                if let Some(t) = think {
                    *think_s = t;
                    self.note("--think-time");
                }
                if concurrency.is_some() {
                    self.note("--concurrency");
                }
            }
            _ if concurrency.is_some() => {
                return Err("--concurrency: only with --arrival closed (for an open-loop cap, use --max-concurrency)".into())
            }
            _ if think.is_some() => {
                return Err("--think-time: only with --arrival closed".into())
            }
            _ => {}
        }
        if let Some(n) = self.u32("--max-concurrency") {
            p.traffic.max_concurrency = Some(n);
            self.note("--max-concurrency");
        }
        // The prefix structure: any of its flags turns it on first.
        let any_given = |section: &str| {
            fields::FIELDS
                .iter()
                .filter(|f| f.path.starts_with(section))
                .filter_map(|f| f.flag)
                .any(|f| self.given(f.name))
        };
        // The structure starts empty; a typed shared prefix the plan holds stays, and
        // the check refuses the two together (the page's switch turns the typed one off).
        if any_given("traffic.sharing.") && p.traffic.sharing.is_none() {
            p.traffic.sharing = Some(PrefixModel::NONE);
        }
        // Routing over replicas: any of its flags turns it on (2 replicas, round robin).
        if any_given("routing.") {
            fields::routing_mut(p);
        }
        if self.flag("--no-replies-cached") {
            field("traffic.sharing.replies_cached").set_on(p, false);
        }
        // Model and roofline constants.
        if let Some(x) = self.f64("--params") {
            p.model.params = x;
            p.model.active_params = x;
            p.model.preset = "custom".into();
            self.note("--params");
            self.note_path("model.active_params", "--params");
        }
        // Every other number or choice flag, through the registry.
        self.apply_registry_flags(p)?;
        // Classes last: a class keeps the plan's lengths and SLO as the flags left them.
        let texts = self.positionals("class");
        if !texts.is_empty() {
            // A class's replay=FILE, read once however many times its line is parsed.
            let read = std::cell::RefCell::new(Vec::<(String, Vec<TraceRow>)>::new());
            let rows = |path: &str| -> Result<Vec<TraceRow>, String> {
                if let Some((_, r)) = read.borrow().iter().find(|(p, _)| p == path) {
                    return Ok(r.clone());
                }
                let r = crate::input::summarize_file(path, None)?.replay;
                read.borrow_mut().push((path.to_string(), r.clone()));
                Ok(r)
            };
            // Each line alone first, so an error names the line that has it.
            for t in &texts {
                parse_class_line(p, t, &rows).map_err(|e| format!("--class '{t}': {e}"))?;
            }
            let lines: Vec<&str> = texts.iter().map(String::as_str).collect();
            let (classes, peak) =
                classes_from_lines(p, &lines, &rows).map_err(|e| format!("--class: {e}"))?;
            p.classes = classes;
            if let Some(total) = peak {
                if self.given("peak-rate") && self.f64("--peak-rate") != Some(total) {
                    return Err(format!(
                        "--class: the classes' own peaks add up to {total} req/s, but --peak-rate says {}: give one or the other",
                        self.f64("--peak-rate").map_or("?".into(), |x| x.to_string())
                    ));
                }
                p.traffic.peak_rate_rps = total;
                self.note_path("traffic.peak_rate_rps", "--class");
            }
            self.note_path("classes", "--class");
            self.note_path("classes.share", "--class");
            self.note_path("classes.name", "--class");
        }
        Ok(())
    }

    /// Whether `--name` was given (with a value).
    pub(crate) fn given(&self, name: &str) -> bool {
        self.m.try_contains_id(name).unwrap_or(false)
            && !matches!(
                self.m.value_source(name),
                None | Some(clap::parser::ValueSource::DefaultValue)
            )
    }

    /// The flags of the registry's number and choice rows that have no code of their own
    /// ([`OWN_CODE`]; the pool flags are `goodput disagg`'s), each written through its row:
    /// a choice by the row's writer, the numbers together by the plan's JSON
    /// ([`fields::with_values`], which writes the value exactly, a seed past 2^53 too, and
    /// leaves a preset's name alone).
    fn apply_registry_flags(&mut self, p: &mut Plan) -> Result<(), String> {
        self.write_flags(p, |f| {
            let own = f.flag.is_some_and(|flag| {
                OWN_CODE.contains(&flag.name)
                    || flag.name.starts_with("input-len")
                    || flag.name.starts_with("output-len")
            });
            !own && !f.path.starts_with("disagg.")
        })
    }

    /// Writes the flags given of the registry's rows that `which` picks, each through its
    /// row (see [`Args::apply_registry_flags`]).
    pub(crate) fn write_flags(
        &mut self,
        p: &mut Plan,
        which: impl Fn(&Field) -> bool,
    ) -> Result<(), String> {
        let mut numbers = Vec::new();
        for f in fields::FIELDS.iter().filter(|f| which(f)) {
            let Some(flag) = f.flag else { continue };
            let name = format!("--{}", flag.name);
            let number = match f.kind {
                Kind::Real => self
                    .f64(&name)
                    .map(|x| serde_json::json!(x * f.flag_units().scale)),
                Kind::Whole => self.u32(&name).map(|x| serde_json::json!(x)),
                Kind::Seed => self.u64(&name).map(|x| serde_json::json!(x)),
                Kind::Choice(_) | Kind::Preset => {
                    if let Some(v) = self.value(&name) {
                        f.set_name(p, &v);
                        self.note(&name);
                    }
                    None
                }
                _ => None,
            };
            if let Some(v) = number {
                self.note(&name);
                numbers.push((f, v));
            }
        }
        if !numbers.is_empty() {
            *p = fields::with_values(p, &numbers).map_err(|e| self.plan_error(&e))?;
        }
        Ok(())
    }

    /// `--input-len-*` / `--output-len-*`: median, sigma, p95, fixed, min, max.
    fn lengths(&mut self, prefix: &str, spec: &mut LengthSpec) -> Result<(), String> {
        let name = |s: &str| format!("{prefix}-{s}");
        let median = self.f64(&name("median"));
        let sigma = self.f64(&name("sigma"));
        let p95 = self.f64(&name("p95"));
        let fixed = self.u32(&name("fixed"));
        if median.is_some() || sigma.is_some() || p95.is_some() {
            let (m0, s0) = match spec.dist {
                LengthDist::LogNormal { median, sigma } => (median, sigma),
                LengthDist::Fixed { tokens } => (tokens as f64, 0.8),
                LengthDist::Trace => (800.0, 0.8),
            };
            let m = median.unwrap_or(m0);
            let s = match (sigma, p95) {
                (Some(_), Some(_)) => {
                    return Err(format!("{}: give a sigma or a p95, not both", name("p95")))
                }
                (Some(s), None) => s,
                (None, Some(p)) => {
                    if !(m > 0.0 && p > m) {
                        return Err(format!(
                            "{}: must be greater than the median ({m}), got {p}",
                            name("p95")
                        ));
                    }
                    LengthDist::sigma_from_p95(m, p)
                }
                (None, None) => s0,
            };
            spec.dist = LengthDist::LogNormal {
                median: m,
                sigma: s,
            };
            self.note(&name("median"));
            // The sigma's range is checked; a p95 that sets it is named.
            let sigma_path = by_flag(id(&name("sigma"))).map_or("", |f| f.path);
            let by = if p95.is_some() { "p95" } else { "sigma" };
            self.note_path(sigma_path, &name(by));
        }
        if let Some(t) = fixed {
            if median.is_some() || sigma.is_some() || p95.is_some() {
                return Err(format!(
                    "{}: cannot be combined with a lognormal",
                    name("fixed")
                ));
            }
            spec.dist = LengthDist::Fixed { tokens: t };
            self.note(&name("fixed"));
        }
        self.set_u32(&name("min"), &mut spec.min);
        self.set_u32(&name("max"), &mut spec.max);
        Ok(())
    }
}

/// Loads a plan from a share link.
fn load_link(url: &str) -> Result<Plan, String> {
    goodput_core::share::decode(url)
        .map(|s| s.plan)
        .map_err(|e| format!("--link: {e}"))
}

/// `--terms`: which constants beyond the three always fitted a fit frees.
pub fn terms_arg() -> Arg {
    text_flag(
        "terms",
        "LIST",
        format!(
            "The constants to fit beside the bandwidth share, the compute share and the \
             per-step overhead, by their plan flags: a comma-separated list of {}, or \
             default ({}), roofline (none) or all; the others keep the plan's values",
            FitTerms::ALL.names(),
            FitTerms::DEFAULT.names()
        ),
    )
}

/// The constants `--terms` frees ([`FitTerms::DEFAULT`] without it).
pub fn fit_terms(args: &mut Args) -> Result<FitTerms, String> {
    match args.value("--terms") {
        Some(list) => FitTerms::parse(&list).map_err(|e| format!("--terms: {e}")),
        None => Ok(FitTerms::DEFAULT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;
    use goodput_core::plan::{Dtype, SloMode};

    /// The plan `goodput simulate ARGS` would run, or its one-line error.
    fn plan(line: &str) -> Result<Plan, String> {
        let argv = std::iter::once("simulate").chain(line.split_whitespace());
        let (_, mut args) = parse(argv)?.map_err(|help| format!("help: {help}"))?;
        args.plan()
    }

    /// A value unlike `current` inside the field's range (plan units), if one is found.
    fn another_real(f: &Field, current: f64) -> Option<f64> {
        // A field without a range of its own (a p95, checked against its median) takes
        // any positive value.
        let r = f.range.unwrap_or(Range {
            lo: 0.0,
            hi: f64::INFINITY,
            lo_open: true,
        });
        let ok = |v: f64| {
            v.is_finite() && v != current && v <= r.hi && (v > r.lo || (!r.lo_open && v == r.lo))
        };
        let mid = if r.hi.is_finite() {
            (r.lo + r.hi) / 2.0
        } else {
            r.lo + 1.0
        };
        [current * 0.5, current * 1.5, mid, r.lo + 1.0, 0.5, 1.0]
            .into_iter()
            .find(|&v| ok(v))
    }

    /// Flags a field's flag needs beside it to mean anything (a closed loop for its
    /// clients, gamma arrivals for their spread, a mixture of experts for its routing
    /// skew…).
    fn beside(path: &str) -> &'static str {
        match path {
            "traffic.arrival.concurrency" => "--arrival closed",
            "traffic.arrival.think_s" => "--arrival closed --concurrency 4",
            "traffic.arrival.cv" => "--arrival gamma",
            "model.expert_routing_skew" | "hardware.ep_degree" => "--model qwen3-30b-a3b",
            _ => "",
        }
    }

    /// Every flag of the field registry sets its own field: each flag in turn, with a
    /// value unlike the default plan's, and the field read back through the registry.
    /// A flag wired to another field, or to nothing, fails here.
    #[test]
    fn every_registry_flag_sets_its_own_field() {
        use serde_json::{json, Value};
        // The pool flags are `goodput disagg`'s; every other flag is every command's.
        let run = |path: &str, line: &str| {
            let command = if path.starts_with("disagg.") {
                "disagg"
            } else {
                "simulate"
            };
            let argv = std::iter::once(command).chain(line.split_whitespace());
            let (_, mut args) = parse(argv)?.map_err(|help| format!("help: {help}"))?;
            let mut plan = args.plan()?;
            if command == "disagg" {
                plan.disagg = Some(crate::disagg::PoolFlags::read(&args).apply(&plan)?);
            }
            Ok::<Plan, String>(plan)
        };
        let mut wrong = Vec::new();
        let mut checked = 0;
        for f in fields::FIELDS {
            let Some(flag) = f.flag else { continue };
            // The default plan, with what the flag needs beside it (a closed loop's
            // clients are counted in a closed loop of 4).
            let base_line = match f.path {
                "traffic.arrival.concurrency" => "--arrival closed --concurrency 4",
                path => beside(path),
            };
            let (base_plan, base) = match run(f.path, base_line) {
                Ok(p) => {
                    let json = serde_json::to_value(&p).expect("json");
                    (p, json)
                }
                Err(e) => {
                    wrong.push(format!("{base_line}: {e}"));
                    continue;
                }
            };
            // A number the JSON leaves out at its default reads through the registry.
            let read = |f: &fields::Field, p: &Plan, json: &Value| match fields::value_in(f, json) {
                Value::Null => f.held(p).map_or(Value::Null, |x| json!(x)),
                v => v,
            };
            let now = read(f, &base_plan, &base);
            let scale = f.flag_units().scale;
            let (arg, want) = match f.kind {
                Kind::Real => {
                    let v = match f.path {
                        // Weights must leave room for the KV cache on the default GPU.
                        "model.weight_bytes_override" => Some(1e10),
                        // A p95 lies above its median (800 and 200 tokens).
                        "traffic.prompt.dist.p95" | "traffic.output.dist.p95" => Some(3000.0),
                        _ => another_real(f, now.as_f64().unwrap_or(0.0)),
                    };
                    let Some(v) = v else {
                        wrong.push(format!("{}: no value to try", f.path));
                        continue;
                    };
                    (format!("{:e}", v / scale), json!(v))
                }
                Kind::Whole | Kind::Seed => {
                    let c = now
                        .as_u64()
                        .or_else(|| now.as_f64().map(|x| x as u64))
                        .unwrap_or(0);
                    let r = f.range.unwrap_or(Range {
                        lo: 0.0,
                        hi: f64::INFINITY,
                        lo_open: false,
                    });
                    let inside = |v: u64| v != c && (v as f64) >= r.lo && (v as f64) <= r.hi;
                    let tries = [
                        c + 1,
                        c.saturating_sub(1),
                        r.lo as u64,
                        r.hi.min(1e15) as u64,
                    ];
                    let Some(v) = tries.into_iter().find(|&v| inside(v)) else {
                        wrong.push(format!("{}: no value to try", f.path));
                        continue;
                    };
                    (v.to_string(), json!(v))
                }
                // A `--no-…` switch turns its field off; any other turns it on.
                Kind::Switch => (String::new(), json!(!flag.name.starts_with("no-"))),
                Kind::Choice(names) => {
                    let Some((name, _)) = names.iter().find(|(n, _)| Some(*n) != now.as_str())
                    else {
                        continue;
                    };
                    (name.to_string(), json!(name))
                }
                Kind::Preset => {
                    let id = if f.path.starts_with("model") {
                        "llama-3.1-8b"
                    } else if f.path == "hardware.price_offer" {
                        "aws-h100-sxm-on-demand"
                    } else {
                        "h200"
                    };
                    (id.to_string(), json!(id))
                }
                Kind::List => ("8,16".to_string(), json!([8, 16])),
            };
            let line = format!("{} --{} {arg}", beside(f.path), flag.name);
            checked += 1;
            match run(f.path, &line) {
                Ok(p) => {
                    let mut got = match (f.path, &p.traffic) {
                        // A p95 is a view of the lognormal's sigma.
                        ("traffic.prompt.dist.p95", t) | ("traffic.output.dist.p95", t) => {
                            let l = if f.path.contains("prompt") {
                                &t.prompt
                            } else {
                                &t.output
                            };
                            match l.dist {
                                LengthDist::LogNormal { median, sigma } => {
                                    json!(LengthDist::p95_from_sigma(median, sigma))
                                }
                                _ => Value::Null,
                            }
                        }
                        _ => read(f, &p, &serde_json::to_value(&p).expect("json")),
                    };
                    // A tagged choice (the arrival process) reads as its kind.
                    if let Some(kind) = got.get("kind") {
                        got = kind.clone();
                    }
                    let same = match (&got, &want) {
                        (Value::Number(a), Value::Number(b)) => {
                            let (a, b) =
                                (a.as_f64().unwrap_or(f64::NAN), b.as_f64().unwrap_or(0.0));
                            (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
                        }
                        _ => got == want,
                    };
                    if !same {
                        wrong.push(format!("{line}: {} is {got}, not {want}", f.path));
                    }
                }
                Err(e) => wrong.push(format!("{line}: {e}")),
            }
        }
        assert!(checked > 40, "only {checked} flags tried");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn a_flag_at_the_value_the_json_leaves_out_is_taken() {
        let p = plan(
            "--interconnect-bytes-per-s 0 --allreduce-latency 0 --seq-overhead 0 \
                      --prefill-overhead 0 --kv-read-efficiency 1 --frontend-time 0",
        )
        .expect("valid");
        assert_eq!(p.hardware.interconnect_bytes_per_s, 0.0);
        assert_eq!(p.hardware.allreduce_latency_s, 0.0);
        assert_eq!(p.hardware.kv_read_efficiency, 1.0);
        assert_eq!(p.engine.frontend_s, 0.0);
    }

    #[test]
    fn scientific_notation_and_equals_form() {
        let p = plan("--params 8e9 --max-num-seqs=64").expect("valid");
        assert_eq!(p.model.params, 8e9);
        assert_eq!(p.engine.max_num_seqs, 64);
    }

    #[test]
    fn unknown_flag_is_named_with_a_suggestion() {
        assert_eq!(plan("--bogus 3").unwrap_err(), "--bogus: unknown flag");
        let e = plan("--max-num-seq 3").unwrap_err();
        assert_eq!(
            e,
            "--max-num-seq: unknown flag; did you mean '--max-num-seqs'?"
        );
    }

    #[test]
    fn bad_number_is_named() {
        let e = plan("--max-num-seqs lots").unwrap_err();
        assert!(
            e.starts_with("--max-num-seqs: expected a whole number"),
            "{e}"
        );
        assert!(plan("--max-num-seqs -3")
            .unwrap_err()
            .starts_with("--max-num-seqs:"));
        assert_eq!(plan("--ttft-slo").unwrap_err(), "--ttft-slo: missing value");
        assert_eq!(
            plan("--seed 1 --seed 2").unwrap_err(),
            "--seed: given more than once"
        );
        // A seed in scientific notation is the same seed, while a double holds it exactly.
        assert_eq!(plan("--seed 1e3").unwrap(), plan("--seed 1000").unwrap());
        assert_eq!(
            plan("--seed 9007199254740992").unwrap(),
            plan("--seed 9.007199254740992e15").unwrap()
        );
        assert!(plan("--seed 1e17").unwrap_err().contains("in full digits"));
        assert!(plan("--seed 2.5")
            .unwrap_err()
            .starts_with("--seed: expected a whole number"));
        // A negative number is a value, and the plan's check words it.
        let e = plan("--ttft-slo -1e-3").unwrap_err();
        assert!(e.starts_with("--ttft-slo: slo.ttft_s: must be"), "{e}");
    }

    #[test]
    fn p95_sets_sigma() {
        let p = plan("--input-len-median 900 --input-len-p95 6000").expect("valid");
        match p.traffic.prompt.dist {
            LengthDist::LogNormal { median, sigma } => {
                assert_eq!(median, 900.0);
                assert!((sigma - (6000.0f64 / 900.0).ln() / 1.6448536).abs() < 1e-6);
            }
            other => panic!("expected lognormal, got {other:?}"),
        }
    }

    #[test]
    fn a_prefix_structure_flag_keeps_a_linked_typed_prefix_and_is_refused_beside_it() {
        let mut linked = Plan::default();
        linked.traffic.prefix_tokens = 300;
        linked.traffic.prefix_hit_rate = 0.5;
        let link = goodput_core::share::encode(&linked);
        let e = plan(&format!("--link {link} --sessions 10")).expect_err("both");
        assert!(e.contains("prefix"), "{e}");
        // Without the typed prefix, the flag turns the structure on.
        let p = plan(&format!(
            "--link {} --sessions 10",
            goodput_core::share::encode(&Plan::default())
        ))
        .expect("valid");
        assert_eq!(p.traffic.sharing.map(|s| s.sessions), Some(10));
    }

    #[test]
    fn closed_loop_cap_and_slo_mode_flags() {
        let p = plan("--arrival closed --concurrency 32 --think-time 0.5 --slo-mode marginal")
            .expect("valid");
        assert_eq!(
            p.traffic.arrival,
            Arrival::Closed {
                concurrency: 32,
                think_s: 0.5
            }
        );
        assert_eq!(p.slo.mode, SloMode::Marginal);
        let p = plan("--arrival closed --concurrency 8").expect("valid");
        assert_eq!(
            p.traffic.arrival,
            Arrival::Closed {
                concurrency: 8,
                think_s: 0.0
            }
        );
        assert_eq!(p.slo.mode, SloMode::Joint);
        let p = plan("--max-concurrency 64").expect("valid");
        assert_eq!(p.traffic.max_concurrency, Some(64));
        assert_eq!(p.traffic.arrival, Arrival::Poisson);
        for (line, needle) in [
            ("--arrival closed", "--arrival closed: needs --concurrency"),
            (
                "--concurrency 4",
                "--concurrency: only with --arrival closed",
            ),
            ("--think-time 1", "--think-time: only with --arrival closed"),
            (
                "--arrival constant --arrival-cv 2",
                "--arrival-cv: only with --arrival gamma",
            ),
            (
                "--arrival closed --concurrency 4 --arrival-cv 2",
                "--arrival-cv: only with --arrival gamma",
            ),
            (
                "--arrival closed --concurrency 0",
                "--concurrency: traffic.arrival.concurrency",
            ),
            (
                "--arrival closed --concurrency 2 --think-time -1",
                "--think-time: traffic.arrival.think_s",
            ),
            (
                "--max-concurrency 0",
                "--max-concurrency: traffic.max_concurrency",
            ),
            ("--slo-mode both", "--slo-mode: expected joint|marginal"),
            (
                "--arrival open",
                "--arrival: expected poisson|gamma|constant|trace|closed",
            ),
        ] {
            let e = plan(line).unwrap_err();
            assert!(e.starts_with(needle), "{line}: {e}");
        }
    }

    #[test]
    fn presets_apply_before_single_field_flags_wherever_they_stand() {
        let p = plan("--memory-bytes 100e9 --gpu h200 --model llama-3.1-70b --weight-dtype fp8")
            .expect("valid");
        assert_eq!(p.model.preset, "llama-3.1-70b");
        assert_eq!(p.model.layers, 80);
        assert_eq!(p.model.weight_dtype, Dtype::Fp8);
        assert_eq!(p.hardware.preset, "h200");
        assert_eq!(p.hardware.mem_bandwidth_bytes_per_s, 4.8e12);
        // The flag wins over the preset although it comes first.
        assert_eq!(p.hardware.memory_bytes, 100e9);
        // The GPU's effective FLOP/s follow the FP8 weights given after it.
        assert!((p.hardware.compute_flops_per_s - 1978.9e12 * 0.6).abs() < 1e6);
        let e = plan("--gpu h900").unwrap_err();
        assert!(
            e.starts_with("--gpu: unknown GPU 'h900'; known: h100-sxm, h200"),
            "{e}"
        );
        let e = plan("--model gpt-5").unwrap_err();
        assert!(
            e.starts_with("--model: unknown model 'gpt-5'; known: article-8b"),
            "{e}"
        );
    }

    #[test]
    fn a_price_offer_prices_the_gpu_given_wherever_it_stands() {
        let p = plan("--price-offer aws-h200-on-demand --gpu h200").expect("valid");
        assert_eq!(p.hardware.price_offer, "aws-h200-on-demand");
        assert_eq!(p.hardware.gpu_hour_usd, 7.912);
        let p = plan("--price-offer own --gpu h200").expect("valid");
        assert_eq!(
            (p.hardware.price_offer.as_str(), p.hardware.gpu_hour_usd),
            ("", 3.5)
        );
        // A price typed for a plan that has an offer (a plan file, a link) is its own.
        let p = plan("--gpu h200 --price-offer own --gpu-hour-usd 5").expect("valid");
        assert_eq!(
            (p.hardware.price_offer.as_str(), p.hardware.gpu_hour_usd),
            ("", 5.0)
        );
        let mut offered = goodput_core::Plan::default();
        field("hardware.price_offer").set_name(&mut offered, "aws-h100-sxm-on-demand");
        let repriced = fields::with_values(
            &offered,
            &[(field("hardware.gpu_hour_usd"), serde_json::json!(5.0))],
        )
        .expect("written");
        assert_eq!(
            (
                repriced.hardware.price_offer.as_str(),
                repriced.hardware.gpu_hour_usd
            ),
            ("", 5.0)
        );
        repriced.validate().expect("valid");
        for (line, needle) in [
            ("--price-offer acme-h200", "--price-offer: unknown offer 'acme-h200'; offers for the plan's GPU: "),
            ("--gpu l40s --price-offer aws-h200-on-demand", "--price-offer: aws-h200-on-demand prices the H200 SXM, not the plan's GPU; offers for the plan's GPU: digitalocean-l40s"),
            ("--gpu h200 --price-offer aws-h200-on-demand --gpu-hour-usd 3", "--price-offer: an offer sets the price; leave out --gpu-hour-usd"),
        ] {
            let e = plan(line).unwrap_err();
            assert!(e.starts_with(needle), "{line}: {e}");
        }
    }

    #[test]
    fn the_tp_alias_sets_the_same_field() {
        let p = plan("--gpus-per-replica 2").expect("valid");
        assert_eq!(p.hardware.tp_degree, 2);
        let e = plan("--gpus-per-replica 0").unwrap_err();
        assert!(e.starts_with("--tp: hardware.tp_degree"), "{e}");
    }
}
