// Times "Run again" (the goodput search with the workers up) in two or more builds side
// by side, on a noisy machine: every build is loaded once, in a browser of its own, and
// the builds then take turns, one search each, so that a busy spell slows them alike.
// Not a test: a benchmark. Prints, per build, the best, the median and the mean of the
// middle half of the searches, as the page's own "Last run" line reports them.
//
//   node tests/e2e/bench-again.mjs SEARCHES DIST [DIST ...]
//
// Each DIST is a `trunk build --release --offline --dist DIST` output.
import { median, middleMean, parseRunTiming, runAgainTimed, startHarness } from './harness.mjs';

const [countArg = '30', ...dists] = process.argv.slice(2);
const count = Number(countArg);
if (!(count >= 1) || dists.length === 0) {
  console.error('usage: node tests/e2e/bench-again.mjs SEARCHES DIST [DIST ...]');
  process.exit(2);
}
const STATUS = '[data-testid="run-status"]';

const builds = [];
try {
  for (const dist of dists) {
    const h = await startHarness({ dist });
    builds.push({ dist, h, ms: [] });
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${h.baseUrl}/`, { waitUntil: 'load' });
    await page.waitForSelector(`${STATUS}[data-phase="done"]`, { timeout: 120_000 });
    builds.at(-1).page = page;
  }
  for (let k = -2; k < count; k += 1) {
    // Two untimed searches first; then the order of the builds turns every round.
    const order = builds.map((_, i) => (i + Math.max(k, 0)) % builds.length);
    for (const i of order) {
      const { page } = builds[i];
      const [search] = parseRunTiming(await runAgainTimed(page));
      if (k >= 0) builds[i].ms.push(search);
    }
  }
  for (const b of builds) {
    console.log(
      `${b.dist}: ${b.ms.length} searches: best ${Math.min(...b.ms)} ms, median ${median(b.ms)} ms, ` +
        `mean of the middle half ${middleMean(b.ms).toFixed(1)} ms`,
    );
  }
} finally {
  for (const b of builds) await b.h.close();
}
