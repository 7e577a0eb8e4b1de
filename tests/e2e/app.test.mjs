// The planner page in headless Chromium: same numbers as the CLI, presets, validation,
// charts, progress and cancel, and a responsive page while simulations run.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoErrors, enter, findNumber, readValue, runAgainTimed, runCliJson, screenshot, startHarness, waitForRerun, waitForRunDone, watchDeferred } from './harness.mjs';

/** Result cells that must equal the CLI's `goodput plan --json`, by JSON key. */
const CELLS = {
  'goodput-rps': 'goodput_rps',
  'replicas-total': 'replicas_total',
  'gpus-total': 'gpus_total',
  'cost-per-month-usd': 'cost_per_month_usd',
  'cost-per-compliant-request-usd': 'cost_per_compliant_request_usd',
};

/** Longest wait for a whole search and knob sweep [ms]. */
const RUN_TIMEOUT_MS = 150_000;

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const phase = (page) => page.getAttribute('[data-testid="run-status"]', 'data-phase');

/** The light theme's main series colour (`Theme::accent` in src/charts.rs). */
const ACCENT = [0x1d, 0x4e, 0xd8];
/** The histograms' bars: the accent at 70% over the white background. */
const BARS = ACCENT.map((c) => Math.round(0.7 * c + 0.3 * 255));

/**
 * Where a chart's own data is drawn: the pixels within a small distance of `rgb` (the
 * series colour; axes, grid and text are greys), and how many columns of the canvas
 * they reach. With `rgb` null, pixels of any saturated colour (the heatmap's scale).
 */
async function seriesInk(page, testid, rgb) {
  return page.evaluate(([id, rgb]) => {
    const c = document.querySelector(`[data-testid="${id}"]`);
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    const columns = new Set();
    let n = 0;
    for (let y = 0; y < c.height; y += 1) {
      for (let x = 0; x < c.width; x += 1) {
        const i = 4 * (y * c.width + x);
        const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
        const hit = rgb
          ? Math.abs(r - rgb[0]) + Math.abs(g - rgb[1]) + Math.abs(b - rgb[2]) <= 24
          : Math.max(r, g, b) - Math.min(r, g, b) > 60;
        if (hit) {
          n += 1;
          columns.add(x);
        }
      }
    }
    return { n, spread: columns.size / c.width, width: c.width, cssWidth: c.clientWidth };
  }, [testid, rgb]);
}

test('first load: no console errors and the same numbers as `goodput plan --json`', async () => {
  const { page, errors } = await h.openPlanner();
  const cli = await runCliJson(['plan', '--json']);
  for (const [testid, key] of Object.entries(CELLS)) {
    const expected = findNumber(cli, key);
    assert.equal(typeof expected, 'number', `the CLI's JSON has no number "${key}"`);
    const shown = await readValue(page, testid);
    assert.equal(shown, expected, `${testid}: page ${shown}, CLI ${expected}`);
  }
  assert.match(
    await page.textContent('[data-testid="run-timing"]'),
    /^Last run: goodput search [\d,]+ ms; search and knob sweep [\d,]+ ms\.$/,
  );
  await screenshot(page, 'app-default');
  // A finished run's bar is full: what was done is all there was (the total was an estimate).
  const bar = await page.$eval('[data-testid="run-progress"]', (p) => [p.value, p.dataset.done, p.dataset.total]);
  assert.ok(bar[0] === 1 && Number(bar[1]) > 0 && bar[1] === bar[2], `progress when done: ${bar}`);
  // "Run again" of the same plan searches again but keeps its knob sweep, and says so.
  assert.match(await runAgainTimed(page), /^Last run: goodput search [\d,]+ ms; the knob sweep of this plan was kept\.$/);
  assertNoErrors(errors);
});

test('picking another GPU or model preset changes the results', async () => {
  const { page, errors } = await h.openPlanner();
  const before = await readValue(page, 'goodput-rps');
  const bandwidth = await page.inputValue('[data-testid="input-hardware.mem_bandwidth_bytes_per_s"]');

  await page.selectOption('[data-testid="preset-gpu"]', 'h200');
  await waitForRerun(page);
  assert.notEqual(await page.inputValue('[data-testid="input-hardware.mem_bandwidth_bytes_per_s"]'), bandwidth);
  const onH200 = await readValue(page, 'goodput-rps');
  assert.ok(onH200 > before, `H200 goodput ${onH200} should beat H100's ${before}`);

  await page.selectOption('[data-testid="preset-model"]', 'mixtral-8x7b');
  await waitForRerun(page);
  const big = await readValue(page, 'goodput-rps');
  assert.notEqual(big, onH200, 'a 47B MoE model must change the goodput');
  assert.ok(big < onH200, `Mixtral goodput ${big} should be below 8B's ${onH200}`);
  await screenshot(page, 'app-h200-mixtral');
  assertNoErrors(errors);
});

test('an invalid value shows its message, keeps the last results dimmed, and recovers', async () => {
  const { page, errors } = await h.openPlanner();
  const before = await readValue(page, 'goodput-rps');
  const field = '[data-testid="input-hardware.mem_bandwidth_bytes_per_s"]';
  const error = '[data-testid="error-hardware.mem_bandwidth_bytes_per_s"]';
  const original = await page.inputValue(field);

  await page.fill(field, '3.3x');
  await page.waitForSelector(`${error}:has-text("must be a number")`);
  assert.equal(await page.getAttribute('[data-testid="results"]', 'data-stale'), 'true');
  assert.equal(await page.getAttribute(field, 'aria-invalid'), 'true');
  assert.equal(await readValue(page, 'goodput-rps'), before, 'the last good goodput stays');
  assert.match(await page.textContent('[data-testid="problem-banner"]'), /must be a number/);
  // Nothing runs the plan before the edit as if it were the one on screen.
  for (const button of ['rerun', 'fresh-seed', 'shootout-run', 'day-plan']) {
    assert.equal(await page.isDisabled(`[data-testid="${button}"]`), true, `${button} is off`);
    assert.match(await page.getAttribute(`[data-testid="${button}"]`, 'title'), /^An input has a problem: fix it first/);
  }
  assert.match(await page.textContent('[data-testid="run-phase"]'), /^An input has a problem: the results shown are for the plan before that edit\./);
  await screenshot(page, 'app-invalid-input');

  await page.fill(field, original);
  await page.waitForFunction(
    () => document.querySelector('[data-testid="results"]')?.dataset.stale === 'false',
  );
  assert.equal((await page.textContent(error)).trim(), '');
  assert.equal(await page.$('[data-testid="problem-banner"]'), null);
  await page.waitForSelector('[data-testid="rerun"]:not([disabled])');
  assert.equal(await readValue(page, 'goodput-rps'), before);
  assertNoErrors(errors);
});

test('chart canvases are drawn, HiDPI-sized and not blank', async () => {
  const { page, errors } = await h.openPlanner();
  // Each chart's series, in its own colour, across most of the plot: axes, grid and a
  // legend swatch alone do not pass.
  for (const [id, rgb, spread] of [
    ['chart-attainment', ACCENT, 0.5],
    ['chart-latency', ACCENT, 0.5],
    ['chart-heatmap', null, 0.5],
    ['chart-roofline', ACCENT, 0.5],
    ['chart-prompt-lengths', BARS, 0.4],
    ['chart-output-lengths', BARS, 0.4],
  ]) {
    const ink = await seriesInk(page, id, rgb);
    const { width, cssWidth } = ink;
    assert.ok(ink.n > 300, `${id}: only ${ink.n} pixels of the series colour`);
    assert.ok(ink.spread > spread, `${id}: the series spans only ${(ink.spread * 100).toFixed(0)}% of the width`);
    const dpr = await page.evaluate(() => window.devicePixelRatio);
    assert.equal(width, Math.round(cssWidth * dpr), `${id}: backing store not sized by devicePixelRatio`);
  }
  // Readouts: by pointer, and by keyboard for people who do not use one.
  const chart = await page.$('[data-testid="chart-attainment"]');
  await chart.scrollIntoViewIfNeeded();
  const box = await chart.boundingBox();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5);
  await page.waitForFunction(() =>
    /req\/s: [\d.]+% of requests/.test(document.querySelector('[data-testid="chart-attainment-readout"]').textContent),
  );
  await page.focus('[data-testid="chart-roofline"]');
  await page.keyboard.press('ArrowRight');
  assert.match(await page.textContent('[data-testid="chart-roofline-readout"]'), /sequences: step [\d.]+ ms/);
  assertNoErrors(errors);
});

test('a long run shows progress, keeps the page responsive, and can be cancelled', async () => {
  const { page, errors } = await h.openPlanner();
  const before = await readValue(page, 'goodput-rps');
  // More replications and longer runs: enough work to watch it go.
  // Both applied at once, so one run starts (not a first one, restarted a moment later).
  await enter(page, 'run.num_requests', '20000');
  await enter(page, 'run.replications', '200');
  // The expected work is known from the start, before any progress is drawn.
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.dataset.phase === 'search',
    null,
    { timeout: 60_000, polling: 'raf' },
  );
  assert.ok(
    Number(await page.getAttribute('[data-testid="run-progress"]', 'data-total')) > 0,
    'the progress bar knows the expected work as the search starts',
  );
  assert.doesNotMatch(await page.textContent('[data-testid="run-phase"]'), /of ~0 /);
  await page.waitForFunction(
    () => {
      const p = document.querySelector('[data-testid="run-progress"]');
      const phase = document.querySelector('[data-testid="run-status"]')?.dataset.phase;
      return phase === 'search' && Number(p?.dataset.done) > 0;
    },
    null,
    { timeout: 60_000, polling: 50 },
  );
  const done = Number(await page.getAttribute('[data-testid="run-progress"]', 'data-done'));
  const total = Number(await page.getAttribute('[data-testid="run-progress"]', 'data-total'));
  assert.ok(done > 0 && total > done, `progress ${done}/${total}`);

  // Clicks on an input while the search runs: measured inside the page, from the moment
  // the click is queued to the moment its handler runs.
  const latencies = await page.evaluate(async () => {
    const el = document.querySelector('[data-testid="input-traffic.peak_rate_rps"]');
    const out = [];
    for (let i = 0; i < 20; i += 1) {
      await new Promise((resolve) => {
        const t0 = performance.now();
        el.addEventListener(
          'click',
          () => {
            out.push(performance.now() - t0);
            resolve();
          },
          { once: true },
        );
        setTimeout(() => el.click(), 0);
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return out;
  });
  assert.equal(await phase(page), 'search', 'the search was still running while clicking');
  const worst = Math.max(...latencies);
  console.log(`click latency during a search: max ${worst.toFixed(1)} ms over ${latencies.length} clicks`);
  assert.ok(worst < 100, `a click took ${worst.toFixed(1)} ms to be handled (all: ${latencies.map((x) => x.toFixed(1))})`);
  await screenshot(page, 'app-running');

  await page.click('[data-testid="cancel-run"]');
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.dataset.phase === 'cancelled',
  );
  await page.waitForTimeout(500);
  assert.equal(await phase(page), 'cancelled', 'a cancelled run stays cancelled');
  assert.equal(await readValue(page, 'goodput-rps'), before, 'cancelling keeps the last results');
  assertNoErrors(errors);
});

test('the panels below the results come after the first run, or at once when scrolled to', async () => {
  // What the page holds while its first run goes on, read in one go.
  const below = (page) =>
    page.evaluate(() => ({
      phase: document.querySelector('[data-testid="run-status"]')?.dataset.phase,
      pending: document.querySelector('[data-testid="panels-pending"]') !== null,
      panels: ['calibrate-panel', 'shootout-panel', 'disagg-panel', 'day-panel', 'export-panel', 'saved-panel']
        .filter((id) => document.querySelector(`[data-testid="${id}"]`) !== null),
      glossary: document.getElementById('glossary') !== null,
    }));
  const running = (p) => p === 'search' || p === 'sweep';

  // A first run long enough to look at while it goes on (minutes of work).
  const long = Buffer.from('{"run":{"num_requests":20000,"replications":400}}').toString('base64url');
  const { page, errors } = await h.openPage(`/#p=1j${long}&view=planner`, { waitFor: '[data-testid="run-status"]' });
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.dataset.phase === 'search',
    null,
    { timeout: 60_000, polling: 'raf' },
  );
  const during = await below(page);
  assert.ok(running(during.phase), `the first run is on (${during.phase})`);
  assert.ok(during.pending, 'a line says what follows');
  assert.deepEqual(during.panels, [], 'no panel below the results is built during the first run');
  assert.equal(during.glossary, false, 'nor the glossary');

  // Scrolling towards them builds them, run or no run.
  await page.evaluate(() => document.querySelector('[data-testid="panels-pending"]').scrollIntoView());
  await page.waitForSelector('[data-testid="shootout-panel"]', { timeout: 10_000 });
  const scrolled = await below(page);
  assert.ok(running(scrolled.phase), `the first run is still on (${scrolled.phase})`);
  assert.equal(scrolled.pending, false, 'the line gives way to the panels');
  assert.equal(scrolled.panels.length, 6, `every panel is built: ${scrolled.panels}`);
  assert.ok(scrolled.glossary, 'and the glossary');
  // Built once, they come back with the planner after another view, run or no run.
  await page.click('[data-testid="view-finance"]');
  await page.waitForSelector('[data-testid="shootout-panel"]', { state: 'detached' });
  await page.click('[data-testid="view-planner"]');
  await page.waitForSelector('[data-testid="run-status"]');
  const again = await below(page);
  assert.ok(running(again.phase), `the first run is still on (${again.phase})`);
  assert.equal(again.panels.length, 6, `the panels are back with the planner: ${again.panels}`);
  await page.click('[data-testid="cancel-run"]');

  // Printing builds them too, so that a printout made during the first run has them.
  const { page: printed, errors: printErrors } = await h.openPage(`/#p=1j${long}&view=planner`, {
    waitFor: '[data-testid="panels-pending"]',
  });
  await printed.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
  await printed.waitForSelector('[data-testid="shootout-panel"]', { timeout: 10_000 });
  const print = await below(printed);
  assert.ok(running(print.phase), `the first run is still on (${print.phase})`);
  assert.equal(print.panels.length, 6, `every panel is built for the printout: ${print.panels}`);
  await printed.click('[data-testid="cancel-run"]');

  // Without scrolling, they come when the first run ends.
  const { page: plain, errors: plainErrors } = await h.openPage('/', { waitFor: '[data-testid="run-status"]' });
  await waitForRunDone(plain);
  const after = await below(plain);
  assert.equal(after.pending, false);
  assert.equal(after.panels.length, 6, `every panel is built once the run is done: ${after.panels}`);
  assertNoErrors(errors);
  assertNoErrors(printErrors);
  assertNoErrors(plainErrors);
});

/** `LONG_SEARCH_MS` in src/components/deferred.rs: when the page builds the charts during a
 * first search without an answer, and the inputs below the fold in any case [ms]. */
const LONG_SEARCH_MS = 1000;

test('the inputs below the fold, the charts and the print-only facts come after the first run; inputs and charts while a long first search goes on', async () => {
  const charts = ['chart-attainment', 'chart-latency', 'chart-heatmap', 'chart-roofline'];
  const groups = ['group-plan', 'group-model', 'group-hardware', 'group-traffic', 'group-slo', 'group-engine', 'group-planning'];
  // What the page holds, read in one go, and how long ago the planner mounted [ms].
  const held = (page) =>
    page.evaluate((ids) => ({
      phase: document.querySelector('[data-testid="run-status"]')?.dataset.phase,
      pending: document.querySelector('[data-testid="charts-pending"]') !== null,
      charts: ids.filter((id) => document.querySelector(`[data-testid="${id}"]`) !== null),
      analytic: document.querySelector('[data-testid="analytic-warnings"]') !== null,
      printFacts: document.querySelector('[data-testid="print-facts"] dl div') !== null,
      groups: [...document.querySelectorAll('fieldset.group')].map((g) => g.dataset.testid),
      sinceMount: performance.now() - window.__deferredAt,
    }), charts);

  // The default plan: the answer comes first; the rest once the knob sweep is over too.
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="run-status"]', init: watchDeferred });
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.dataset.phase === 'sweep',
    null,
    { timeout: 60_000, polling: 'raf' },
  );
  const sweeping = await held(page);
  assert.equal(sweeping.phase, 'sweep', 'the first answer is in and the knob sweep goes on');
  assert.notEqual(await readValue(page, 'goodput-rps'), '', 'the answer is on the page');
  assert.ok(Number.isFinite(sweeping.sinceMount), 'the planner mounted with placeholders');
  if (sweeping.sinceMount < LONG_SEARCH_MS - 100) {
    assert.ok(sweeping.pending, 'a line says what follows');
    assert.deepEqual(sweeping.charts, [], 'no chart is built while the first run goes on');
    assert.equal(sweeping.analytic, false, 'nor the analytic checks');
    assert.deepEqual(sweeping.groups, ['group-plan', 'group-model'], 'the inputs below the model follow');
  } else {
    // A machine this slow gets the charts and inputs from the timer before the answer.
    console.log(`the first answer came ${sweeping.sinceMount.toFixed(0)} ms after the mount: charts and inputs not checked while sweeping`);
  }
  assert.equal(sweeping.printFacts, false, 'the facts a printout starts with wait for the run');
  await waitForRunDone(page);
  await page.waitForSelector('[data-testid="chart-roofline"]', { timeout: 10_000 });
  const done = await held(page);
  assert.equal(done.pending, false, 'the line gives way to the charts');
  assert.deepEqual(done.charts, charts, 'every chart is built once the run is done');
  assert.ok(done.analytic, 'and the analytic checks');
  assert.ok(done.printFacts, 'and the facts a printout starts with');
  assert.deepEqual(done.groups, groups, 'and every input group');

  // A first search that takes long shows its progress on the charts before its answer,
  // and every input is there to change.
  const long = Buffer.from('{"run":{"num_requests":20000,"replications":400}}').toString('base64url');
  const { page: slow, errors: slowErrors } = await h.openPage(`/#p=1j${long}&view=planner`, {
    waitFor: '[data-testid="charts-pending"]',
  });
  const early = await held(slow);
  assert.deepEqual(early.groups, ['group-plan', 'group-model'], 'at first, the inputs below the model follow');
  await slow.waitForSelector('[data-testid="chart-attainment"]', { timeout: 10_000 });
  await slow.waitForSelector('[data-testid="group-planning"]', { timeout: 10_000 });
  const searching = await held(slow);
  assert.equal(searching.phase, 'search', 'the first search is still on');
  assert.deepEqual(searching.charts, charts, `every chart is built: ${searching.charts}`);
  assert.deepEqual(searching.groups, groups, 'every input group is there to edit');
  assert.equal(searching.printFacts, false, 'the print-only facts wait for the run');
  // Printing builds them at once.
  await slow.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
  await slow.waitForSelector('[data-testid="print-facts"] dl div', { state: 'attached', timeout: 5_000 });
  assert.equal((await held(slow)).phase, 'search', 'the first search is still on');
  await slow.click('[data-testid="cancel-run"]');

  // Where the inputs stack above the results, they are all built at once: built later,
  // they would push the results down.
  const { page: narrow, errors: narrowErrors } = await h.openPage('/', {
    waitFor: '[data-testid="charts-pending"]',
    viewport: { width: 900, height: 900 },
  });
  assert.deepEqual((await held(narrow)).groups, groups, 'every input group at once at 900 px');
  assertNoErrors(errors);
  assertNoErrors(slowErrors);
  assertNoErrors(narrowErrors);
});

/** The goodput of the shared planner page, and a fresh browser context to compare with it. */
async function expectedAndFreshContext() {
  const { page: reference } = await h.openPlanner();
  const expected = await readValue(reference, 'goodput-rps');
  const context = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
  return { expected, context };
}

test('without workers the page says so, runs in slices on its own thread, and gets the same goodput', async () => {
  const { expected, context } = await expectedAndFreshContext();
  try {
    const page = await context.newPage();
    // Every worker fails to start: its script throws before it can load the module.
    await page.addInitScript(() => {
      const failing = URL.createObjectURL(new Blob(['throw new Error("no worker here")']));
      const Native = window.Worker;
      window.Worker = class extends Native {
        constructor() {
          super(failing);
        }
      };
    });
    await page.goto(`${h.baseUrl}/`);
    await page.waitForFunction(
      () => /Workers unavailable/.test(document.querySelector('[data-testid="run-mode"]')?.textContent ?? ''),
      null,
      { timeout: 30_000 },
    );
    await waitForRunDone(page);
    assert.equal(await readValue(page, 'goodput-rps'), expected);
  } finally {
    await context.close();
  }
});

test('while the workers load, the first search runs on the page; then the early workers take over', async () => {
  const { expected, context } = await expectedAndFreshContext();
  try {
    const page = await context.newPage();
    await page.addInitScript(() => {
      window.workersCreated = 0;
      const Native = window.Worker;
      window.Worker = class extends Native {
        constructor(...args) {
          super(...args);
          window.workersCreated += 1;
        }
      };
      // The page hands its module to the workers (a message that is not a string); that
      // message is held back until the test releases it.
      let release = () => {};
      const held = new Promise((resolve) => {
        release = resolve;
      });
      window.releaseWorkers = release;
      const post = Native.prototype.postMessage;
      Native.prototype.postMessage = function (...args) {
        if (typeof args[0] === 'string') return post.apply(this, args);
        held.then(() => post.apply(this, args));
      };
    });
    await page.goto(`${h.baseUrl}/`);
    await page.waitForFunction(
      () => ['sweep', 'done'].includes(document.querySelector('[data-testid="run-status"]')?.dataset.phase),
      null,
      { timeout: RUN_TIMEOUT_MS, polling: 50 },
    );
    assert.doesNotMatch(await page.textContent('[data-testid="run-mode"]'), /^\d+ workers?$/);
    assert.equal(await readValue(page, 'goodput-rps'), expected);

    await page.evaluate(() => window.releaseWorkers());
    await page.waitForFunction(
      () => /^\d+ workers?$/.test(document.querySelector('[data-testid="run-mode"]')?.textContent ?? ''),
      null,
      { timeout: 30_000 },
    );
    // The workers the page started before the app loaded were adopted, not started twice.
    const { created, cores } = await page.evaluate(() => ({
      created: window.workersCreated,
      cores: navigator.hardwareConcurrency,
    }));
    const poolSize = cores >= 1 ? Math.min(Math.floor(cores), 8) : 2;
    assert.equal(created, poolSize, `${created} workers created for a pool of ${poolSize}`);
    await waitForRunDone(page);
    assert.equal(await readValue(page, 'goodput-rps'), expected);
  } finally {
    await context.close();
  }
});

test('the first search takes what a worker ran ahead while the page loaded; "Run again" simulates afresh', async () => {
  const { expected, context } = await expectedAndFreshContext();
  try {
    const page = await context.newPage();
    // Counts the simulation jobs the page posts to workers and the results workers send
    // unasked, and notes the jobs posted by the time the goodput card first holds a
    // value (the knob sweep posts its jobs in a later task).
    await page.addInitScript(() => {
      window.posted = 0;
      window.unasked = 0;
      window.postedByAnswer = undefined;
      const Native = window.Worker;
      const post = Native.prototype.postMessage;
      Native.prototype.postMessage = function (...args) {
        if (typeof args[0] === 'string' && args[0].startsWith('{"sim"')) {
          window.posted += JSON.parse(args[0]).sim.jobs.length;
        }
        return post.apply(this, args);
      };
      window.Worker = class extends Native {
        constructor(...args) {
          super(...args);
          this.addEventListener('message', (e) => {
            if (typeof e.data === 'string' && e.data.startsWith('{"prefetched"')) {
              window.unasked += JSON.parse(e.data).prefetched.results.length;
            }
          });
        }
      };
      const observer = new MutationObserver(() => {
        const value = document.querySelector('[data-testid="goodput-rps"]')?.getAttribute('data-value') ?? '';
        if (value !== '') {
          window.postedByAnswer = window.posted;
          observer.disconnect();
        }
      });
      observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await page.goto(`${h.baseUrl}/`);
    await waitForRunDone(page);
    assert.equal(await readValue(page, 'goodput-rps'), expected);
    const first = await page.evaluate(() => ({ unasked: window.unasked, posted: window.postedByAnswer }));

    // "Run again" keeps the knob sweep: all it posts is its search's.
    const before = await page.evaluate(() => window.posted);
    await runAgainTimed(page);
    assert.equal(await readValue(page, 'goodput-rps'), expected);
    const again = (await page.evaluate(() => window.posted)) - before;
    assert.ok(again > 0, `"Run again" posted ${again} jobs`);
    assert.ok(first.unasked > 0, 'the worker ahead sent results');
    assert.ok(
      first.posted < again,
      `the first search posted ${first.posted} jobs, "Run again" ${again}: the first took ${first.unasked} results sent ahead`,
    );
  } finally {
    await context.close();
  }
});

for (const how of ['raises its error event', 'can no longer be posted to']) {
  test(`a worker that dies holding requests (${how}): they run on the other workers and the goodput is the same`, async () => {
    const { expected, context } = await expectedAndFreshContext();
    try {
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      // Once armed, the first worker that is posted a second request dies: with the
      // first request still held (the pool keeps two in flight), it raises its error
      // event as a crashed worker does; or, holding one, it is ended and the post throws.
      await page.addInitScript((raise) => {
        window.killArmed = false;
        window.killed = 0;
        const Native = window.Worker;
        const post = Native.prototype.postMessage;
        Native.prototype.postMessage = function (...args) {
          const armed = window.killArmed && typeof args[0] === 'string';
          if (armed) this.sinceArmed = (this.sinceArmed ?? 0) + 1;
          if (armed && this.sinceArmed === 2) {
            window.killArmed = false;
            window.killed += 1;
            if (raise) {
              const result = post.apply(this, args);
              setTimeout(() => this.dispatchEvent(new Event('error', { cancelable: true })), 0);
              return result;
            }
            this.terminate();
            throw new DOMException('the worker is gone', 'InvalidStateError');
          }
          return post.apply(this, args);
        };
      }, how === 'raises its error event');
      await page.goto(`${h.baseUrl}/`);
      await waitForRunDone(page);
      const workers = async () => Number((await page.textContent('[data-testid="run-mode"]')).match(/^(\d+) workers?$/)?.[1] ?? NaN);
      await page.waitForFunction(
        () => /^\d+ workers?$/.test(document.querySelector('[data-testid="run-mode"]')?.textContent ?? ''),
        null,
        { timeout: 30_000 },
      );
      const before = await workers();
      await page.evaluate(() => {
        window.killArmed = true;
      });
      await page.click('[data-testid="rerun"]');
      await waitForRerun(page, { mayHaveFinished: true });
      assert.equal(await page.evaluate(() => window.killed), 1, 'a worker died');
      assert.equal(await readValue(page, 'goodput-rps'), expected);
      if (before > 1) {
        assert.equal(await workers(), before - 1, 'the pool runs on without the dead worker');
      } else {
        assert.match(await page.textContent('[data-testid="run-mode"]'), /Workers unavailable/);
      }
      assertNoErrors(errors);
    } finally {
      await context.close();
    }
  });
}

test('a plan whose weights do not fit says why and keeps the old results dimmed', async () => {
  const { page, errors } = await h.openPlanner();
  const before = await readValue(page, 'goodput-rps');
  await page.selectOption('[data-testid="preset-model"]', 'llama-3.1-405b');
  const banner = await page.waitForSelector('[data-testid="problem-banner"]');
  const why = await banner.textContent();
  assert.match(why, /Llama 3\.1 405B needs 811\.8 GB of weights but one NVIDIA H100 SXM 80GB offers/);
  assert.ok(!/mem_utilization|kv_policy|tp_degree|llama-3\.1-405b/.test(why), `in the planner's words: ${why}`);
  assert.equal(await page.getAttribute('[data-testid="results"]', 'data-stale'), 'true');
  assert.equal(await readValue(page, 'goodput-rps'), before);
  // More GPUs per replica make room: the plan is valid again and a new run starts.
  await page.fill('[data-testid="input-hardware.tp_degree"]', '16');
  await page.waitForFunction(
    () => document.querySelector('[data-testid="results"]')?.dataset.stale === 'false',
  );
  assert.equal(await page.$('[data-testid="problem-banner"]'), null);
  // A TP degree vLLM would refuse (12 GPUs cannot split 8 KV heads) is named, with one that works.
  await page.fill('[data-testid="input-hardware.tp_degree"]', '12');
  const uneven = await page.waitForSelector('[data-warning="tp_splits_heads_unevenly"]', { state: 'attached' });
  assert.match(await uneven.textContent(), /^vLLM refuses tensor parallelism 12 for a model with 128 attention heads and 8 KV heads.*use TP 8\.$/);
  assertNoErrors(errors);
});

test('a pasted measured sweep sizes the fleet from its knee, at once, as the CLI does', async () => {
  const { page, errors } = await h.openPlanner();
  const sweepBox = '[data-testid="input-planning.measured_sweep"]';
  const sweepError = '[data-testid="error-planning.measured_sweep"]';
  const rows = '4,0.99\n6,0.97\n8,0.93\n9,0.71\n10,0.38';
  assert.match(await page.getAttribute(sweepBox, 'placeholder'), /4,0\.99\n6,0\.97\n8,0\.93\n9,0\.71\n10,0\.38/);
  for (const [id, value] of [
    ['slo.attainment_target', '0.92'],
    ['traffic.peak_rate_rps', '30'],
    ['planning.utilization', '0.7'],
    ['planning.redundancy', '1'],
  ]) {
    await page.fill(`[data-testid="input-${id}"]`, value);
  }
  await page.fill(sweepBox, rows);
  // The measured numbers appear without waiting for the re-run the edit scheduled.
  const phaseAtAnswer = await (
    await page.waitForFunction(() => {
      const g = document.querySelector('[data-testid="goodput-rps"]')?.dataset.value;
      const r = document.querySelector('[data-testid="replicas-total"]')?.dataset.value;
      return g === '8' && r === '7' && document.querySelector('[data-testid="run-status"]').dataset.phase;
    })
  ).jsonValue();
  assert.notEqual(phaseAtAnswer, 'done', 'the cards did not wait for the simulation');
  assert.equal(await readValue(page, 'goodput-rps'), 8);
  assert.equal(await readValue(page, 'replicas-total'), 7);
  const card = await page.locator('.card', { has: page.locator('[data-testid="goodput-rps"]') }).textContent();
  assert.match(card, /measured \(knee of 5 rows\)/);
  await waitForRunDone(page);
  assert.equal(await readValue(page, 'goodput-rps'), 8, 'the finished simulation does not replace the knee');
  await screenshot(page, 'app-measured-sweep');

  // The share link carries the sweep: the CLI reads the same plan from it and agrees.
  const link = await page.evaluate(() => location.href);
  const cli = await runCliJson(['plan', '--link', link, '--json', '--no-sweep']);
  assert.equal(cli.goodput.source, 'measured');
  for (const [testid, key] of Object.entries(CELLS)) {
    const expected = findNumber(cli, key);
    assert.equal(await readValue(page, testid), expected, `${testid} vs the CLI's ${key}`);
  }
  // Opened as a shared link (the finance view), the same numbers show without a run.
  const shared = await h.openPage(`/${link.slice(link.indexOf('#')).replace('&view=planner', '')}`, {
    waitFor: '[data-testid="finance-view"]',
  });
  await shared.page.waitForSelector('[data-testid="answer"][data-ready="true"]');
  assert.equal(await readValue(shared.page, 'goodput-rps'), 8);
  assert.equal(await readValue(shared.page, 'replicas-total'), 7);
  assertNoErrors(shared.errors);
  await shared.page.close();
  const capacity = await runCliJson(
    ['capacity', '--sweep', '-', '--slo-attainment', '0.92', '--peak-rate', '30',
      '--utilization', '0.7', '--redundancy', '1', '--json'],
    { input: `${rows}\n` },
  );
  assert.equal(capacity.goodput_rps, 8);
  assert.equal(capacity.replicas_total, 7);

  // A bad row names its line, keeps the last good numbers, and recovers.
  await page.fill(sweepBox, '4,0.99\n6,0.97\n8,lots');
  await page.waitForSelector(`${sweepError}:has-text("line 3")`);
  assert.equal(await page.getAttribute('[data-testid="results"]', 'data-stale'), 'true');
  assert.equal(await readValue(page, 'goodput-rps'), 8);
  assert.match(await page.textContent('[data-testid="problem-banner"]'), /Measured sweep.*line 3/);
  await page.fill(sweepBox, rows);
  await page.waitForFunction(
    () => document.querySelector('[data-testid="results"]')?.dataset.stale === 'false',
  );
  assert.equal((await page.textContent(sweepError)).trim(), '');

  // Clearing the box goes back to the simulated goodput.
  await page.fill(sweepBox, '');
  await waitForRerun(page);
  assert.match(
    await page.locator('.card', { has: page.locator('[data-testid="goodput-rps"]') }).textContent(),
    /simulated, range/,
  );
  assertNoErrors(errors);
});

test('a TPOT objective alone is refused in words, and a TTFT objective runs again', async () => {
  const { page, errors } = await h.openPlanner();
  await waitForRunDone(page);
  const ttft = await page.inputValue('[data-testid="input-slo.ttft_s"]');
  const tpot = await page.inputValue('[data-testid="input-slo.tpot_s"]');
  await enter(page, 'slo.ttft_s', '');
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.dataset.phase === 'failed',
    null,
    { timeout: 60_000 },
  );
  assert.match(
    await page.textContent('[data-testid="run-phase"]'),
    /TPOT alone never judges the time a request waits in the queue.*set a TTFT objective, or an end-to-end deadline/,
  );
  assert.equal(await page.inputValue('[data-testid="input-slo.tpot_s"]'), tpot, 'the TPOT objective is left alone');
  await enter(page, 'slo.ttft_s', ttft);
  await waitForRunDone(page);
  assert.ok(Number(await readValue(page, 'goodput-rps')) > 0, 'the plan runs again');
  assertNoErrors(errors);
});
