// Times a calibration in the browser: 8 `vllm bench serve` files (written by
// `cargo bench -p goodput-core --bench calibrate -- --quick --write-vllm DIR`) uploaded to
// the release build, fitted in the page's Web Workers; prints the time from the click on
// Fit to the held-out error on screen, for a few fresh pages. Not a test: a benchmark.
//
//   node tests/e2e/bench-calibrate.mjs DIR [ROUNDS]
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { startHarness } from './harness.mjs';

const dir = process.argv[2];
const rounds = Number(process.argv[3] ?? 3);
if (!dir) {
  console.error('usage: node tests/e2e/bench-calibrate.mjs DIR [ROUNDS]');
  process.exit(2);
}
const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).map((f) => path.join(dir, f));
const h = await startHarness();
try {
  for (let r = 0; r < rounds; r += 1) {
    const { page } = await h.openPage('/', { waitFor: '[data-testid="calibrate-panel"]' });
    await page.waitForFunction(
      () => document.querySelector('[data-testid="run-status"]')?.dataset.phase === 'done',
      null,
      { timeout: 240_000 },
    );
    await page.setInputFiles('[data-testid="calibrate-files"]', files);
    await page.waitForSelector(`[data-testid="calibrate-found"][data-value="${files.length}"]`);
    const ms = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const start = performance.now();
          const done = () => document.querySelector('[data-testid="calibrate-held-out"][data-value]:not([data-value=""])');
          const tick = () => (done() ? resolve(performance.now() - start) : setTimeout(tick, 5));
          document.querySelector('[data-testid="calibrate-run"]').click();
          tick();
        }),
    );
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    console.log(`round ${r + 1}: ${files.length} files fitted in ${ms.toFixed(0)} ms (${cores} cores reported)`);
    await page.context().close();
  }
} finally {
  await h.close();
}
