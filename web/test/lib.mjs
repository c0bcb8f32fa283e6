// Shared helpers of the web tests: find the C++ binary, compile TS modules
// for node (vite library build into a temp dir), small assertions.

import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const webDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const repoDir = resolve(webDir, '..');

/** The model-inspector binary: $MI_BINARY, else fail with how to set it. */
export function miBinary() {
  const b = process.env.MI_BINARY;
  if (!b) fail('MI_BINARY is not set; point it at the built CLI, e.g. MI_BINARY=build/src/cli/model-inspector');
  if (!existsSync(b)) fail(`MI_BINARY=${b} does not exist; build the project first (cmake --build build)`);
  return resolve(b);
}

/** Artifacts dir: $MI_TEST_ARTIFACTS, else web/test-artifacts. */
export function artifactsDir() {
  return resolve(process.env.MI_TEST_ARTIFACTS || join(webDir, 'test-artifacts'));
}

export function fail(msg) {
  console.error(`FAIL: ${msg}`);
  process.exit(1);
}

let failures = 0;
export function check(cond, msg) {
  if (!cond) { failures++; console.error(`  not ok: ${msg}`); }
  return cond;
}
export function eq(a, b, msg) {
  return check(a === b, `${msg}: expected ${JSON.stringify(b)}, found ${JSON.stringify(a)}`);
}
export function done(name) {
  if (failures) { console.error(`FAIL: ${name}: ${failures} check(s) failed`); process.exit(1); }
  console.log(`PASS: ${name}`);
}

/** Compiles src/<entry>.ts (and its imports) to an ES module and imports it. */
export async function importTs(entry) {
  const { build } = await import('vite');
  const out = mkdtempSync(join(tmpdir(), 'mi-web-test-'));
  await build({
    configFile: false,
    logLevel: 'error',
    root: webDir,
    build: {
      outDir: out,
      emptyOutDir: true,
      minify: false,
      lib: { entry: join(webDir, 'src', `${entry}.ts`), formats: ['es'], fileName: () => `${entry}.mjs` },
    },
  });
  return import(pathToFileURL(join(out, `${entry}.mjs`)).href);
}

export function readArrayBuffer(path) {
  const b = readFileSync(path);
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
}

export const kChromium = process.env.MI_CHROMIUM || '/usr/bin/chromium';

/** Launches headless Chromium (Debian's) through playwright-core. */
export async function launchBrowser() {
  if (!existsSync(kChromium)) {
    fail(`${kChromium} not found; install Debian's chromium (apt-get install chromium) or set MI_CHROMIUM`);
  }
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: kChromium,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      // WebGL2 without a GPU: ANGLE on SwiftShader (CPU).
      '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
}

/**
 * Polls `fn(arg)` in the page, once per animation frame, until it returns
 * a truthy value, and returns it (throws after `timeout` ms). The tests
 * wait on the UI's state this way (window.__miDebug, data-* attributes,
 * the DOM), never on fixed sleeps; page.waitForFunction is out because the
 * server's Content-Security-Policy forbids the strings it evaluates.
 */
export async function poll(page, fn, arg, timeout = 30000, what = '') {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await page.evaluate(fn, arg).catch(() => false);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeout} ms waiting for ${what || String(fn).slice(0, 160)}`);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r()))).catch(() => {});
  }
}

/** Two animation frames: what was requested before is drawn. */
export const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

/** The UI's state (a copy; web/README.md "Debug surface"). */
export const uiState = (page) => page.evaluate(() => window.__miDebug.state());

/**
 * Reveals node `id` in graph pane `k`, centres it and clicks it; resolves
 * once the selection it makes is resolved in every view.
 */
export async function clickNode(page, id, k = 0) {
  const pos = await page.evaluate(async ({ id, k }) => {
    const g = window.__miDebug.view('graph'), p = g.pane(k);
    await p.settled();
    await p.reveal(id);
    p.centreOnNode(id);
    const c = g.itemScreenCenter(p.itemOfNode(id), k);
    const r = p.canvas.getBoundingClientRect();
    return c && { x: r.left + c.x, y: r.top + c.y };
  }, { id, k });
  if (!pos) throw new Error(`node ${id} is not in graph pane ${k}`);
  await frames(page);
  const before = await page.evaluate(() => { const s = window.__miDebug.state(); return { v: s.selectionVersion, sel: s.selection }; });
  await page.mouse.click(pos.x, pos.y);
  // Clicking the node already selected selects nothing new.
  if (before.sel?.kind === 'node' && before.sel.id === id) return;
  await resolvedAfter(page, before.v);
}

/** Waits until a selection made after version `v` is resolved into every view. */
export const resolvedAfter = (page, v) => poll(page, (v) => {
  const s = window.__miDebug.state();
  return s.selectionVersion > v && s.resolved.version === s.selectionVersion && s.resolved.done;
}, v, 30000, 'selection resolved');

/** Clicks empty graph space (no item, no frame) in pane `k`: clears the selection. */
export async function clickEmptyGraph(page, k = 0) {
  const pos = await page.evaluate((k) => {
    const g = window.__miDebug.view('graph'), p = g.pane(k), c = g.emptyPoint(k);
    const r = p.canvas.getBoundingClientRect();
    return c && { x: r.left + c.x, y: r.top + c.y };
  }, k);
  if (!pos) throw new Error('no empty graph space on screen');
  const v = await page.evaluate(() => window.__miDebug.state().selectionVersion);
  await page.mouse.click(pos.x, pos.y);
  await resolvedAfter(page, v);
}

/** Reads the RGB of CSS pixel (x, y) of a PNG screenshot buffer via the page. */
export async function pixelsAt(page, png, points) {
  return page.evaluate(async ({ b64, points }) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    return points.map(([x, y]) => Array.from(ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data.slice(0, 3)));
  }, { b64: png.toString('base64'), points });
}

/** Colour distance in 0..255 units (max channel difference). */
export function colorDistance(a, b) {
  return Math.max(Math.abs(a[0] - b[0]), Math.abs(a[1] - b[1]), Math.abs(a[2] - b[2]));
}
