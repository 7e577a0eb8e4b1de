// Times the first load of two or more builds side by side, on a noisy machine: each
// build is served and driven by a browser of its own, and the builds take turns, one
// fresh load each (a new browser profile: nothing cached), so that a busy spell slows
// them alike. Not a test: a benchmark. Prints, per build, the median and the mean of the
// middle half of:
//   - the first contentful paint (the app mounted and drawn), from navigation;
//   - the answer, from navigation (the goodput card first holds a value);
//   - the first goodput search, as the page's own "Last run" line reports it.
//
//   node tests/e2e/bench-first.mjs LOADS DIST [DIST ...]
//
// Each DIST is a `trunk build --release --offline --dist DIST` output.
import { median, middleMean, parseRunTiming, startHarness, watchFirstAnswer } from './harness.mjs';

const [countArg = '12', ...dists] = process.argv.slice(2);
const count = Number(countArg);
if (!(count >= 1) || dists.length === 0) {
  console.error('usage: node tests/e2e/bench-first.mjs LOADS DIST [DIST ...]');
  process.exit(2);
}
const DONE = '[data-testid="run-status"][data-phase="done"]';

/** Median and mean of the middle half, as text. */
function summary(xs) {
  return `median ${median(xs).toFixed(0)} ms, mean of the middle half ${middleMean(xs).toFixed(0)} ms`;
}

const builds = [];
try {
  for (const dist of dists) builds.push({ dist, h: await startHarness({ dist }), paint: [], answer: [], search: [] });
  for (let k = 0; k < count; k += 1) {
    // The order of the builds turns every round.
    for (let j = 0; j < builds.length; j += 1) {
      const b = builds[(j + k) % builds.length];
      const context = await b.h.browser.newContext({ viewport: { width: 1280, height: 900 } });
      await context.addInitScript(watchFirstAnswer);
      const page = await context.newPage();
      await page.goto(`${b.h.baseUrl}/`, { waitUntil: 'load' });
      await page.waitForSelector(DONE, { timeout: 120_000 });
      const [search] = parseRunTiming(await page.textContent('[data-testid="run-timing"]'));
      const at = await page.evaluate(() => ({
        answer: window.__answerAt,
        paint: performance.getEntriesByName('first-contentful-paint')[0]?.startTime,
      }));
      b.paint.push(at.paint);
      b.answer.push(at.answer);
      b.search.push(search);
      await context.close();
    }
  }
  for (const b of builds) {
    console.log(`${b.dist}: ${count} loads`);
    console.log(`  first contentful paint: ${summary(b.paint)}`);
    console.log(`  answer after navigation: ${summary(b.answer)}`);
    console.log(`  first goodput search: ${summary(b.search)}`);
  }
} finally {
  for (const b of builds) await b.h.close();
}
