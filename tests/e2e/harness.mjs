// Shared helpers for goodput's end-to-end tests.
//
// The tests drive the release build of the app (`dist/`, made by
// `trunk build --release --offline`) in headless Chromium and compare what the
// page shows with the native CLI (`goodput`, built by
// `cargo build --release -p goodput-cli`). Nothing else needs to run: the
// harness serves `dist/` itself on 127.0.0.1 at a free port.
//
// Usage, in a `*.test.mjs` file of this folder:
//
//   import { test, before, after } from 'node:test';
//   import assert from 'node:assert/strict';
//   import { startHarness, readValue, runCliJson, screenshot, assertNoErrors } from './harness.mjs';
//
//   let h;
//   before(async () => { h = await startHarness(); });
//   after(async () => { await h?.close(); });
//
//   test('shows the decode step', async () => {
//     const { page, errors } = await h.openPage('/');   // fresh browser context
//     const shown = await readValue(page, 'decode-step-s');
//     await screenshot(page, 'decode-step');
//     assertNoErrors(errors);
//   });
//
// Every page opened through `openPage` records console errors, uncaught page
// errors, failed requests and HTTP error responses. `close()` fails the test
// file if any page recorded one, unless that page was opened with
// `{ allowErrors: true }`.
//
// Environment (all optional; scripts/test.sh sets them):
//   GOODPUT_DIST  the built app            [default: <repo>/dist]
//   GOODPUT_CLI   the release CLI binary   [default: <repo>/target/release/goodput]
//   CHROMIUM      the Chromium executable  [default: /usr/bin/chromium]
// Screenshots go to <repo>/artifacts/screenshots/.
//
// Run: `node --test tests/e2e/*.test.mjs` (from the repository root).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import { inflateSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

/** The repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The built app served to the browser. */
export const DIST_DIR = path.resolve(process.env.GOODPUT_DIST ?? path.join(REPO_ROOT, 'dist'));

/** Where `screenshot` saves its PNG files. */
/**
 * The golden values the core reproduces exactly (`crates/core/tests/golden.json`, where
 * each says how it was produced); native, wasm and these tests read the same file.
 */
export const GOLDEN = JSON.parse(
  await readFile(path.join(REPO_ROOT, 'crates', 'core', 'tests', 'golden.json'), 'utf8'),
);

export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'artifacts', 'screenshots');

/** The Chromium executable (Debian's package by default). */
export const CHROMIUM_PATH = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Flags for headless Chromium in containers and CI (same as webdriver.json). */
export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
];

/** Longest wait for one page action or selector [ms]. */
export const ACTION_TIMEOUT_MS = 30_000;

const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.woff2': 'font/woff2',
};

async function isFile(p) {
  try {
    return (await stat(p)).isFile();
  } catch {
    return false;
  }
}

/**
 * Serves `root` over HTTP on 127.0.0.1 at a free port.
 *
 * Files are sent with their MIME type (`application/wasm` for `.wasm`). Any other
 * path gets `index.html`, as `trunk serve` does (so app routes and the browser's
 * `/favicon.ico` request load the app; a missing script then fails to load as HTML,
 * which the page reports as an error).
 *
 * @param {string} [root] directory to serve [default: DIST_DIR]
 * @returns {Promise<{ url: string, close: () => Promise<void> }>} base URL without a trailing slash
 */
export async function startServer(dir = DIST_DIR) {
  const root = path.resolve(dir);
  const index = path.join(root, 'index.html');
  if (!(await isFile(index))) {
    throw new Error(`${index} not found: build the app first with \`trunk build --release --offline\``);
  }
  const server = http.createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url ?? '/', 'http://127.0.0.1');
      const relative = path.normalize(decodeURIComponent(pathname)).replace(/^([/\\])+/, '');
      let file = path.join(root, relative);
      if (file !== root && !file.startsWith(root + path.sep)) {
        res.writeHead(403).end('forbidden');
        return;
      }
      if (!(await isFile(file))) {
        file = index;
      }
      const body = await readFile(file);
      const type = MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/**
 * Launches headless Chromium with CHROMIUM_ARGS.
 * @returns {Promise<import('playwright-core').Browser>}
 */
export async function launchBrowser() {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: run scripts/setup.sh or set CHROMIUM`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

/**
 * Starts the static server and the browser. Call `close()` in an `after` hook.
 *
 * @param {{ dist?: string }} [options]
 */
export async function startHarness({ dist = DIST_DIR } = {}) {
  const server = await startServer(dist);
  let browser;
  try {
    browser = await launchBrowser();
  } catch (err) {
    await server.close();
    throw err;
  }
  /** @type {{ url: string, errors: string[], allowErrors: boolean }[]} */
  const opened = [];
  const contexts = [];

  return {
    /** Base URL of the served app, without a trailing slash. */
    baseUrl: server.url,
    /** The shared browser; prefer `openPage`, which isolates each page. */
    browser,

    /**
     * Opens `urlPath` (for example `/`, `/#p=...`) in a new browser context
     * (a fresh profile: no storage, cookies or cache from other pages) and
     * waits until the app has mounted.
     *
     * @param {string} [urlPath] path, query and fragment to open [default: '/']
     * @param {{ waitFor?: string | null, allowErrors?: boolean,
     *           viewport?: { width: number, height: number }, init?: Function }} [options]
     *   waitFor: CSS selector that shows the app has mounted [default: '[data-testid]'];
     *   null waits only for the load event.
     *   allowErrors: do not fail `close()` on this page's errors.
     *   init: a self-contained function the page runs before the app (`addInitScript`).
     * @returns {Promise<{ page: import('playwright-core').Page, errors: string[] }>}
     */
    async openPage(urlPath = '/', options = {}) {
      const { waitFor = '[data-testid]', allowErrors = false, viewport = { width: 1280, height: 900 }, init } = options;
      const context = await browser.newContext({ viewport });
      contexts.push(context);
      const page = await context.newPage();
      if (init) await page.addInitScript(init);
      page.setDefaultTimeout(ACTION_TIMEOUT_MS);
      const errors = [];
      page.on('console', (msg) => {
        if (msg.type() === 'error') errors.push(`console error: ${msg.text()}`);
      });
      page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
      page.on('crash', () => errors.push('page crashed'));
      page.on('requestfailed', (req) => {
        const reason = req.failure()?.errorText ?? 'failed';
        if (!reason.includes('ERR_ABORTED')) errors.push(`request failed: ${req.url()} (${reason})`);
      });
      page.on('response', (res) => {
        if (res.status() >= 400) errors.push(`HTTP ${res.status()}: ${res.url()}`);
      });
      const url = server.url + (urlPath.startsWith('/') ? urlPath : `/${urlPath}`);
      opened.push({ url, errors, allowErrors });
      await page.goto(url, { waitUntil: 'load' });
      if (waitFor) await page.waitForSelector(waitFor, { state: 'attached' });
      return { page, errors };
    },

    /**
     * Opens `urlPath` as `openPage` does, at desktop size unless told otherwise, and
     * waits until the planner's first run (search and knob sweep) is done.
     * @param {string} [urlPath] [default: '/']
     * @param {{ viewport?: { width: number, height: number } }} [options]
     */
    async openPlanner(urlPath = '/', { viewport = { width: 1440, height: 1000 } } = {}) {
      const opened = await this.openPage(urlPath, { waitFor: '[data-testid="run-status"]', viewport });
      await waitForRunDone(opened.page);
      return opened;
    },

    /** Closes every context, the browser and the server; then fails if any page logged errors. */
    async close() {
      for (const context of contexts) await context.close().catch(() => {});
      await browser.close().catch(() => {});
      await server.close();
      const unexpected = opened.filter((p) => !p.allowErrors && p.errors.length > 0);
      if (unexpected.length > 0) {
        const lines = unexpected.flatMap((p) => [p.url, ...p.errors.map((e) => `  ${e}`)]);
        throw new Error(`pages logged errors:\n${lines.join('\n')}`);
      }
    },
  };
}

/**
 * Fails with every recorded error listed when `errors` is not empty.
 * @param {string[]} errors the `errors` array from `openPage`
 */
export function assertNoErrors(errors) {
  assert.deepEqual(errors, [], `the page logged errors:\n${errors.join('\n')}`);
}

/**
 * Saves a full-page PNG screenshot as artifacts/screenshots/<name>.png.
 * @param {import('playwright-core').Page} page
 * @param {string} name file name without extension; other characters than [A-Za-z0-9._-] become '_'
 * @returns {Promise<string>} the file written
 */
export async function screenshot(page, name) {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Reads the `data-value` attribute of the element `[data-testid=<testid>]` as a number,
 * waiting until the element has one. Understands Rust's `inf`, `-inf` spellings.
 *
 * @param {import('playwright-core').Page} page
 * @param {string} testid
 * @returns {Promise<number>}
 */
export async function readValue(page, testid) {
  const selector = `[data-testid="${testid}"][data-value]`;
  const handle = await page.waitForSelector(selector, { state: 'attached' });
  const raw = (await handle.getAttribute('data-value'))?.trim() ?? '';
  const special = { inf: Infinity, '+inf': Infinity, '-inf': -Infinity };
  const value = raw.toLowerCase() in special ? special[raw.toLowerCase()] : raw === '' ? NaN : Number(raw);
  if (Number.isNaN(value)) {
    throw new Error(`data-value of [data-testid="${testid}"] is not a number: "${raw}"`);
  }
  return value;
}

/** The release CLI binary the tests compare with. */
export function cliPath() {
  const cli = process.env.GOODPUT_CLI ?? path.join(REPO_ROOT, 'target', 'release', 'goodput');
  if (!existsSync(cli)) {
    throw new Error(`${cli} not found: run \`cargo build --release -p goodput-cli\` or set GOODPUT_CLI`);
  }
  return cli;
}

/**
 * Runs the release `goodput` binary and returns its standard output.
 * Fails with the exit status and standard error when it exits non-zero.
 *
 * @param {string[]} args command-line arguments, for example ['plan', '--json']
 * @param {{ input?: string, timeoutMs?: number }} [options] standard input; time limit [ms]
 * @returns {Promise<string>}
 */
export function runCli(args, { input, timeoutMs = 120_000 } = {}) {
  const cli = cliPath();
  return new Promise((resolve, reject) => {
    const child = execFile(
      cli,
      args,
      { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs },
      (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`goodput ${args.join(' ')} failed (${err.code ?? err.signal}):\n${stderr}`));
        } else {
          resolve(stdout);
        }
      },
    );
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

/**
 * Runs the release `goodput` binary and parses its standard output as JSON.
 * @param {string[]} args
 * @param {{ input?: string, timeoutMs?: number }} [options]
 */
/** The first number under `key` anywhere in a JSON document (depth first), or undefined. */
export function findNumber(doc, key) {
  if (doc === null || typeof doc !== 'object') return undefined;
  if (typeof doc[key] === 'number') return doc[key];
  for (const v of Object.values(doc)) {
    const found = findNumber(v, key);
    if (found !== undefined) return found;
  }
  return undefined;
}

export async function runCliJson(args, options) {
  const out = await runCli(args, options);
  try {
    return JSON.parse(out);
  } catch (err) {
    throw new Error(`goodput ${args.join(' ')} did not print JSON (${err.message}):\n${out.slice(0, 2000)}`);
  }
}

/**
 * Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what browsers' canvas exports are)
 * into its pixels, so a test can look at what a downloaded chart shows.
 *
 * @param {Buffer} png
 * @returns {{ width: number, height: number, pixel: (x: number, y: number) => number[] }}
 */
export function decodePng(png) {
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG', 'not a PNG file');
  let at = 8;
  let header;
  const idat = [];
  while (at < png.length) {
    const len = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString('latin1');
    const body = png.subarray(at + 8, at + 8 + len);
    if (type === 'IHDR') header = body;
    if (type === 'IDAT') idat.push(body);
    at += 12 + len;
  }
  const width = header.readUInt32BE(0);
  const height = header.readUInt32BE(4);
  const [depth, colourType, , , interlace] = header.subarray(8, 13);
  assert.ok(depth === 8 && (colourType === 2 || colourType === 6) && interlace === 0,
    `unsupported PNG: depth ${depth}, colour type ${colourType}, interlace ${interlace}`);
  const bpp = colourType === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const out = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y += 1) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i += 1) {
      const a = i >= bpp ? out[y * stride + i - bpp] : 0;
      const b = y > 0 ? out[(y - 1) * stride + i] : 0;
      const c = i >= bpp && y > 0 ? out[(y - 1) * stride + i - bpp] : 0;
      let v = line[i];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[y * stride + i] = v & 0xff;
    }
  }
  return {
    width,
    height,
    pixel: (x, y) => [...out.subarray(y * stride + x * bpp, y * stride + x * bpp + 3)],
  };
}

/** Longest wait for the default plan's whole search and knob sweep [ms]. */
export const RUN_TIMEOUT_MS = 240_000;

/**
 * Waits until the element `[data-testid=<testid>]` has `data-phase` `phase`.
 * @param {import('playwright-core').Page} page
 * @param {string} testid
 * @param {string} phase
 * @param {number} [timeout] [ms; default RUN_TIMEOUT_MS]
 */
export async function waitForPhase(page, testid, phase, timeout = RUN_TIMEOUT_MS) {
  await page.waitForFunction(
    ([id, want]) => document.querySelector(`[data-testid="${id}"]`)?.dataset.phase === want,
    [testid, phase],
    { timeout, polling: 100 },
  );
}

/**
 * Waits until the planner's run status is `done` (the search and the knob sweep finished)
 * and the parts it builds after its first run are built.
 * @param {import('playwright-core').Page} page
 */
export async function waitForRunDone(page) {
  await waitForPhase(page, 'run-status', 'done');
  // The parts the planner builds after its first run follow a frame later.
  await page.waitForFunction(() => document.querySelector('[data-deferred]') === null, null, { timeout: 10_000, polling: 50 });
}

/**
 * Waits until the run leaves `done` (an edit scheduled a new run) and then finishes
 * again. With `mayHaveFinished`, a re-run that is already over when this is called (a
 * quick one) is accepted; otherwise the run must be seen leaving `done` within 5 s.
 * @param {import('playwright-core').Page} page
 * @param {{ mayHaveFinished?: boolean }} [options]
 */
export async function waitForRerun(page, { mayHaveFinished = false } = {}) {
  const left = page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.dataset.phase !== 'done',
    null,
    { timeout: mayHaveFinished ? 3_000 : 5_000, polling: 20 },
  );
  if (mayHaveFinished) {
    await left.catch(() => {});
  } else {
    await left;
  }
  await waitForRunDone(page);
}

/**
 * How many runs (goodput searches) the page has started, from the run status.
 * @param {import('playwright-core').Page} page
 * @returns {Promise<number>}
 */
export async function runsStarted(page) {
  return Number(await page.getAttribute('[data-testid="run-status"]', 'data-runs'));
}

/**
 * The page's "Last run" line as [search, search and sweep] in ms; throws on any other text.
 * "Last run: goodput search 95 ms; search and knob sweep 1,410 ms." → [95, 1410];
 * "Last run: goodput search 95 ms; the knob sweep of this plan was kept." → [95, 95].
 * @param {string} text
 * @returns {[number, number]}
 */
export function parseRunTiming(text) {
  const m = /goodput search ([\d,]+) ms; (?:search and knob sweep ([\d,]+) ms|the knob sweep of this plan was kept)/.exec(text);
  if (!m) throw new Error(`unexpected timing line: ${JSON.stringify(text)}`);
  const ms = (s) => Number(s.replaceAll(',', ''));
  return [ms(m[1]), ms(m[2] ?? m[1])];
}

/**
 * The median of `xs` (NaN when empty).
 * @param {number[]} xs
 * @returns {number}
 */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/**
 * The mean of the middle half of `xs` (the values between its quartiles; NaN when empty):
 * a benchmark's centre that one slow spell of a busy machine does not move.
 * @param {number[]} xs
 * @returns {number}
 */
export function middleMean(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.slice(Math.floor(s.length / 4), Math.ceil((3 * s.length) / 4));
  return mid.reduce((a, x) => a + x, 0) / mid.length;
}

/**
 * Runs in the page before the app (give it to `addInitScript`): notes in
 * `window.__answerAt` the `performance.now()` at which the goodput card first holds a value.
 * Self-contained: the browser receives its source.
 */
export function watchFirstAnswer() {
  const observer = new MutationObserver(() => {
    const el = document.querySelector('[data-testid="goodput-rps"]');
    if (el && (el.getAttribute('data-value') ?? '') !== '' && window.__answerAt === undefined) {
      window.__answerAt = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
}

/**
 * Runs in the page before the app (give it to `addInitScript`): notes in
 * `window.__deferredAt` the `performance.now()` at which the planner first shows a part it
 * defers (a placeholder marked `data-deferred`), that is, when it has mounted.
 * Self-contained: the browser receives its source.
 */
export function watchDeferred() {
  const observer = new MutationObserver(() => {
    if (document.querySelector('[data-deferred]') && window.__deferredAt === undefined) {
      window.__deferredAt = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { subtree: true, childList: true });
}

/**
 * Clicks "Run again" and waits until that run is done: the run count has moved on and
 * the status is `done` again. Returns the page's "Last run" line, which says how long the
 * search (and the knob sweep, if it ran) took. With `fromScript`, the button is clicked by
 * a script in the page (`element.click()`: no input events, no Playwright round trips).
 * @param {import('playwright-core').Page} page
 * @param {{ fromScript?: boolean }} [options]
 * @returns {Promise<string>}
 */
export async function runAgainTimed(page, { fromScript = false } = {}) {
  const before = await runsStarted(page);
  const rerun = '[data-testid="rerun"]';
  if (fromScript) {
    await page.evaluate((sel) => document.querySelector(sel).click(), rerun);
  } else {
    await page.click(rerun);
  }
  await page.waitForFunction(
    (b) => {
      const s = document.querySelector('[data-testid="run-status"]');
      return s && Number(s.dataset.runs) !== b && s.dataset.phase === 'done';
    },
    before,
    { timeout: RUN_TIMEOUT_MS },
  );
  return (await page.textContent('[data-testid="run-timing"]')) ?? '';
}

/**
 * The number of pages of a PDF: its `/Type /Page` objects (not the `/Pages` tree nodes).
 * @param {Buffer} pdf
 * @returns {number}
 */
export function pdfPageCount(pdf) {
  return pdf.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
}

/**
 * Counts the pixels of the canvas `[data-testid=<testid>]` within 6 of colour `rgb` in
 * every channel: a series drawn in its own colour shows up here, axes and grid do not.
 *
 * @param {import('playwright-core').Page} page
 * @param {string} testid
 * @param {[number, number, number]} rgb
 * @returns {Promise<number>}
 */
export async function inkOf(page, testid, [r, g, b]) {
  return page.evaluate(
    ([id, r, g, b]) => {
      const c = document.querySelector(`[data-testid="${id}"]`);
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (Math.abs(data[i] - r) < 6 && Math.abs(data[i + 1] - g) < 6 && Math.abs(data[i + 2] - b) < 6) n += 1;
      }
      return n;
    },
    [testid, r, g, b],
  );
}

/**
 * Types `text` into the number field `input-<id>` and presses Enter, which applies it at
 * once (typing alone applies after a pause or when the field loses focus).
 * @param {import('playwright-core').Page} page
 * @param {string} id the plan field's dotted path
 * @param {string} text
 */
export async function enter(page, id, text) {
  const selector = `[data-testid="input-${id}"]`;
  await page.fill(selector, text);
  await page.press(selector, 'Enter');
}

/**
 * The engine settings of the best-settings line or a heatmap cell, from its data
 * attributes, waiting until it has them.
 * @param {import('playwright-core').Page} page
 * @param {string} selector
 * @returns {Promise<{ seqs: number, budget: number, chunked: boolean }>}
 */
export async function knobsOf(page, selector) {
  const el = await page.waitForSelector(`${selector}[data-max-num-seqs]`, { state: 'attached' });
  return {
    seqs: Number(await el.getAttribute('data-max-num-seqs')),
    budget: Number(await el.getAttribute('data-max-num-batched-tokens')),
    chunked: (await el.getAttribute('data-chunked-prefill')) === 'true',
  };
}

/**
 * The plan in the page's address, as the CLI decodes it.
 * @param {import('playwright-core').Page} page
 */
export async function planInAddress(page) {
  return runCliJson(['decode', await page.evaluate(() => location.href)]);
}
