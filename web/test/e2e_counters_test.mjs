// End-to-end test of long counter series (memory over time) against the
// real server (`model-inspector open`, MI_BINARY): a Kineto trace written
// here with 20,000 `[memory]` events (allocated and reserved: two series of
// 20,000 points, one spike) and a kernel track.
//   - the timeline's metadata sends each series downsampled (above 8192
//     points: first, lowest, highest and last point per bucket), so the
//     spike and the first and last points survive;
//   - zoomed in on 200 points, the timeline fetches the window's counters
//     in detail (GET /timeline/counters) and the value drawn at each point's
//     time is that point's exact value, where the metadata's series alone
//     would give other values;
//   - the counter line is on screen in its lane (screenshot pixels).
// Waited on by state (window.__miDebug), never by sleeps. Screenshot:
// ui_counters_zoomed.png.

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifactsDir, check, colorDistance, done, eq, frames, launchBrowser, pixelsAt, poll } from './lib.mjs';
import { startServer } from './server.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });

// The trace: point i at 1,000 us + 0.5 us * i; allocated (i % 97) KiB plus a
// 1 GB spike at i = 12345, reserved twice the allocated figure.
const kPoints = 20000;
const kSpike = 12345;
const t0Us = 1000;
const allocatedAt = (i) => (i % 97) * 1024 + (i === kSpike ? 1e9 : 0);
const nsAt = (i) => t0Us * 1000 + i * 500;
const events = [];
for (let k = 0; k < 100; ++k) {
  events.push({ ph: 'X', cat: 'kernel', name: `kernel_${k % 7}`, pid: 0, tid: 7, ts: t0Us + k * 100, dur: 50, args: { device: 0, stream: 7, correlation: k + 1 } });
}
for (let i = 0; i < kPoints; ++i) {
  events.push({
    ph: 'i', s: 't', cat: 'cpu_instant_event', name: '[memory]', pid: 1, tid: 1, ts: (nsAt(i) / 1000).toFixed(1),
    args: { 'Device Type': 1, 'Device Id': 0, Addr: 4096, Bytes: 512, 'Total Allocated': allocatedAt(i), 'Total Reserved': 2 * allocatedAt(i) },
  });
}
// "ts" as a JSON number with one decimal (Kineto writes numbers).
const text = JSON.stringify({ schemaVersion: 1, traceEvents: events }).replace(/"ts":"([0-9.]+)"/g, '"ts":$1');
// A folder of its own: the server offers models lying beside a trace.
const tracePath = join(mkdtempSync(join(tmpdir(), 'mi_counters_')), 'trace.json');
writeFileSync(tracePath, text);

const server = await startServer([tracePath]);
console.log(`  server at ${server.url}`);
const browser = await launchBrowser();
const kCounterLine = [46, 125, 190];

/** The timeline has its window and nothing in flight. */
const timelineIdle = (page) => poll(page, () => {
  const tl = window.__miDebug?.view('timeline');
  return tl && tl.windowOf(0) !== null && !tl.busy && tl.state.opened !== null;
}, null, 60000, 'the timeline window');

try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.url}#run=0&tab=timeline&panel=bottom`);
  await timelineIdle(page);

  // The metadata: two series, each downsampled, the extremes kept.
  const meta = await page.evaluate(async () => (await fetch('/api/runs/0/timeline')).json());
  eq(meta.counters.length, 2, 'two counter series (allocated, reserved)');
  const kAlloc = meta.counters.findIndex((c) => c.figure === 'allocated');
  check(kAlloc >= 0, 'an allocated series');
  for (const c of meta.counters) {
    const scale = c.figure === 'allocated' ? 1 : 2;
    eq(c.points, kPoints, `${c.name}: points counted`);
    eq(c.downsampled, true, `${c.name}: downsampled`);
    check(c.t.length <= 8192 && c.t.length === c.v.length, `${c.name}: ${c.t.length} points sent`);
    eq(Math.max(...c.v), scale * allocatedAt(kSpike), `${c.name}: the spike survives`);
    eq(c.t[0], nsAt(0), `${c.name}: first point`);
    eq(c.t[c.t.length - 1], nsAt(kPoints - 1), `${c.name}: last point`);
  }

  // Zoom to 200 points: the detail is fetched, the drawn values are exact.
  const a = nsAt(5000), b = nsAt(5200);
  const before = await page.evaluate(() => window.__miDebug.stats()['timeline.counter_windows'] ?? 0);
  await page.evaluate(([x, y]) => window.__miDebug.view('timeline').zoomTo(x, y), [a, b]);
  await poll(page, (n) => (window.__miDebug.stats()['timeline.counter_windows'] ?? 0) > n, before, 30000, 'the counters of the zoomed window');
  await timelineIdle(page);
  const overview = meta.counters[kAlloc];
  const overviewAt = (t) => { let v = null; for (let i = 0; i < overview.t.length && overview.t[i] <= t; ++i) v = overview.v[i]; return v; };
  let differ = 0;
  for (let i = 5010; i < 5190; i += 7) {
    const got = await page.evaluate(([track, t]) => window.__miDebug.view('timeline').counterValueAt(track, t), [-1 - kAlloc, nsAt(i)]);
    eq(got, allocatedAt(i), `value drawn at point ${i}`);
    if (overviewAt(nsAt(i)) !== allocatedAt(i)) ++differ;
  }
  check(differ > 0, `the metadata's series alone gives other values at ${differ} of the points (the detail is what is drawn)`);

  // The line is in its lane.
  const lanes = await page.evaluate(() => window.__miDebug.view('timeline').laneBoxes());
  const lane = lanes.find((l) => l.counter && l.track === -1 - kAlloc);
  check(lane && !lane.collapsed, 'the allocated counter lane is shown');
  const box = await page.evaluate(() => {
    const r = window.__miDebug.view('timeline').canvas.getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  });
  check(lane.y > 0 && lane.y + lane.h <= box.h, `the counter lane is in sight (${lane.y}+${lane.h} of ${box.h})`);
  await frames(page);
  const shot = await page.screenshot({ path: join(art, 'ui_counters_zoomed.png') });
  // Every column of the plot has the line's colour somewhere in the lane
  // (the values are small beside the 1 GB spike: the line runs low; a
  // 1-pixel line straddles two rows, blended with the background: within
  // 70 of its colour, where the lane's background is ~200 away).
  const pts = [];
  const columns = [];
  for (let x = box.x + 200; x < box.x + box.w - 4; x += 5) {
    columns.push(x);
    for (let y = lane.y + 1; y < lane.y + lane.h; ++y) pts.push([x, box.y + y]);
  }
  const px = await pixelsAt(page, shot, pts);
  const perColumn = pts.length / columns.length;
  let drawn = 0;
  for (let c = 0; c < columns.length; ++c) {
    if (px.slice(c * perColumn, (c + 1) * perColumn).some((p) => colorDistance(p, kCounterLine) < 70)) ++drawn;
  }
  check(drawn >= 0.95 * columns.length, `the counter line is drawn across its lane (${drawn} of ${columns.length} columns)`);
  check(errors.length === 0, `no page errors (${errors.join('; ')})`);
  await page.close();
} finally {
  await browser.close();
  await server.stop();
}
done('e2e_counters_test');
