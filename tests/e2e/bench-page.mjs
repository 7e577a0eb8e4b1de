// Times the planner in the browser, as a user meets it: each round opens the release
// build in a fresh browser profile and records
//   - the first goodput search (R = 20) and the search plus knob sweep, as the page's
//     own "Last run" line reports them;
//   - when the first answer appeared, counted from navigation (performance.now() in the
//     page when the goodput card first holds a value; the knob sweep runs on after it);
//   - then "Run again" a few times with the workers up (it re-runs the search only: the
//     sweep of an unchanged plan is kept).
// Not a test: a benchmark. Prints one line per round and the medians.
//
//   node tests/e2e/bench-page.mjs [ROUNDS] [RERUNS]
//
// GOODPUT_DIST picks the build to time (see harness.mjs), so two builds can be compared.
import { median, parseRunTiming, runAgainTimed, startHarness, watchFirstAnswer } from './harness.mjs';

const rounds = Number(process.argv[2] ?? 5);
const reruns = Number(process.argv[3] ?? 3);
const DONE = '[data-testid="run-status"][data-phase="done"]';

const h = await startHarness();
const rows = { first: [], firstTotal: [], answerAt: [], again: [] };
try {
  for (let r = 0; r < rounds; r += 1) {
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(watchFirstAnswer);
    const page = await context.newPage();
    await page.goto(`${h.baseUrl}/`, { waitUntil: 'load' });
    await page.waitForSelector(DONE, { timeout: 120_000 });
    const [search, total] = parseRunTiming(await page.textContent('[data-testid="run-timing"]'));
    const answerAt = await page.evaluate(() => window.__answerAt);
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    rows.first.push(search);
    rows.firstTotal.push(total);
    rows.answerAt.push(answerAt);
    const again = [];
    for (let k = 0; k < reruns; k += 1) {
      const [s, t] = parseRunTiming(await runAgainTimed(page));
      again.push(t === s ? `${s}` : `${s}/${t}`);
      rows.again.push(s);
    }
    console.log(
      `round ${r + 1} (${cores} cores): first search ${search} ms, with sweep ${total} ms, ` +
        `answer at ${answerAt.toFixed(0)} ms after navigation` +
        (again.length > 0 ? `; run again: ${again.join(', ')} ms` : ''),
    );
    await context.close();
  }
  const range = (xs) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)} ms (median ${median(xs).toFixed(0)})`;
  console.log(`first load, goodput search:        ${range(rows.first)}`);
  console.log(`first load, search + knob sweep:   ${range(rows.firstTotal)}`);
  console.log(`first load, answer after navigation: ${range(rows.answerAt)}`);
  console.log(`first load, knob sweep alone:      ${range(rows.firstTotal.map((t, i) => t - rows.first[i]))}`);
  if (rows.again.length > 0) console.log(`run again, goodput search:         ${range(rows.again)}`);
} finally {
  await h.close();
}
