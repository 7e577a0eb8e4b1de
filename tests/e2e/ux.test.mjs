// The planner as it is used on a keyboard, a phone and paper: a half-typed number never
// runs and the status says it waits; a price edit re-prices without re-simulating; the
// header fits a 390 px phone with a link past the inputs; the summary prints on one page
// of Letter and of A4 with the date and the plan's link, and the planner prints its
// inputs; PNG exports are twice the canvas size; the keyboard reaches every chart and
// every heatmap cell.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import {
  assertNoErrors,
  decodePng,
  pdfPageCount,
  readValue,
  runsStarted,
  screenshot,
  startHarness,
  waitForRunDone,
} from './harness.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const STATUS = '[data-testid="run-status"]';

/** Gives a run wrongly started by a half-typed value the time to show (well past the pause). */
const pastThePause = (page) => page.waitForTimeout(1_500);

test('a number is applied once typed whole: "1e9" never runs as 1, "12." never as 12', async () => {
  const { page, errors } = await h.openPlanner();
  const runs0 = await runsStarted(page);
  const seed = '[data-testid="input-run.seed"]';
  await page.click(seed, { clickCount: 3 });
  // At typing pace; "1e" is not a number yet, so even a pause does not apply it.
  await page.keyboard.type('1e', { delay: 150 });
  await pastThePause(page);
  assert.equal(await runsStarted(page), runs0, 'no run of the "1" typed first');
  assert.equal(await page.getAttribute(STATUS, 'data-typing'), 'true');
  assert.match(await page.textContent('[data-testid="run-phase"]'), /Waiting for you to finish typing/);
  assert.equal(await page.textContent('[data-testid="error-run.seed"]'), '', 'not checked while typed');
  await page.keyboard.type('9');
  await page.keyboard.press('Tab');
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid="run-status"]')?.dataset.runs) > n, runs0);
  assert.equal(await runsStarted(page), runs0 + 1, 'one run, of 1e9');
  assert.equal(await page.getAttribute(STATUS, 'data-typing'), 'false');
  assert.equal(await page.inputValue(seed), '1e9');

  const peak = '[data-testid="input-traffic.peak_rate_rps"]';
  await page.click(peak, { clickCount: 3 });
  await page.keyboard.type('12.', { delay: 150 });
  await pastThePause(page);
  assert.equal(await runsStarted(page), runs0 + 1, 'no run of the "12" before the decimals');
  assert.match(await page.textContent('[data-testid="run-phase"]'), /Waiting for you to finish typing/);
  await page.keyboard.type('5');
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid="run-status"]')?.dataset.runs) > n, runs0 + 1);
  await waitForRunDone(page);
  assert.equal(await runsStarted(page), runs0 + 2, 'one run, of 12.5');
  assert.match(await page.textContent('[data-testid="run-phase"]'), /Up to date/);
  assert.match(await page.textContent('[data-testid="print-facts"]'), /Peak rate12\.5 req\/s/, 'the plan has 12.5');
  assertNoErrors(errors);
});

test('a price or spare-replica edit re-prices the cards at once, without a new simulation', async () => {
  const { page, errors } = await h.openPlanner();
  const runs0 = await runsStarted(page);
  const cost0 = await readValue(page, 'cost-per-month-usd');
  const price = '[data-testid="input-hardware.gpu_hour_usd"]';
  const price0 = Number(await page.inputValue(price));
  await page.fill(price, String(price0 * 2));
  await page.press(price, 'Enter');
  await page.waitForFunction((c) => Number(document.querySelector('[data-testid="cost-per-month-usd"]')?.dataset.value) !== c, cost0);
  const cost1 = await readValue(page, 'cost-per-month-usd');
  assert.ok(Math.abs(cost1 - 2 * cost0) <= 1e-6 * cost0, `twice the price, twice the cost (${cost0} → ${cost1})`);
  // Fleet sizing: more spare replicas, more GPUs at the same goodput.
  const spares = '[data-testid="input-planning.redundancy"]';
  const gpus1 = await readValue(page, 'gpus-total');
  await page.fill(spares, String(Number(await page.inputValue(spares)) + 2));
  await page.press(spares, 'Enter');
  await page.waitForFunction((c) => Number(document.querySelector('[data-testid="cost-per-month-usd"]')?.dataset.value) > c, cost1);
  const tp = Number(await page.inputValue('[data-testid="input-hardware.tp_degree"]'));
  assert.equal(await readValue(page, 'gpus-total'), gpus1 + 2 * tp, 'two more replicas');
  await pastThePause(page);
  assert.equal(await runsStarted(page), runs0, 'no new search or sweep');
  assert.equal(await page.getAttribute(STATUS, 'data-phase'), 'done');
  assertNoErrors(errors);
});

test('at 390 px the header stays inside the screen and a link jumps past the inputs', async () => {
  const { page, errors } = await h.openPage('/', { waitFor: STATUS, viewport: { width: 390, height: 844 } });
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `no horizontal scrolling at 390 px (content is ${width} px wide)`);
  const outside = await page.$$eval('.app-header button, .app-header a, .app-header h1', (els) =>
    els
      .map((e) => ({ what: e.textContent.trim(), box: e.getBoundingClientRect() }))
      .filter(({ box }) => box.width > 0 && (box.left < 0 || box.right > 390))
      .map(({ what, box }) => `${what}: ${box.left}..${box.right}`),
  );
  assert.deepEqual(outside, [], 'every header control inside the 390 px screen');
  await page.click('[data-testid="jump-results"]');
  // Scroll offsets are whole pixels and the layout is not: the target may sit a fraction
  // of a pixel above the top.
  await page.waitForFunction(() => {
    const top = document.querySelector('[data-testid="run-status"]').getBoundingClientRect().top;
    return top > -1 && top < innerHeight / 2;
  });
  await waitForRunDone(page);
  // Two-panel charts stack on a phone, in a taller canvas; the desktop keeps them side by side.
  for (const id of ['chart-roofline', 'chart-latency']) {
    const height = await page.$eval(`canvas[data-testid="${id}"]`, (c) => c.clientHeight);
    assert.equal(height, 480, `${id} is stacked at 390 px`);
  }
  // The best settings wrap rather than end in an ellipsis.
  const cut = await page.$eval('[data-testid="best-settings"]', (e) => e.scrollWidth > e.clientWidth);
  assert.equal(cut, false, 'the best settings are shown whole');
  // A long field label breaks after an underscore, not inside a word.
  assert.equal(await page.locator('label[for="in-engine-max_num_batched_tokens"] wbr').count(), 3);
  await screenshot(page, 'ux-phone-390');
  assertNoErrors(errors);
});

test('the summary prints on one page of Letter and of A4 with the date and link; the planner prints its inputs', async () => {
  const { page, errors } = await h.openPlanner();
  await page.click('[data-testid="view-finance"]');
  await page.waitForSelector('[data-testid="answer"][data-ready="true"]');
  await page.emulateMedia({ media: 'print' });
  const today = await page.evaluate(() => new Date().toISOString().slice(0, 10));
  assert.equal(await page.isVisible('[data-testid="print-stamp"]'), true, 'the stamp prints');
  assert.equal(await page.textContent('[data-testid="print-date"]'), today);
  const link = await page.getAttribute('[data-testid="print-link"]', 'href');
  assert.ok(link.startsWith(`${h.baseUrl}/#p=`), link);
  assert.equal(await page.textContent('[data-testid="print-link"]'), link, 'the link is written out');
  for (const format of ['Letter', 'A4']) {
    const pages = pdfPageCount(await page.pdf({ format }));
    assert.equal(pages, 1, `the summary on ${format}: ${pages} pages`);
  }
  await screenshot(page, 'ux-print-summary');
  await page.emulateMedia({ media: 'screen' });
  assert.equal(await page.isVisible('[data-testid="print-stamp"]'), false, 'the stamp is for paper only');

  await page.click('[data-testid="view-planner"]');
  await page.waitForSelector('[data-testid="input-traffic.peak_rate_rps"]');
  assert.equal(await page.isVisible('[data-testid="print-facts"]'), false);
  await page.emulateMedia({ media: 'print' });
  assert.equal(await page.isVisible('[data-testid="print-facts"]'), true, 'the inputs print in brief');
  assert.equal(await page.isVisible('[data-testid="input-traffic.peak_rate_rps"]'), false, 'not the input boxes');
  const facts = Object.fromEntries(
    await page.$$eval('[data-testid="print-facts"] dt', (dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling.textContent])),
  );
  for (const topic of ['Model preset', 'GPU preset', 'Peak rate', 'TTFT objective', 'Price', 'Engine']) {
    assert.ok(facts[topic]?.length > 0, `the printout names the ${topic}: ${JSON.stringify(facts)}`);
  }
  assert.match(facts['Peak rate'], /^\d+(\.\d+)? req\/s$/);
  assert.equal(await page.isVisible('[data-testid="print-facts"] [data-testid="print-link"]'), true);
  await screenshot(page, 'ux-print-planner');
  await page.emulateMedia({ media: 'screen' });
  assertNoErrors(errors);
});

test('PNG exports are twice the canvas size under their heading; the keyboard reaches every chart and every heatmap cell', async () => {
  const { page, errors } = await h.openPlanner();
  const heading = Number(await page.getAttribute('[data-testid="export-panel"]', 'data-heading-px'));
  assert.ok(heading > 0, 'the export panel states its heading height');
  for (const id of ['chart-attainment', 'chart-latency', 'chart-heatmap']) {
    const css = await page.$eval(`canvas[data-testid="${id}"]`, (c) => [c.clientWidth, c.clientHeight]);
    const [png] = await Promise.all([page.waitForEvent('download'), page.click(`[data-testid="export-${id}-png"]`)]);
    const image = decodePng(await readFile(await png.path()));
    const want = [2 * css[0], 2 * (css[1] + heading)];
    assert.deepEqual([image.width, image.height], want, `${id}: ${image.width}×${image.height} for ${css} and a ${heading} px heading`);
  }

  // Tab from the top reaches every chart panel.
  const charts = await page.$$eval('canvas[data-testid^="chart-"]', (cs) =>
    cs.filter((c) => c.offsetParent !== null).map((c) => c.dataset.testid));
  assert.ok(charts.length >= 4, `the planner's charts: ${charts}`);
  const reached = new Set();
  await page.focus('[data-testid="input-traffic.peak_rate_rps"]');
  for (let i = 0; i < 600 && charts.some((c) => !reached.has(c)); i += 1) {
    await page.keyboard.press('Tab');
    reached.add(await page.evaluate(() => document.activeElement?.dataset.testid));
  }
  assert.deepEqual(charts.filter((c) => !reached.has(c)), [], 'every chart takes the focus');
  // Home and End take a chart's readout to its ends; Shift makes an arrow's step bigger.
  const readout = () => page.textContent('[data-testid="chart-attainment-readout"]');
  const rateOf = (text) => Number(text.match(/^([\d.]+) req\/s/)?.[1]);
  await page.focus('canvas[data-testid="chart-attainment"]');
  await page.keyboard.press('Home');
  const first = rateOf(await readout());
  await page.keyboard.press('End');
  const last = rateOf(await readout());
  assert.ok(first < last, `Home ${first} req/s, End ${last} req/s`);
  for (let i = 0; i < 5; i += 1) await page.keyboard.press('ArrowLeft');
  const small = rateOf(await readout());
  await page.keyboard.press('End');
  await page.keyboard.press('Shift+ArrowLeft');
  assert.equal(rateOf(await readout()), small, 'one Shift+← moves as far as five ←');
  for (const id of ['chart-roofline', 'chart-latency']) {
    const height = await page.$eval(`canvas[data-testid="${id}"]`, (c) => c.clientHeight);
    assert.equal(height, 280, `${id} is side by side on a desktop`);
  }

  // The arrows walk the whole heatmap, row by row.
  const cells = await page.$$eval('[data-testid^="heatmap-cell-"]', (els) => els.map((e) => e.dataset.testid));
  const rows = 1 + Math.max(...cells.map((c) => Number(c.split('-')[2])));
  const cols = 1 + Math.max(...cells.map((c) => Number(c.split('-')[3])));
  assert.equal(cells.length, rows * cols);
  await page.focus('[data-testid="heatmap-cell-0-0"]');
  const visited = new Set();
  const here = () => page.evaluate(() => document.activeElement?.dataset.testid);
  for (let r = 0; r < rows; r += 1) {
    await page.keyboard.press('Home');
    for (let c = 0; c < cols; c += 1) {
      visited.add(await here());
      await page.keyboard.press('ArrowRight');
    }
    await page.keyboard.press('ArrowUp');
  }
  assert.deepEqual(cells.filter((c) => !visited.has(c)), [], 'every cell is reached by the arrows');
  await page.keyboard.press('ArrowDown');
  const cell = `heatmap-cell-${rows - 2}-${cols - 1}`;
  assert.equal(await here(), cell);
  // Enter applies the cell's settings.
  const seqs = await page.getAttribute(`[data-testid="${cell}"]`, 'data-max-num-seqs');
  await page.keyboard.press('Enter');
  assert.equal(await page.inputValue('[data-testid="input-engine.max_num_seqs"]'), seqs);
  assertNoErrors(errors);
});
