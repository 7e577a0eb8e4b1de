// Calibration in the browser: upload vLLM benchmark files, fit in the workers, see the
// held-out error and the overlay, the cards follow the calibrated plan while its traffic
// stays the forecast (the benchmark's traffic only on request, undoable), the share
// link carries it to a fresh browser, a weak fit waits for "Apply anyway", and a bad
// file changes nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertNoErrors, findNumber, readValue, runCliJson, screenshot, SCREENSHOT_DIR, startHarness, waitForRerun, waitForRunDone } from './harness.mjs';

/** Longest wait for a search and knob sweep, and for a whole calibration [ms]. */
const RUN_TIMEOUT_MS = 240_000;
/** Cards that must follow the calibrated plan. */
const CARDS = ['goodput-rps', 'replicas-total', 'gpus-total', 'cost-per-month-usd'];
/** The CLI report's key for each card. */
const CLI_KEYS = {
  'goodput-rps': 'goodput_rps',
  'replicas-total': 'replicas_total',
  'gpus-total': 'gpus_total',
  'cost-per-month-usd': 'cost_per_month_usd',
};

let h;
let dir;
before(async () => {
  h = await startHarness();
  dir = await mkdtemp(path.join(tmpdir(), 'goodput-calibrate-'));
});
after(async () => {
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * A `vllm bench serve --save-result` file at `rate` req/s for the default plan's model,
 * measured on a server slower than the datasheet (latencies grow with the load).
 */
function vllmResult(rate, { ttft = 60 + 25 * rate, tpot = 14 + 1.6 * rate } = {}) {
  const completed = 200;
  const outTokens = 200;
  const e2e = ttft + tpot * (outTokens - 1);
  return JSON.stringify({
    date: '20250101-120000',
    backend: 'vllm',
    model_id: 'meta-llama/Llama-3.1-8B-Instruct',
    num_prompts: completed,
    request_rate: rate,
    burstiness: 1.0,
    max_concurrency: null,
    duration: completed / rate,
    completed,
    failed: 0,
    total_input_tokens: completed * 1000,
    total_output_tokens: completed * outTokens,
    request_throughput: rate * 0.99,
    mean_ttft_ms: ttft,
    median_ttft_ms: ttft * 0.9,
    p99_ttft_ms: ttft * 2.5,
    mean_tpot_ms: tpot,
    median_tpot_ms: tpot,
    p99_tpot_ms: tpot * 1.4,
    mean_e2el_ms: e2e,
    median_e2el_ms: e2e * 0.95,
    p99_e2el_ms: e2e * 1.8,
  });
}

async function writeResults(rates) {
  const files = [];
  for (const rate of rates) {
    const file = path.join(dir, `vllm-rate-${rate}.json`);
    await writeFile(file, vllmResult(rate));
    files.push(file);
  }
  return files;
}

async function cards(page) {
  const out = {};
  for (const id of CARDS) out[id] = await readValue(page, id);
  return out;
}

/** Pixels of the canvas in the measured-marker colour, and the distinct x columns (by 8 px) they fall in. */
async function markerPixels(page, rgb) {
  return page.evaluate(([r, g, b]) => {
    const c = document.querySelector('[data-testid="calibration-chart"]');
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let n = 0;
    const columns = new Set();
    for (let y = 0; y < c.height; y += 1) {
      for (let x = 0; x < c.width; x += 1) {
        const i = 4 * (y * c.width + x);
        if (Math.abs(data[i] - r) < 6 && Math.abs(data[i + 1] - g) < 6 && Math.abs(data[i + 2] - b) < 6) {
          n += 1;
          columns.add(Math.floor(x / 8));
        }
      }
    }
    return { n, columns: columns.size };
  }, rgb);
}

test('calibrating from uploaded vLLM files changes the cards, and a link carries it', async () => {
  const files = await writeResults([1, 2, 4, 6]);
  const { page, errors } = await h.openPage('/', {
    waitFor: '[data-testid="calibrate-panel"]',
    viewport: { width: 1440, height: 1000 },
  });
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseUrl });
  await page.emulateMedia({ colorScheme: 'light' });
  await waitForRunDone(page);
  const before = await cards(page);
  const hashBefore = await page.evaluate(() => location.hash);
  const median = '[data-testid="input-traffic.prompt.dist.median"]';
  const forecastMedian = await page.inputValue(median);

  await page.setInputFiles('[data-testid="calibrate-files"]', files);
  await page.waitForSelector('[data-testid="calibrate-found"][data-value="4"]');
  assert.match(await page.textContent('[data-testid="calibrate-panel"]'), /Llama-3\.1-8B-Instruct/);
  await page.click('[data-testid="calibrate-run"]');
  await page.waitForSelector('[data-testid="calibrate-progress"][data-total]:not([data-total="0"])', {
    timeout: RUN_TIMEOUT_MS,
  });
  const heldOut = await page.waitForSelector('[data-testid="calibrate-held-out"][data-value]:not([data-value=""])', {
    timeout: RUN_TIMEOUT_MS,
  });
  const err = Number(await heldOut.getAttribute('data-value'));
  assert.ok(err >= 0 && err < 1, `held-out error ${err}`);
  // The verdict judges the larger of the held-out and the fit-light-predict-heavy errors
  // (errors of the means) against the datasheet's.
  const judged = Number(await heldOut.getAttribute('data-judged'));
  const extrapolation = Number(await heldOut.getAttribute('data-extrapolation'));
  assert.equal(judged, Math.max(err, extrapolation));
  const sheet = Number(await page.getAttribute('[data-testid="calibrate-errors"] tr[data-row="datasheet"] td[data-metric="all"]', 'data-value'));
  assert.match(await page.textContent('[data-testid="calibrate-errors"] caption'), /^Errors of the means/);
  assert.match(await page.textContent('[data-testid="calibrate-tail-errors"] caption'), /99th percentiles.*noisy/);
  const expected = judged >= sheet ? 'no_better' : judged <= 0.1 ? 'good' : judged <= 0.2 ? 'fair' : 'poor';
  const verdict = page.locator('[data-testid="calibrate-verdict"]');
  assert.equal(await verdict.getAttribute('data-verdict'), expected, `judged ${judged}, datasheet ${sheet}`);
  assert.match(await verdict.textContent(), /^(A good fit|A fair fit|A poor fit|The fit predicts runs it did not see no better)/);
  const progress = page.locator('[data-testid="calibrate-progress"]');
  assert.equal(await progress.getAttribute('data-done'), await progress.getAttribute('data-total'));
  // Every fitted constant is listed, the frontend time among them.
  assert.match(await page.textContent('[data-testid="calibrate-constants"]'), /Frontend time: /);
  if (expected === 'poor' || expected === 'no_better') {
    // A weak fit is shown, not applied, until "Apply anyway".
    assert.equal(await page.getAttribute('[data-testid="calibration-result"]', 'data-held'), 'true');
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => location.hash), hashBefore, 'the plan is unchanged');
    await page.click('[data-testid="calibrate-apply-anyway"]');
  }
  await page.waitForSelector('[data-testid="calibration-result"][data-held="false"]');
  assert.equal(await page.getAttribute('[data-testid="calibration-result"]', 'data-enabled'), 'true');
  assert.match(await page.textContent('[data-testid="calibrate-provenance"]'), /Calibrated from 4 measurements: vllm-rate-1\.json/);
  // Applying the fit leaves the plan's traffic, its forecast, as it was.
  assert.equal(await page.inputValue(median), forecastMedian, 'the traffic is unchanged');

  // The calibrated plan re-runs; the cards follow it.
  await waitForRerun(page, { mayHaveFinished: true });
  const calibrated = await cards(page);
  assert.notDeepEqual(calibrated, before, 'the calibrated plan gives other numbers');

  // The overlay has the measured markers (light theme: accent2 #b45309), not only axes.
  await page.locator('[data-testid="calibration-chart"]').scrollIntoViewIfNeeded();
  const ink = await markerPixels(page, [0xb4, 0x53, 0x09]);
  assert.ok(ink.n >= 4 * 2 * 30, `measured markers drawn (${ink.n} pixels)`);
  assert.ok(ink.columns >= 8, `markers at several loads (${ink.columns} columns)`);
  await screenshot(page, 'calibrate-after-fit');
  await page.locator('[data-testid="calibrate-panel"]').screenshot({ path: path.join(SCREENSHOT_DIR, 'calibrate-panel.png') });

  // The share link opens the same calibrated plan in a fresh browser.
  await page.click('[data-testid="copy-link"]');
  await page.waitForSelector('[data-testid="copy-link"]:has-text("Copied")');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(link.startsWith(`${h.baseUrl}/#p=4`), link);
  const fresh = await h.openPage(`/${link.slice(link.indexOf('#'))}`, { waitFor: '[data-testid="finance-view"]' });
  await fresh.page.waitForSelector('[data-testid="answer"][data-ready="true"]', { timeout: RUN_TIMEOUT_MS });
  const words = await fresh.page.textContent('[data-testid="finance-calibration"]');
  assert.match(words, /^Calibrated from 4 vllm bench serve measurements \(meta-llama\/Llama-3\.1-8B-Instruct[^)]*\): predictions missed measured latency by (\d+%|under 1%) on average on held-out runs(, and by (\d+%|under 1%) on the heavier half of the loads when fitted on the lighter half)? \(datasheet constants: \d+%\)\.( A poor fit: read the numbers with care\.| That is no better than the datasheet constants: read the numbers with care\.)?$/);
  assert.equal(/read the numbers with care/.test(words), expected === 'poor' || expected === 'no_better', words);
  await fresh.page.click('[data-testid="open-planner"]');
  await waitForRunDone(fresh.page);
  assert.deepEqual(await cards(fresh.page), calibrated, 'the link gives the same cards');
  // And the CLI reads the same calibrated plan from the link: the same numbers, bit for bit.
  const cli = await runCliJson(['plan', '--link', link, '--json']);
  assert.match(cli.assumptions.join(' '), /Calibrated from 4 vllm bench serve measurements/);
  for (const id of CARDS) {
    assert.equal(calibrated[id], findNumber(cli, CLI_KEYS[id]), `${id} vs the CLI's ${CLI_KEYS[id]}`);
  }
  // Redrawn from the link: the measured points, predicted on this page.
  await fresh.page.waitForSelector('[data-testid="calibration-chart"]');
  const again = await markerPixels(fresh.page, [0xb4, 0x53, 0x09]);
  assert.ok(again.n >= 4 * 2 * 30, `markers redrawn from the link (${again.n} pixels)`);

  // The benchmark's traffic goes into the plan only on request, as a step Undo takes back.
  await page.click('[data-testid="calibrate-use-traffic"]');
  await page.waitForFunction(([sel, v]) => document.querySelector(sel).value !== v, [median, forecastMedian]);
  assert.equal(await page.isDisabled('[data-testid="calibrate-use-traffic"]'), true);
  await page.click('[data-testid="undo"]');
  await page.waitForFunction(([sel, v]) => document.querySelector(sel).value === v, [median, forecastMedian]);
  assert.equal(await page.getAttribute('[data-testid="calibration-result"]', 'data-enabled'), 'true', 'the fit stays');
  await waitForRerun(page, { mayHaveFinished: true });
  assert.deepEqual(await cards(page), calibrated, 'back to the calibrated plan on the forecast');

  // Switching to the datasheet constants re-runs the cards; undo restores the old plan.
  await page.click('[data-testid="calibrate-toggle"]');
  await page.waitForSelector('[data-testid="calibration-result"][data-enabled="false"]');
  await waitForRerun(page, { mayHaveFinished: true });
  assert.notDeepEqual(await cards(page), calibrated, 'the datasheet constants give other numbers');
  assert.match(await page.textContent('[data-testid="calibrate-in-force"]'), /datasheet/);
  await page.click('[data-testid="calibrate-toggle"]');
  await page.click('[data-testid="calibrate-undo"]');
  await page.waitForSelector('[data-testid="calibration-result"]', { state: 'detached' });
  await waitForRerun(page, { mayHaveFinished: true });
  assert.deepEqual(await cards(page), before, 'undo gives back the plan before calibration');
  assertNoErrors(errors);
  assertNoErrors(fresh.errors);
});

test('a fit no better than the datasheet is shown, not applied, until Apply anyway', async () => {
  // Latencies that jump up and down with the rate: no constants explain them.
  const erratic = [[1, 900, 30], [2, 60, 9], [4, 2000, 40], [6, 150, 11]];
  const files = [];
  for (const [rate, ttft, tpot] of erratic) {
    const file = path.join(dir, `erratic-rate-${rate}.json`);
    await writeFile(file, vllmResult(rate, { ttft, tpot }));
    files.push(file);
  }
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="calibrate-panel"]' });
  await waitForRunDone(page);
  const hash = await page.evaluate(() => location.hash);
  await page.setInputFiles('[data-testid="calibrate-files"]', files);
  await page.waitForSelector('[data-testid="calibrate-found"][data-value="4"]');
  await page.click('[data-testid="calibrate-run"]');
  await page.waitForSelector('[data-testid="calibrate-held-out"][data-value]:not([data-value=""])', { timeout: RUN_TIMEOUT_MS });
  assert.equal(await page.getAttribute('[data-testid="calibrate-verdict"]', 'data-verdict'), 'no_better');
  assert.equal(await page.getAttribute('[data-testid="calibration-result"]', 'data-held'), 'true');
  assert.match(await page.textContent('[data-testid="calibrate-status"]'), /^Fitted, but no better than the datasheet constants.*not applied/);
  assert.match(await page.textContent('[data-testid="calibrate-in-force"]'), /^Not applied/);
  assert.equal(await page.locator('[data-testid="calibrate-toggle"]').count(), 0, 'no switch for a fit not in the plan');
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => location.hash), hash, 'the plan is unchanged');
  // Applied anyway, its constants are in force and the verdict says it does not earn its place.
  await page.click('[data-testid="calibrate-apply-anyway"]');
  await page.waitForSelector('[data-testid="calibration-result"][data-held="false"][data-enabled="true"]');
  assert.match(await page.textContent('[data-testid="calibrate-verdict"]'), /it does not earn its place\. Switch it off/);
  await page.waitForFunction((h0) => location.hash !== h0, hash);
  assertNoErrors(errors);
});

test('a bad file shows its one-line message and the cards stay as they were', async () => {
  const good = await writeResults([1]);
  const bad = path.join(dir, 'broken.json');
  await writeFile(bad, '{"request_rate": 2, "completed": "many"');
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="calibrate-panel"]' });
  await waitForRunDone(page);
  const before = await cards(page);
  const hash = await page.evaluate(() => location.hash);
  await page.setInputFiles('[data-testid="calibrate-files"]', [good[0], bad]);
  const msg = (await page.textContent('[data-testid="calibrate-error"]')).trim();
  assert.match(msg, /^broken\.json: /);
  assert.ok(!msg.includes('\n'), `one line: ${msg}`);
  assert.equal(await page.isDisabled('[data-testid="calibrate-run"]'), true, 'nothing to fit');
  // Pasting garbage says so too.
  await page.fill('[data-testid="calibrate-paste"]', 'not,a\nbenchmark');
  await page.click('[data-testid="calibrate-import"]');
  await page.waitForSelector('[data-testid="calibrate-error"]:has-text("pasted text")');
  await page.waitForTimeout(500);
  assert.equal(await page.evaluate(() => location.hash), hash, 'the plan in the address is unchanged');
  assert.deepEqual(await cards(page), before);
  assertNoErrors(errors);
});

test('files of another model are named before the fit, their fit waits for Apply anyway, and the note goes when the plan takes that model', async () => {
  const csv = path.join(path.dirname(new URL(import.meta.url).pathname), '../../validation/do-h200-llama70b-sharegpt/points.csv');
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="calibrate-panel"]' });
  await waitForRunDone(page);
  const hash = await page.evaluate(() => location.hash);
  await page.setInputFiles('[data-testid="calibrate-files"]', [csv]);
  await page.waitForSelector('[data-testid="calibrate-found"][data-value="8"]');
  const note = (await page.textContent('[data-testid="calibrate-model-mismatch"]')).trim();
  assert.match(note, /^The files ran .*Llama-3\.1-70B.* \(about 70B parameters by its name\), but the plan's model is Article 8B/);
  assert.equal(await page.evaluate(() => location.hash), hash, 'reading files changes no input');
  // Fitted anyway, the fit describes another model's server: it is shown, not applied.
  await page.click('[data-testid="calibrate-run"]');
  await page.waitForSelector('[data-testid="calibration-result"][data-held="true"]', { timeout: RUN_TIMEOUT_MS });
  assert.match(await page.textContent('[data-testid="calibrate-status"]'), /^Fitted, but to runs of another model than the plan's.*not applied/);
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => location.hash), hash, 'the plan is unchanged');
  await page.selectOption('[data-testid="preset-model"]', 'llama-3.1-70b');
  await page.waitForSelector('[data-testid="calibrate-model-mismatch"]', { state: 'detached' });
  assertNoErrors(errors);
});

test('a lighter run slower to first token than a heavier one is named before the fit, as calibrate warns', async () => {
  // The public MI300X run of DeepSeek-V3.1 with 8k inputs: 1.78 s mean TTFT at 16 clients,
  // 787 ms at 64.
  const csv = 'validation/sgl-mi300x8-deepseek-v31-8k1k/points.csv';
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="calibrate-panel"]' });
  await waitForRunDone(page);
  const hash = await page.evaluate(() => location.hash);
  await page.setInputFiles('[data-testid="calibrate-files"]', [path.join(path.dirname(new URL(import.meta.url).pathname), '../..', csv)]);
  await page.waitForSelector('[data-testid="calibrate-found"][data-value="3"]');
  const note = (await page.textContent('[data-testid="calibrate-ttft-falls"]')).trim();
  assert.match(note, /^The mean TTFT falls as the load rises: 1\.78 s at 16 clients \(points\.csv#2\), 787 ms at 64 clients \(points\.csv#3\)/);
  const cli = await runCliJson(['calibrate', csv, '--json']);
  const warned = cli.warnings.find((w) => w.startsWith('the mean TTFT falls'));
  assert.equal(note, `T${warned.slice(1)}.`);
  assert.equal(await page.evaluate(() => location.hash), hash, 'reading files changes no input');
  assertNoErrors(errors);
});
