// Mounts the timeline view (web/src/views/timeline/timeline_view.ts) on a tiny page on the
// real server's origin, for timeline_test.mjs and bench/ui/bench_timeline.mjs.
// The view is built from src/ as one ES module; Playwright's request routing
// answers the page and the module under /__timeline_test/, so the view's
// /api requests reach the real server unchanged (the server itself serves
// only the embedded app).

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, webDir } from './lib.mjs';

/** The view as one ES module (vite library build), as bytes. */
export async function buildTimelineBundle() {
  const { build } = await import('vite');
  const out = mkdtempSync(join(tmpdir(), 'mi-timeline-bundle-'));
  await build({
    configFile: false, logLevel: 'error', root: webDir,
    build: {
      outDir: out, emptyOutDir: true, minify: false,
      lib: { entry: join(webDir, 'src/views/timeline/timeline_view.ts'), formats: ['es'], fileName: () => 'timeline_view.mjs' },
    },
  });
  return readFileSync(join(out, 'timeline_view.mjs'));
}

// The page: the view fills 1200 x 640 px (or the viewport with ?fill=1);
// host callbacks are recorded in window.__events; the view is window.__view
// (its counters and timings: window.__view.stats, base/stats.ts).
const kPage = `<!doctype html><html><head><meta charset="utf-8"><title>timeline</title>
<style>html,body{margin:0;height:100%}#tl{position:absolute;left:0;top:0;width:1200px;height:640px}</style></head>
<body><div id="tl"></div><script type="module">
import { TimelineView } from './timeline_view.mjs';
const q = new URLSearchParams(location.search);
if (q.get('fill')) Object.assign(document.getElementById('tl').style, { width: '100%', height: '100%' });
window.__events = [];
const host = {
  taskClicked: (id, info) => window.__events.push({ type: 'task', id, info }),
  rangeSelected: (startNs, endNs, tracks) => window.__events.push({ type: 'range', startNs, endNs, tracks }),
  rangeCleared: () => window.__events.push({ type: 'cleared' }),
};
const view = new TimelineView(document.getElementById('tl'), host);
window.__view = view;
view.open(Number(q.get('run') || 0)).then(() => { document.body.dataset.ready = '1'; },
  (e) => { document.body.dataset.ready = 'error: ' + e.message; });
</script></body></html>`;

/** Routes /__timeline_test/ of `base` to the page and bundle, and opens it for `run`. */
export async function gotoTimelinePage(page, base, bundle, run, extraQuery = '') {
  await page.route(`${base}/__timeline_test/**`, (route) => {
    const u = new URL(route.request().url());
    if (u.pathname.endsWith('.mjs')) return route.fulfill({ body: bundle, contentType: 'text/javascript' });
    return route.fulfill({ body: kPage, contentType: 'text/html' });
  });
  await page.goto(`${base}/__timeline_test/index.html?run=${run}${extraQuery}`);
}

/**
 * Polls `fn` in the page, once per animation frame, until it returns a
 * truthy value (a failed check after the timeout). Polls in the page: the
 * server's CSP forbids page.waitForFunction's evaluated strings.
 */
export async function until(page, fn, what, arg, timeoutMs = 60000) {
  const t0 = Date.now();
  for (;;) {
    const v = await page.evaluate(fn, arg);
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) { check(false, `timed out waiting for: ${what}`); return v; }
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
  }
}

/**
 * Waits until what input or a call started has landed: no track list,
 * window request or toolbar filter pending (the view's `busy`), a window
 * drawn, and two more frames drawn with it.
 */
export async function settled(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await until(page, () => !window.__view.busy && window.__view.stats.num('timeline.renders') > 0, 'window loaded and drawn');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}
