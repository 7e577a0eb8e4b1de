//! The multi-instance event simulation of a disaggregated deployment.
//!
//! One global event order, by time and then by insertion (ties first in, first out),
//! over four kinds of event: a request arrives, a prefill step ends, a KV transfer
//! lands, a decode step ends. Arrivals are all known at the start and count as
//! inserted first, in request order: they are read from the request stream by a
//! cursor, and only the other events, a few per instance at most, wait in a heap
//! ([`Events`]). Each instance is idle or running one step; an idle instance starts a
//! step as soon as it has work.
//!
//! Prefill instance: its queue is FCFS; a step takes prompts from the front until the
//! token budget is spent (the last one may be a chunk, finished in later steps), and
//! lasts `t_step(chunk tokens, no decode context)`. A prompt whose last chunk ran leaves
//! at the end of the step; its KV then travels for `latency + bytes / bandwidth` over the
//! deployment's route (NVLink when both pools fit one NVLink domain, the scale-out
//! network otherwise, or the link as given).
//!
//! Decode instance: a landed request waits FCFS; at the start of every step waiting
//! requests are admitted while fewer than `max_num_seqs` run and their KV reservation
//! fits. The step gives every running sequence one token and lasts
//! `t_step(running, their context)`. A newly admitted sequence's first token is the end
//! of its first step; it finishes at the end of the step that produces its output length.
//! Per-step work does not depend on the batch: a context sum and a heap of finish steps.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use super::{DecodeKv, DisaggConfig, DisaggError, DisaggReport, KvRoute, Router};
use crate::plan::MAX_DISAGG_INSTANCES;
use crate::sim::mix_attainment;
use crate::sim::{Summary, MAX_STEPS};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Arrival(u32),
    PrefillDone(u32),
    KvLanded(u32),
    DecodeDone(u32),
}

#[derive(Debug, Clone, Copy)]
struct Event {
    t: f64,
    seq: u64,
    kind: Kind,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        self.t
            .total_cmp(&other.t)
            .then_with(|| self.seq.cmp(&other.seq))
    }
}

/// The event order: the arrivals, by time and then request order, ahead of every
/// other event at the same time (they were all known first); the other events in a
/// heap by time and then insertion.
struct Events {
    /// Requests in arrival order.
    order: Vec<u32>,
    /// Next entry of `order` to arrive.
    next: usize,
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
}

impl Events {
    fn new(arrival: &[f64]) -> Events {
        let mut order: Vec<u32> = (0..arrival.len() as u32).collect();
        if !arrival.is_sorted_by(|a, b| a.total_cmp(b).is_le()) {
            // Stable: requests arriving together keep request order.
            order.sort_by(|&a, &b| arrival[a as usize].total_cmp(&arrival[b as usize]));
        }
        Events {
            order,
            next: 0,
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }

    fn push(&mut self, t: f64, kind: Kind) {
        self.seq += 1;
        self.heap.push(Reverse(Event {
            t,
            seq: self.seq,
            kind,
        }));
    }

    /// The next event: `(time, kind)`.
    fn pop(&mut self, arrival: &[f64]) -> Option<(f64, Kind)> {
        if let Some(&r) = self.order.get(self.next) {
            let ta = arrival[r as usize];
            let other_first = self
                .heap
                .peek()
                .is_some_and(|Reverse(e)| e.t.total_cmp(&ta).is_lt());
            if !other_first {
                self.next += 1;
                return Some((ta, Kind::Arrival(r)));
            }
        }
        self.heap.pop().map(|Reverse(e)| (e.t, e.kind))
    }
}

#[derive(Default)]
struct PrefillInstance {
    /// Requests waiting or part-way through, FCFS.
    queue: VecDeque<u32>,
    /// Requests at the front of the queue whose last chunk runs in the current step.
    completing: usize,
    /// Prompt tokens of the current step.
    in_step_tokens: u64,
    busy: bool,
    /// Prompt tokens not yet prefilled (queued, or in the running step), for the router.
    outstanding_tokens: u64,
    busy_s: f64,
}

#[derive(Default)]
struct DecodeInstance {
    waiting: VecDeque<u32>,
    running: u32,
    ctx_tokens: f64,
    kv_reserved: f64,
    /// Index of the step running or last run (steps count from 1).
    step: u64,
    finish: BinaryHeap<Reverse<(u64, u32)>>,
    /// Admitted at the start of the current step: their first token ends it.
    starting: Vec<u32>,
    busy: bool,
    busy_s: f64,
}

struct State<'a> {
    cfg: &'a DisaggConfig,
    /// The route of this deployment's KV transfers.
    route: KvRoute,
    events: Events,
    prefill: Vec<PrefillInstance>,
    decode: Vec<DecodeInstance>,
    rr_prefill: usize,
    rr_decode: usize,
    // Per request.
    prompt: Vec<u32>,
    need: Vec<u32>,
    output: Vec<u32>,
    done_tokens: Vec<u32>,
    arrival: Vec<f64>,
    prefill_start: Vec<f64>,
    prefill_end: Vec<f64>,
    landed: Vec<f64>,
    decode_start: Vec<f64>,
    first: Vec<f64>,
    finish: Vec<f64>,
    rejected: Vec<bool>,
    /// Class and scheduling priority of each request (0 and 0 with one class).
    class: Vec<u8>,
    priority: Vec<u32>,
    steps: u64,
    /// A buffer the step ends borrow for the requests they release.
    scratch: Vec<u32>,
}

impl<'a> State<'a> {
    fn push(&mut self, t: f64, kind: Kind) {
        self.events.push(t, kind);
    }

    fn reservation(&self, r: u32) -> f64 {
        let r = r as usize;
        match self.cfg.decode_kv {
            DecodeKv::Unlimited => 0.0,
            DecodeKv::ReserveCap => self.prompt[r] as f64 + self.cfg.traffic.output.max as f64,
            DecodeKv::ReserveOwn => self.prompt[r] as f64 + self.output[r] as f64,
        }
    }

    /// Puts request `r` in prefill instance `i`'s queue: behind every request already
    /// started (its chunks go on) and every one of a priority number no higher, so that
    /// with one class the queue is first come, first served.
    fn enqueue_prefill(&mut self, i: usize, r: u32) {
        let p = self.priority[r as usize];
        let q = &self.prefill[i].queue;
        let at = q
            .iter()
            .rposition(|&o| self.done_tokens[o as usize] > 0 || self.priority[o as usize] <= p)
            .map_or(0, |j| j + 1);
        let inst = &mut self.prefill[i];
        inst.queue.insert(at, r);
        inst.outstanding_tokens += self.need[r as usize] as u64;
    }

    /// Puts request `r` in decode instance `i`'s waiting line, behind every request of
    /// a priority number no higher.
    fn enqueue_decode(&mut self, i: usize, r: u32) {
        let p = self.priority[r as usize];
        let w = &self.decode[i].waiting;
        let at = w
            .iter()
            .rposition(|&o| self.priority[o as usize] <= p)
            .map_or(0, |j| j + 1);
        self.decode[i].waiting.insert(at, r);
    }

    fn route_prefill(&mut self) -> usize {
        match self.cfg.router {
            Router::RoundRobin => {
                let i = self.rr_prefill % self.prefill.len();
                self.rr_prefill += 1;
                i
            }
            Router::LeastLoaded => least(self.prefill.iter().map(|p| p.outstanding_tokens)),
        }
    }

    fn route_decode(&mut self) -> usize {
        match self.cfg.router {
            Router::RoundRobin => {
                let i = self.rr_decode % self.decode.len();
                self.rr_decode += 1;
                i
            }
            Router::LeastLoaded => least(
                self.decode
                    .iter()
                    .map(|d| d.running as u64 + d.waiting.len() as u64),
            ),
        }
    }

    /// Starts a prefill step on instance `i` at `t` if it is idle and has work.
    fn start_prefill(&mut self, i: usize, t: f64) {
        let budget = self.cfg.prefill_budget_tokens.max(1);
        let inst = &mut self.prefill[i];
        if inst.busy || inst.queue.is_empty() {
            return;
        }
        let mut left = budget;
        let mut tokens = 0u32;
        let mut completing = 0;
        for &r in inst.queue.iter() {
            if left == 0 {
                break;
            }
            let r = r as usize;
            if self.prefill_start[r].is_nan() {
                self.prefill_start[r] = t;
            }
            let rest = self.need[r] - self.done_tokens[r];
            let take = rest.min(left);
            self.done_tokens[r] += take;
            tokens += take;
            left -= take;
            if take == rest {
                completing += 1;
            }
        }
        inst.completing = completing;
        inst.busy = true;
        inst.in_step_tokens = tokens as u64;
        let dt = self.cfg.prefill.step.step_time_s(tokens as f64, 0.0);
        inst.busy_s += dt;
        self.steps += 1;
        self.push(t + dt, Kind::PrefillDone(i as u32));
    }

    fn end_prefill(&mut self, i: usize, t: f64) {
        let inst = &mut self.prefill[i];
        inst.busy = false;
        inst.outstanding_tokens -= inst.in_step_tokens;
        inst.in_step_tokens = 0;
        let mut done = std::mem::take(&mut self.scratch);
        done.extend(inst.queue.drain(..inst.completing.min(inst.queue.len())));
        inst.completing = 0;
        for &r in &done {
            self.prefill_end[r as usize] = t;
            let bytes = self.cfg.kv_transfer_bytes(self.prompt[r as usize]);
            let land = t + self.route.transfer_time_s(bytes);
            self.push(land, Kind::KvLanded(r));
        }
        done.clear();
        self.scratch = done;
        self.start_prefill(i, t);
    }

    /// Admits waiting requests on decode instance `i` and starts a step at `t`, if idle.
    fn start_decode(&mut self, i: usize, t: f64) {
        if self.decode[i].busy {
            return;
        }
        let cap = self.cfg.decode.kv_capacity_tokens;
        let max_seqs = self.cfg.decode_max_num_seqs;
        let limited = self.cfg.decode_kv != DecodeKv::Unlimited;
        while let Some(&r) = self.decode[i].waiting.front() {
            let need = self.reservation(r);
            let inst = &self.decode[i];
            if inst.running >= max_seqs || (limited && inst.kv_reserved + need > cap) {
                break;
            }
            let inst = &mut self.decode[i];
            inst.waiting.pop_front();
            inst.running += 1;
            inst.ctx_tokens += self.prompt[r as usize] as f64;
            inst.kv_reserved += need;
            let step = inst.step + 1;
            inst.finish
                .push(Reverse((step + self.output[r as usize] as u64 - 1, r)));
            inst.starting.push(r);
            self.decode_start[r as usize] = t;
        }
        let inst = &mut self.decode[i];
        if inst.running == 0 {
            return;
        }
        inst.step += 1;
        inst.busy = true;
        let dt = self
            .cfg
            .decode
            .step
            .step_time_s(inst.running as f64, inst.ctx_tokens);
        inst.busy_s += dt;
        self.steps += 1;
        self.push(t + dt, Kind::DecodeDone(i as u32));
    }

    fn end_decode(&mut self, i: usize, t: f64) {
        let mut ended = std::mem::take(&mut self.scratch);
        {
            let inst = &mut self.decode[i];
            inst.busy = false;
            for r in inst.starting.drain(..) {
                self.first[r as usize] = t;
            }
            inst.ctx_tokens += inst.running as f64;
            while let Some(&Reverse((s, r))) = inst.finish.peek() {
                if s != inst.step {
                    break;
                }
                inst.finish.pop();
                ended.push(r);
            }
        }
        for &r in &ended {
            let ru = r as usize;
            self.finish[ru] = t;
            let need = self.reservation(r);
            let inst = &mut self.decode[i];
            inst.running -= 1;
            inst.ctx_tokens -= (self.prompt[ru] + self.output[ru]) as f64;
            inst.kv_reserved -= need;
        }
        ended.clear();
        self.scratch = ended;
        self.start_decode(i, t);
    }
}

/// Index of the smallest load (the lowest index on ties).
fn least(loads: impl Iterator<Item = u64>) -> usize {
    let mut best = (u64::MAX, 0);
    for (i, l) in loads.enumerate() {
        if l < best.0 {
            best = (l, i);
        }
    }
    best.1
}

/// Simulates `prefill_instances` prefill and `decode_instances` decode instances
/// together on the request stream of `seed` (the stream the aggregated simulator draws
/// for the same seed and rate).
pub fn simulate_disagg(
    cfg: &DisaggConfig,
    prefill_instances: u32,
    decode_instances: u32,
    seed: u64,
) -> Result<DisaggReport, DisaggError> {
    for (pool, n) in [("prefill", prefill_instances), ("decode", decode_instances)] {
        if n == 0 || n > MAX_DISAGG_INSTANCES {
            return Err(DisaggError::Instances { pool, count: n });
        }
    }
    crate::sim::check_rate(cfg.traffic.rate_rps)?;
    let n = cfg.num_requests as usize;
    let w = cfg.traffic.generate_seeded(n, seed);
    let need: Vec<u32> = if w.cached_tokens.is_empty() {
        w.prompt_tokens.clone()
    } else {
        w.prompt_tokens
            .iter()
            .zip(&w.cached_tokens)
            .map(|(&p, &c)| (p - c).max(1))
            .collect()
    };
    let class = if w.class.is_empty() {
        vec![0; n]
    } else {
        w.class.clone()
    };
    let priority = class
        .iter()
        .map(|&c| cfg.classes.get(c as usize).map_or(0, |k| k.priority))
        .collect();
    let nan = vec![f64::NAN; n];
    let mut s = State {
        cfg,
        route: cfg.kv_routes.at(prefill_instances, decode_instances),
        events: Events::new(&w.arrival_s),
        prefill: (0..prefill_instances)
            .map(|_| PrefillInstance::default())
            .collect(),
        decode: (0..decode_instances)
            .map(|_| DecodeInstance::default())
            .collect(),
        rr_prefill: 0,
        rr_decode: 0,
        prompt: w.prompt_tokens,
        need,
        output: w.output_tokens,
        done_tokens: vec![0; n],
        arrival: w.arrival_s,
        prefill_start: nan.clone(),
        prefill_end: nan.clone(),
        landed: nan.clone(),
        decode_start: nan.clone(),
        first: nan.clone(),
        finish: nan,
        rejected: vec![false; n],
        class,
        priority,
        steps: 0,
        scratch: Vec::new(),
    };
    let mut now = 0.0;
    let mut truncated = false;
    while let Some((t, kind)) = s.events.pop(&s.arrival) {
        if s.steps > MAX_STEPS {
            truncated = true;
            break;
        }
        now = t;
        match kind {
            Kind::Arrival(r) => {
                let i = s.route_prefill();
                s.enqueue_prefill(i, r);
                s.start_prefill(i, now);
            }
            Kind::PrefillDone(i) => s.end_prefill(i as usize, now),
            Kind::KvLanded(r) => {
                s.landed[r as usize] = now;
                if cfg.decode_kv != DecodeKv::Unlimited
                    && s.reservation(r) > cfg.decode.kv_capacity_tokens
                {
                    s.rejected[r as usize] = true;
                    continue;
                }
                let i = s.route_decode();
                s.enqueue_decode(i, r);
                s.start_decode(i, now);
            }
            Kind::DecodeDone(i) => s.end_decode(i as usize, now),
        }
    }
    Ok(report(
        &s,
        prefill_instances,
        decode_instances,
        now,
        truncated,
    ))
}

fn report(s: &State, x: u32, y: u32, end_s: f64, truncated: bool) -> DisaggReport {
    let cfg = s.cfg;
    let n = cfg.num_requests as usize;
    let from = (cfg.warmup_requests as usize).min(n);
    let mut ttft = Vec::with_capacity(n - from);
    let mut tpot = Vec::with_capacity(n - from);
    let mut e2e = Vec::with_capacity(n - from);
    let mut wait = Vec::with_capacity(n - from);
    let mut prefill = Vec::with_capacity(n - from);
    let mut transfer = Vec::with_capacity(n - from);
    let mut decode_wait = Vec::with_capacity(n - from);
    let (mut joint, mut each, mut unfinished, mut rejected) = (0u32, [0u32; 3], 0u32, 0u32);
    // Per class: measured, meeting every objective, meeting each.
    let mut per: Vec<(u32, u32, [u32; 3])> = vec![(0, 0, [0; 3]); cfg.classes.len()];
    for r in from..n {
        let k = s.class[r] as usize;
        let judged_by = cfg.classes.get(k).map_or(&cfg.slo, |c| &c.slo);
        if let Some(c) = per.get_mut(k) {
            c.0 += 1;
        }
        let a = s.arrival[r];
        wait.push(s.prefill_start[r] - a);
        prefill.push(s.prefill_end[r] - a);
        transfer.push(s.landed[r] - s.prefill_end[r]);
        decode_wait.push(s.decode_start[r] - s.landed[r]);
        if s.rejected[r] {
            rejected += 1;
            continue;
        }
        if s.finish[r].is_nan() {
            unfinished += 1;
            continue;
        }
        let first = s.first[r] - a;
        let per_token = (s.finish[r] - s.first[r]) / (s.output[r].max(2) - 1) as f64;
        let total = s.finish[r] - a;
        ttft.push(first);
        tpot.push(per_token);
        e2e.push(total);
        let met = judged_by.meets_each(first, per_token, total);
        for k in 0..3 {
            each[k] += met[k] as u32;
        }
        joint += met.iter().all(|&m| m) as u32;
        if let Some(c) = per.get_mut(k) {
            c.1 += met.iter().all(|&m| m) as u32;
            for (hits, m) in c.2.iter_mut().zip(met) {
                *hits += m as u32;
            }
        }
    }
    let class_attainments: Vec<f64> = per
        .iter()
        .zip(&cfg.classes)
        .map(|(&(m, j, e), rule)| rule.attainment(m, j, e))
        .collect();
    let measured = (n - from) as u32;
    let busy = |total: f64, k: u32| {
        if end_s > 0.0 {
            total / (k as f64 * end_s)
        } else {
            0.0
        }
    };
    DisaggReport {
        prefill_instances: x,
        decode_instances: y,
        attainment: if cfg.classes.is_empty() {
            cfg.slo.attainment(measured, joint, each)
        } else {
            let each = per.iter().zip(&class_attainments).map(|(c, &a)| (c.0, a));
            mix_attainment(each, &cfg.classes)
        },
        ttft_s: Summary::of(&mut ttft),
        tpot_s: Summary::of(&mut tpot),
        e2e_s: Summary::of(&mut e2e),
        prefill_wait_s: Summary::of(&mut wait),
        prefill_s: Summary::of(&mut prefill),
        transfer_s: Summary::of(&mut transfer),
        decode_wait_s: Summary::of(&mut decode_wait),
        measured_requests: measured,
        unfinished_requests: unfinished,
        rejected_requests: rejected,
        prefill_busy: busy(s.prefill.iter().map(|p| p.busy_s).sum(), x),
        decode_busy: busy(s.decode.iter().map(|d| d.busy_s).sum(), y),
        sim_time_s: end_s,
        truncated,
        class_attainments,
    }
}

#[cfg(test)]
mod tests {
    use super::{Events, Kind};

    fn drain(events: &mut Events, arrival: &[f64]) -> Vec<(f64, Kind)> {
        std::iter::from_fn(|| events.pop(arrival)).collect()
    }

    #[test]
    fn events_come_by_time_then_arrivals_then_insertion() {
        let arrival = [0.0, 1.0, 1.0];
        let mut events = Events::new(&arrival);
        events.push(1.0, Kind::PrefillDone(0));
        events.push(0.5, Kind::DecodeDone(1));
        events.push(1.0, Kind::KvLanded(7));
        assert_eq!(
            drain(&mut events, &arrival),
            vec![
                (0.0, Kind::Arrival(0)),
                (0.5, Kind::DecodeDone(1)),
                (1.0, Kind::Arrival(1)),
                (1.0, Kind::Arrival(2)),
                (1.0, Kind::PrefillDone(0)),
                (1.0, Kind::KvLanded(7)),
            ]
        );
    }

    #[test]
    fn arrivals_out_of_order_come_by_time_then_request() {
        // -0.0 before 0.0, as `total_cmp` orders them (a partial order would tie them).
        let arrival = [2.0, 1.0, 1.0, 0.0, -0.0];
        let mut events = Events::new(&arrival);
        let order: Vec<Kind> = drain(&mut events, &arrival)
            .into_iter()
            .map(|e| e.1)
            .collect();
        let expected = [4, 3, 1, 2, 0].map(Kind::Arrival);
        assert_eq!(order, expected);
    }
}
