// Traffic over a day in the browser: a named shape is planned hour by hour in the
// workers to the same numbers as `goodput schedule --json` (bit for bit), the chart draws
// its series, bad hourly numbers get a message and leave the plan alone, a trace file is
// read in slices to a profile with its bad rows counted (a large one shows its progress
// and can be cancelled), and the share link carries the day to the finance view of a
// fresh browser.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertNoErrors, decodePng, findNumber, inkOf, readValue, REPO_ROOT, runCli, runCliJson, screenshot, SCREENSHOT_DIR, startHarness, waitForPhase, waitForRerun, waitForRunDone } from './harness.mjs';

/** Longest wait for a search or a day's schedule [ms]. */
const RUN_TIMEOUT_MS = 240_000;

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Waits for the day to be worked out again after an edit (it may already be running). */
async function waitForDay(page) {
  await page
    .waitForFunction(() => document.querySelector('[data-testid="day-status"]')?.dataset.phase !== 'done', null, { timeout: 2_000, polling: 20 })
    .catch(() => {});
  await waitForPhase(page, 'day-status', 'done');
  await page.waitForSelector('[data-testid="day-result"][data-fresh="true"] [data-testid="day-summary"]', { state: 'attached' });
}

/** Every hour of the table, as the page shows it. */
async function hours(page) {
  return page.$$eval('[data-testid="day-hour"]', (trs) =>
    trs.map((tr) => ({
      hour: Number(tr.dataset.hour),
      replicas: Number(tr.dataset.replicas),
      servingMin: Number(tr.dataset.servingMin),
      servingMax: Number(tr.dataset.servingMax),
      attainment: tr.dataset.attainment === '' ? null : Number(tr.dataset.attainment),
      ramp: tr.dataset.ramp === 'true',
    })),
  );
}

/** An Azure LLM inference trace of one day: more requests by day, some bad rows. */
function azureTrace() {
  const lines = ['TIMESTAMP,ContextTokens,GeneratedTokens'];
  const pad = (n) => String(n).padStart(2, '0');
  let good = 0;
  for (let hour = 0; hour < 24; hour += 1) {
    const n = hour >= 8 && hour < 18 ? 24 : 6;
    for (let i = 0; i < n; i += 1) {
      const s = Math.floor((i * 3600) / n) + 5;
      const t = `2024-05-10 ${pad(hour)}:${pad(Math.floor(s / 60))}:${pad(s % 60)}.0000000`;
      lines.push(`${t},${400 + ((i * 37) % 900)},${50 + ((i * 13) % 200)}`);
      good += 1;
    }
    if (hour % 5 === 2) lines.push(`2024-05-10 ${pad(hour)}:30:00.0000000,lots,12`);
  }
  lines.push('2024-05-10 25:99:00.0000000,100,10');
  lines.push('2024-05-10 23:59:50.0000000,-4,10');
  const bad = lines.filter((l) => l.includes('lots') || l.includes('25:99') || l.includes(',-4,')).length;
  return { csv: `${lines.join('\n')}\n`, good, bad };
}

test('a day is planned like the CLI, drawn, shared; bad numbers are refused; a trace gives a profile', async () => {
  const planFlags = ['--model', 'llama-3.1-8b', '--num-requests', '400', '--warmup-requests', '40', '--replications', '4', '--peak-rate', '40'];
  const link = (await runCli(['link', ...planFlags])).trim();
  const { page, errors } = await h.openPage(`/${link.slice(link.indexOf('#'))}&view=planner`, {
    waitFor: '[data-testid="day-panel"]',
    viewport: { width: 1440, height: 1000 },
  });
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseUrl });
  await page.emulateMedia({ colorScheme: 'light' });
  await waitForPhase(page, 'run-status', 'done');
  assert.equal(await page.locator('[data-testid="day-summary"]').count(), 0, 'no day until one is asked for');
  // Nothing to export until the day is planned: the buttons say so instead of saving an empty chart.
  assert.equal(await page.isDisabled('[data-testid="export-day-chart-svg"]'), true);
  assert.equal(await page.isDisabled('[data-testid="export-day-chart-png"]'), true);
  assert.match(await page.textContent('[data-testid="export-day-chart-waiting"]'), /^Plan the day in .Traffic over a day. first\.$/);

  // A named shape and a slow autoscaler: the morning ramps dip.
  await page.selectOption('[data-testid="day-shape"]', 'business-hours');
  await page.fill('[data-testid="day-lag"]', '20');
  await waitForDay(page);
  assert.match(await page.textContent('[data-testid="day-profile-source"]'), /^Business hours shape: 24 hours, scaled to the peak of 40 req\/s/);

  // The share link carries the day; the CLI works it out to the same numbers.
  await page.click('[data-testid="copy-link"]');
  await page.waitForSelector('[data-testid="copy-link"]:has-text("Copied")');
  const shared = await page.evaluate(() => navigator.clipboard.readText());
  const cli = await runCliJson(['schedule', '--link', shared, '--json']);
  assert.equal(cli.options.scale_up_lag_min, 20, 'the link carries the autoscaler');
  for (const [testid, key] of [
    ['day-static-day', 'static_cost_per_day_usd'],
    ['day-auto-day', 'autoscaled_cost_per_day_usd'],
    ['day-static-month', 'static_cost_per_month_usd'],
    ['day-auto-month', 'autoscaled_cost_per_month_usd'],
    ['day-saving-month', 'savings_per_month_usd'],
    ['day-saving-share', 'savings_share'],
    ['day-ramp-attainment', 'ramp_attainment'],
    ['day-attainment', 'attainment'],
  ]) {
    assert.equal(await readValue(page, testid), cli[key], `${testid} = ${key}`);
  }
  const shown = await hours(page);
  assert.deepEqual(
    shown,
    cli.hours.map((r) => ({
      hour: r.hour,
      replicas: r.replicas,
      servingMin: r.serving_min,
      servingMax: r.serving_max,
      attainment: r.attainment,
      ramp: r.ramp,
    })),
    'every hour as the CLI has it',
  );
  assert.ok(cli.savings_share > 0.2, `a business day saves (${cli.savings_share})`);
  assert.ok(shown.some((r) => r.ramp), 'there are ramps');
  const verdict = (await page.textContent('[data-testid="day-verdict"]')).trim();
  assert.match(verdict, /^Autoscaling saves \$[0-9,.]+ per month \([0-9.]+%\), with [0-9.]+% of requests within the SLO during ramps/);

  // The Markdown export carries the day, word for word as `goodput plan` prints it.
  await waitForRunDone(page);
  const [md] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-markdown"]')]);
  const text = await readFile(await md.path(), 'utf8');
  const cliMarkdown = await runCli(['plan', '--link', shared, '--markdown']);
  assert.equal(text.slice(0, text.lastIndexOf('\n[Open this plan')).trimEnd(), cliMarkdown.trimEnd());
  const day = text.slice(text.indexOf('## Traffic over a day'), text.indexOf('## Assumptions'));
  assert.ok(day.startsWith(`## Traffic over a day\n\n${verdict} Static fleet `), day);
  assert.equal(day.match(/\n\| \d+ \| /g)?.length, 24, `every hour in the Markdown: ${day}`);

  // The chart: every series plotted, and its lines and dips drawn in their colours.
  await page.locator('[data-testid="day-chart"]').scrollIntoViewIfNeeded();
  const series = Object.fromEntries(
    (await page.getAttribute('[data-testid="day-chart-box"]', 'data-series')).split(' ').map((kv) => kv.split(':')).map(([k, v]) => [k, Number(v)]),
  );
  const target = Number(await page.getAttribute('[data-testid="day-chart-box"]', 'data-target'));
  assert.ok(target > 0.5 && target < 1, `the attainment target (${target})`);
  const below = cli.hours.filter((r) => r.attainment !== null && r.attainment < target).length;
  assert.equal(series.dips, below, 'every hour below the target is marked');
  assert.equal(series.rate, 24);
  assert.equal(series.needed, 24);
  assert.ok(series.serving >= 3, `the fleet changes over the day (${series.serving} steps)`);
  const rateInk = await inkOf(page, 'day-chart', [0x1d, 0x4e, 0xd8]);
  const servingInk = await inkOf(page, 'day-chart', [0x04, 0x78, 0x57]);
  assert.ok(rateInk >= 300, `the rate line is drawn (${rateInk} pixels)`);
  assert.ok(servingInk >= 300, `the capacity and serving lines are drawn (${servingInk} pixels)`);
  if (series.dips > 0) {
    const band = await inkOf(page, 'day-chart', [242, 214, 214]);
    assert.ok(band >= 500, `the dips are shaded (${band} pixels)`);
  }
  // The chart exports: the SVG draws the rate line through every hour, the PNG is at
  // twice the canvas size.
  assert.equal(await page.locator('[data-testid="export-day-chart-waiting"]').count(), 0, 'the day is planned: it exports');
  const [svg] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-day-chart-svg"]')]);
  const svgText = await readFile(await svg.path(), 'utf8');
  const ratePoints = [...svgText.matchAll(/<polyline[^>]*>/g)]
    .map((m) => m[0])
    .filter((tag) => /stroke="#1D4ED8"/i.test(tag))
    .map((tag) => tag.match(/points="([^"]*)"/)[1].trim().split(/\s+/).length);
  assert.ok(ratePoints.some((n) => n >= 24), `the rate line in the SVG (polylines: ${ratePoints})`);
  const css = await page.$eval('canvas[data-testid="day-chart"]', (c) => [c.clientWidth, c.clientHeight]);
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-day-chart-png"]')]);
  const image = decodePng(await readFile(await png.path()));
  // Twice the canvas, under the heading that names the chart and the plan.
  const heading = Number(await page.getAttribute('[data-testid="export-panel"]', 'data-heading-px'));
  assert.ok(heading > 0, 'the export panel states its heading height');
  assert.deepEqual([image.width, image.height], [2 * css[0], 2 * (css[1] + heading)]);
  await page.locator('[data-testid="day-panel"]').screenshot({ path: path.join(SCREENSHOT_DIR, 'day-panel.png') });

  // A fresh browser opening the link: the finance view says the same.
  const fresh = await h.openPage(`/${shared.slice(shared.indexOf('#'))}`, { waitFor: '[data-testid="finance-view"]' });
  await fresh.page.waitForSelector('[data-testid="finance-day"][data-ready="true"]', { timeout: RUN_TIMEOUT_MS });
  assert.equal((await fresh.page.textContent('[data-testid="finance-day"]')).trim(), verdict);
  await screenshot(fresh.page, 'day-finance');

  // Bad hourly numbers: a message naming the line, and the plan as it was.
  const before = await readValue(page, 'day-static-month');
  const source = await page.textContent('[data-testid="day-profile-source"]');
  await page.click('.day-hourly summary');
  const numbers = Array.from({ length: 24 }, (_, i) => String(10 + i));
  numbers[6] = 'lots';
  await page.fill('[data-testid="day-hourly"]', numbers.join('\n'));
  await page.click('[data-testid="day-hourly-use"]');
  assert.equal(
    (await page.textContent('[data-testid="day-hourly-error"]')).trim(),
    "Hourly numbers: line 7: 'lots' is not a number.",
  );
  await page.fill('[data-testid="day-hourly"]', numbers.slice(0, 23).map((v, i) => (i === 6 ? '16' : v)).join('\n'));
  await page.click('[data-testid="day-hourly-use"]');
  assert.match(await page.textContent('[data-testid="day-hourly-error"]'), /23 hourly values; give 24 \(a day\) or 168 \(a week\)/);
  assert.equal(await page.textContent('[data-testid="day-profile-source"]'), source, 'the profile is unchanged');
  assert.equal(await readValue(page, 'day-static-month'), before);
  assert.equal(await page.getAttribute('[data-testid="day-status"]', 'data-phase'), 'done', 'nothing re-ran');

  // Space-separated numbers are read as comma-separated ones.
  await page.fill('[data-testid="day-hourly"]', [numbers.slice(0, 12), numbers.slice(12)].map((r) => r.map((v) => (v === 'lots' ? '16' : v)).join(' ')).join('\n'));
  await page.click('[data-testid="day-hourly-use"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="day-profile-source"]')?.textContent.startsWith('hourly shape given: 24 hours'));
  assert.equal((await page.textContent('[data-testid="day-hourly-error"]')).trim(), '');
  await waitForDay(page);

  // An edit with a problem leaves the day's result as it was, marked as older than the plan on screen.
  const field = '[data-testid="input-hardware.mem_bandwidth_bytes_per_s"]';
  const bandwidth = await page.inputValue(field);
  await page.fill(field, '3.3x');
  await page.waitForSelector('[data-testid="day-result"][data-fresh="false"]');
  assert.match(await page.textContent('[data-testid="day-verdict"]'), /^The day's schedule shown is for the plan before the edit that has a problem/);
  await page.fill(field, bandwidth);
  await page.waitForSelector('[data-testid="day-result"][data-fresh="true"]');
  assert.match(await page.textContent('[data-testid="day-verdict"]'), /^Autoscaling saves/);

  // A trace file: read in slices, summarised, bad rows counted; its shape is the profile.
  const trace = azureTrace();
  await page.click('.day-trace summary');
  await page.setInputFiles('[data-testid="day-trace-file"]', { name: 'day.csv', mimeType: 'text/csv', buffer: Buffer.from(trace.csv) });
  const summary = await page.waitForSelector('[data-testid="day-trace-summary"]');
  assert.equal(Number(await summary.getAttribute('data-rows')), trace.good);
  assert.equal(Number(await summary.getAttribute('data-bad-rows')), trace.bad);
  assert.equal(await summary.getAttribute('data-applied'), 'true', await summary.textContent());
  assert.match(await summary.textContent(), new RegExp(`^azure trace: ${trace.good} requests over [0-9.]+ h .*; ${trace.bad} bad rows \\(the first, line \\d+: `));
  assert.match(await page.textContent('[data-testid="day-profile-source"]'), new RegExp(`^azure trace, ${trace.good} requests: 24 hours`));
  await waitForDay(page);
  const traced = await hours(page);
  assert.ok(traced[3].replicas < traced[12].replicas, 'quiet night, busy noon, as in the trace');
  await screenshot(page, 'day-planner');

  assertNoErrors(errors);
  assertNoErrors(fresh.errors);
});

test('a large trace is read with progress and can be cancelled, leaving the profile as it was', async () => {
  // 72 MB of Azure rows: 18 slices, long enough to see the progress and stop it.
  const dir = await mkdtemp(path.join(tmpdir(), 'goodput-trace-'));
  const file = path.join(dir, 'big.csv');
  const row = '2024-05-10 12:00:00.0000000,800,200\n';
  await writeFile(file, `TIMESTAMP,ContextTokens,GeneratedTokens\n${row.repeat(2_000_000)}`);
  try {
    const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="day-panel"]' });
    await page.selectOption('[data-testid="day-shape"]', 'business-hours');
    await page.waitForSelector('[data-testid="day-profile-source"]');
    const source = await page.textContent('[data-testid="day-profile-source"]');
    await page.click('.day-trace summary');
    await page.setInputFiles('[data-testid="day-trace-file"]', file);
    // The progress moves: some, but not all, of the file read.
    await page.waitForFunction(
      () => {
        const v = Number(document.querySelector('[data-testid="day-trace-progress"]')?.getAttribute('value'));
        return v > 0 && v < 1;
      },
      null,
      { timeout: RUN_TIMEOUT_MS, polling: 10 },
    );
    await page.click('[data-testid="day-trace-cancel"]');
    assert.equal((await page.textContent('[data-testid="day-trace-error"]')).trim(), 'The trace was not read: cancelled.');
    assert.equal(await page.locator('[data-testid="day-trace-progress"]').count(), 0, 'the progress is gone');
    assert.equal(await page.locator('[data-testid="day-trace-summary"]').count(), 0, 'nothing was summarised');
    assert.equal(await page.textContent('[data-testid="day-profile-source"]'), source, 'the profile is unchanged');
    assertNoErrors(errors);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a Mooncake trace replayed as the traffic: its block ids drive the cache, the page equals the CLI, and Undo brings the traffic back", async () => {
  const fixture = path.join(REPO_ROOT, 'crates/core/tests/fixtures/trace/mooncake_conversation_head.jsonl');
  // Long prompts: objectives they can meet, paged KV memory, a small search.
  const plan = ['--kv-policy', 'paged', '--ttft-slo', '8', '--tpot-slo', '0.06',
    '--num-requests', '1000', '--warmup-requests', '100', '--replications', '4'];
  const link = (await runCli(['link', '--base-url', `${h.baseUrl}/`, ...plan])).trim();
  const { page, errors } = await h.openPage(`/${link.slice(link.indexOf('#'))}&view=planner`, { waitFor: '[data-testid="day-panel"]' });
  await waitForRunDone(page);
  const before = await readValue(page, 'goodput-rps');
  await page.click('.day-trace summary');
  await page.setInputFiles('[data-testid="day-trace-file"]', fixture);
  const summary = await page.waitForSelector('[data-testid="day-trace-summary"]');
  assert.equal(Number(await summary.getAttribute('data-rows')), 1000);
  const replay = page.locator('[data-testid="day-trace-replay"]');
  assert.equal(Number(await replay.getAttribute('data-blocks')), 27305, 'every row names its blocks');
  assert.match(await page.textContent('[data-testid="day-trace-replay-help"]'), /trace's 1,000 requests.*block ids/);
  await replay.click();
  await waitForRerun(page, { mayHaveFinished: true });
  await waitForRunDone(page);
  assert.equal(await page.inputValue('[data-testid="input-traffic.arrival"]'), 'trace', 'the arrival shows as the trace');
  assert.equal(await page.getAttribute('[data-testid="replay-note"]', 'data-blocks'), '27305');
  assert.match(await page.textContent('[data-testid="replay-note"]'), /^A trace of 1,000 requests is replayed: its arrival pattern \(scaled to each simulated rate\), prompt lengths, output lengths\. Its 27,305 block ids/);
  // The CLI, replaying the same file, gets the same numbers to the last bit.
  const cli = await runCliJson(['plan', '--link', link, '--replay', fixture, '--json', '--no-sweep']);
  for (const [testid, key] of [['goodput-rps', 'goodput_rps'], ['replicas-total', 'replicas_total'], ['cost-per-month-usd', 'cost_per_month_usd']]) {
    const expected = findNumber(cli, key);
    assert.equal(typeof expected, 'number', `the CLI JSON has ${key}`);
    assert.equal(await readValue(page, testid), expected, `${testid} against the CLI's ${key}`);
  }
  const hit = cli.planned_load.detail.prefix_hit_rate;
  assert.ok(hit > 0.01 && hit < 0.1, `one GPU's cache finds a little of the trace's reuse: ${hit}`);
  assert.ok(cli.assumptions.some((a) => /prefix caching of the trace's 27,305 prompt blocks of 512 tokens/.test(a)), cli.assumptions.join(' | '));
  await screenshot(page, 'day-trace-replay');
  // Undo: the plan's own traffic and its goodput again.
  await page.click('[data-testid="undo"]');
  await waitForRerun(page, { mayHaveFinished: true });
  await waitForRunDone(page);
  assert.equal(await page.inputValue('[data-testid="input-traffic.arrival"]'), 'poisson');
  assert.equal(await page.locator('[data-testid="replay-note"]').count(), 0, 'no replay after Undo');
  assert.equal(await readValue(page, 'goodput-rps'), before);
  assertNoErrors(errors);
});
