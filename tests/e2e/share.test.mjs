// Share links, the finance view, the embed card, saved work and exports, in a real
// browser: a link made by the CLI shows the CLI's numbers, hostile links show their
// message over the defaults, the embed card fits 320 px, saved plans survive a
// reload, and exports download the right content.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GOLDEN, REPO_ROOT, assertNoErrors, decodePng, findNumber as findKey, readValue, runCli, runCliJson, screenshot, startHarness, waitForPhase } from './harness.mjs';

/** Headline cells the page and the CLI must agree on, with the CLI's JSON key for each. */
const CELLS = [
  ['goodput-rps', 'goodput_rps'],
  ['replicas-total', 'replicas_total'],
  ['gpus-total', 'gpus_total'],
  ['cost-per-month-usd', 'cost_per_month_usd'],
  ['cost-per-compliant-request-usd', 'cost_per_compliant_request_usd'],
];

/** A small plan (few requests and replications) so each search is quick. */
const SMALL = ['--num-requests', '1000', '--warmup-requests', '100', '--replications', '4'];

/** Longest wait for a finished search [ms]. */
const SEARCH_TIMEOUT_MS = 150_000;

/** The default plan's decode step [s] (also checked by the smoke test): shows the defaults are on screen. */
const DEFAULT_DECODE_STEP_S = GOLDEN.decode_step_s.value;

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});


/** The part of a link from `#` on. */
const fragmentOf = (link) => link.slice(link.indexOf('#'));

/** Waits for the finance answer to be ready and reads the headline cells. */
async function financeValues(page) {
  await page.waitForSelector('[data-testid="answer"][data-ready="true"]', { timeout: SEARCH_TIMEOUT_MS });
  const out = {};
  for (const [cell] of CELLS) out[cell] = await readValue(page, cell);
  return out;
}

/** Elements a hostile link might have injected, and the marker its script would set. */
async function injected(page) {
  return page.evaluate(() => ({
    scripts: [...document.scripts].filter((s) => !s.src && s.textContent.includes('pwned')).length,
    imgs: document.querySelectorAll('img[src="x"], [onerror]').length,
    pwned: typeof window.__pwned,
  }));
}

/** Asserts the finance view's headline numbers are the CLI JSON's, bit for bit; returns them. */
async function financeEqualsCli(page, cli) {
  const shown = await financeValues(page);
  for (const [cell, key] of CELLS) {
    const expected = findKey(cli, key);
    assert.equal(typeof expected, 'number', `the CLI JSON has ${key}`);
    assert.equal(shown[cell], expected, `${cell}: page ${shown[cell]}, CLI ${expected}`);
  }
  return shown;
}

test('a link made by the CLI opens in a fresh profile with the CLI numbers', async () => {
  const link = (await runCli(['link', '--base-url', `${h.baseUrl}/`, '--peak-rate', '45', ...SMALL])).trim();
  assert.ok(link.startsWith(`${h.baseUrl}/#p=`), link);
  assert.ok(link.length < 1000, `a typical link stays under 1,000 characters (${link.length})`);
  const cli = await runCliJson(['plan', '--link', link, '--json']);
  const { page, errors } = await h.openPage(`/${fragmentOf(link)}`, {
    waitFor: '[data-testid="finance-view"]',
  });
  const shown = await financeEqualsCli(page, cli);
  const answer = await page.textContent('[data-testid="answer"]');
  assert.match(answer, new RegExp(`^${shown['gpus-total']} × .*\\(\\d+ for a 45 req/s peak \\+ 1 spare\\)`));
  assert.match(answer, /at 90% of requests within 0\.5 s to first token and 25 ms per token/);
  assert.equal(await page.locator('[data-testid="shared-banner"]').count(), 1);
  // The assumptions are the registry's finance rows, as the CLI's report states them.
  const stated = await page.$$eval('[data-testid="assumptions"] dt', (dts) => dts.map((dt) => `${dt.textContent}: ${dt.nextElementSibling.textContent}.`));
  assert.deepEqual(stated, cli.assumptions);
  assert.ok(stated.includes('Peak rate: 45 req/s.'), stated.join(' | '));
  await screenshot(page, 'share-finance');
  // The finance view prints on one page.
  await page.emulateMedia({ media: 'print' });
  const pdf = (await page.pdf({ format: 'A4' })).toString('latin1');
  assert.equal(pdf.match(/\/Type\s*\/Page[^s]/g)?.length, 1, 'one printed page');
  await page.emulateMedia({ media: 'screen' });
  // "Open in planner" shows the full view of the same plan, and the address keeps it.
  await page.click('[data-testid="open-planner"]');
  await page.waitForSelector('[data-testid="input-traffic.peak_rate_rps"]');
  assert.equal(await page.inputValue('[data-testid="input-traffic.peak_rate_rps"]'), '45');
  await page.waitForFunction(() => location.hash.endsWith('&view=planner'));
  assertNoErrors(errors);
});

/** Sessions that share prefixes, on 2 replicas simulated behind llm-d's prefix-aware router. */
const ROUTED_SESSIONS = [
  '--shared-prefixes', '4', '--shared-prefix-tokens', '2048',
  '--sessions', '24', '--turns', '4', '--session-document-tokens', '1500',
  '--fleet-replicas', '2', '--fleet-router', 'prefix_aware',
];

test('sessions on 2 replicas behind prefix-aware routing: the page equals the CLI, hit rate and cache timeline too', async () => {
  const link = (await runCli(['link', '--base-url', `${h.baseUrl}/`, '--peak-rate', '45', ...SMALL, ...ROUTED_SESSIONS])).trim();
  const cli = await runCliJson(['plan', '--link', link, '--json', '--no-sweep']);
  const { page, errors } = await h.openPage(`/${fragmentOf(link)}`, {
    waitFor: '[data-testid="finance-view"]',
  });
  // The finance view: the CLI's headline numbers, goodput per replica among them.
  const shown = await financeEqualsCli(page, cli);
  // Its assumptions are the report's: the traffic with its sessions, and the routing last.
  await page.waitForSelector('[data-testid="assumption-routing"]');
  const stated = await page.$$eval('[data-testid="assumptions"] dt', (dts) => dts.map((dt) => `${dt.textContent}: ${dt.nextElementSibling.textContent}.`));
  assert.deepEqual(stated, cli.assumptions);
  assert.match(stated.at(-2), /^Traffic: .*24 sessions at once of 4 turns/);
  assert.match(stated.at(-1), /^Routing: goodput per replica is simulated on 2 replicas behind a router that picks by the cached share of the prompt/);
  // The hit rate the plan relies on: the CLI's planned-load simulation's, bit for bit.
  const planned = cli.planned_load;
  assert.equal(typeof planned?.detail?.prefix_hit_rate, 'number', 'the CLI reports the planned load');
  assert.ok(planned.detail.prefix_hit_rate > 0.2, `hit rate ${planned.detail.prefix_hit_rate}`);
  const financeHit = Number(await page.getAttribute('[data-testid="finance-planned"]', 'data-hit-rate'));
  assert.equal(financeHit, planned.detail.prefix_hit_rate);
  const sentence = await page.textContent('[data-testid="finance-planned"]');
  assert.ok(sentence.startsWith(`At the planned ${planned.rate_rps.toFixed(2)} req/s per replica, one simulation gives a p99 TTFT of `), sentence);
  assert.ok(sentence.endsWith(`; ${(planned.detail.prefix_hit_rate * 100).toFixed(1)}% of prompt tokens are found in the prefix cache.`), sentence);
  // What prefix-aware routing saves against round robin: the CLI report's row, word for word.
  const saved = cli.router_savings;
  assert.equal(saved?.router, 'prefix_aware', 'the CLI compares the router with round robin');
  assert.ok(saved.routed.goodput_rps > saved.round_robin.goodput_rps, JSON.stringify(saved));
  const markdown = await runCli(['plan', '--link', link, '--no-sweep']);
  const row = markdown.split('\n').find((l) => l.startsWith('| Router against round robin | '));
  assert.ok(row, 'the Markdown report has the router row');
  await page.waitForSelector('[data-testid="finance-router"]', { timeout: 120_000 });
  assert.equal(`| Router against round robin | ${await page.textContent('[data-testid="finance-router"]')} |`, row);
  await screenshot(page, 'share-finance-routed-sessions');

  // The planner: the same hit rate, and the cache chart's run is `goodput simulate` at
  // the planned rate with the planned-load job's seed.
  await page.click('[data-testid="open-planner"]');
  await waitForPhase(page, 'run-status', 'done');
  await page.waitForSelector('[data-testid="cache-chart-box"]');
  assert.equal(await readValue(page, 'an-prefix-hit'), planned.detail.prefix_hit_rate);
  const box = await page.$eval('[data-testid="cache-chart-box"]', (b) => ({ ...b.dataset }));
  assert.equal(Number(box.rate), planned.rate_rps);
  assert.equal(box.replicas, '2');
  assert.equal(Number(box.hitRate), planned.detail.prefix_hit_rate);
  const sim = await runCliJson(['simulate', '--link', link, '--request-rate', box.rate, '--seed', box.seed, '--json']);
  assert.equal(sim.prefix_hit_rate, planned.detail.prefix_hit_rate, 'the CLI simulation is the planned-load job');
  assert.deepEqual(sim.routing, { replicas: 2, router: 'prefix_aware' });
  const timeline = JSON.parse(box.timeline);
  assert.ok(timeline.length > 50, `${timeline.length} samples`);
  assert.deepEqual(timeline, sim.cache_timeline, 'the chart draws the CLI run\'s cache timeline');
  // The routing inputs give both goodputs, the CLI's to the last bit.
  const both = await page.$eval('[data-testid="routing-savings"]', (p) => ({ ...p.dataset }));
  assert.equal(Number(both.goodput), saved.routed.goodput_rps);
  assert.equal(Number(both.roundRobinGoodput), saved.round_robin.goodput_rps);
  await page.locator('[data-testid="group-routing"]').scrollIntoViewIfNeeded();
  await screenshot(page, 'planner-routed-sessions');
  assertNoErrors(errors);
});

/** The hostile corpus of the core: [variant, fragment, why] for the cases picked by `why`. */
async function hostileCases(picks) {
  const text = await readFile(path.join(REPO_ROOT, 'crates/core/tests/share_corpus/hostile.txt'), 'utf8');
  const rows = text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split('\t'));
  return picks.map((why) => {
    const row = rows.find((r) => r[2] === why);
    assert.ok(row, `corpus case "${why}"`);
    return [row[0], row[1].slice(row[1].indexOf('#')), why];
  });
}

/** The start of each decode error's message, by variant. */
const MESSAGES = {
  BadHeader: 'the plan data does not start with a version',
  BadVersion: 'the link uses format version',
  BadBase64: 'the plan data has an invalid character',
  Decompress: 'the compressed plan is corrupt or cut short',
  TooLargeDecompressed: 'the plan expands to more than',
  TooDeep: 'the plan nests deeper than',
  BadJson: 'its plan is not one this goodput can read',
  Invalid: 'a value in it is out of range: ',
  TooLong: 'the link is',
};

/** Interactive chat served first and batch work with a deadline, mixed on one fleet. */
const CLASSES = [
  '--class', 'chat:share=0.7,ttft=0.5,tpot=0.025,priority=0',
  '--class', 'batch:share=0.3,e2e=30,priority=1,input-len-median=3000,output-len-median=400',
];

test('traffic classes: the page equals the CLI per class and names the binding class; a bad class line is refused in words', async () => {
  const link = (await runCli(['link', '--base-url', `${h.baseUrl}/`, ...SMALL, ...CLASSES])).trim();
  const cli = await runCliJson(['plan', '--link', link, '--json', '--no-sweep']);
  assert.equal(cli.classes.length, 2);
  assert.equal(typeof cli.binding_class, 'string');
  const { page, errors } = await h.openPage(`/${fragmentOf(link)}`, { waitFor: '[data-testid="finance-view"]' });
  await financeEqualsCli(page, cli);
  // The assumptions state each class as the CLI's report does.
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="assumptions"] dt').length === n, cli.assumptions.length);
  const stated = await page.$$eval('[data-testid="assumptions"] dt', (dts) => dts.map((dt) => `${dt.textContent}: ${dt.nextElementSibling.textContent}.`));
  assert.deepEqual(stated, cli.assumptions);
  assert.ok(stated.some((s) => s.startsWith('Traffic class batch: 30% of requests, priority 1; end-to-end objective 30 s for 90% of its requests; prompts median 3,000 tokens')), stated.join(' | '));
  // The finance view says what each class gets and costs, in the Markdown report's words.
  const markdown = await runCli(['plan', '--link', link, '--no-sweep']);
  const sentence = markdown.split('\n').find((l) => l.startsWith('By class at the planned rate: '));
  assert.ok(sentence, 'the Markdown report has the classes sentence');
  assert.match(sentence, / One shared pool: \d+ GPUs, .* A pool per class: \d+ GPUs, /, 'the pools per class were compared');
  // The page searches each class alone after the mix; the paragraph then reads the same.
  await page.waitForFunction((s) => document.querySelector('[data-testid="finance-classes"]')?.textContent === s, sentence, { timeout: SEARCH_TIMEOUT_MS });
  // The planner: each class's attainment and cost at the planned rate, the CLI's to the bit.
  await page.click('[data-testid="open-planner"]');
  await waitForPhase(page, 'run-status', 'done');
  await page.waitForSelector('[data-testid="class-result"][data-attainment]', { timeout: SEARCH_TIMEOUT_MS });
  const rows = await page.$$eval('[data-testid="class-result"]', (trs) => trs.map((tr) => ({ ...tr.dataset })));
  assert.equal(rows.length, 2);
  rows.forEach((row, k) => {
    const c = cli.classes[k];
    assert.equal(row.name, c.name);
    assert.equal(Number(row.attainment), c.at_planned_load.attainment, `${c.name} attainment`);
    assert.equal(Number(row.cost), c.cost_per_compliant_request_usd, `${c.name} cost`);
  });
  assert.equal(await page.getAttribute('[data-testid="binding-class"]', 'data-class'), cli.binding_class);
  const pools = await page.textContent('[data-testid="class-dedicated"]');
  assert.ok(pools.startsWith('One shared pool: ') && sentence.endsWith(pools), `${pools} | ${sentence}`);
  assert.equal(cli.dedicated.pools.length, 2);
  await page.locator('[data-testid="group-classes"]').scrollIntoViewIfNeeded();
  await screenshot(page, 'planner-traffic-classes');
  // A line the parser refuses says why in words and leaves the plan alone.
  const before = await page.inputValue('[data-testid="class-1"]');
  await page.fill('[data-testid="class-1"]', 'batch:share=0.3,ttfx=1');
  await page.press('[data-testid="class-1"]', 'Tab');
  await page.waitForFunction(() => document.querySelector('[data-testid="error-classes"]').textContent.includes("unknown key 'ttfx'"));
  assert.equal(await page.getAttribute('[data-testid="class-1"]', 'aria-invalid'), 'true', 'the refused line is marked');
  assert.equal(await page.getAttribute('[data-testid="class-0"]', 'aria-invalid'), 'false', 'and only that line');
  assert.equal(await page.locator('[data-testid="class-result"]').count(), 2);
  // A good line is a step; Undo takes it back.
  await page.fill('[data-testid="class-1"]', 'batch:share=0.3,e2e=40,priority=1,input-len-median=3000,output-len-median=400');
  await page.press('[data-testid="class-1"]', 'Tab');
  await page.waitForFunction(() => document.querySelector('[data-testid="error-classes"]').textContent === '');
  assert.equal(await page.getAttribute('[data-testid="class-1"]', 'aria-invalid'), 'false', 'a good line clears the mark');
  await page.waitForFunction(() => document.querySelector('[data-testid="class-1"]').value.includes('e2e=40'));
  await page.click('[data-testid="undo"]');
  await page.waitForFunction((v) => document.querySelector('[data-testid="class-1"]').value === v, before);
  // Adding a class says which share it halved; Undo takes the class back.
  await page.click('[data-testid="class-add"]');
  await page.waitForSelector('[data-testid="class-2"]');
  assert.equal(
    (await page.textContent('[data-testid="class-added"]')).trim(),
    "class-3 takes half of batch's share: 0.15 each; edit the shares to suit.",
  );
  assert.match(await page.inputValue('[data-testid="class-1"]'), /share=0\.15/);
  await page.click('[data-testid="undo"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="class-2"]') === null);
  assert.equal((await page.textContent('[data-testid="class-added"]')).trim(), '', 'and its note');
  // A class's own peak sets the plan's peak and every share: batch keeps its own peak.
  const peakField = '[data-testid="input-traffic.peak_rate_rps"]';
  const peak = Number(await page.inputValue(peakField));
  const batchPeak = 0.3 * peak;
  const chatBefore = await page.inputValue('[data-testid="class-0"]');
  await page.fill('[data-testid="class-0"]', 'chat:peak=30,ttft=0.5,tpot=0.025,priority=0');
  await page.press('[data-testid="class-0"]', 'Tab');
  await page.waitForFunction(([sel, before]) => Number(document.querySelector(sel).value) !== before, [peakField, peak]);
  const total = Number(await page.inputValue(peakField));
  assert.ok(Math.abs(total - (30 + batchPeak)) < 1e-6 * total, `the plan's peak is the classes' sum: ${total}`);
  const shareOf = async (k) => Number((await page.inputValue(`[data-testid="class-${k}"]`)).match(/share=([\d.e-]+)/)[1]);
  assert.ok(Math.abs((await shareOf(1)) * total - batchPeak) < 1e-6 * batchPeak, 'batch keeps its own peak');
  assert.ok(Math.abs((await shareOf(0)) * total - 30) < 1e-6 * 30, 'chat has the peak typed');
  await page.click('[data-testid="undo"]');
  await page.waitForFunction((v) => document.querySelector('[data-testid="class-0"]').value === v, chatBefore);
  assert.equal(Number(await page.inputValue(peakField)), peak, 'Undo takes the peak back too');
  assertNoErrors(errors);
});

test('a class replays a trace of its own, read from a file in the page: the line names it, the answer is the CLI\'s, Undo takes it back', async () => {
  // 60 requests of 2,000-token prompts in bursts of 20 at one instant, a minute apart
  // (an Azure trace's columns).
  const dir = await mkdtemp(path.join(os.tmpdir(), 'goodput-class-trace-'));
  const file = path.join(dir, 'batch-bursts.csv');
  const rows = Array.from({ length: 60 }, (_, i) => `2023-11-16 18:0${Math.floor(i / 20)}:00.0000000,2000,300`);
  await writeFile(file, ['TIMESTAMP,ContextTokens,GeneratedTokens', ...rows, ''].join('\n'));
  try {
    const link = (await runCli(['link', '--base-url', `${h.baseUrl}/`, ...SMALL, ...CLASSES])).trim();
    const { page, errors } = await h.openPage(`/${fragmentOf(link)}&view=planner`, { waitFor: '[data-testid="run-status"]' });
    await waitForPhase(page, 'run-status', 'done', SEARCH_TIMEOUT_MS);
    const before = await page.inputValue('[data-testid="class-1"]');
    const plain = await readValue(page, 'goodput-rps');
    await page.setInputFiles('[data-testid="class-replay-1"]', file);
    await page.waitForSelector('[data-testid="class-replay-done"]');
    assert.equal(
      (await page.textContent('[data-testid="class-replay-done"]')).trim(),
      'batch replays batch-bursts.csv: 60 requests, in their arrival pattern at the class\'s share of the rate, with their lengths.',
    );
    // The line names the file in place of the lengths the trace now gives.
    assert.equal(await page.inputValue('[data-testid="class-1"]'), 'batch:share=0.3,priority=1,replay=batch-bursts.csv,e2e=30,attainment=0.9');
    await page.waitForFunction((g) => {
      const status = document.querySelector('[data-testid="run-status"]')?.dataset.phase;
      const cell = document.querySelector('[data-testid="goodput-rps"][data-value]');
      return status === 'done' && cell && Number(cell.dataset.value) !== g;
    }, plain, { timeout: SEARCH_TIMEOUT_MS });
    const cli = await runCliJson([
      'plan', '--link', link, '--json', '--no-sweep',
      '--class', 'chat:share=0.7,ttft=0.5,tpot=0.025,priority=0',
      '--class', `batch:share=0.3,e2e=30,priority=1,replay=${file}`,
    ]);
    assert.equal(await readValue(page, 'goodput-rps'), cli.goodput.goodput_rps, 'the page replays the rows the CLI reads');
    assert.ok(cli.assumptions.some((s) => s.includes(`replaying its own trace ${file} (60 requests) at its share of the rate`)), cli.assumptions.join(' | '));
    // Editing the line keeps the trace it names; another name is refused in words.
    await page.fill('[data-testid="class-1"]', 'batch:share=0.3,priority=1,replay=other.csv,e2e=30');
    await page.press('[data-testid="class-1"]', 'Tab');
    await page.waitForFunction(() => document.querySelector('[data-testid="error-classes"]').textContent.includes("other.csv is not the trace this class replays; choose the file with the class's 'Replay a trace' button"));
    await page.locator('[data-testid="group-classes"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'planner-class-trace');
    await page.fill('[data-testid="class-1"]', 'batch:share=0.3,priority=2,replay=batch-bursts.csv,e2e=30');
    await page.press('[data-testid="class-1"]', 'Tab');
    await page.waitForFunction(() => document.querySelector('[data-testid="error-classes"]').textContent === '');
    await page.waitForFunction(() => document.querySelector('[data-testid="class-1"]').value.includes('priority=2,replay=batch-bursts.csv'));
    // Undo twice: the priority, then the trace.
    await page.click('[data-testid="undo"]');
    await page.click('[data-testid="undo"]');
    await page.waitForFunction((v) => document.querySelector('[data-testid="class-1"]').value === v, before);
    await page.waitForSelector('[data-testid="class-replay-done"]', { state: 'detached' });
    // A class in multi-turn sessions of its own, typed as --class takes it: the CLI's answer.
    const agent = 'batch:share=0.3,priority=1,e2e=30,sessions=8,turns=4,session-document-tokens=2000';
    const beforeAgent = await readValue(page, 'goodput-rps');
    await page.fill('[data-testid="class-1"]', agent);
    await page.press('[data-testid="class-1"]', 'Tab');
    await page.waitForFunction((g) => {
      const status = document.querySelector('[data-testid="run-status"]')?.dataset.phase;
      const cell = document.querySelector('[data-testid="goodput-rps"][data-value]');
      return status === 'done' && cell && Number(cell.dataset.value) !== g;
    }, beforeAgent, { timeout: SEARCH_TIMEOUT_MS });
    assert.match(await page.inputValue('[data-testid="class-1"]'), /sessions=8,turns=4,session-document-tokens=2000/);
    const sessions = await runCliJson([
      'plan', '--link', link, '--json', '--no-sweep',
      '--class', 'chat:share=0.7,ttft=0.5,tpot=0.025,priority=0', '--class', agent,
    ]);
    assert.equal(await readValue(page, 'goodput-rps'), sessions.goodput.goodput_rps, 'the page simulates the class\'s sessions as the CLI does');
    assertNoErrors(errors);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('hostile links show their message over the defaults, with nothing injected', async () => {
  const good = (await runCli(['link', '--base-url', `${h.baseUrl}/`])).trim();
  const payload = fragmentOf(good).slice('#p='.length);
  const b64 = (json) => Buffer.from(json).toString('base64url');
  const cases = [
    // Cut the body at a whole number of base64 quads, so the deflate stream is what breaks.
    ['Decompress', `#p=${payload.slice(0, 2 + Math.floor((payload.length - 2) / 8) * 4)}`, 'truncated'],
    ['BadBase64', `#p=${payload.slice(0, 3)}!!${payload.slice(3)}`, 'bad base64'],
    ['BadVersion', `#p=7${payload.slice(1)}`, 'wrong version'],
    ['Invalid', `#p=1j${b64('{"run":{"num_requests":4000000000}}')}`, 'absurd request count'],
    ['Invalid', `#p=1j${b64('{"traffic":{"peak_rate_rps":1e300},"hardware":{"tp_degree":0}}')}`, 'absurd values'],
    ['TooLong', `#p=1j${'A'.repeat(70_000)}`, 'oversized'],
    ...(await hostileCases([
      'two mebibytes of spaces: a small zip bomb',
      '100,000 open brackets',
      'markup instead of data',
      '1e308 requests',
      'a dictionary-mode bomb (the dictionary is not needed to inflate it)',
    ])),
  ];
  for (const [variant, fragment, why] of cases) {
    const { page, errors } = await h.openPage(`/${fragment}`, { waitFor: '[data-testid="link-error"]' });
    const text = await page.textContent('[data-testid="share-banner-text"]');
    assert.ok(text.includes(MESSAGES[variant]), `${why}: "${text}" should include "${MESSAGES[variant]}"`);
    assert.ok(text.length < 600, `${why}: the message is short`);
    // In the planner's words: a field by its label, no JSON path or parser position.
    assert.ok(!/\b[a-z_]+\.[a-z_]+:|line \d+ column/.test(text), `${why}: "${text}" has no internal names`);
    if (why === 'absurd request count') assert.match(text, /Requests per run must be a whole number from 1 to 200,000 requests; it is 4,000,000,000\./);
    assert.equal(await readValue(page, 'decode-step-s'), DEFAULT_DECODE_STEP_S, `${why}: defaults shown`);
    assert.equal(await page.inputValue('[data-testid="input-traffic.peak_rate_rps"]'), '30', why);
    assert.deepEqual(await injected(page), { scripts: 0, imgs: 0, pwned: 'undefined' }, why);
    assertNoErrors(errors);
    await page.close();
  }
  // Once the plan under the banner is edited, the banner no longer calls it the defaults.
  const [, fragment] = cases[0];
  const { page, errors } = await h.openPage(`/${fragment}`, { waitFor: '[data-testid="link-error"]' });
  await page.fill('[data-testid="input-traffic.peak_rate_rps"]', '31');
  await page.waitForSelector('[data-testid="share-banner-text"]:has-text("The plan shown started from the defaults")');
  await page.fill('[data-testid="input-traffic.peak_rate_rps"]', '30');
  await page.waitForSelector('[data-testid="share-banner-text"]:has-text("Showing the default plan instead")');
  assertNoErrors(errors);
});

test('markup in a plan name is shown as text, in the page and in the embed snippet', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'goodput-share-'));
  try {
    const name = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';
    const planFile = path.join(dir, 'plan.json');
    await writeFile(planFile, JSON.stringify({ name }));
    const link = (await runCli(['link', '--plan', planFile, '--base-url', `${h.baseUrl}/`])).trim();
    const { page, errors } = await h.openPage(`/${fragmentOf(link)}`, { waitFor: '[data-testid="plan-title"]' });
    assert.equal(await page.textContent('[data-testid="plan-title"]'), name);
    await page.waitForTimeout(300);
    assert.deepEqual(await injected(page), { scripts: 0, imgs: 0, pwned: 'undefined' });
    // When the clipboard refuses, a text box shows the snippet to copy by hand, escaped.
    await page.evaluate(() => {
      navigator.clipboard.writeText = () => Promise.reject(new DOMException('refused', 'NotAllowedError'));
    });
    await page.click('[data-testid="copy-embed"]');
    const snippet = await page.inputValue('[data-testid="copy-embed-fallback"]');
    assert.match(snippet, /^<iframe id="goodput-[0-9a-f]{8}" src="http:\/\/127\.0\.0\.1:\d+\/#p=4[a-z][A-Za-z0-9_-]+&amp;embed" width="100%" height="500"/);
    assert.ok(snippet.includes('title="&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;img src=x onerror=&quot;'), snippet);
    assertNoErrors(errors);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the embed snippet's frame takes the height its card posts: nothing clipped at 320 px, less at 720 px", async () => {
  const link = (await runCli(['link', '--base-url', `${h.baseUrl}/`, ...SMALL])).trim();
  const { page, errors } = await h.openPage(`/${fragmentOf(link)}`, { waitFor: '[data-testid="finance-view"]' });
  await page.evaluate(() => {
    navigator.clipboard.writeText = () => Promise.reject(new DOMException('refused', 'NotAllowedError'));
  });
  await page.click('[data-testid="copy-embed"]');
  const snippet = await page.inputValue('[data-testid="copy-embed-fallback"]');
  assert.match(snippet, /^<iframe id="goodput-[0-9a-f]{8}" src=.* height="500" .*<\/iframe><script>.*<\/script>$/);
  // A page of a doc that pastes the snippet into a column.
  const host = await page.context().newPage();
  const hostErrors = [];
  host.on('pageerror', (err) => hostErrors.push(err.message));
  await host.setContent(`<!doctype html><body style="margin:0"><div id="col" style="width:320px">${snippet}</div></body>`);
  const frame = await (await host.waitForSelector('iframe')).contentFrame();
  await frame.waitForSelector('[data-testid="gpus-total"][data-value]', { timeout: SEARCH_TIMEOUT_MS });
  /** The frame's height (the host's view) and the card's (the frame's own view). */
  const measure = async () => ({
    height: Number(await host.getAttribute('iframe', 'height')),
    ...(await frame.evaluate(() => ({
      inner: innerHeight,
      page: document.documentElement.scrollHeight,
      chart: document.querySelector('.chart-stack').clientHeight,
      footer: document.querySelector('[data-testid="embed-open"]').getBoundingClientRect().bottom,
    }))),
  });
  /** Waits (bounded) until the frame holds the card with its chart at its least height. */
  const settled = async () => {
    let m;
    for (let i = 0; i < 100; i += 1) {
      m = await measure();
      if (m.height !== 500 && m.inner === m.height && Math.abs(m.chart - 160) <= 1 && m.page <= m.inner) return m;
      await host.waitForTimeout(100);
    }
    return m;
  };
  const narrow = await settled();
  assert.ok(narrow.page <= narrow.inner && narrow.footer <= narrow.inner && narrow.inner === narrow.height, `nothing clipped at 320 px: ${JSON.stringify(narrow)}`);
  assert.ok(Math.abs(narrow.chart - 160) <= 1, `the chart at its least height, not stretched: ${JSON.stringify(narrow)}`);
  assert.ok(narrow.height <= 500, `the snippet's own height was enough: ${JSON.stringify(narrow)}`);
  await host.evaluate(() => { document.getElementById('col').style.width = '720px'; });
  await host.waitForFunction((h0) => Number(document.querySelector('iframe').height) < h0, narrow.height, { timeout: 10_000 });
  const wide = await settled();
  assert.ok(wide.page <= wide.inner && wide.footer <= wide.inner && wide.inner === wide.height, `nothing clipped at 720 px: ${JSON.stringify(wide)}`);
  await screenshot(host, 'share-embed-host');
  assert.deepEqual(hostErrors, []);
  assertNoErrors(errors);
});

test('a published price offer sets the price; a typed price replaces it; the finance view names its source as the CLI does', async () => {
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="price-offer"]' });
  const price = '[data-testid="input-hardware.gpu_hour_usd"]';
  const offers = await page.$$eval('[data-testid="price-offer"] option', (os) => os.map((o) => o.value));
  assert.ok(offers.includes('lambda-h100-sxm-on-demand') && offers[0] === '', offers.join(', '));
  await page.selectOption('[data-testid="price-offer"]', 'lambda-h100-sxm-on-demand');
  await page.waitForFunction((sel) => document.querySelector(sel).value === '3.99', price);
  assert.match(await page.textContent('[data-testid="price-source"]'), /^\$3\.99\/GPU-h, Lambda on-demand: .*H100.*, as of 2026-\d\d-\d\d, from raw\.githubusercontent\.com\/api-evangelist\/lambda-labs$/);
  // A price typed in is the plan's own; picking the offer is a step Undo takes back.
  await page.fill(price, '2.2');
  await page.waitForFunction(() => document.querySelector('[data-testid="price-offer"]').value === '');
  assert.match(await page.textContent('[data-testid="price-source"]'), /^\$2\.20\/GPU-h, as entered$/);
  await page.selectOption('[data-testid="price-offer"]', 'lambda-h100-sxm-on-demand');
  await page.waitForFunction((sel) => document.querySelector(sel).value === '3.99', price);
  await page.click('[data-testid="undo"]');
  await page.waitForFunction((sel) => document.querySelector(sel).value === '2.2', price);
  assert.equal(await page.inputValue('[data-testid="price-offer"]'), '');
  await page.selectOption('[data-testid="price-offer"]', 'lambda-h100-sxm-on-demand');
  await page.waitForFunction(() => document.querySelector('[data-testid="price-offer"]').value === 'lambda-h100-sxm-on-demand');
  assert.equal(await page.inputValue(price), '3.99');
  // The link carries it; a fresh profile's finance view states it as the CLI does.
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseUrl });
  await page.click('[data-testid="copy-link"]');
  await page.waitForSelector('[data-testid="copy-link"]:has-text("Copied")');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(JSON.parse(await runCli(['decode', link])).hardware.price_offer, 'lambda-h100-sxm-on-demand');
  const cli = await runCliJson(['plan', '--link', link, '--json']);
  const fresh = await h.openPage(`/${fragmentOf(link)}`, { waitFor: '[data-testid="finance-view"]' });
  // The traffic line follows the first run: wait for every line.
  await fresh.page.waitForFunction((n) => document.querySelectorAll('[data-testid="assumptions"] dt').length === n, cli.assumptions.length);
  const stated = await fresh.page.$$eval('[data-testid="assumptions"] dt', (dts) => dts.map((dt) => `${dt.textContent}: ${dt.nextElementSibling.textContent}.`));
  assert.deepEqual(stated, cli.assumptions);
  assert.ok(stated.some((s) => s.startsWith('Price: $3.99/GPU-h, Lambda on-demand: ')), stated.join(' | '));
  assertNoErrors(errors);
  assertNoErrors(fresh.errors);
});

test('copy link gives a finance link of the plan on screen', async () => {
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="input-traffic.peak_rate_rps"]' });
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.baseUrl });
  await page.fill('[data-testid="input-traffic.peak_rate_rps"]', '12');
  await page.waitForFunction(() => location.hash.includes('view=planner'));
  await page.click('[data-testid="copy-link"]');
  await page.waitForSelector('[data-testid="copy-link"]:has-text("Copied")');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(copied.startsWith(`${h.baseUrl}/#p=4`) && !copied.includes('view='), copied);
  const decoded = JSON.parse(await runCli(['decode', copied]));
  assert.equal(decoded.traffic.peak_rate_rps, 12);
  assertNoErrors(errors);
});

test('the embed card renders at 320 px with its numbers and a link out', async () => {
  const link = (await runCli(['link', '--base-url', `${h.baseUrl}/`, '--embed', ...SMALL])).trim();
  assert.ok(link.endsWith('&embed'), link);
  const { page, errors } = await h.openPage(`/${fragmentOf(link)}`, {
    waitFor: '[data-testid="embed-view"]',
    viewport: { width: 320, height: 500 },
  });
  await page.waitForSelector('[data-testid="gpus-total"][data-value]', { timeout: SEARCH_TIMEOUT_MS });
  assert.equal(await page.locator('input, select, textarea, .app-header').count(), 0, 'no inputs, no header');
  // It says what it is about: an unnamed plan's title names the model, the GPU and the peak.
  assert.equal(
    (await page.textContent('[data-testid="plan-title"]')).trim(),
    'Capacity plan: Article 8B (dense, 32 layers, 8 KV heads of 128) on NVIDIA H100 SXM 80GB, 30 req/s peak',
  );
  const out = page.locator('[data-testid="embed-open"]');
  assert.equal(await out.getAttribute('target'), '_blank');
  const href = await out.getAttribute('href');
  assert.ok(href.startsWith(`${h.baseUrl}/#p=4`) && !href.includes('embed'), href);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 320, `no horizontal scrolling at 320 px (content is ${width} px wide)`);
  // The snippet's iframe height holds the whole card, even this narrow.
  await page.waitForTimeout(300);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  assert.ok(height <= 500, `the card fits the snippet's 500 px iframe (it is ${height} px tall)`);
  assert.equal(await page.evaluate(() => location.hash.endsWith('&embed')), true, 'the embed address is kept');
  await page.waitForTimeout(300);
  await screenshot(page, 'share-embed-320');
  // In the snippet's 500 px iframe at a usual width the chart takes the height the
  // figures leave, down to the footer, drawn at that size (not stretched).
  await page.setViewportSize({ width: 720, height: 500 });
  await page.waitForFunction(() => document.querySelector('[data-testid="chart-attainment"]').clientHeight > 250);
  // The redraw follows the resize observer's callback, a frame or two later; wait for
  // it (bounded), then the assertions below say what is wrong if it never comes.
  await page
    .waitForFunction(
      () => {
        const c = document.querySelector('[data-testid="chart-attainment"]');
        return Math.abs(c.height / devicePixelRatio - c.clientHeight) <= 1;
      },
      null,
      { timeout: 5000 },
    )
    .catch(() => {});
  const fit = await page.evaluate(() => {
    const c = document.querySelector('[data-testid="chart-attainment"]');
    const foot = document.querySelector('.embed-foot').getBoundingClientRect();
    return { css: c.clientHeight, px: c.height / devicePixelRatio, gap: foot.top - c.getBoundingClientRect().bottom, page: document.documentElement.scrollHeight };
  });
  assert.ok(fit.gap >= 0 && fit.gap < 24, `the chart reaches the footer (${JSON.stringify(fit)})`);
  assert.ok(Math.abs(fit.px - fit.css) <= 1, `drawn at its height (${JSON.stringify(fit)})`);
  assert.equal(fit.page, 500, 'and the card still fits the iframe');
  assertNoErrors(errors);
});

test('the autosaved plan and a named plan survive a reload; a shared link leaves them intact', async () => {
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="input-traffic.peak_rate_rps"]' });
  await page.fill('[data-testid="input-traffic.peak_rate_rps"]', '17');
  await page.fill('[data-testid="save-name"]', 'peak 17');
  await page.click('[data-testid="save-plan"]');
  await page.waitForSelector('[data-testid="saved-plan"][data-name="peak 17"]');
  await page.fill('[data-testid="input-traffic.peak_rate_rps"]', '19');
  await page.waitForFunction(() => (localStorage.getItem('goodput.current.v1') ?? '').includes('"peak_rate_rps":19'));
  await page.goto(`${h.baseUrl}/`);
  await page.waitForSelector('[data-testid="input-traffic.peak_rate_rps"]');
  assert.equal(await page.inputValue('[data-testid="input-traffic.peak_rate_rps"]'), '19', 'autosaved plan restored');
  // The saved plans' panel is built once the first run ends.
  await page.waitForSelector('[data-testid="saved-plan"]');
  assert.equal(await page.locator('[data-testid="saved-plan"][data-name="peak 17"]').count(), 1, 'named plan listed');
  // A shared link opens without touching the own plan; one click goes back to it.
  const shared = (await runCli(['link', '--base-url', `${h.baseUrl}/`, '--peak-rate', '88'])).trim();
  await page.goto(shared);
  await page.waitForSelector('[data-testid="shared-banner"]');
  await page.waitForTimeout(1000);
  assert.ok((await page.evaluate(() => localStorage.getItem('goodput.current.v1'))).includes('"peak_rate_rps":19'));
  await page.click('[data-testid="back-to-own"]');
  await page.waitForSelector('[data-testid="input-traffic.peak_rate_rps"]');
  assert.equal(await page.inputValue('[data-testid="input-traffic.peak_rate_rps"]'), '19');
  // "Keep this plan" first saves the own plan under a dated name.
  await page.goto(shared);
  await page.waitForSelector('[data-testid="shared-banner"]');
  await page.click('[data-testid="keep-shared"]');
  await page.waitForFunction(() => (localStorage.getItem('goodput.current.v1') ?? '').includes('"peak_rate_rps":88'));
  const named = JSON.parse(await page.evaluate(() => localStorage.getItem('goodput.named.v1')));
  const before = named.find((p) => p.name.startsWith('My plan (before '));
  assert.equal(before?.plan.traffic.peak_rate_rps, 19);
  // Load the named plan back, then compare it with the current one.
  await page.click('[data-testid="view-planner"]');
  await page.click('[data-testid="saved-plan"][data-name="peak 17"] [data-testid="saved-load"]');
  assert.equal(await page.inputValue('[data-testid="input-traffic.peak_rate_rps"]'), '17');
  await page.click('[data-testid="view-compare"]');
  await page.selectOption('[data-testid="compare-b"]', before.name);
  const row = page.locator('[data-testid="compare-inputs"] tr', { hasText: 'Peak rate' });
  assert.equal(await row.getAttribute('data-differs'), 'true');
  assert.deepEqual(await row.locator('td').allTextContents(), ['17', '19']);
  await screenshot(page, 'share-compare');
  assertNoErrors(errors);
});

test('saved plans: saving over a name, a delete and a rename can each be undone', async () => {
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="input-traffic.peak_rate_rps"]' });
  const named = async () => JSON.parse(await page.evaluate(() => localStorage.getItem('goodput.named.v1') ?? '[]'));
  const listed = () => page.locator('[data-testid="saved-plan"]').evaluateAll((rows) => rows.map((r) => r.dataset.name));
  const save = async (name, rate) => {
    await page.fill('[data-testid="input-traffic.peak_rate_rps"]', String(rate));
    await page.fill('[data-testid="save-name"]', name);
    await page.click('[data-testid="save-plan"]');
  };
  await save('low', 11);
  await save('high', 44);
  await page.waitForSelector('[data-testid="saved-plan"][data-name="high"]');
  assert.deepEqual(await listed(), ['high', 'low']);
  // Saved before its search finished, 'high' gets the goodput the search finds, in the
  // list and in storage.
  assert.equal((await named()).find((p) => p.name === 'high').goodput_rps ?? null, null, 'saved while its search ran');
  await waitForPhase(page, 'run-status', 'done');
  await page.waitForSelector('[data-testid="saved-plan"][data-name="high"] .saved-meta:has-text("goodput")');
  const found = await readValue(page, 'goodput-rps');
  assert.equal((await named()).find((p) => p.name === 'high').goodput_rps, found);
  // Saving under a name taken says so, and Undo brings the earlier plan back in its place.
  await save('low', 22);
  await page.waitForSelector('[data-testid="saved-message"]:has-text("in place of the earlier plan")');
  assert.equal((await named()).find((p) => p.name === 'low').plan.traffic.peak_rate_rps, 22);
  await page.click('[data-testid="saved-undo"]');
  await page.waitForSelector('[data-testid="saved-message"]:has-text("Undone")');
  assert.deepEqual(await listed(), ['high', 'low']);
  assert.equal((await named()).find((p) => p.name === 'low').plan.traffic.peak_rate_rps, 11, 'the stored plan is the earlier one');
  // A delete is undone into the same place.
  await page.click('[data-testid="saved-plan"][data-name="high"] [data-testid="saved-delete"]');
  await page.waitForSelector('[data-testid="saved-plan"][data-name="high"]', { state: 'detached' });
  assert.equal(await page.textContent('[data-testid="saved-message"]'), 'Deleted “high”. Undo');
  await page.click('[data-testid="saved-undo"]');
  await page.waitForSelector('[data-testid="saved-plan"][data-name="high"]');
  assert.deepEqual(await listed(), ['high', 'low']);
  assert.deepEqual((await named()).map((p) => p.name), ['high', 'low'], 'restored in storage too');
  // Rename in place; a name taken is refused with the list unchanged; Escape cancels.
  await page.click('[data-testid="saved-plan"][data-name="low"] [data-testid="saved-rename"]');
  // The box has the focus, the old name selected: typing replaces it.
  await page.waitForFunction(() => document.activeElement?.dataset.testid === 'rename-name');
  await page.keyboard.type('high');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid="saved-message"].error');
  assert.equal(
    await page.textContent('[data-testid="saved-message"]'),
    'Not renamed: another saved plan is called “high”: pick another name.',
  );
  await page.fill('[data-testid="rename-name"]', 'eleven per second');
  await page.click('[data-testid="rename-save"]');
  await page.waitForSelector('[data-testid="saved-plan"][data-name="eleven per second"] [data-testid="saved-load"]');
  assert.deepEqual(await listed(), ['high', 'eleven per second']);
  const renamed = (await named()).find((p) => p.name === 'eleven per second');
  assert.equal(renamed?.plan.traffic.peak_rate_rps, 11, 'the plan is kept under its new name');
  await page.click('[data-testid="saved-undo"]');
  await page.waitForSelector('[data-testid="saved-plan"][data-name="low"]');
  await page.click('[data-testid="saved-plan"][data-name="low"] [data-testid="saved-rename"]');
  await page.press('[data-testid="rename-name"]', 'Escape');
  await page.waitForSelector('[data-testid="rename-name"]', { state: 'detached' });
  // The list survives a reload as last left.
  await page.reload();
  await page.waitForSelector('[data-testid="saved-plan"][data-name="low"]');
  assert.deepEqual(await listed(), ['high', 'low']);
  await screenshot(page, 'share-saved-plans');
  assertNoErrors(errors);
});

test('refused local storage gives a message, never a broken page', async () => {
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="input-traffic.peak_rate_rps"]' });
  await page.context().addInitScript(() => {
    Object.defineProperty(window, 'localStorage', {
      get() {
        throw new DOMException('storage is disabled', 'SecurityError');
      },
    });
  });
  await page.reload();
  await page.waitForSelector('[data-testid="storage-problem"]');
  assert.match(await page.textContent('[data-testid="storage-problem"]'), /does not let the page keep data/);
  assert.equal(await readValue(page, 'decode-step-s'), DEFAULT_DECODE_STEP_S);
  await page.fill('[data-testid="save-name"]', 'nowhere');
  await page.click('[data-testid="save-plan"]');
  await page.waitForSelector('[data-testid="saved-message"].error');
  assert.match(await page.textContent('[data-testid="saved-message"]'), /^Not saved: this browser does not let/);
  assertNoErrors(errors);
});

test('exports download the plan JSON and the Markdown summary; a bad plan file is refused', async () => {
  const { page, errors } = await h.openPage('/', { waitFor: '[data-testid="input-traffic.peak_rate_rps"]' });
  await page.fill('[data-testid="input-run.replications"]', '4');
  await page.fill('[data-testid="input-run.num_requests"]', '1000');
  const [json] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-plan-json"]')]);
  assert.match(json.suggestedFilename(), /\.json$/);
  const plan = JSON.parse(await readFile(await json.path(), 'utf8'));
  assert.equal(plan.run.replications, 4);
  // The CLI reads the exported file and gives the same goodput as the page.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'goodput-share-'));
  try {
    const file = path.join(dir, 'plan.json');
    await writeFile(file, JSON.stringify(plan));
    const cli = await runCliJson(['plan', '--plan', file, '--json']);
    await page.waitForSelector('[data-testid="run-status"][data-phase="done"]', { timeout: SEARCH_TIMEOUT_MS });
    assert.equal(await readValue(page, 'goodput-rps'), findKey(cli, 'goodput_rps'));
    const [md] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-markdown"]')]);
    const text = await readFile(await md.path(), 'utf8');
    const gpus = await readValue(page, 'gpus-total');
    assert.ok(text.startsWith('# goodput plan\n\n## Answer'), text.slice(0, 200));
    assert.ok(text.includes(`| GPUs | ${gpus} (1 per replica) |`), text);
    assert.match(text, /\[Open this plan in goodput\]\(<http:\/\/127\.0\.0\.1:\d+\/#p=4[a-z][A-Za-z0-9_-]+>\)\n$/);
    // The same report as the CLI's, word for word: same core, same plan, same seeds.
    const cliMarkdown = await runCli(['plan', '--plan', file, '--markdown']);
    assert.equal(text.slice(0, text.lastIndexOf('\n[Open this plan')).trimEnd(), cliMarkdown.trimEnd());
    const [curve] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-curve-csv"]')]);
    const curveRows = (await readFile(await curve.path(), 'utf8')).trim().split('\n');
    assert.match(curveRows[0], /^rate_rps,attainment,ci95_lo,ci95_hi,/);
    assert.ok(curveRows.length > 3, `the curve has rates (${curveRows.length - 1})`);
    const [sweep] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-sweep-csv"]')]);
    const sweepRows = (await readFile(await sweep.path(), 'utf8')).trim().split('\n');
    assert.equal(sweepRows.length, 1 + plan.run.sweep_max_num_seqs.length * plan.run.sweep_batched_tokens.length);
    assert.equal(sweepRows.filter((r) => r.endsWith(',true')).length, 1, 'one best cell');
    const [svg] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-chart-attainment-svg"]')]);
    const svgText = await readFile(await svg.path(), 'utf8');
    assert.match(svgText, /^<svg[\s\S]*<\/svg>\s*$/);
    // Content, not only a frame: both axis titles, and the curve in the series colour
    // through every simulated rate.
    assert.ok(svgText.includes('arrival rate per replica [req/s]') && svgText.includes('attainment [%]'), 'axis titles');
    // Headed by what it shows and for which plan, as text.
    const title = 'Capacity plan: Article 8B (dense, 32 layers, 8 KV heads of 128) on NVIDIA H100 SXM 80GB, 30 req/s peak';
    assert.ok(svgText.includes('>\nAttainment\n</text>') && svgText.includes(`>\n${title}\n</text>`), `the heading names the chart and "${title}"`);
    const rates = (await readFile(await curve.path(), 'utf8')).trim().split('\n').length - 1;
    const curvePoints = [...svgText.matchAll(/<polyline[^>]*>/g)]
      .map((m) => m[0])
      .filter((tag) => /stroke="#1D4ED8"/i.test(tag))
      .map((tag) => tag.match(/points="([^"]*)"/)[1].trim().split(/\s+/).length);
    assert.ok(curvePoints.some((n) => n === rates), `a ${rates}-point curve in #1D4ED8 (polylines: ${curvePoints})`);
    // Each export button says, to a screen reader, which chart it downloads and as what.
    assert.equal(await page.getAttribute('[data-testid="export-chart-attainment-png"]', 'aria-label'), 'Download the Attainment chart as PNG');
    const [png] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-chart-attainment-png"]')]);
    const image = decodePng(await readFile(await png.path()));
    let series = 0;
    const columns = new Set();
    for (let y = 0; y < image.height; y += 1) {
      for (let x = 0; x < image.width; x += 1) {
        const [r, g, b] = image.pixel(x, y);
        if (Math.abs(r - 0x1d) + Math.abs(g - 0x4e) + Math.abs(b - 0xd8) <= 24) {
          series += 1;
          columns.add(x);
        }
      }
    }
    assert.ok(series > 300 && columns.size > image.width / 2,
      `the PNG shows the curve (${series} pixels over ${columns.size} of ${image.width} columns)`);
    // A bad file is refused with a message and the plan stays.
    const bad = path.join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ ...plan, run: { ...plan.run, replications: 0 } }));
    await page.setInputFiles('[data-testid="load-plan-json"]', bad);
    await page.waitForSelector('[data-testid="export-message"].error');
    assert.match(await page.textContent('[data-testid="export-message"]'), /run\.replications/);
    assert.equal(await page.inputValue('[data-testid="input-run.replications"]'), '4');
    const good = path.join(dir, 'good.json');
    await writeFile(good, JSON.stringify({ ...plan, traffic: { ...plan.traffic, peak_rate_rps: 64 } }));
    await page.setInputFiles('[data-testid="load-plan-json"]', good);
    await page.waitForFunction(
      () => document.querySelector('[data-testid="input-traffic.peak_rate_rps"]')?.value === '64',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  assertNoErrors(errors);
});
