// Acting on the advice and keeping the user's work: apply the knob sweep's best
// settings (from the card, from a heatmap cell by pointer and by keyboard), the prompt
// to re-tune after a change of GPU, a strict "Load plan JSON", and Undo.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { assertNoErrors, findNumber, knobsOf, planInAddress, readValue, runCli, runCliJson, screenshot, startHarness, waitForRerun, waitForRunDone } from './harness.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** The plan's knobs as the inputs show them. */
async function knobsShown(page) {
  return {
    seqs: Number(await page.inputValue('[data-testid="input-engine.max_num_seqs"]')),
    budget: Number(await page.inputValue('[data-testid="input-engine.max_num_batched_tokens"]')),
  };
}

/** The cost the CLI finds for the plan in the page's address (no sweep needed). */
async function cliCost(page) {
  const link = await page.evaluate(() => location.href);
  return findNumber(await runCliJson(['plan', '--link', link, '--json', '--no-sweep']), 'cost_per_month_usd');
}

async function assertPlanKnobs(page, want) {
  const shown = await knobsShown(page);
  assert.deepEqual(shown, { seqs: want.seqs, budget: want.budget }, 'the inputs show the applied settings');
  const plan = await planInAddress(page);
  assert.equal(plan.engine.max_num_seqs, want.seqs, 'the link carries max_num_seqs');
  assert.equal(plan.engine.max_num_batched_tokens, want.budget, 'the link carries the budget');
  assert.equal(plan.engine.chunked_prefill, want.chunked, 'the link carries chunked prefill');
}

test('a heatmap cell applies its settings by click and by keyboard; Apply brings back the best', async () => {
  const { page, errors } = await h.openPlanner();
  const cost0 = await readValue(page, 'cost-per-month-usd');
  const best = await knobsOf(page, '[data-testid="best-settings"]');
  const cells = await page.$$('[data-testid^="heatmap-cell-"]');
  assert.equal(cells.length, 36, 'one focusable cell per grid point');

  // A click on the fewest-sequences, smallest-budget cell plans at its settings.
  const corner = '[data-testid="heatmap-cell-0-0"]';
  const cornerKnobs = await knobsOf(page, corner);
  assert.notDeepEqual(cornerKnobs, best);
  await page.click(corner);
  await waitForRerun(page);
  await assertPlanKnobs(page, cornerKnobs);
  const cost1 = await readValue(page, 'cost-per-month-usd');
  assert.notEqual(cost1, cost0, 'the cost follows the settings');
  assert.equal(cost1, await cliCost(page), 'the cost card is the CLI cost at the new settings');
  assert.match(await page.getAttribute(corner, 'class'), /\bcurrent\b/, 'the cell in use is marked');
  await screenshot(page, 'advice-heatmap-applied');

  // Keyboard: the cell is focusable; arrows move across rows and columns; Enter applies.
  await page.focus(corner);
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'heatmap-cell-1-1');
  assert.match(await page.textContent('[data-testid="chart-heatmap-readout"]'), /max_num_seqs \d+, max_num_batched_tokens \d+: goodput/);
  await page.keyboard.press('End');
  await page.keyboard.press('ArrowUp');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'heatmap-cell-2-5');
  await page.keyboard.press('ArrowLeft');
  const keyed = await knobsOf(page, '[data-testid="heatmap-cell-2-4"]');
  await page.keyboard.press('Enter');
  await waitForRerun(page);
  await assertPlanKnobs(page, keyed);
  assert.equal(await readValue(page, 'cost-per-month-usd'), await cliCost(page));

  // Apply on the card: back to the sweep's best; the button then says so.
  const apply = '[data-testid="apply-best"]';
  assert.equal(await page.isEnabled(apply), true);
  await page.click(apply);
  await waitForRerun(page);
  await assertPlanKnobs(page, best);
  const cost2 = await readValue(page, 'cost-per-month-usd');
  assert.equal(cost2, await cliCost(page), 'the cost card is the CLI cost at the best settings');
  assert.equal(await page.isEnabled(apply), false);
  assert.equal((await page.textContent(apply)).trim(), 'In use');
  assertNoErrors(errors);
});

test('after a GPU change the page offers to re-tune the stale settings in one click', async () => {
  const { page, errors } = await h.openPlanner();
  const before = await knobsShown(page);
  assert.equal(await page.$('[data-testid="retune-prompt"]'), null, 'no prompt for the settings as set');
  await page.selectOption('[data-testid="preset-gpu"]', 'l40s');
  await waitForRerun(page);
  const prompt = await page.waitForSelector('[data-testid="retune-prompt"]');
  assert.match(await prompt.textContent(), /before the GPU \(NVIDIA H100 SXM 80GB → NVIDIA L40S 48GB\) changed/);
  const best = await knobsOf(page, '[data-testid="best-settings"]');
  assert.notDeepEqual({ seqs: best.seqs, budget: best.budget }, before, 'the sweep of the new GPU prefers other settings');
  await screenshot(page, 'advice-retune-prompt');
  const cost0 = await readValue(page, 'cost-per-month-usd');
  await page.click('[data-testid="retune"]');
  await waitForRerun(page);
  await assertPlanKnobs(page, best);
  assert.equal(await page.$('[data-testid="retune-prompt"]'), null, 'the prompt goes once re-tuned');
  const cost1 = await readValue(page, 'cost-per-month-usd');
  assert.notEqual(cost1, cost0);
  assert.equal(cost1, await cliCost(page));
  assertNoErrors(errors);
});

test('a file that is not a plan is refused by name and the plan is untouched; Undo takes back replaces', async () => {
  const { page, errors } = await h.openPlanner();
  const cost0 = await readValue(page, 'cost-per-month-usd');
  const url0 = await page.evaluate(() => location.href);
  const gpu0 = await page.inputValue('[data-testid="input-hardware.mem_bandwidth_bytes_per_s"]');
  assert.equal(await page.isEnabled('[data-testid="undo"]'), false, 'nothing to undo yet');

  const dir = await mkdtemp(path.join(os.tmpdir(), 'goodput-advice-'));
  try {
    const message = '[data-testid="export-message"]';
    const hello = path.join(dir, 'hello.json');
    await writeFile(hello, '{"hello":1}');
    await page.setInputFiles('[data-testid="load-plan-json"]', hello);
    await page.waitForSelector(`${message}.error`);
    assert.match(await page.textContent(message), /^hello\.json: unknown field "hello".*Your plan is unchanged\.$/);
    // The CLI's report is not a plan either.
    const report = path.join(dir, 'report.json');
    await writeFile(report, await runCli(['plan', '--json', '--no-sweep']));
    await page.setInputFiles('[data-testid="load-plan-json"]', report);
    await page.waitForSelector(`${message}:has-text("report.json")`);
    assert.match(await page.textContent(message), /goodput report \(the output of `goodput plan --json`/);
    // A file with none of a plan's sections is named too.
    const nameOnly = path.join(dir, 'name-only.json');
    await writeFile(nameOnly, '{"name": "x"}');
    await page.setInputFiles('[data-testid="load-plan-json"]', nameOnly);
    await page.waitForSelector(`${message}:has-text("name-only.json")`);
    assert.match(await page.textContent(message), /missing sections "model", "hardware"/);
    await screenshot(page, 'advice-load-refused');
    assert.equal(await page.getAttribute('[data-testid="run-status"]', 'data-phase'), 'done', 'nothing re-ran');
    assert.equal(await readValue(page, 'cost-per-month-usd'), cost0, 'the cost card is unchanged');
    assert.equal(await page.evaluate(() => location.href), url0, 'the plan is unchanged');
    assert.equal(await page.isEnabled('[data-testid="undo"]'), false, 'a refused file is no step');
    // A plan with some sections loads, as the CLI's --plan takes it: the rest are defaults, and it says so.
    const partial = path.join(dir, 'partial.json');
    await writeFile(partial, '{"run": {"replications": 4}}');
    await page.setInputFiles('[data-testid="load-plan-json"]', partial);
    await page.waitForSelector(`${message}:has-text("partial.json")`);
    assert.equal(
      await page.textContent(message),
      'Loaded partial.json; it has no “model”, “hardware”, “traffic”, “slo”, “engine”, “planning” sections, which take their defaults. Undo takes it back.',
    );
    assert.equal(await page.inputValue('[data-testid="input-run.replications"]'), '4');
    await page.click('[data-testid="undo"]');
    await page.waitForFunction((u) => location.href === u, url0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  // Two presets, then Undo twice: each takes one back, down to the plan we started with.
  await page.selectOption('[data-testid="preset-gpu"]', 'h200');
  await page.waitForFunction((v) => document.querySelector('[data-testid="input-hardware.mem_bandwidth_bytes_per_s"]').value !== v, gpu0);
  const url1 = await page.evaluate(() => location.href);
  await page.selectOption('[data-testid="preset-model"]', 'mixtral-8x7b');
  await page.waitForFunction((u) => location.href !== u, url1);
  assert.match(await page.getAttribute('[data-testid="undo"]', 'title'), /^Undo: model preset .*2 steps kept/);
  await page.click('[data-testid="undo"]');
  await page.waitForFunction((u) => location.href === u, url1);
  assert.equal(await page.inputValue('[data-testid="preset-model"]'), 'article-8b');
  await page.click('[data-testid="undo"]');
  await page.waitForFunction((u) => location.href === u, url0);
  assert.equal(await page.inputValue('[data-testid="input-hardware.mem_bandwidth_bytes_per_s"]'), gpu0);
  assert.equal(await page.isEnabled('[data-testid="undo"]'), false);
  await waitForRunDone(page);
  assert.equal(await readValue(page, 'cost-per-month-usd'), cost0, 'the first plan, the first cost');
  assertNoErrors(errors);
});

test('a plan has a name and a note: carried in the link, shown in the summary, naming the exports; no re-run', async () => {
  const { page, errors } = await h.openPlanner();
  const url0 = await page.evaluate(() => location.href);
  await page.fill('[data-testid="input-name"]', 'Chat fleet EU');
  await page.fill('[data-testid="input-note"]', 'Peak from the launch week.');
  await page.waitForFunction((u) => location.href !== u, url0);
  await page.waitForTimeout(500);
  assert.equal(await page.getAttribute('[data-testid="run-status"]', 'data-phase'), 'done', 'a name re-runs nothing');
  const plan = await planInAddress(page);
  assert.equal(plan.name, 'Chat fleet EU');
  assert.equal(plan.note, 'Peak from the launch week.');
  const [json] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-plan-json"]')]);
  assert.equal(json.suggestedFilename(), 'goodput-chat-fleet-eu.json');
  await page.click('[data-testid="view-finance"]');
  await page.waitForSelector('[data-testid="finance-view"]');
  assert.equal((await page.textContent('[data-testid="plan-title"]')).trim(), 'Chat fleet EU');
  assert.equal((await page.textContent('[data-testid="plan-note"]')).trim(), 'Peak from the launch week.');
  await screenshot(page, 'advice-named-summary');
  // The embed card names it too.
  const link = await page.evaluate(() => location.href);
  const embed = await h.openPage(`/${link.slice(link.indexOf('#')).replace(/&view=[a-z]+/, '')}&embed`, {
    waitFor: '[data-testid="embed-view"]',
    viewport: { width: 320, height: 600 },
  });
  assert.equal((await embed.page.textContent('[data-testid="plan-title"]')).trim(), 'Chat fleet EU');
  assert.equal((await embed.page.textContent('[data-testid="plan-note"]')).trim(), 'Peak from the launch week.');
  // Under its name, what it is about: the model, the GPU and the peak.
  assert.match((await embed.page.textContent('[data-testid="embed-setup"]')).trim(), /^.+ on .+, \d+(\.\d+)? req\/s peak$/);
  await screenshot(embed.page, 'advice-named-embed');
  assertNoErrors(embed.errors);
  assertNoErrors(errors);
});
