// Compare GPUs in the browser: the comparison runs in the workers, ranks the options as
// the CLI does (bit for bit), one click makes a row the plan and the cards follow, and the
// share link carries the comparison to the finance view of a fresh browser.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertNoErrors, enter, inkOf, readValue, runCli, runCliJson, screenshot, SCREENSHOT_DIR, startHarness, waitForRerun, waitForRunDone } from './harness.mjs';

/** Longest wait for a search, a sweep or a whole comparison [ms]. */
const RUN_TIMEOUT_MS = 240_000;
/** The options compared: 3 GPUs × TP 1 and 2, on one node. */
const GPUS = ['h100-sxm', 'h200', 'l40s'];
const TPS = [1, 2];

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Every row of the comparison table, as the page shows it. */
async function rows(page) {
  return page.$$eval('[data-testid="shootout-row"]', (trs) =>
    trs.map((tr) => {
      const num = (id) => {
        const v = tr.querySelector(`[data-testid="${id}"]`)?.dataset.value ?? '';
        return v === '' ? null : Number(v);
      };
      return {
        gpu: tr.dataset.gpu,
        tp: Number(tr.dataset.tp),
        pp: Number(tr.dataset.pp),
        layout: tr.querySelector('[data-testid="shootout-layout"]')?.textContent ?? '',
        best: tr.classList.contains('best'),
        chosen: tr.classList.contains('chosen'),
        goodput: num('shootout-goodput'),
        gpus: num('shootout-gpus'),
        month: num('shootout-month'),
        perRequest: num('shootout-per-1k'),
      };
    }),
  );
}

test('comparing GPUs ranks like the CLI, a row becomes the plan, and the link carries it', async () => {
  // A quick plan: Llama 3.1 8B, short runs, few replications.
  const planFlags = ['--model', 'llama-3.1-8b', '--num-requests', '400', '--warmup-requests', '40', '--replications', '4', '--peak-rate', '40'];
  const link = (await runCli(['link', ...planFlags])).trim();
  const fragment = link.slice(link.indexOf('#'));
  const { page, errors } = await h.openPage(`/${fragment}&view=planner`, {
    waitFor: '[data-testid="shootout-panel"]',
    viewport: { width: 1440, height: 1000 },
  });
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseUrl });
  await page.emulateMedia({ colorScheme: 'light' });
  await waitForRunDone(page);

  // Pick the options: only the three GPUs, TP 1 and 2.
  const all = await page.$$eval('[data-testid^="shootout-gpu-"]', (els) => els.map((e) => e.dataset.testid.slice('shootout-gpu-'.length)));
  for (const id of all) {
    await page.setChecked(`[data-testid="shootout-gpu-${id}"]`, GPUS.includes(id));
  }
  for (const tp of [1, 2, 4, 8]) {
    await page.setChecked(`[data-testid="shootout-tp-${tp}"]`, TPS.includes(tp));
  }
  // Two nodes by default add TP 2 × PP 2 for each GPU; one node keeps six options.
  assert.equal((await page.textContent('[data-testid="shootout-run"]')).trim(), 'Compare 9 options');
  await page.selectOption('[data-testid="shootout-nodes"]', '1');
  assert.equal((await page.textContent('[data-testid="shootout-run"]')).trim(), 'Compare 6 options');
  await page.click('[data-testid="shootout-run"]');
  await page.waitForSelector('[data-testid="shootout-table"]', { timeout: RUN_TIMEOUT_MS });
  assert.match(await page.textContent('[data-testid="shootout-status"]'), /^Done/);
  const shown = await rows(page);
  assert.equal(shown.length, 6);
  // On a phone the table scrolls inside its box; the page itself does not scroll sideways.
  const viewport = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  // The charts redraw to the new width when their resize observers fire: wait for the
  // layout to settle (up to 5 s), then measure.
  await page
    .waitForFunction(() => document.documentElement.scrollWidth <= window.innerWidth, null, { timeout: 5_000, polling: 50 })
    .catch(() => {});
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(sideways <= 0, `the page scrolls ${sideways} px sideways at 390 px`);
  await page.setViewportSize(viewport);

  // The same ranking and numbers as `goodput shootout` on the same link, bit for bit.
  const cli = await runCliJson(['shootout', '--link', link, '--gpus', GPUS.join(','), '--tp', TPS.join(','), '--nodes', '1', '--json']);
  assert.deepEqual(
    shown.map((r) => `${r.gpu}/${r.tp}`),
    cli.rows.map((r) => `${r.gpu}/${r.tp}`),
    'the same order',
  );
  shown.forEach((r, i) => {
    const c = cli.rows[i];
    assert.equal(r.goodput, c.goodput_rps, `${r.gpu}/${r.tp} goodput`);
    assert.equal(r.gpus, c.gpus_total, `${r.gpu}/${r.tp} GPUs`);
    assert.equal(r.month, c.cost_per_month_usd, `${r.gpu}/${r.tp} cost per month`);
    assert.equal(r.perRequest, c.cost_per_compliant_request_usd, `${r.gpu}/${r.tp} cost per request`);
  });
  assert.ok(shown[0].best, 'the first row is the cheapest');
  assert.equal(`${shown[0].gpu}/${shown[0].tp}`, `${cli.best.gpu}/${cli.best.tp}`);
  // Ranked by the fleet's monthly cost; cost per compliant request breaks ties.
  const costs = shown.filter((r) => r.perRequest !== null).map((r) => [r.month, r.perRequest]);
  assert.ok(costs.length >= 3, `sized options: ${JSON.stringify(shown)}`);
  const byCost = (a, b) => a[0] - b[0] || a[1] - b[1];
  assert.deepEqual(costs, [...costs].sort(byCost), 'ranked by monthly cost, then cost per compliant request');
  assert.ok(shown.find((r) => r.gpu === 'h100-sxm' && r.tp === 1).chosen, 'the plan\'s own option is marked');
  assert.match(await page.textContent('[data-testid="shootout-verdict"]'), /^cheapest option /);

  // The chart draws the cheapest option in the "best" colour (light theme #047857).
  await page.locator('[data-testid="shootout-chart"]').scrollIntoViewIfNeeded();
  const best = await inkOf(page, 'shootout-chart', [0x04, 0x78, 0x57]);
  assert.ok(best >= 40, `the cheapest option's marker is drawn (${best} pixels)`);
  await page.locator('[data-testid="shootout-panel"]').screenshot({ path: path.join(SCREENSHOT_DIR, 'shootout-panel.png') });

  // An option with no fleet has nothing to use; its note says why.
  for (const r of shown.filter((r) => r.perRequest === null)) {
    const row = `[data-testid="shootout-row"][data-gpu="${r.gpu}"][data-tp="${r.tp}"]`;
    assert.equal(await page.isDisabled(`${row} [data-testid="shootout-use"]`), true, `${r.gpu}/${r.tp} cannot be used`);
    assert.notEqual((await page.textContent(`${row} .note`)).trim(), '', `${r.gpu}/${r.tp} says why`);
  }
  // One click makes a row the plan: the cards follow, to the row's own numbers.
  const target = shown.find((r) => !r.chosen && r.perRequest !== null);
  const gpusBefore = await readValue(page, 'gpus-total');
  await page.click(`[data-testid="shootout-row"][data-gpu="${target.gpu}"][data-tp="${target.tp}"] [data-testid="shootout-use"]`);
  await page
    .waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.dataset.phase !== 'done', null, { timeout: 3_000, polling: 20 })
    .catch(() => {});
  await waitForRunDone(page);
  assert.equal(await readValue(page, 'gpus-total'), target.gpus);
  assert.equal(await readValue(page, 'cost-per-month-usd'), target.month);
  assert.equal(await readValue(page, 'goodput-rps'), target.goodput);
  const after = await rows(page);
  assert.ok(after.find((r) => r.gpu === target.gpu && r.tp === target.tp).chosen, 'the new choice is marked');
  assert.equal(await page.locator('[data-testid="shootout-stale"]').count(), 0, 'still fresh: only the GPU changed');
  await screenshot(page, 'shootout-after-use');

  // The link carries the comparison: a fresh browser's finance view names the winner.
  await page.click('[data-testid="copy-link"]');
  await page.waitForSelector('[data-testid="copy-link"]:has-text("Copied")');
  const shared = await page.evaluate(() => navigator.clipboard.readText());
  const fresh = await h.openPage(`/${shared.slice(shared.indexOf('#'))}`, { waitFor: '[data-testid="finance-view"]' });
  const words = await fresh.page.textContent('[data-testid="finance-shootout"]');
  assert.match(words, /^Compared over 6 GPU and layout options: cheapest option .+ at \$[0-9,]+ a month \(\$[0-9.]+\/1k compliant requests, \d+ GPUs\)/);
  if (!target.best) assert.match(words, /, chosen .+ × TP\d at \$/);
  // Its planner shows the rows the link carries, the cheapest and the plan's own, with
  // their numbers, and says that the others were left out.
  const planner = await h.openPage(`/${shared.slice(shared.indexOf('#'))}&view=planner`, {
    waitFor: '[data-testid="shootout-table"]',
  });
  const carried = await rows(planner.page);
  const kept = [shown[0], target].filter((r, i, all) => all.indexOf(r) === i);
  assert.deepEqual(
    carried.map((r) => `${r.gpu}/${r.tp}/${r.month}/${r.best}/${r.chosen}`),
    kept.map((r) => `${r.gpu}/${r.tp}/${r.month}/${r.best}/${r.gpu === target.gpu && r.tp === target.tp}`),
  );
  const others = 6 - kept.length;
  assert.match(
    await planner.page.textContent('[data-testid="shootout-omitted"]'),
    new RegExp(`: ${others} other options? compared (was|were) left out`),
  );

  // Using a row replaces the plan's GPU and TP: Undo takes it back.
  await page.click('[data-testid="undo"]');
  await waitForRerun(page, { mayHaveFinished: true });
  assert.equal(await readValue(page, 'gpus-total'), gpusBefore, 'Undo restores the GPU and TP before the row was used');
  assert.ok((await rows(page)).find((r) => r.gpu === target.gpu && r.tp === target.tp).chosen === false, 'the row is no longer the choice');

  // An edit the numbers depend on marks the comparison as out of date.
  await page.fill('[data-testid="input-traffic.peak_rate_rps"]', '45');
  await page.waitForSelector('[data-testid="shootout-stale"]', { timeout: 10_000 });
  // A reload of the own plan keeps every row, though the address carries two.
  await page.waitForFunction(() => (localStorage.getItem('goodput.current.v1') ?? '').includes('"peak_rate_rps":45'));
  await page.reload();
  await page.waitForSelector('[data-testid="shootout-table"]', { timeout: RUN_TIMEOUT_MS });
  assert.equal((await rows(page)).length, 6, 'every row after a reload');
  assert.equal(await page.locator('[data-testid="shootout-omitted"]').count(), 0);
  assert.equal(await page.locator('[data-testid="shared-banner"]').count(), 0, 'the own plan, not a visit');
  assertNoErrors(errors);
  assertNoErrors(fresh.errors);
  assertNoErrors(planner.errors);
});

test('a model too big for the plan GPU is still compared, and a row that fits makes the plan valid', async () => {
  // Llama 3.1 70B on one H100 leaves no room for a KV cache: the plan is refused.
  const planFlags = ['--num-requests', '400', '--warmup-requests', '40', '--replications', '4', '--peak-rate', '10'];
  const link = (await runCli(['link', ...planFlags])).trim();
  const { page, errors } = await h.openPage(`/${link.slice(link.indexOf('#'))}&view=planner`, {
    waitFor: '[data-testid="shootout-panel"]',
  });
  await waitForRunDone(page);
  await page.selectOption('[data-testid="preset-model"]', 'llama-3.1-70b');
  await page.waitForSelector('[data-testid="problem-banner"]');
  const all = await page.$$eval('[data-testid^="shootout-gpu-"]', (els) => els.map((e) => e.dataset.testid.slice('shootout-gpu-'.length)));
  for (const id of all) await page.setChecked(`[data-testid="shootout-gpu-${id}"]`, id === 'h100-sxm');
  for (const tp of [1, 2, 4, 8]) await page.setChecked(`[data-testid="shootout-tp-${tp}"]`, false);
  assert.equal(await page.textContent('[data-testid="shootout-run"]'), 'Tick a GPU and a TP degree to compare');
  assert.equal(await page.isDisabled('[data-testid="shootout-run"]'), true);
  for (const tp of [1, 4]) await page.setChecked(`[data-testid="shootout-tp-${tp}"]`, true);
  // Up to two nodes (the default): TP 4 also runs with two pipeline stages.
  assert.equal((await page.textContent('[data-testid="shootout-run"]')).trim(), 'Compare 3 options');
  await page.click('[data-testid="shootout-run"]');
  await page.waitForSelector('[data-testid="shootout-table"]', { timeout: RUN_TIMEOUT_MS });
  const shown = await rows(page);
  const tp1 = shown.find((r) => r.tp === 1);
  const tp4 = shown.find((r) => r.tp === 4 && r.pp === 1);
  const staged = shown.find((r) => r.tp === 4 && r.pp === 2);
  assert.equal(tp1.goodput, 0, 'TP 1 does not fit');
  assert.match(await page.textContent('[data-testid="shootout-row"][data-tp="1"] .note'), /weights do not fit/);
  assert.ok(tp4.goodput > 0 && tp4.perRequest !== null, `TP 4 fits and is ranked: ${JSON.stringify(tp4)}`);
  assert.equal(staged.layout, 'TP4 × PP2 (1 node)');
  assert.ok(staged.goodput > 0 && staged.gpus % 8 === 0, `TP 4 × PP 2 is sized in replicas of 8 GPUs: ${JSON.stringify(staged)}`);
  // Its numbers are `goodput shootout`'s for the same plan, bit for bit.
  const cli = await runCliJson(['shootout', '--link', link, '--model', 'llama-3.1-70b', '--gpus', 'h100-sxm', '--tp', '1,4', '--json']);
  const cliStaged = cli.rows.find((r) => r.tp === 4 && r.pp === 2);
  assert.equal(staged.goodput, cliStaged.goodput_rps);
  assert.equal(staged.month, cliStaged.cost_per_month_usd);
  // Using a row makes the plan valid again; the cards follow. The staged row sets both
  // degrees, and the hardware shows the replica over its stages.
  await page.click('[data-testid="shootout-row"][data-tp="4"][data-pp="2"] [data-testid="shootout-use"]');
  await page.waitForSelector('[data-testid="problem-banner"]', { state: 'detached' });
  assert.equal(await page.inputValue('[data-testid="input-hardware.tp_degree"]'), '4');
  assert.equal(await page.inputValue('[data-testid="input-hardware.pp_degree"]'), '2');
  assert.match(await page.textContent('[data-testid="replica-words"]'), /^8 GPUs a replica: 2 pipeline stages of 4 GPUs, on 1 node of 8\.$/);
  assert.equal(await page.locator('[data-testid="replica-diagram"] .gpu').count(), 8);
  await waitForRunDone(page);
  assert.equal(await readValue(page, 'gpus-total'), staged.gpus);
  await page.click('[data-testid="shootout-row"][data-tp="4"][data-pp="1"] [data-testid="shootout-use"]');
  await waitForRerun(page, { mayHaveFinished: true });
  assert.equal(await page.inputValue('[data-testid="input-hardware.pp_degree"]'), '1');
  await waitForRunDone(page);
  assertNoErrors(errors);
});

test('each option with and without speculation: rows equal the CLI, and using the other speculation keeps the comparison', async () => {
  // A plan that drafts 3 tokens at 0.7 a token, on one GPU at TP 1 and 2.
  const planFlags = ['--model', 'llama-3.1-8b', '--num-requests', '400', '--warmup-requests', '40', '--replications', '4', '--peak-rate', '40', '--spec-draft-tokens', '3', '--spec-acceptance', '0.7'];
  const link = (await runCli(['link', ...planFlags])).trim();
  const { page, errors } = await h.openPage(`/${link.slice(link.indexOf('#'))}&view=planner`, {
    waitFor: '[data-testid="shootout-panel"]',
  });
  await waitForRunDone(page);
  const all = await page.$$eval('[data-testid^="shootout-gpu-"]', (els) => els.map((e) => e.dataset.testid.slice('shootout-gpu-'.length)));
  for (const id of all) await page.setChecked(`[data-testid="shootout-gpu-${id}"]`, id === 'h200');
  for (const tp of [1, 2, 4, 8]) await page.setChecked(`[data-testid="shootout-tp-${tp}"]`, tp <= 2);
  await page.setChecked('[data-testid="shootout-speculation"]', true);
  await page.selectOption('[data-testid="shootout-nodes"]', '1');
  assert.equal((await page.textContent('[data-testid="shootout-run"]')).trim(), 'Compare 4 options');
  await page.click('[data-testid="shootout-run"]');
  await page.waitForSelector('[data-testid="shootout-table"]', { timeout: RUN_TIMEOUT_MS });
  const drafts = await page.$$eval('[data-testid="shootout-row"]', (trs) => trs.map((tr) => `${tr.dataset.tp}/${tr.dataset.draft}`));
  assert.deepEqual([...drafts].sort(), ['1/0', '1/3', '2/0', '2/3']);

  // The same rows as `goodput shootout --speculation`, bit for bit.
  const cli = await runCliJson(['shootout', '--link', link, '--gpus', 'h200', '--tp', '1,2', '--nodes', '1', '--speculation', '--json']);
  assert.deepEqual(drafts, cli.rows.map((r) => `${r.tp}/${r.spec_draft_tokens ?? 0}`), 'the same order');
  const shown = await rows(page);
  shown.forEach((r, i) => assert.equal(r.goodput, cli.rows[i].goodput_rps, `${drafts[i]} goodput`));

  // Using the row without speculation turns the plan's draft off; the comparison stays fresh.
  await page.click('[data-testid="shootout-row"][data-tp="1"][data-draft="0"] [data-testid="shootout-use"]');
  await waitForRerun(page, { mayHaveFinished: true });
  assert.equal(await page.inputValue('[data-testid="input-engine.spec_draft_tokens"]'), '0');
  assert.equal(await page.locator('[data-testid="shootout-stale"]').count(), 0, 'both speculations were compared');
  assert.ok(await page.locator('[data-testid="shootout-row"][data-tp="1"][data-draft="0"].chosen').count(), 'the row used is the choice');
  assertNoErrors(errors);
});

test('an edit the numbers depend on stops a running comparison, and one they do not keeps it', async () => {
  const planFlags = ['--model', 'llama-3.1-8b', '--num-requests', '400', '--warmup-requests', '40', '--replications', '4', '--peak-rate', '40'];
  const link = (await runCli(['link', ...planFlags])).trim();
  const { page, errors } = await h.openPage(`/${link.slice(link.indexOf('#'))}&view=planner`, {
    waitFor: '[data-testid="shootout-panel"]',
  });
  await waitForRunDone(page);
  const status = () => page.textContent('[data-testid="shootout-status"]');
  // Every GPU and TP degree: long enough to edit while it runs.
  for (const box of await page.$$('[data-testid^="shootout-gpu-"], [data-testid^="shootout-tp-"]')) {
    await box.setChecked(true);
  }
  const simulating = () =>
    page.waitForFunction(() => /^Simulating/.test(document.querySelector('[data-testid="shootout-status"]')?.textContent ?? ''), null, { timeout: 30_000 });
  // The output cap is a number of the comparison: it stops at once and says why. The
  // edit comes as soon as the comparison runs, so that it cannot have finished first
  // on a loaded machine.
  await page.click('[data-testid="shootout-run"]');
  await simulating();
  await enter(page, 'traffic.output.max', '900');
  await page.waitForFunction(() => /^Cancelled/.test(document.querySelector('[data-testid="shootout-status"]')?.textContent ?? ''), null, { timeout: 10_000 });
  assert.match(await status(), /the plan changed while the GPUs were compared/);
  assert.equal(await page.$('[data-testid="shootout-table"]'), null, 'no table from the stopped comparison');
  // The plan's name is no number of the comparison: it runs on (or has finished).
  await page.click('[data-testid="shootout-run"]');
  await simulating();
  await page.fill('[data-testid="input-name"]', 'Renamed while comparing');
  await page.waitForTimeout(300);
  assert.doesNotMatch(await status(), /^Cancelled/);
  assertNoErrors(errors);
  await page.close();
});

test('rows a calibration carries to another vendor\'s GPU are named under the table, as the CLI names them', async () => {
  // Fitted on the public H200 runs of Llama 3.1 70B FP8 (validation/), then compared with
  // an MI300X: that row carries NVIDIA's measurements to AMD's software.
  const served = await runCli(['validate', '--plan-of', 'do-h200-llama70b-sharegpt']);
  const dir = await mkdtemp(path.join(tmpdir(), 'goodput-vendor-'));
  const planFile = path.join(dir, 'calibrated.json');
  await runCli([
    'calibrate', 'validation/do-h200-llama70b-sharegpt/points.csv', '--plan', '-',
    '--num-requests', '300', '--warmup-requests', '30', '--replications', '2', '--peak-rate', '5',
    '--out', planFile,
  ], { input: served });
  const link = (await runCli(['link', '--plan', planFile])).trim();
  const fragment = link.slice(link.indexOf('#'));
  const { page, errors } = await h.openPage(`/${fragment}&view=planner`, { waitFor: '[data-testid="shootout-panel"]' });
  await waitForRunDone(page);
  const all = await page.$$eval('[data-testid^="shootout-gpu-"]', (els) => els.map((e) => e.dataset.testid.slice('shootout-gpu-'.length)));
  for (const id of all) {
    await page.setChecked(`[data-testid="shootout-gpu-${id}"]`, ['h200', 'mi300x'].includes(id));
  }
  for (const tp of [1, 2, 4, 8]) {
    await page.setChecked(`[data-testid="shootout-tp-${tp}"]`, tp === 1);
  }
  await page.selectOption('[data-testid="shootout-nodes"]', '1');
  await page.click('[data-testid="shootout-run"]');
  await page.waitForSelector('[data-testid="shootout-table"]', { timeout: RUN_TIMEOUT_MS });
  const shown = (await page.textContent('[data-testid="shootout-vendor-carry"]')).trim();
  const cli = await runCliJson(['shootout', '--link', link, '--gpus', 'h200,mi300x', '--tp', '1', '--nodes', '1', '--json']);
  assert.equal(shown, cli.caution);
  assert.match(shown, /^The rows on MI300X carry a calibration fitted on NVIDIA H200/);
  assertNoErrors(errors);
  await rm(dir, { recursive: true, force: true });
});
