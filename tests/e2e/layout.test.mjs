// How a replica spreads over GPUs and nodes, as a user sets it: pipeline stages and
// expert parallelism in the hardware inputs, the diagram of the replica, a refused
// degree named on its own field (never drawn, never blamed on memory), and the same
// numbers as the CLI.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoErrors, enter, findNumber, planInAddress, readValue, runCli, runCliJson, screenshot, startHarness, waitForRerun, waitForRunDone } from './harness.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** DeepSeek-V3 in fp8 on H100s, short runs. */
const PLAN = ['--model', 'deepseek-v3', '--weight-dtype', 'fp8', '--gpu', 'h100-sxm', '--num-requests', '300', '--warmup-requests', '30', '--replications', '2', '--input-len-median', '1000', '--output-len-median', '200'];

test('pipeline stages over two nodes: the diagram, the cards, the link and the CLI agree', async () => {
  const link = (await runCli(['link', ...PLAN, '--tp', '8', '--pp', '2'])).trim();
  const { page, errors } = await h.openPlanner(`/${link.slice(link.indexOf("#"))}&view=planner`);
  await waitForRunDone(page);
  assert.equal(
    (await page.textContent('[data-testid="replica-words"]')).trim(),
    '16 GPUs a replica: 2 pipeline stages of 8 GPUs, on 2 nodes of 8; 1 stage boundary crosses nodes, over the scale-out network (50 GB/s a GPU).',
  );
  assert.equal(await page.locator('[data-testid="replica-node"]').count(), 2);
  assert.equal(await page.locator('[data-testid="replica-diagram"] .gpu.stage-1').count(), 8);
  // Replicas of 16 GPUs, the CLI's numbers.
  const gpus = await readValue(page, 'gpus-total');
  assert.equal(gpus % 16, 0, `${gpus} GPUs`);
  const cli = await runCliJson(['plan', '--link', link, '--json', '--no-sweep']);
  assert.equal(await readValue(page, 'goodput-rps'), cli.goodput.goodput_rps);
  assert.equal(gpus, findNumber(cli, 'gpus_total'));
  await page.locator('[data-testid="replica-diagram"]').scrollIntoViewIfNeeded();
  await screenshot(page, 'layout-pp2');

  // A degree past the limit is refused on its own field: the memory is not blamed, the
  // diagram keeps the last plan that held, and nothing hangs.
  await enter(page, 'hardware.pp_degree', '300000');
  await page.waitForSelector('[data-testid="error-hardware.pp_degree"]:has-text("from 1 to 16")');
  assert.equal((await page.textContent('[data-testid="error-hardware.memory_bytes"]')).trim(), '', 'GPU memory is not blamed');
  assert.notEqual(await page.getAttribute('[data-testid="input-hardware.memory_bytes"]', 'aria-invalid'), 'true');
  assert.equal(await page.locator('[data-testid="replica-node"]').count(), 2, 'the refused layout is not drawn');
  // Back to a degree that fits: the plan runs again.
  await enter(page, 'hardware.pp_degree', '2');
  await page.waitForFunction(() => document.querySelector('[data-testid="results"]')?.dataset.stale === 'false');
  assert.equal((await page.textContent('[data-testid="error-hardware.pp_degree"]')).trim(), '');
  assertNoErrors(errors);
});

test('expert parallelism over two nodes replaces the stages, and a dense model refuses it in words', async () => {
  const link = (await runCli(['link', ...PLAN, '--tp', '8', '--pp', '2'])).trim();
  const { page, errors } = await h.openPlanner(`/${link.slice(link.indexOf("#"))}&view=planner`);
  await waitForRunDone(page);
  // EP with TP or PP above 1 is refused, naming both degrees.
  await enter(page, 'hardware.ep_degree', '16');
  await page.waitForSelector('[data-testid="error-hardware.ep_degree"]:has-text("(now 8 and 2)")');
  await enter(page, 'hardware.tp_degree', '1');
  await enter(page, 'hardware.pp_degree', '1');
  await page.waitForFunction(() => document.querySelector('[data-testid="results"]')?.dataset.stale === 'false');
  await waitForRerun(page, { mayHaveFinished: true });
  assert.match(
    await page.textContent('[data-testid="replica-words"]'),
    /^16 GPUs a replica: the routed experts split over them, each attending to its own sequences, on 2 nodes of 8; the all-to-alls/,
  );
  const plan = await planInAddress(page);
  assert.deepEqual([plan.hardware.tp_degree, plan.hardware.pp_degree ?? 1, plan.hardware.ep_degree], [1, 1, 16]);
  const cli = await runCliJson(['plan', '--link', await page.evaluate(() => location.href), '--json', '--no-sweep']);
  assert.equal(await readValue(page, 'goodput-rps'), cli.goodput.goodput_rps);
  // The launch flags name the data-parallel ranks.
  await page.waitForFunction(
    () => /--data-parallel-size 16 --enable-expert-parallel/.test(document.querySelector('article:has([data-testid="best-settings"])')?.textContent ?? ''),
    null,
    { timeout: 240_000 },
  );
  // A dense model has no experts to split.
  await page.selectOption('[data-testid="preset-model"]', 'llama-3.1-70b');
  await page.waitForSelector('[data-testid="error-hardware.ep_degree"]:has-text("this model has none")');
  assertNoErrors(errors);
});
