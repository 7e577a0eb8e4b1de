#!/usr/bin/env python3
"""A numpy reference simulator, used only to time goodput against the kind of
simulator the latency-SLO tuning article describes. It is not part of the build or
the tests, and its numbers are not compared with goodput's bit for bit (it draws its
own random numbers).

What it models, per point:
  * one replica of an 8B bf16 model on one H100-class GPU: P = 8e9 parameters,
    16 GB of weights, 3.35 TB/s of memory bandwidth, 593 TFLOP/s effective compute,
    c0 = 1 ms per step, 131,072 KV bytes per token; a step of n tokens over a decode
    context of C tokens lasts  c0 + max((weights + kappa * C) / bandwidth,
    2 * P * n / compute);
  * Poisson arrivals at RATE req/s; prompt lengths floor(lognormal(median 800,
    sigma 0.8)) clipped to 16..8000, output lengths floor(lognormal(200, 0.8))
    clipped to 1..1024;
  * continuous batching with chunked prefill and no KV-memory limit: waiting requests
    are admitted first come, first served while fewer than MAX_SEQS run; every step
    gives one token to each decoding sequence, then fills the rest of the BUDGET-token
    budget with prompt chunks in admission order; a prompt that completes emits its
    first token at the end of the step, and a sequence leaves at the end of the step
    that produces its last output token; an idle replica jumps to the next arrival;
  * the report goodput's `simulate` prints: SLO attainment (TTFT <= 0.5 s and
    TPOT <= 25 ms) and the mean, p50, p90, p95 and p99 of TTFT, TPOT and E2E over the
    requests after the first WARMUP.

Like the article's, this is a plain per-step, per-sequence loop: numpy draws the
traffic and summarises the latencies, and the engine loop is Python over small lists
(numpy calls on arrays of ~100 sequences cost more per step than they save).

Run (numpy >= 1.17):
    python3 benches/reference_sim.py                 # 5 points, seeds 0..4
    python3 benches/reference_sim.py --points 20 --rate 20 --max-num-seqs 128 \
        --max-num-batched-tokens 512 --num-requests 2500 --warmup-requests 200
It prints the time per point (median and best over the points) and the mean
attainment. With --goodput target/release/goodput it then times `goodput simulate`
on the same work (the same flags, --replications 400 --json, several processes) and
prints both per-point times and their ratio; give --goodput more than once to compare
builds in the same run. With --article FILE it also times the tuning article's own
listing on the same seeds (save the listing from the article as FILE; it is not part
of this project) and prints each build's ratio against it too.
"""

import argparse
import json
import resource
import subprocess
import time

import numpy as np

PARAMS = 8e9  # parameters
WEIGHT_BYTES = 16e9  # bytes
BANDWIDTH = 3.35e12  # bytes/s
COMPUTE = 593e12  # FLOP/s, effective
STEP_OVERHEAD = 1e-3  # s
KV_BYTES_PER_TOKEN = 131072.0  # bytes
TTFT_SLO, TPOT_SLO = 0.5, 0.025  # s


def step_seconds(tokens, context):
    """Roofline time of one engine step [s]."""
    memory = (WEIGHT_BYTES + KV_BYTES_PER_TOKEN * context) / BANDWIDTH
    compute = 2.0 * PARAMS * tokens / COMPUTE
    return STEP_OVERHEAD + (memory if memory >= compute else compute)


def draw_lengths(gen, median, sigma, lo, hi, n):
    return np.clip(np.floor(gen.lognormal(np.log(median), sigma, n)), lo, hi).astype(np.int64)


def run_point(rate, max_seqs, budget, n, warmup, seed):
    gen = np.random.default_rng(seed)
    arrival = np.cumsum(gen.exponential(1.0 / rate, n))
    prompt = draw_lengths(gen, 800.0, 0.8, 16, 8000, n).tolist()
    output = draw_lengths(gen, 200.0, 0.8, 1, 1024, n).tolist()
    arrival_list = arrival.tolist()
    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)

    # Running sequences as small lists, in admission order:
    #   prefilling: [request, prompt tokens still to compute, context]
    #   decoding:   [request, context, output tokens still to produce]
    prefilling, decoding = [], []
    clock = 0.0
    arrived = 0  # requests with arrival <= clock
    admitted = 0  # the waiting queue is requests admitted..arrived
    while admitted < n or prefilling or decoding:
        while arrived < n and arrival_list[arrived] <= clock:
            arrived += 1
        if not prefilling and not decoding and admitted == arrived:
            clock = arrival_list[arrived]
            continue
        while admitted < arrived and len(prefilling) + len(decoding) < max_seqs:
            prefilling.append([admitted, prompt[admitted], 0])
            admitted += 1
        # One token per decoder, then prompt chunks in admission order.
        context = 0
        for d in decoding:
            context += d[1]
        room = budget - len(decoding)
        tokens = len(decoding)
        chunks = []
        for p in prefilling:
            if room <= 0:
                break
            c = p[1] if p[1] < room else room
            chunks.append((p, c))
            room -= c
            tokens += c
        clock += step_seconds(tokens, context)
        still = []
        for d in decoding:
            d[1] += 1
            d[2] -= 1
            if d[2] > 0:
                still.append(d)
            else:
                finish[d[0]] = clock
        decoding = still
        completed = 0
        for p, c in chunks:
            p[1] -= c
            p[2] += c
            if p[1] == 0:
                completed += 1
                r = p[0]
                first[r] = clock
                if output[r] > 1:
                    decoding.append([r, p[2], output[r] - 1])
                else:
                    finish[r] = clock
        del prefilling[:completed]

    out = np.asarray(output, dtype=np.float64)
    ttft = (first - arrival)[warmup:]
    tpot = ((finish - first) / np.maximum(out - 1, 1))[warmup:]
    e2e = (finish - arrival)[warmup:]
    report = {"attainment": float(np.mean((ttft <= TTFT_SLO) & (tpot <= TPOT_SLO)))}
    for name, xs in (("ttft_s", ttft), ("tpot_s", tpot), ("e2e_s", e2e)):
        p = np.percentile(xs, [50, 90, 95, 99])
        report[name] = {"mean": float(xs.mean()), "p50": p[0], "p90": p[1], "p95": p[2], "p99": p[3]}
    return report


def time_goodput(binary, a, runs, replications):
    """Runs `goodput simulate` with the same work `runs` times; returns the wall and
    CPU (user + system) seconds per point of each run."""
    flags = ["simulate", "--kv-policy", "none", "--request-rate", str(a.rate),
             "--max-num-seqs", str(a.max_num_seqs),
             "--max-num-batched-tokens", str(a.max_num_batched_tokens),
             "--num-requests", str(a.num_requests),
             "--warmup-requests", str(a.warmup_requests),
             "--replications", str(replications), "--json"]
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        out = subprocess.run([binary] + flags, check=True, capture_output=True).stdout
        walls.append((time.perf_counter() - start) / replications)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                    / replications)
    return walls, cpus, json.loads(out)["attainment"]


def time_article(a):
    """Times the article's listing (loaded from `a.article`) on seeds 0..points-1;
    returns the median wall and CPU seconds per point and the mean attainment."""
    import contextlib
    import importlib.util
    import io

    spec = importlib.util.spec_from_file_location("article_listing", a.article)
    listing = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()):  # the listing prints its own run
        spec.loader.exec_module(listing)
    walls, cpus, hits = [], [], []
    for seed in range(a.points):
        start, start_cpu = time.perf_counter(), time.process_time()
        ttft, tpot = listing.simulate(a.rate, a.max_num_seqs, a.max_num_batched_tokens,
                                      n=a.num_requests, seed=seed)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
        hits.append(float(np.mean((ttft <= TTFT_SLO) & (tpot <= TPOT_SLO))))
    med = lambda xs: sorted(xs)[len(xs) // 2]
    return med(walls), med(cpus), float(np.mean(hits))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=5, help="points (seeds 0..N-1)")
    ap.add_argument("--rate", type=float, default=20.0, help="arrival rate [req/s]")
    ap.add_argument("--max-num-seqs", type=int, default=128)
    ap.add_argument("--max-num-batched-tokens", type=int, default=512)
    ap.add_argument("--num-requests", type=int, default=2500)
    ap.add_argument("--warmup-requests", type=int, default=200)
    ap.add_argument("--goodput", metavar="BINARY", action="append", default=[],
                    help="also time BINARY simulate on the same work (--replications 400 "
                    "--json, one process per run) and print the ratio; repeat it to "
                    "compare builds (the runs of the builds are interleaved)")
    ap.add_argument("--goodput-runs", type=int, default=7, help="processes to time")
    ap.add_argument("--article", metavar="FILE",
                    help="also time the tuning article's own listing on the same points: "
                    "FILE is that listing saved as a Python file (its simulate(rate, "
                    "max_seqs, budget, n, seed) returning the TTFT and TPOT arrays); it "
                    "is not part of this project")
    a = ap.parse_args()
    article = time_article(a) if a.article else None
    times, cpu, hits = [], [], []
    for seed in range(a.points):
        start, start_cpu = time.perf_counter(), time.process_time()
        r = run_point(a.rate, a.max_num_seqs, a.max_num_batched_tokens,
                      a.num_requests, a.warmup_requests, seed)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        hits.append(r["attainment"])
    times.sort()
    cpu.sort()
    print(f"numpy {np.__version__}: {a.points} points of {a.num_requests} requests")
    print(f"per point: median {times[len(times) // 2] * 1e3:.1f} ms wall "
          f"(best {times[0] * 1e3:.1f}), median {cpu[len(cpu) // 2] * 1e3:.1f} ms CPU")
    print(f"mean attainment {np.mean(hits):.4f}")
    if article:
        print(f"article listing ({a.article}): per point median {article[0] * 1e3:.1f} ms "
              f"wall, median {article[1] * 1e3:.1f} ms CPU; mean attainment {article[2]:.4f}")
    reps = 400
    runs = {b: ([], [], None) for b in a.goodput}
    for _ in range(a.goodput_runs):
        for b in a.goodput:
            walls, cpus, hit = time_goodput(b, a, 1, reps)
            runs[b][0].extend(walls)
            runs[b][1].extend(cpus)
            runs[b] = (runs[b][0], runs[b][1], hit)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    for b, (walls, cpus, hit) in runs.items():
        print(f"{b} simulate, {a.goodput_runs} processes of {reps} points: per point "
              f"median {med(walls) * 1e6:.0f} us wall (best {min(walls) * 1e6:.0f}), "
              f"median {med(cpus) * 1e6:.0f} us CPU; mean attainment {hit:.4f}")
        print(f"  ratio (median per point): {times[len(times) // 2] / med(walls):.0f}x wall, "
              f"{cpu[len(cpu) // 2] / med(cpus):.0f}x CPU")
        if article:
            print(f"  against the article's listing: {article[0] / med(walls):.0f}x wall, "
                  f"{article[1] / med(cpus):.0f}x CPU")


if __name__ == "__main__":
    main()
