// Smoke test: the release build loads in headless Chromium, runs the core in
// wasm and shows its number, without a single console error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { GOLDEN, assertNoErrors, readValue, runCli, screenshot, startHarness } from './harness.mjs';

/**
 * The core's roofline step time for 110 decoding sequences × 940 context tokens on the
 * default plan (8B bf16 on an H100) [s]: the article's ≈ 9.8 ms decode step, derived by
 * hand in the golden file.
 */
const DECODE_STEP_S = GOLDEN.decode_step_s.value;

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

test('the app loads and shows the core decode step time', async () => {
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="decode-step-s"]' });
  assert.match(await page.title(), /goodput/i);
  const shown = await readValue(page, 'decode-step-s');
  assert.ok(
    Math.abs(shown - DECODE_STEP_S) <= 1e-12 * DECODE_STEP_S,
    `decode-step-s data-value ${shown} differs from the core's ${DECODE_STEP_S}`,
  );
  // The screenshot is a real PNG of the whole viewport, not an empty file.
  const png = await readFile(await screenshot(page, 'smoke-home'));
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG', 'a PNG file');
  const { width } = page.viewportSize();
  const scale = await page.evaluate(() => window.devicePixelRatio);
  assert.equal(png.readUInt32BE(16), Math.round(width * scale), 'PNG width = viewport width');
  assert.ok(png.length > 20_000, `a ${png.length}-byte PNG is too small for the page`);
  assertNoErrors(errors);
});

test('an unknown app route still serves the app', async () => {
  const { page, errors } = await h.openPage('/no/such/route', { waitFor: '[data-testid="decode-step-s"]' });
  assert.ok(Number.isFinite(await readValue(page, 'decode-step-s')));
  assertNoErrors(errors);
});

test('the release CLI the e2e tests compare with runs', async () => {
  assert.match(await runCli(['--version']), /^goodput \d+\.\d+\.\d+/);
});
