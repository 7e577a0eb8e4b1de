// Split prefill and decode in the browser: the pools are edited as plan fields (bad
// values get messages in their units and are not sized), the sizing runs in the workers
// with progress and Cancel, its table equals `goodput disagg` row for row, an edit of the
// pools does not re-run the goodput search, and the link carries the pools.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { decodePng, enter, inkOf, runCli, runCliJson, runsStarted, screenshot, SCREENSHOT_DIR, startHarness, waitForPhase } from './harness.mjs';

/** Longest wait for a search or a whole sizing [ms]. */
const RUN_TIMEOUT_MS = 300_000;

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** The comparison table as the page shows it: label → [aggregated, disaggregated]. */
async function tableOf(page) {
  return page.$$eval('[data-testid="disagg-row"]', (trs) =>
    trs.map((tr) => [
      tr.dataset.label,
      tr.querySelector('[data-testid="disagg-aggregated"]').textContent.trim(),
      tr.querySelector('[data-testid="disagg-disaggregated"]').textContent.trim(),
    ]),
  );
}

test('pools sized in the page equal goodput disagg, bad values are refused, the link carries the pools', async () => {
  const planFlags = ['--num-requests', '400', '--warmup-requests', '40', '--replications', '3', '--peak-rate', '20'];
  const link = (await runCli(['link', ...planFlags])).trim();
  const { page, errors } = await h.openPage(`/${link.slice(link.indexOf('#'))}&view=planner`, {
    waitFor: '[data-testid="disagg-panel"]',
    viewport: { width: 1440, height: 1000 },
  });
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseUrl });
  await page.emulateMedia({ colorScheme: 'light' });
  await waitForPhase(page, 'run-status', 'done');
  const runs = await runsStarted(page);
  assert.equal(await page.locator('[data-testid="disagg-verdict"]').count(), 0, 'nothing is sized until asked');

  // The link comes from the GPUs until the user gives its bandwidth.
  assert.equal(await page.locator('[data-testid="input-disagg.kv_link.bandwidth_bytes_per_s"]').count(), 0,
    'no bandwidth of its own while the link comes from the GPUs');
  await page.selectOption('[data-testid="input-disagg.kv_link.source"]', 'given');
  await page.waitForSelector('[data-testid="input-disagg.kv_link.bandwidth_bytes_per_s"]');

  // A value out of range: named in its label and units, and the sizing is not offered.
  await enter(page, 'disagg.kv_link.bandwidth_bytes_per_s', '0.001');
  await page.waitForSelector('[data-testid="error-disagg.kv_link.bandwidth_bytes_per_s"]:has-text("KV link bandwidth")');
  const message = await page.textContent('[data-testid="error-disagg.kv_link.bandwidth_bytes_per_s"]');
  assert.match(message, /Gbit\/s/, message);
  assert.ok(await page.isDisabled('[data-testid="disagg-run"]'), 'an invalid plan is not sized');

  // The pools as a user sets them: a smaller decode batch, a slower link, round robin.
  await enter(page, 'disagg.kv_link.bandwidth_bytes_per_s', '200');
  await enter(page, 'disagg.decode.max_num_seqs', '64');
  await page.selectOption('[data-testid="input-disagg.router"]', 'round_robin');
  // The goodput search does not depend on the pools, so it does not run again.
  assert.equal(await page.getAttribute('[data-testid="run-status"]', 'data-phase'), 'done');
  assert.ok(await page.isEnabled('[data-testid="disagg-run"]'));

  // Cancel stops a running sizing and says so. Both clicks happen in the page, one task
  // apart, so a quick sizing cannot finish between them.
  const stopped = await page.evaluate(async () => {
    const q = (id) => document.querySelector(`[data-testid="${id}"]`);
    q('disagg-run').click();
    await new Promise((r) => setTimeout(r, 0));
    const phase = q('disagg-status').dataset.phase;
    q('disagg-cancel').click();
    return phase;
  });
  assert.equal(stopped, 'running', 'the sizing was running when cancelled');
  await waitForPhase(page, 'disagg-status', 'cancelled');
  assert.match(await page.textContent('[data-testid="disagg-status"]'), /^Cancelled: stopped\./);
  assert.equal(await page.locator('[data-testid="disagg-verdict"]').count(), 0);

  // Sized in full, with progress on the way.
  await page.click('[data-testid="disagg-run"]');
  await page.waitForFunction(
    () => /Simulating: [1-9]\d* of about \d+/.test(document.querySelector('[data-testid="disagg-status"]')?.textContent ?? '')
      || document.querySelector('[data-testid="disagg-status"]')?.dataset.phase === 'done',
    null,
    { timeout: RUN_TIMEOUT_MS, polling: 50 },
  );
  await waitForPhase(page, 'disagg-status', 'done');

  // The link now carries the pools; the CLI sizes it to the same numbers.
  await page.click('[data-testid="copy-link"]');
  await page.waitForSelector('[data-testid="copy-link"]:has-text("Copied")');
  const shared = await page.evaluate(() => navigator.clipboard.readText());
  const cli = await runCliJson(['disagg', '--link', shared, '--json']);
  assert.equal(cli.best.decode_max_num_seqs, 64);
  assert.equal(cli.router, 'round_robin');
  assert.equal(cli.kv_link.bandwidth_bytes_per_s, 25e9);
  assert.equal(cli.kv_link.source ?? 'given', 'given');
  const verdict = page.locator('[data-testid="disagg-verdict"]');
  assert.equal((await verdict.textContent()).trim(), cli.verdict);
  assert.equal(await verdict.getAttribute('data-xpyd'), cli.xpyd);
  assert.equal(Number(await verdict.getAttribute('data-gpus')), cli.gpus_total);
  assert.equal(Number(await verdict.getAttribute('data-month')), cli.cost_per_month_usd);
  assert.equal(Number(await verdict.getAttribute('data-aggregated-gpus')), cli.aggregated_gpus_total);
  assert.equal(Number(await verdict.getAttribute('data-aggregated-month')), cli.aggregated_cost_per_month_usd);

  // Every row of the page's table is a row of the CLI's, to the character.
  const rows = await tableOf(page);
  assert.equal(rows.length, 8);
  const text = await runCli(['disagg', '--link', shared]);
  const cliLines = text.split('\n').map((l) => l.trim().split(/\s{2,}/));
  for (const [label, agg, dis] of rows) {
    const line = cliLines.find((cells) => cells[0] === label);
    assert.ok(line, `the CLI prints a '${label}' row:\n${text}`);
    assert.deepEqual(line, [label, agg, dis], `row '${label}'`);
  }
  assert.ok(!rows.some(([, a, d]) => a === '—' || d === '—'), 'both sides have every figure');
  const notes = await page.$$eval('[data-testid="disagg-note"]', (ps) => ps.map((p) => p.textContent.trim()));
  assert.equal(notes.length, 2);
  for (const n of notes) assert.ok(text.includes(n), `the CLI prints the note '${n}'`);
  assert.match(notes[0], /^Prefill pool as M\/D\/1/);
  // The chart: both bars' prefill parts (queue in the second colour, prefill in the
  // main one), the transfer in green, and the TTFT objective in red.
  await page.waitForSelector('[data-testid="disagg-chart"]');
  const queueInk = await inkOf(page, 'disagg-chart', [0xb4, 0x53, 0x09]);
  const prefillInk = await inkOf(page, 'disagg-chart', [0x1d, 0x4e, 0xd8]);
  const transferInk = await inkOf(page, 'disagg-chart', [0x04, 0x78, 0x57]);
  const sloInk = await inkOf(page, 'disagg-chart', [0xb9, 0x1c, 0x1c]);
  assert.ok(queueInk >= 400, `the prefill queue is drawn (${queueInk} pixels)`);
  assert.ok(prefillInk >= 1500, `the prefill bars are drawn (${prefillInk} pixels)`);
  assert.ok(transferInk >= 100, `the transfer is drawn (${transferInk} pixels)`);
  assert.ok(sloInk >= 100, `the objective is drawn (${sloInk} pixels)`);
  // The chart exports: an SVG with its bars' labels, a PNG at twice the canvas size with
  // the prefill bars in their colour.
  const [svg] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-disagg-chart-svg"]')]);
  const svgText = await readFile(await svg.path(), 'utf8');
  for (const label of [`${cli.xpyd} simulated, mean`, 'prefill pool as M/D/1', 'TTFT objective', 'time from arrival [ms]']) {
    assert.ok(svgText.includes(label), `the SVG says '${label}'`);
  }
  assert.ok(/fill="#1D4ED8"/i.test(svgText), 'the SVG has the prefill bars');
  const css = await page.$eval('canvas[data-testid="disagg-chart"]', (c) => [c.clientWidth, c.clientHeight]);
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-disagg-chart-png"]')]);
  const image = decodePng(await readFile(await png.path()));
  // Twice the canvas, under the heading that names the chart and the plan.
  const heading = Number(await page.getAttribute('[data-testid="export-panel"]', 'data-heading-px'));
  assert.ok(heading > 0, 'the export panel states its heading height');
  assert.deepEqual([image.width, image.height], [2 * css[0], 2 * (css[1] + heading)]);
  let bars = 0;
  for (let y = 0; y < image.height; y += 1) {
    for (let x = 0; x < image.width; x += 1) {
      const [r, g, b] = image.pixel(x, y);
      if (Math.abs(r - 0x1d) + Math.abs(g - 0x4e) + Math.abs(b - 0xd8) <= 24) bars += 1;
    }
  }
  assert.ok(bars > 4 * 1500, `the PNG shows the prefill bars (${bars} pixels)`);
  await page.locator('[data-testid="disagg-panel"]').screenshot({ path: path.join(SCREENSHOT_DIR, 'disagg-panel.png') });

  assert.equal(await runsStarted(page), runs, 'the goodput search never ran again for the pools');

  // An edit with a problem marks the result stale; putting the value back makes it fresh.
  const field = '[data-testid="input-hardware.mem_bandwidth_bytes_per_s"]';
  const bandwidth = await page.inputValue(field);
  await page.fill(field, '3.3x');
  await page.waitForSelector('[data-testid="disagg-stale"]');
  await page.fill(field, bandwidth);
  await page.waitForSelector('[data-testid="disagg-stale"]', { state: 'detached' });
  // An edit the sizing depends on marks the result stale.
  await enter(page, 'disagg.decode.max_num_seqs', '48');
  await page.waitForSelector('[data-testid="disagg-stale"]');

  // A fresh browser opening the link gets the pools as they were shared.
  const fresh = await h.openPage(`/${shared.slice(shared.indexOf('#'))}&view=planner`, {
    waitFor: '[data-testid="disagg-panel"]',
  });
  assert.equal(await fresh.page.inputValue('[data-testid="input-disagg.decode.max_num_seqs"]'), '64');
  assert.equal(await fresh.page.inputValue('[data-testid="input-disagg.kv_link.bandwidth_bytes_per_s"]'), '200');
  assert.equal(await fresh.page.inputValue('[data-testid="input-disagg.router"]'), 'round_robin');
  await screenshot(fresh.page, 'disagg-fresh');
  assert.deepEqual(errors, []);
});

test('pools of their own layouts: a decode pool on expert parallelism, the KV link from the GPUs, as goodput disagg sizes them', async () => {
  const planFlags = ['--model', 'qwen3-30b-a3b', '--num-requests', '300', '--warmup-requests', '30', '--replications', '2', '--peak-rate', '20'];
  const link = (await runCli(['link', ...planFlags])).trim();
  const { page, errors } = await h.openPage(`/${link.slice(link.indexOf('#'))}&view=planner`, {
    waitFor: '[data-testid="disagg-panel"]',
    viewport: { width: 1440, height: 1000 },
  });
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseUrl });
  await waitForPhase(page, 'run-status', 'done');
  // Expert parallelism takes TP 1: on a TP-2 pool it is refused in words.
  await page.selectOption('[data-testid="disagg.decode.tp_degree"]', '2');
  await enter(page, 'disagg.decode.ep_degree', '8');
  await page.waitForSelector('[data-testid="error-disagg.decode.ep_degree"]:has-text("tensor-parallel and a pipeline-parallel degree of 1")');
  assert.ok(await page.isDisabled('[data-testid="disagg-run"]'), 'an invalid layout is not sized');
  await page.selectOption('[data-testid="disagg.decode.tp_degree"]', '1');
  await page.waitForSelector('[data-testid="error-disagg.decode.ep_degree"]:has-text("tensor-parallel")', { state: 'detached' });
  assert.equal(await page.inputValue('[data-testid="input-disagg.kv_link.source"]'), 'network');

  await page.click('[data-testid="disagg-run"]');
  await waitForPhase(page, 'disagg-status', 'done');
  await page.click('[data-testid="copy-link"]');
  await page.waitForSelector('[data-testid="copy-link"]:has-text("Copied")');
  const shared = await page.evaluate(() => navigator.clipboard.readText());
  const cli = await runCliJson(['disagg', '--link', shared, '--json']);
  assert.equal(cli.best.decode_ep, 8);
  assert.equal(cli.best.kv_route.over, 'scale_out', 'one TP-1 and one EP-8 instance are 9 GPUs, past a node');
  assert.equal(cli.best.kv_route.lanes, 1, 'an expert-parallel rank holds its sequences alone');
  const verdict = page.locator('[data-testid="disagg-verdict"]');
  assert.equal((await verdict.textContent()).trim(), cli.verdict);
  assert.equal(Number(await verdict.getAttribute('data-gpus')), cli.gpus_total);
  const rows = await tableOf(page);
  const text = await runCli(['disagg', '--link', shared]);
  const cliLines = text.split('\n').map((l) => l.trim().split(/\s{2,}/));
  for (const [label, agg, dis] of rows) {
    assert.deepEqual(cliLines.find((cells) => cells[0] === label), [label, agg, dis], `row '${label}'`);
  }
  const perInstance = rows.find(([label]) => label === 'GPUs per instance');
  assert.match(perInstance[2], /D NVIDIA H100 SXM 80GB × EP8 \(1 node\)$/, perInstance[2]);
  const notes = await page.$$eval('[data-testid="disagg-note"]', (ps) => ps.map((p) => p.textContent.trim()));
  assert.ok(notes.some((n) => n.includes('over the scale-out network, one lane of 400 Gbit/s')), notes.join('\n'));
  await page.locator('[data-testid="disagg-panel"]').screenshot({ path: path.join(SCREENSHOT_DIR, 'disagg-layouts.png') });
  assert.deepEqual(errors, []);
});

test('traffic classes on the pools: each class\'s attainment at the chosen xPyD, as goodput disagg gives it', async () => {
  const planFlags = [
    '--num-requests', '300', '--warmup-requests', '30', '--replications', '2',
    '--class', 'chat:share=0.7,ttft=0.5,tpot=0.025,priority=0',
    '--class', 'batch:share=0.3,e2e=30,priority=1,input-len-median=3000',
  ];
  const link = (await runCli(['link', ...planFlags])).trim();
  const { page, errors } = await h.openPage(`/${link.slice(link.indexOf('#'))}&view=planner`, {
    waitFor: '[data-testid="disagg-panel"]',
    viewport: { width: 1440, height: 1000 },
  });
  await waitForPhase(page, 'run-status', 'done');
  await page.click('[data-testid="disagg-run"]');
  await waitForPhase(page, 'disagg-status', 'done');
  const cli = await runCliJson(['disagg', '--link', link, '--json']);
  assert.deepEqual(cli.best.classes.map((c) => c.name), ['chat', 'batch']);
  const verdict = page.locator('[data-testid="disagg-verdict"]');
  assert.equal((await verdict.textContent()).trim(), cli.verdict);
  const text = await runCli(['disagg', '--link', link]);
  const byClass = text.split('\n').find((l) => l.startsWith('By class at '));
  assert.ok(byClass, text);
  const notes = await page.$$eval('[data-testid="disagg-note"]', (ps) => ps.map((p) => p.textContent.trim()));
  assert.ok(notes.includes(byClass), `${byClass} | ${notes.join(' | ')}`);
  assert.deepEqual(errors, []);
});
