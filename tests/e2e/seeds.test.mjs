// "Re-run with fresh seeds": the page draws a new base seed, shows it in the Seed input
// and in the link, runs again to the same number the CLI gives for that seed, says how
// far the goodput moved, and Undo brings the old seed back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoErrors, findNumber, readValue, runCliJson, screenshot, startHarness, waitForRunDone } from './harness.mjs';

/** Longest wait for a whole search and knob sweep [ms]. */
const RUN_TIMEOUT_MS = 240_000;

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

test('fresh seeds: a new seed in the plan and the link, the CLI agrees, undo restores', async () => {
  const { page, errors } = await h.openPage('/', {
    waitFor: '[data-testid="run-status"]',
    viewport: { width: 1440, height: 1000 },
  });
  await waitForRunDone(page);
  const seedBefore = Number(await page.inputValue('[data-testid="input-run.seed"]'));
  const goodputBefore = await readValue(page, 'goodput-rps');

  await page.click('[data-testid="fresh-seed"]');
  const seed = Number(await page.inputValue('[data-testid="input-run.seed"]'));
  assert.ok(Number.isInteger(seed) && seed >= 0 && seed <= 2 ** 32 - 1, `seed ${seed}`);
  assert.notEqual(seed, seedBefore, 'a new seed is drawn');
  // The words appear once the run for the new seed has finished.
  await page.waitForFunction(
    () => document.querySelector('[data-testid="fresh-seed-words"]')?.textContent.includes('req/s'),
    null,
    { timeout: RUN_TIMEOUT_MS, polling: 100 },
  );
  await waitForRunDone(page);
  const words = await page.textContent('[data-testid="fresh-seed-words"]');
  assert.ok(words.startsWith(`Seed ${seedBefore}: ${goodputBefore.toFixed(2)} req/s. Seed ${seed}: `), words);

  // The link carries the seed, and the CLI computes the same goodput from it.
  const link = await page.evaluate(() => location.href);
  const decoded = await runCliJson(['decode', link]);
  assert.equal(findNumber(decoded, 'seed'), seed);
  const cli = await runCliJson(['plan', '--link', link, '--json', '--no-sweep']);
  const shown = await readValue(page, 'goodput-rps');
  assert.equal(shown, findNumber(cli, 'goodput_rps'), 'the page equals the CLI for the new seed');
  assert.ok(words.includes(`Seed ${seed}: ${shown.toFixed(2)} req/s`), words);
  await screenshot(page, 'fresh-seed');

  // Undo takes the seed back.
  assert.match(await page.getAttribute('[data-testid="undo"]', 'title'), /^Undo: fresh seeds/);
  await page.click('[data-testid="undo"]');
  assert.equal(Number(await page.inputValue('[data-testid="input-run.seed"]')), seedBefore);
  await waitForRunDone(page);
  assert.equal(await readValue(page, 'goodput-rps'), goodputBefore);
  assertNoErrors(errors);
});
