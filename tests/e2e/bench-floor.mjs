// Times "Run again" against its floor: what the same simulations take when the page does
// nothing but hand them to its workers. Not a test: a benchmark, to tell the time the
// page's own work adds (the click, the frames it draws, reading replies into the search)
// from the workers' computing and the messages between them and the page.
//
// One page of the release build records the requests that one "Run again" posts to its
// workers (the search's batches, in order). Then, in turn, ROUNDS times each:
//   - click:  "Run again" clicked with Playwright (as bench-again.mjs does), timed by the
//             page's own "Last run" line;
//   - script: "Run again" clicked from a script in the page (`element.click()`: no input
//             events and no Playwright round trips while it runs), the same line;
//   - replay: the recorded requests sent again to the same workers by a script in the
//             page, batch after batch, at most IN_FLIGHT per worker as the pool keeps
//             them (`pool::IN_FLIGHT`), from the first request to the last reply.
// The app also reads the replayed replies; they carry an old run id and it ignores them.
//
//   node tests/e2e/bench-floor.mjs [ROUNDS]
//
// GOODPUT_DIST picks the build (see harness.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, median, middleMean, parseRunTiming, runAgainTimed, startHarness } from './harness.mjs';

const rounds = Number(process.argv[2] ?? 20);
if (!(rounds >= 1)) {
  console.error('usage: node tests/e2e/bench-floor.mjs [ROUNDS]');
  process.exit(2);
}
const STATUS = '[data-testid="run-status"]';
// Requests a worker holds at once, read from the pool's own constant.
const IN_FLIGHT = Number(
  /pub const IN_FLIGHT: usize = (\d+);/.exec(fs.readFileSync(path.join(REPO_ROOT, 'src', 'compute', 'pool.rs'), 'utf8'))?.[1],
);
if (!(IN_FLIGHT >= 1)) throw new Error('pool::IN_FLIGHT not found in src/compute/pool.rs');

/** Runs in the page before the app: keeps the request bodies posted to workers while recording. */
function recordPosts() {
  window.__recording = false;
  window.__posts = [];
  window.__workers = [];
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, ...rest) {
    if (window.__recording && typeof message === 'string') {
      window.__posts.push(message);
      if (!window.__workers.includes(this)) window.__workers.push(this);
    }
    return post.call(this, message, ...rest);
  };
}

/** Runs in the page: replays the recorded batches once and returns the time taken [ms]. */
async function replay(inFlight) {
  const workers = window.__workers;
  // A batch's jobs are dealt in turn over its requests, so every request of a batch holds
  // the same rates; the page posts a batch's requests before the next batch's.
  const batches = [];
  let rates = null;
  for (const body of window.__posts) {
    const key = [...new Set(JSON.parse(body).sim.jobs.map((j) => j.rate_rps))].sort().join();
    if (key !== rates) batches.push([]);
    rates = key;
    batches.at(-1).push(body);
  }
  const runBatch = (bodies) =>
    new Promise((resolve) => {
      const queue = [...bodies];
      const held = workers.map(() => 0);
      let left = bodies.length;
      const send = () => {
        // The least-loaded worker first, `inFlight` at most each, as the pool deals them.
        for (let round = 0; round < inFlight; round += 1) {
          workers.forEach((w, i) => {
            if (held[i] < inFlight && queue.length > 0) {
              held[i] += 1;
              w.postMessage(queue.shift());
            }
          });
        }
      };
      const listeners = workers.map((w, i) => {
        const on = (e) => {
          if (typeof e.data !== 'string' || !e.data.startsWith('{"sim":')) return;
          held[i] -= 1;
          left -= 1;
          if (left > 0) return send();
          workers.forEach((v, j) => v.removeEventListener('message', listeners[j]));
          resolve();
        };
        w.addEventListener('message', on);
        return on;
      });
      send();
    });
  const t = performance.now();
  for (const b of batches) await runBatch(b);
  return { ms: performance.now() - t, batches: batches.length };
}

const h = await startHarness();
try {
  const context = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(recordPosts);
  const page = await context.newPage();
  await page.goto(`${h.baseUrl}/`, { waitUntil: 'load' });
  await page.waitForSelector(`${STATUS}[data-phase="done"]`, { timeout: 120_000 });
  // Two searches untimed (the engine optimises the hot code), the second recorded.
  await runAgainTimed(page);
  await page.evaluate(() => {
    window.__recording = true;
  });
  await runAgainTimed(page);
  const posted = await page.evaluate(() => {
    window.__recording = false;
    return { requests: window.__posts.length, workers: window.__workers.length };
  });
  if (posted.requests === 0) throw new Error('"Run again" posted nothing to a worker');

  const ways = {
    click: async () => parseRunTiming(await runAgainTimed(page))[0],
    script: async () => parseRunTiming(await runAgainTimed(page, { fromScript: true }))[0],
    replay: async () => {
      const { ms, batches } = await page.evaluate(replay, IN_FLIGHT);
      posted.batches = batches;
      return ms;
    },
  };
  const ms = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
  for (let r = 0; r < rounds; r += 1) {
    for (const [name, time] of Object.entries(ways)) ms[name].push(await time());
  }
  console.log(`${posted.requests} requests in ${posted.batches} batches to ${posted.workers} workers per search; ${rounds} rounds`);
  for (const [name, xs] of Object.entries(ms)) {
    console.log(
      `${name.padEnd(6)}: best ${Math.min(...xs).toFixed(1)} ms, median ${median(xs).toFixed(1)} ms, ` +
        `mean of the middle half ${middleMean(xs).toFixed(1)} ms`,
    );
  }
} finally {
  await h.close();
}
