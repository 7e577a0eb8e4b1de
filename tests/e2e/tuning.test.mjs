// Planning at the knob sweep's best, editing the sweep's grid and fitting it to the
// plan, and the note that says why the sweep's cell and the card's goodput differ.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoErrors, enter, findNumber, knobsOf, planInAddress, readValue, runCliJson, runsStarted, screenshot, startHarness, waitForRerun } from './harness.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** A plan's (or a search's) engine settings in the shape `knobsOf` reads them. */
const knobsOfPlan = ({ engine: e }) => ({ seqs: e.max_num_seqs, budget: e.max_num_batched_tokens, chunked: e.chunked_prefill });

test('plan at the sweep\'s best: the best is applied, the cards follow, Undo takes it back, the link keeps it', async () => {
  const { page, errors } = await h.openPlanner();
  const best = await knobsOf(page, '[data-testid="best-settings"]');
  // Move off the best first: the corner cell of the grid.
  const corner = '[data-testid="heatmap-cell-0-0"]';
  const cornerKnobs = await knobsOf(page, corner);
  assert.notDeepEqual(cornerKnobs, best);
  await page.click(corner);
  await waitForRerun(page);
  const costCorner = await readValue(page, 'cost-per-month-usd');
  assert.equal(await page.$('[data-testid="planned-at-best-note"]'), null, 'no note while off');

  const runs0 = await runsStarted(page);
  await page.check('[data-testid="plan-at-best"]');
  await waitForRerun(page);
  assert.equal(await runsStarted(page), runs0 + 1, 'one search at the new settings, no sweep again');
  assert.equal(await page.$$eval('[data-testid^="heatmap-cell-"]', (c) => c.length), 36, 'the same sweep');
  const plan = await planInAddress(page);
  assert.equal(plan.run.plan_at_best, true, 'the link carries the switch');
  assert.deepEqual(knobsOfPlan(plan), best, 'the plan holds the sweep\'s best');
  const note = (await page.textContent('[data-testid="planned-at-best-note"]')).trim();
  assert.equal(note, `Planned at the sweep's best: ${best.seqs} sequences × ${best.budget} tokens.`);
  const costBest = await readValue(page, 'cost-per-month-usd');
  assert.notEqual(costBest, costCorner, 'the cards follow the best settings');
  // The CLI plans the same link at the same cell, to the dollar.
  const link = await page.evaluate(() => location.href);
  const report = await runCliJson(['plan', '--link', link, '--json']);
  assert.deepEqual(knobsOfPlan({ engine: report.search.knobs }), best);
  assert.equal(findNumber(report, 'cost_per_month_usd'), costBest, 'page = CLI');
  await screenshot(page, 'tuning-plan-at-best');

  // Undo: the switch and the settings go back together, and stay back.
  await page.click('[data-testid="undo"]');
  await waitForRerun(page);
  assert.equal(await page.isChecked('[data-testid="plan-at-best"]'), false);
  assert.deepEqual(knobsOfPlan(await planInAddress(page)), cornerKnobs);
  assert.equal(await readValue(page, 'cost-per-month-usd'), costCorner);
  await page.waitForTimeout(800);
  assert.deepEqual(knobsOfPlan(await planInAddress(page)), cornerKnobs, 'nothing re-applies it');

  // The link opened afresh keeps the switch and the numbers.
  const fresh = await h.openPlanner(`/${link.slice(link.indexOf('#'))}`);
  assert.equal(await fresh.page.isChecked('[data-testid="plan-at-best"]'), true);
  assert.equal(await readValue(fresh.page, 'cost-per-month-usd'), costBest);
  assert.match(await fresh.page.textContent('[data-testid="planned-at-best-note"]'), /^Planned at the sweep's best/);
  assertNoErrors(fresh.errors);

  // While on, a change of GPU is planned at the new sweep's best, without a click.
  await fresh.page.selectOption('[data-testid="preset-gpu"]', 'h200');
  await fresh.page.waitForFunction(
    () => /^Planned at the sweep's best/.test(document.querySelector('[data-testid="planned-at-best-note"]')?.textContent ?? '')
      && document.querySelector('[data-testid="run-status"]')?.dataset.phase === 'done'
      && document.querySelector('[data-testid="apply-best"]')?.disabled,
    null,
    { timeout: 240_000, polling: 200 },
  );
  const h200best = await knobsOf(fresh.page, '[data-testid="best-settings"]');
  assert.deepEqual(knobsOfPlan(await planInAddress(fresh.page)), h200best);
  // Undo takes that step back, and the same sweep does not apply it again.
  assert.match(await fresh.page.getAttribute('[data-testid="undo"]', 'title'), /^Undo: plan at the sweep's best/);
  await fresh.page.click('[data-testid="undo"]');
  await waitForRerun(fresh.page);
  await fresh.page.waitForTimeout(800);
  assert.deepEqual(knobsOfPlan(await planInAddress(fresh.page)), best, 'the settings before the apply');
  assert.match(await fresh.page.textContent('[data-testid="planned-at-best-note"]'), /^Your settings \(max_num_seqs \d+, budget \d+\) differ from the sweep's best/);
  assertNoErrors(errors);
});

test('when no setting meets the SLO, none is offered to apply and the card says why', async () => {
  const { page, errors } = await h.openPlanner();
  // A TPOT objective of 0.5 ms: below any decode step of this model on this GPU.
  await enter(page, 'slo.tpot_s', '0.5');
  await waitForRerun(page);
  assert.match(await page.textContent('[data-testid="best-goodput-rps"]'), /^0 req\/s: no setting tried meets the SLO/);
  assert.equal(await page.isEnabled('[data-testid="apply-best"]'), false, 'nothing to apply');
  assert.equal(await page.$('[data-testid="retune-prompt"]'), null, 'no re-tune prompt');
  assertNoErrors(errors);
});

test('the grid is edited as lists, refused in the user\'s words, and fitted to the plan in one click', async () => {
  const { page, errors } = await h.openPlanner();
  await page.click('[data-testid="knob-grid"] summary');
  const seqs = 'run.sweep_max_num_seqs';
  const budgets = 'run.sweep_batched_tokens';
  assert.equal(await page.inputValue(`[data-testid="input-${seqs}"]`), '16, 32, 64, 128, 256, 512');

  // A value out of range, and a word: refused under the field, nothing runs.
  const runs0 = await runsStarted(page);
  await enter(page, seqs, '16, 0');
  assert.equal((await page.textContent(`[data-testid="error-${seqs}"]`)).trim(), '0 is outside 1–16,384 seqs');
  await enter(page, budgets, '256, lots');
  assert.match(await page.textContent(`[data-testid="error-${budgets}"]`), /^'lots' is not a whole number/);
  await page.waitForTimeout(600);
  assert.equal(await runsStarted(page), runs0, 'a refused list runs nothing');

  // A list that reads: sorted, applied, the sweep re-runs over it.
  await enter(page, seqs, '256 16,64');
  await waitForRerun(page);
  assert.equal(await page.inputValue(`[data-testid="input-${seqs}"]`), '16, 64, 256');
  assert.equal((await page.textContent(`[data-testid="error-${seqs}"]`)).trim(), '');
  assert.equal(await page.$$eval('[data-testid^="heatmap-cell-"]', (c) => c.length), 18);
  assert.deepEqual((await planInAddress(page)).run.sweep_max_num_seqs, [16, 64, 256]);

  // Fit: both lists bracket the analytic checks' values; the CLI sweeps the same grid.
  const reason = await page.textContent('[data-testid="fit-grid-reason"]');
  assert.match(reason, /^A grid fitted to this plan brackets max_num_seqs \d+ \(Little's law\) and \d+ \(KV memory\), budget 889 \(the TPOT rule\)\.$/);
  await page.click('[data-testid="fit-grid"]');
  await waitForRerun(page);
  const plan = await planInAddress(page);
  const kv = Number(/and (\d+) \(KV memory\)/.exec(reason)[1]);
  assert.ok(plan.run.sweep_max_num_seqs.includes(kv), `the KV bound ${kv} is on the grid`);
  assert.ok(plan.run.sweep_batched_tokens.includes(889), 'the budget rule is on the grid');
  assert.equal(await page.inputValue(`[data-testid="input-${budgets}"]`), plan.run.sweep_batched_tokens.join(', '));
  assert.equal(await page.isEnabled('[data-testid="fit-grid"]'), false, 'fitted already');
  assert.match(await page.textContent('[data-testid="fit-grid-reason"]'), /^The grid is fitted to this plan/);
  const cells = plan.run.sweep_max_num_seqs.length * plan.run.sweep_batched_tokens.length;
  assert.equal(await page.$$eval('[data-testid^="heatmap-cell-"]', (c) => c.length), cells);
  const sweep = await runCliJson(['sweep', '--link', await page.evaluate(() => location.href), '--json']);
  assert.equal(sweep.cells.length, cells);
  assert.deepEqual(knobsOfPlan({ engine: sweep.cells[sweep.best].knobs }), await knobsOf(page, '[data-testid="best-settings"]'));
  assert.equal(await readValue(page, 'best-goodput-rps'), sweep.cells[sweep.best].goodput_rps, 'page = CLI, bit for bit');
  await screenshot(page, 'tuning-grid-fitted');

  // Undo takes the fit back.
  await page.click('[data-testid="undo"]');
  await waitForRerun(page);
  assert.equal(await page.inputValue(`[data-testid="input-${seqs}"]`), '16, 64, 256');
  assertNoErrors(errors);
});

test('near the heatmap, the page says why the cell at the plan\'s settings and the card differ', async () => {
  const { page, errors } = await h.openPlanner();
  const text = (await page.textContent('[data-testid="sweep-vs-search"]')).trim();
  const m = /^The cell at your settings shows (\d+\.\d\d) req\/s from 5 replications per rate; the card's (\d+\.\d\d) comes from 20 \((\d+\.\d\d)–(\d+\.\d\d) against (\d+\.\d\d)–(\d+\.\d\d): their 95% ranges (do not )?overlap\)\.$/.exec(text);
  assert.ok(m, text);
  const card = await readValue(page, 'goodput-rps');
  assert.equal(m[2], card.toFixed(2), 'the card\'s number');
  const current = await page.getAttribute('[data-testid^="heatmap-cell-"].current', 'aria-label');
  assert.ok(current.includes(`${m[1]} req/s`), `the cell's number: ${current}`);
  assertNoErrors(errors);
});
