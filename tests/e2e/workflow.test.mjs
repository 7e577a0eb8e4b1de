// Working with many plans: the compare table of saved plans (values against the CLI,
// the difference against a chosen baseline, CSV and Markdown downloads) and the
// saved-plans list showing GPUs and cost.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { assertNoErrors, enter, findNumber, runCliJson, screenshot, startHarness, waitForRunDone } from './harness.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** The CLI's numbers for a plan: goodput, and the fleet and cost sized from it. */
async function cliNumbers(dir, name, plan) {
  const file = path.join(dir, `${name.replace(/[^a-z0-9]/gi, '_')}.json`);
  await writeFile(file, JSON.stringify(plan));
  const report = await runCliJson(['plan', '--plan', file, '--json', '--no-sweep']);
  const n = (key) => {
    const v = findNumber(report, key);
    assert.equal(typeof v, 'number', `the CLI report has ${key}`);
    return v;
  };
  return {
    goodput: n('goodput_rps'),
    replicas: n('replicas_total'),
    gpus: n('gpus_total'),
    costMonth: n('cost_per_month_usd'),
    costRequest: n('cost_per_compliant_request_usd'),
  };
}

/** A compare-table row's numbers, from its data attributes, and its cells as shown. */
async function rowOf(page, name) {
  const row = page.locator(`[data-testid="compare-many-row"][data-name="${name}"]`);
  const attr = async (a) => {
    const v = await row.getAttribute(a);
    return v === null ? null : Number(v);
  };
  return {
    goodput: await attr('data-goodput-rps'),
    replicas: await attr('data-replicas'),
    gpus: await attr('data-gpus'),
    costMonth: await attr('data-cost-per-month-usd'),
    costRequest: await attr('data-cost-per-compliant-request-usd'),
    deltaGpus: await attr('data-delta-gpus'),
    deltaCost: await attr('data-delta-cost-per-month-usd'),
    cells: await row.locator('th, td').allTextContents(),
  };
}

const usdPattern = /^-?\$[\d,]+(\.\d\d)?$|^\$0\.\d+$/;

test('a compare table of 4 saved plans equals the CLI, with the difference against a chosen baseline', async () => {
  const { page, errors } = await h.openPage('/', {
    waitFor: '[data-testid="run-status"]',
    viewport: { width: 1440, height: 1000 },
  });
  await waitForRunDone(page);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'goodput-compare-'));
  try {
    // One plan saved through the page: its goodput is the page's own search.
    await page.fill('[data-testid="save-name"]', 'A default');
    await page.click('[data-testid="save-plan"]');
    await page.waitForSelector('[data-testid="saved-plan"][data-name="A default"]');
    const base = await runCliJson(['decode', await page.evaluate(() => location.href)]);

    // Three more, with the goodput the CLI finds for each.
    const variants = {
      'A default': base,
      'B double price': { ...base, hardware: { ...base.hardware, gpu_hour_usd: base.hardware.gpu_hour_usd * 2 } },
      'C TP2': { ...base, hardware: { ...base.hardware, tp_degree: 2 } },
      'D triple peak': { ...base, traffic: { ...base.traffic, peak_rate_rps: base.traffic.peak_rate_rps * 3 } },
    };
    const cli = {};
    for (const [name, plan] of Object.entries(variants)) {
      cli[name] = await cliNumbers(dir, name, plan);
    }
    const seeded = ['B double price', 'C TP2', 'D triple peak'].map((name) => ({
      name,
      plan: { ...variants[name], name },
      saved_at_ms: Date.now(),
      goodput_rps: cli[name].goodput,
    }));
    await page.evaluate((extra) => {
      const list = JSON.parse(localStorage.getItem('goodput.named.v1') ?? '[]');
      localStorage.setItem('goodput.named.v1', JSON.stringify([...extra, ...list]));
    }, seeded);
    await page.reload();
    await page.waitForSelector('[data-testid="saved-plan"][data-name="D triple peak"]');

    // The saved-plans list shows GPUs and the monthly cost, not only goodput.
    const meta = await page.textContent('[data-testid="saved-plan"][data-name="C TP2"] .saved-meta');
    assert.match(meta, new RegExp(`goodput ${cli['C TP2'].goodput.toFixed(2)} req/s · ${cli['C TP2'].gpus} GPUs · \\$[\\d,]+(\\.\\d\\d)?/month`));

    await page.click('[data-testid="view-compare"]');
    await page.waitForSelector('[data-testid="compare-many-row"][data-name="A default"]');
    assert.equal(await page.locator('[data-testid="compare-many-row"]').count(), 4, 'every saved plan is in the table');

    await page.selectOption('[data-testid="compare-many-baseline"]', 'A default');
    const rows = {};
    for (const name of Object.keys(variants)) {
      rows[name] = await rowOf(page, name);
    }
    for (const [name, want] of Object.entries(cli)) {
      const got = rows[name];
      assert.equal(got.goodput, want.goodput, `${name}: goodput equals the CLI`);
      assert.equal(got.replicas, want.replicas, `${name}: replicas equal the CLI`);
      assert.equal(got.gpus, want.gpus, `${name}: GPUs equal the CLI`);
      assert.equal(got.costMonth, want.costMonth, `${name}: $/month equals the CLI`);
      assert.equal(got.costRequest, want.costRequest, `${name}: $/request equals the CLI`);
      // Formatted cells: Plan, Model, GPU, TP, goodput, replicas, GPUs, $/month, $/1k, Δ GPUs, Δ $/month.
      assert.equal(got.cells[0], name);
      assert.equal(got.cells[3], String(variants[name].hardware.tp_degree));
      assert.equal(got.cells[4], want.goodput.toFixed(2));
      assert.equal(got.cells[6], String(want.gpus));
      assert.match(got.cells[7], usdPattern, `${name}: $/month is money`);
      assert.match(got.cells[8], usdPattern, `${name}: $/1k is money`);
      for (const cell of got.cells) {
        assert.doesNotMatch(cell, /\d\.\d{5,}/, `${name}: no raw number in "${cell}"`);
      }
    }
    // The difference column against the baseline A.
    const a = cli['A default'];
    assert.deepEqual(rows['A default'].cells.slice(9), ['baseline', 'baseline']);
    for (const name of ['B double price', 'C TP2', 'D triple peak']) {
      assert.equal(rows[name].deltaGpus, cli[name].gpus - a.gpus, `${name}: Δ GPUs`);
      assert.ok(Math.abs(rows[name].deltaCost - (cli[name].costMonth - a.costMonth)) < 1e-6, `${name}: Δ $/month`);
    }
    assert.equal(rows['B double price'].deltaGpus, 0, 'price does not change the fleet');
    assert.match(rows['B double price'].cells[10], /^\+\$[\d,]+(\.\d\d)? \(\+100\.0%\)$/);
    assert.equal(rows['B double price'].cells[10].split(' ')[0], `+${rows['A default'].cells[7]}`, 'double price: + the baseline cost');
    assert.ok(rows['D triple peak'].deltaGpus > 0, 'three times the peak needs more GPUs');
    // Every column, the differences included, fits a 1,400 px window without scrolling sideways.
    await page.setViewportSize({ width: 1400, height: 1000 });
    const [scrollWidth, clientWidth] = await page.$eval('.compare-many-scroll', (e) => [e.scrollWidth, e.clientWidth]);
    assert.ok(scrollWidth <= clientWidth, `the table scrolls sideways at 1,400 px (${scrollWidth} > ${clientWidth})`);
    await screenshot(page, 'compare-many');

    // Another baseline: the differences are taken against it.
    await page.selectOption('[data-testid="compare-many-baseline"]', 'C TP2');
    await page.waitForFunction(() =>
      document.querySelector('[data-testid="compare-many-row"][data-name="C TP2"] td[data-col="10"]')?.textContent === 'baseline');
    const againstC = await rowOf(page, 'A default');
    assert.equal(againstC.deltaGpus, a.gpus - cli['C TP2'].gpus);

    // CSV and Markdown downloads carry the same table.
    const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="compare-many-csv"]')]);
    const csv = (await readFile(await csvDownload.path(), 'utf8')).trim().split(/\r?\n/);
    assert.equal(csv.length, 5, 'a header and 4 plans');
    assert.match(csv[0], /^Plan,Model,GPU,TP,Goodput \[req\/s\],Replicas,GPUs,\$\/month/);
    const csvB = csv.find((l) => l.startsWith('B double price,'));
    assert.ok(csvB.includes(`,${cli['B double price'].costMonth.toFixed(2)},`), csvB);
    assert.ok(csv.find((l) => l.startsWith('C TP2,')).endsWith(',baseline,baseline,baseline'));
    const [mdDownload] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="compare-many-markdown"]')]);
    const md = await readFile(await mdDownload.path(), 'utf8');
    assert.ok(md.includes(`| ${rows['D triple peak'].cells[7]} |`), 'the Markdown shows the page\'s money');
    assert.ok(md.includes('Differences are against C TP2.'));
    assert.equal(md.split('\n').filter((l) => l.startsWith('|')).length, 6);
    assertNoErrors(errors);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a plan saved while its search runs gets the goodput the search finds', async () => {
  // The panels are built once the first search has ended; an edit starts the next one,
  // and the plan is saved before that ends.
  const { page, errors } = await h.openPage('/');
  await waitForRunDone(page);
  await page.waitForSelector('[data-testid="save-name"]');
  await enter(page, 'slo.ttft_s', '1500');
  await page.waitForFunction(() => document.querySelector('[data-testid="run-status"]')?.dataset.phase !== 'done', null, { timeout: 5_000, polling: 20 });
  await page.fill('[data-testid="save-name"]', 'Saved mid-run');
  await page.click('[data-testid="save-plan"]');
  const meta = '[data-testid="saved-plan"][data-name="Saved mid-run"] .saved-meta';
  await page.waitForSelector(meta);
  assert.match(await page.textContent(meta), /goodput not computed/, 'saved before the search ended');
  await waitForRunDone(page);
  await page.waitForFunction((sel) => /goodput [1-9][\d.]* req\/s/.test(document.querySelector(sel)?.textContent ?? ''), meta, { timeout: 10_000 });
  // And it is stored so: a reload reads it back with its goodput.
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('goodput.named.v1') ?? '[]'));
  const saved = stored.find((p) => p.name === 'Saved mid-run');
  assert.ok(saved?.goodput_rps > 0, `stored goodput: ${saved?.goodput_rps}`);
  assertNoErrors(errors);
  await page.close();
});
