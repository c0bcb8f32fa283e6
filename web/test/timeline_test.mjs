// The timeline view (web/src/timeline_view.ts) against the real server:
// `model-inspector open` with two runs, the bundled ORT run (op types linked
// to graph nodes) and a synthetic PyTorch/Kineto trace from
// bench/timeline/make_timeline_trace.py (two GPUs x 4 streams, copies, syncs, launch and event flows).
//
// The view is built from src/ as an ES module and mounted on a tiny test
// page; Playwright's request routing answers that page and module on the
// server's own origin, so the view's /api requests go to the real server
// unchanged (the server itself serves only the embedded app).
//
// Checks: the MITW decoder against format=json for the same windows (whole
// run, zoomed, filtered); pixel colours (a Conv task's box has the Conv
// colour, a copy and a sync show their hatching); wheel zoom / W A S D / F;
// click selects a task (host.taskClicked, flows of a kernel); shift-drag
// area selection (host.rangeSelected with the range under the pointer and
// the tracks covered); group collapse; op-type filter and clock sent to the
// server; compare mode; no page errors. Screenshots go to the artifacts dir.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifactsDir, check, colorDistance, done, eq, importTs, launchBrowser, pixelsAt, repoDir } from './lib.mjs';
import { startServer } from './server.mjs';
import { buildTimelineBundle, gotoTimelinePage, settled, until } from './timeline_harness.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'mi-timeline-test-'));
const tracePath = join(tmp, 'synthetic_kineto.json');
execFileSync('python3', [join(repoDir, 'bench/timeline/make_timeline_trace.py'), '--tasks', '4000', '--out', tracePath]);

const bundle = await buildTimelineBundle();
const { decodeTimelineWindow, kAggregateTask, kTaskKindNames } = await importTs('rpc/timeline_binary');
const { opColor } = await importTs('base/palette');
const { kCopyFill, kCopyStripe, kSyncFill, kSyncStripe, hexRgb } = await importTs('views/timeline/timeline_render');
const rgb255 = (c) => c.map((v) => Math.round(v * 255));

const server = await startServer([join(repoDir, 'test/fixtures/resnet18/ort_all'), tracePath]);
const base = server.url.replace(/\?.*$/, '').replace(/\/$/, '');
const getJson = async (path) => {
  const r = await fetch(base + path);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
};
const getBuf = async (path) => {
  const r = await fetch(base + path);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.arrayBuffer();
};

// ---- 1. decoder against format=json ----
async function compareWindow(run, query, what) {
  const bin = decodeTimelineWindow(await getBuf(`/api/runs/${run}/timeline/window?${query}&format=binary`));
  const js = await getJson(`/api/runs/${run}/timeline/window?${query}&format=json`);
  eq(bin.itemCount, js.items.length, `${what}: item count`);
  eq(bin.totalTasks, js.total_tasks_in_window, `${what}: total tasks`);
  let bad = 0;
  js.items.forEach((it, i) => {
    const same = bin.start[i] === it.start_ns && bin.end[i] === it.end_ns
      && bin.task[i] === (it.task === null ? kAggregateTask : it.task) && bin.count[i] === it.count
      && bin.track[i] === it.track && bin.str(bin.label[i]) === it.label && Math.abs(bin.busy[i] - it.busy) < 1e-6
      && kTaskKindNames[bin.kind[i]] === it.kind && bin.row[i] === it.row && bin.flags[i] === it.flags;
    if (!same && bad++ < 3) console.error(`  ${what}: item ${i} differs: json ${JSON.stringify(it)}`);
  });
  eq(bad, 0, `${what}: items equal to format=json`);
  return bin;
}
let browser = null;
try {
  const metas = [await getJson('/api/runs/0/timeline'), await getJson('/api/runs/1/timeline')];
  check(metas[0].task_count > 100 && metas[0].tracks.length >= 1, `ORT run has tasks (${metas[0].task_count})`);
  check(metas[1].tracks.filter((t) => t.kind === 'device_stream').length === 8, 'synthetic run: 8 device streams');
  for (const [run, m] of metas.entries()) {
    const whole = await compareWindow(run, `start_ns=${m.start_ns}&end_ns=${m.end_ns}&px=900`, `run ${run} whole`);
    check(whole.itemCount > 0, `run ${run}: whole-run window has items`);
    const mid = Math.round((m.start_ns + m.end_ns) / 2), w = Math.max(2000, Math.round((m.end_ns - m.start_ns) / 40));
    await compareWindow(run, `start_ns=${mid - w}&end_ns=${mid + w}&px=1200`, `run ${run} zoomed`);
  }
  const convWin = await compareWindow(0, `start_ns=${metas[0].start_ns}&end_ns=${metas[0].end_ns}&px=900&op=Conv`, 'run 0 op=Conv');
  for (let i = 0; i < convWin.itemCount; ++i) {
    if (convWin.str(convWin.label[i]) !== 'Conv') { check(false, `op=Conv: item ${i} is ${convWin.str(convWin.label[i])}`); break; }
  }

  // ---- 2. the view in the browser ----
  browser = await launchBrowser();
  const errors = [];
  const failed = [];
  async function openPage(run) {
    const page = await browser.newPage({ viewport: { width: 1200, height: 640 } });
    page.on('pageerror', (e) => errors.push(e.message));
    // (Chromium's own favicon request 404s: not ours.)
    page.on('console', (m) => { if (m.type() === 'error' && !/favicon/.test(m.location()?.url ?? '')) errors.push(`${m.text()} ${m.location()?.url ?? ''}`); });
    page.on('requestfailed', (r) => { if (!/AbortError|ERR_ABORTED/.test(r.failure()?.errorText ?? '')) failed.push(r.url()); });
    page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
    await gotoTimelinePage(page, base, bundle, run);
    await until(page, () => document.body.dataset.ready, `run ${run}: view opened`);
    eq(await page.evaluate(() => document.body.dataset.ready), '1', `run ${run}: open() resolved`);
    await settled(page);
    return page;
  }
  const state = (page) => page.evaluate(() => window.__view.state);
  const canvasBox = (page) => page.evaluate(() => { const r = window.__view.canvas.getBoundingClientRect(); return { x: r.left, y: r.top }; });

  /** A single (not aggregated) item of the current window matching `pred` (evaluated in the page). */
  async function findItem(page, predSrc, source = 0) {
    return page.evaluate(({ predSrc, source }) => {
      const w = window.__view.windowOf(source);
      const pred = new Function('it', `return (${predSrc})(it)`);
      let best = null;
      for (let i = 0; i < w.itemCount; ++i) {
        if (w.flags[i] & 1) continue;
        const it = { i, start: w.start[i], end: w.end[i], task: w.task[i], track: w.track[i], row: w.row[i], kind: w.kind[i], label: w.str(w.label[i]) };
        if (pred(it) && (!best || it.end - it.start > best.end - best.start)) best = it;
      }
      return best;
    }, { predSrc, source });
  }
  /** Zooms so the item fills the middle of the plot, then returns its screen centre (page coordinates). */
  async function zoomOnto(page, it, source = 0) {
    await page.evaluate(({ it }) => {
      const d = it.end - it.start;
      window.__view.zoomTo(it.start - d, it.end + d);
    }, { it });
    await settled(page);
    const c = await canvasBox(page);
    return page.evaluate(({ it, source, c }) => ({
      x: c.x + window.__view.xOf((it.start + it.end) / 2),
      y: c.y + window.__view.rowCenterY(source, it.track, it.row),
      x0: c.x + window.__view.xOf(it.start),
      x1: c.x + window.__view.xOf(it.end),
    }), { it, source, c });
  }

  // ORT run: Conv colour, click, F, wheel, W/A/S/D, area selection, filter, clock.
  const page = await openPage(0);
  await page.screenshot({ path: join(art, 'timeline_ort_fit.png') });
  const lanes = await page.evaluate(() => window.__view.laneBoxes());
  check(lanes.length >= 1, `ORT run: lanes (${lanes.length})`);
  const conv = await findItem(page, "(it) => it.label === 'Conv'");
  if (check(conv !== null, 'a Conv task is drawn alone at fit')) {
    const p = await zoomOnto(page, conv);
    check(p.x1 - p.x0 > 100, `Conv box is wide after zooming (${Math.round(p.x1 - p.x0)} px)`);
    const png = await page.screenshot({ path: join(art, 'timeline_conv.png') });
    // Above the text line: box top + 3 px, at 1/4 of its width.
    const [px] = await pixelsAt(page, png, [[p.x0 + (p.x1 - p.x0) / 4, p.y - 5]]);
    const want = rgb255(opColor('Conv'));
    check(colorDistance(px, want) <= 24, `Conv box pixel ${px} has the Conv colour ${want}`);
    // Click selects the task: host.taskClicked with its id and track.
    await page.mouse.click(p.x0 + (p.x1 - p.x0) / 4, p.y);
    const ev = await until(page, () => window.__events.find((e) => e.type === 'task'), 'taskClicked');
    if (ev) {
      eq(ev.id, conv.task, 'taskClicked: task id');
      eq(ev.info.track, conv.track, 'taskClicked: track');
      eq(ev.info.startNs, conv.start, 'taskClicked: start');
    }
    eq(JSON.stringify((await state(page)).selected), JSON.stringify([conv.task]), 'state.selected');
    await until(page, () => window.__view.state.selectedTask !== null, 'selected task details');
    // F: zoom to the selection (the task fills ~80 % of the plot).
    await page.evaluate(() => window.__view.zoomTo(window.__view.state.startNs - 5e6, window.__view.state.endNs + 5e6));
    await page.keyboard.press('f');
    const s = await state(page);
    const d = Math.max(conv.end - conv.start, 1000);
    check(Math.abs((s.endNs - s.startNs) - 1.25 * d) <= 2 && Math.abs((s.startNs + s.endNs) / 2 - (conv.start + conv.end) / 2) <= 2,
      `F zooms to the selected task (${s.startNs}..${s.endNs} for ${conv.start}..${conv.end})`);
    // Escape clears the selection.
    await page.keyboard.press('Escape');
    eq(JSON.stringify((await state(page)).selected), '[]', 'Escape clears the selection');
  }

  // Wheel: a discrete mouse wheel zooms at the pointer (the time under it stays), and a new window is fetched.
  await page.keyboard.press('0');
  await settled(page);
  const before = await state(page);
  const c = await canvasBox(page);
  const wx = c.x + 700, wy = c.y + 120;
  const tUnder = await page.evaluate((x) => { const v = window.__view, s = v.state; return s.startNs + ((x - 190) * (s.endNs - s.startNs)) / (1200 - 190); }, 700);
  const windows0 = await page.evaluate(() => window.__view.stats.num('timeline.windows'));
  await page.mouse.move(wx, wy);
  await page.mouse.wheel(0, -300);
  await settled(page);
  const after = await state(page);
  const ratio = (after.endNs - after.startNs) / (before.endNs - before.startNs);
  check(Math.abs(ratio - Math.exp(-0.6)) < 0.02, `wheel zooms in by exp(-0.6) (ratio ${ratio.toFixed(3)})`);
  const tUnderAfter = after.startNs + ((700 - 190) * (after.endNs - after.startNs)) / (1200 - 190);
  check(Math.abs(tUnderAfter - tUnder) <= (before.endNs - before.startNs) / 1000, 'wheel zoom keeps the time under the pointer');
  check(await page.evaluate((n) => window.__view.stats.num('timeline.windows') > n, windows0), 'wheel zoom fetched a new window');
  const req = new URLSearchParams((await page.evaluate(() => window.__view.stats.get('timeline.last_request'))).split('?')[1]);
  check(Number(req.get('start_ns')) <= after.startNs && Number(req.get('end_ns')) >= Math.min(after.endNs, metas[0].end_ns),
    `the window request covers the view (${req.get('start_ns')}..${req.get('end_ns')})`);
  // Trackpad pinch arrives as ctrl + wheel: zoom by exp(-deltaY / 100).
  const beforePinch = await state(page);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -30);
  await page.keyboard.up('Control');
  const afterPinch = await state(page);
  const pr = (afterPinch.endNs - afterPinch.startNs) / (beforePinch.endNs - beforePinch.startNs);
  check(Math.abs(pr - Math.exp(-0.3)) < 0.01, `pinch zooms in by exp(-0.3) (ratio ${pr.toFixed(3)})`);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, 30);
  await page.keyboard.up('Control');
  await settled(page);

  // Keyboard: W zooms in 1.3x, S zooms out, A / D pan by 15 % of the plot.
  await page.keyboard.press('w');
  let k = await state(page);
  check(Math.abs((after.endNs - after.startNs) / (k.endNs - k.startNs) - 1.3) < 0.01, 'W zooms in 1.3x');
  await page.keyboard.press('s');
  const k2 = await state(page);
  check(Math.abs((k2.endNs - k2.startNs) - (after.endNs - after.startNs)) <= 2, 'S zooms back out');
  await page.keyboard.press('a');
  k = await state(page);
  check(Math.abs((k2.startNs - k.startNs) - 0.15 * (k2.endNs - k2.startNs)) <= 2, 'A pans left by 15 %');
  await page.keyboard.press('d');
  k = await state(page);
  check(Math.abs(k.startNs - k2.startNs) <= 2, 'D pans back');
  // Rapid zooming: every response but the latest is dropped or aborted; the final window matches the view.
  for (let i = 0; i < 8; ++i) await page.mouse.wheel(0, i % 2 ? 120 : -180);
  await settled(page);
  const fin = await state(page);
  const fr = new URLSearchParams((await page.evaluate(() => window.__view.stats.get('timeline.last_request'))).split('?')[1]);
  check(Number(fr.get('start_ns')) <= Math.max(fin.startNs, metas[0].start_ns) && Number(fr.get('end_ns')) >= Math.min(fin.endNs, metas[0].end_ns),
    'after rapid zooming the last window covers the view');

  // Shift-drag area selection: host.rangeSelected with the range under the pointer and the tracks crossed.
  await page.keyboard.press('0');
  await settled(page);
  const fitState = await state(page);
  const lane0 = (await page.evaluate(() => window.__view.laneBoxes()))[0];
  const ax0 = 400, ax1 = 760, ay = lane0.y + 4;
  await page.keyboard.down('Shift');
  await page.mouse.move(c.x + ax0, c.y + ay);
  await page.mouse.down();
  for (let s = 1; s <= 6; ++s) await page.mouse.move(c.x + ax0 + ((ax1 - ax0) * s) / 6, c.y + ay + 2);
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const range = await until(page, () => window.__events.find((e) => e.type === 'range'), 'rangeSelected');
  if (range) {
    const tAt = (x) => fitState.startNs + ((x - 190) * (fitState.endNs - fitState.startNs)) / (1200 - 190);
    const nsPerPx = (fitState.endNs - fitState.startNs) / 1010;
    check(Math.abs(range.startNs - tAt(ax0)) <= nsPerPx + 1 && Math.abs(range.endNs - tAt(ax1)) <= nsPerPx + 1,
      `rangeSelected ${range.startNs}..${range.endNs} is the dragged range ${Math.round(tAt(ax0))}..${Math.round(tAt(ax1))}`);
    eq(JSON.stringify(range.tracks), JSON.stringify([lane0.track]), 'rangeSelected: the track under the drag');
  }
  await page.screenshot({ path: join(art, 'timeline_area.png') });
  await page.keyboard.press('Escape');
  check(await page.evaluate(() => window.__events.some((e) => e.type === 'cleared')), 'Escape clears the area (rangeCleared)');

  // Op-type filter and clock are the server's: the request carries them, the window holds only Conv.
  await page.evaluate(() => window.__view.setFilter({ opTypes: ['Conv'] }));
  await settled(page);
  const fq = await page.evaluate(() => window.__view.stats.get('timeline.last_request'));
  check(fq.includes('op=Conv'), `filter sent to the server (${fq})`);
  const onlyConv = await page.evaluate(() => { const w = window.__view.windowOf(0); for (let i = 0; i < w.itemCount; ++i) if (w.str(w.label[i]) !== 'Conv') return false; return w.itemCount > 0; });
  check(onlyConv, 'filtered window holds only Conv');
  await page.evaluate(() => window.__view.setFilter({}));
  await page.evaluate(() => window.__view.setClock('calibrated'));
  await settled(page);
  check((await page.evaluate(() => window.__view.stats.get('timeline.last_request'))).includes('clock=calibrated'), 'calibrated clock sent to the server');
  eq((await state(page)).clock, 'calibrated', 'state.clock');
  await page.evaluate(() => window.__view.setClock('raw'));
  await settled(page);

  // The toolbar: unticking "copies" (in the "filters" popover) sends every other kind; typing an op type filters by it.
  await page.click('#mi-tl-filters summary');
  await page.locator('.mi-tl-kinds input[value="data_movement"]').uncheck();
  await settled(page);
  const kq = new URLSearchParams((await page.evaluate(() => window.__view.stats.get('timeline.last_request'))).split('?')[1]);
  eq(kq.get('kind'), 'compute,sync,host_op,runtime,annotation,overhead,other', 'kind filter from the toolbar');
  await page.locator('.mi-tl-kinds input[value="data_movement"]').check();
  await page.click('#mi-tl-filters summary');
  await page.locator('.mi-tl-bar input[placeholder^="op types"]').fill('Conv, Relu');
  await settled(page);
  const oq = new URLSearchParams((await page.evaluate(() => window.__view.stats.get('timeline.last_request'))).split('?')[1]);
  eq(oq.get('op'), 'Conv,Relu', 'op filter from the toolbar');
  eq(oq.get('kind'), null, 'all kinds ticked: no kind filter');
  await page.locator('.mi-tl-bar input[placeholder^="op types"]').fill('');
  await settled(page);

  // Group header click collapses the group, a second click expands it.
  const g0 = await page.evaluate(() => window.__view.laneBoxes()[0]);
  await page.mouse.click(c.x + 30, c.y + g0.y - 10);
  check(await page.evaluate(() => window.__view.laneBoxes()[0].collapsed), 'group collapsed by a click on its header');
  await page.mouse.click(c.x + 30, c.y + g0.y - 10);
  check(!(await page.evaluate(() => window.__view.laneBoxes()[0].collapsed)), 'group expanded again');

  // Stream filter: a click on a track label shows only that track (server side); a second click clears it.
  const l0 = await page.evaluate(() => window.__view.laneBoxes()[0]);
  await page.mouse.click(c.x + 40, c.y + l0.y + 10);
  await settled(page);
  check((await page.evaluate(() => window.__view.stats.get('timeline.last_request'))).includes(`tracks=${l0.track}`), 'track label click filters by that track');
  await page.mouse.click(c.x + 40, c.y + l0.y + 10);
  await settled(page);
  check(!(await page.evaluate(() => window.__view.stats.get('timeline.last_request'))).includes('tracks='), 'second click clears the track filter');

  // Compare: the same run below on an aligned axis.
  await page.evaluate(() => window.__view.setCompareRun(0, 'start'));
  await until(page, () => window.__view.laneBoxes().some((l) => l.source === 1) && window.__view.windowOf(1) !== null, 'compare run loaded');
  await settled(page);
  await page.screenshot({ path: join(art, 'timeline_compare.png') });
  const cmp = await page.evaluate(() => ({ a: window.__view.windowOf(0).itemCount, b: window.__view.windowOf(1).itemCount }));
  eq(cmp.b, cmp.a, 'compare: the same run aligned at start gives the same items');
  await page.evaluate(() => window.__view.setCompareRun(null));
  check(!(await page.evaluate(() => window.__view.laneBoxes().some((l) => l.source === 1))), 'compare off');

  // highlightTasks with focus: the view moves onto them.
  if (conv) {
    await page.evaluate((id) => window.__view.highlightTasks([id], { focus: true }), conv.task);
    await until(page, (cv) => { const s = window.__view.state; return s.startNs <= cv.start && s.endNs >= cv.end && s.endNs - s.startNs < 10 * Math.max(1000, cv.end - cv.start); }, 'highlight focus', conv);
  }
  // setPath: the tasks' boxes come from /tasks/{id} (track, times); null clears.
  const two = await page.evaluate(() => { const w = window.__view.windowOf(0); const ids = []; for (let i = 0; i < w.itemCount && ids.length < 2; ++i) if (!(w.flags[i] & 1)) ids.push({ id: w.task[i], track: w.track[i], start: w.start[i], end: w.end[i] }); return ids; });
  await page.evaluate((ids) => window.__view.setPath(ids), two.map((t) => t.id));
  const path = await until(page, () => window.__view.state.path.length === 2 && window.__view.state.path, 'path loaded');
  if (path) {
    eq(JSON.stringify(path.map((p) => [p.id, p.track, p.startNs, p.endNs])), JSON.stringify(two.map((t) => [t.id, t.track, t.start, t.end])), 'setPath: tasks placed from their details');
  }
  await page.evaluate(() => window.__view.setPath(null));
  eq(await page.evaluate(() => window.__view.state.path.length), 0, 'setPath(null) clears');

  const frameMs = await page.evaluate(() => window.__view.stats.samples('timeline.frame_ms').slice().sort((a, b) => a - b));
  console.log(`  ORT run: ${frameMs.length} frames drawn, median draw ${frameMs[frameMs.length >> 1].toFixed(2)} ms`);
  await page.close();

  // Synthetic Kineto run: copies and syncs are hatched; a kernel's launch flow.
  const p2 = await openPage(1);
  await p2.screenshot({ path: join(art, 'timeline_kineto_fit.png') });
  const dLanes = await p2.evaluate(() => window.__view.laneBoxes());
  eq(dLanes.length, metas[1].tracks.length, 'synthetic run: one lane per track');
  for (const [kind, fill, stripe, what] of [[1, kCopyFill, kCopyStripe, 'copy'], [2, kSyncFill, kSyncStripe, 'sync']]) {
    await p2.keyboard.press('0');
    await settled(p2);
    // Zoom into the middle until single items show, then take the widest of this kind.
    await p2.evaluate(() => { const s = window.__view.state, m = (s.startNs + s.endNs) / 2; window.__view.zoomTo(m - 200000, m + 200000); });
    await settled(p2);
    const it = await findItem(p2, `(it) => it.kind === ${kind}`);
    if (!check(it !== null, `a ${what} drawn alone`)) continue;
    const p = await zoomOnto(p2, it);
    const png = await p2.screenshot({ path: join(art, `timeline_${what}.png`) });
    const pts = [];
    // Near the right end: the label (and its plate) is at the left.
    for (let x = 0; x < 12; ++x) pts.push([p.x1 - 20 + x, p.y - 4]);
    const px = await pixelsAt(p2, png, pts);
    const nearFill = px.filter((q) => colorDistance(q, rgb255(hexRgb(fill))) <= 40).length;
    const nearStripe = px.filter((q) => colorDistance(q, rgb255(hexRgb(stripe))) <= 70).length;
    check(nearFill >= 2 && nearStripe >= 2, `${what} is hatched: ${nearFill} fill and ${nearStripe} stripe pixels of 12 (${JSON.stringify(px.slice(0, 6))})`);
  }
  // Click a kernel: taskClicked, then its launch flow (host -> stream) is drawn.
  const kern = await findItem(p2, '(it) => it.kind === 0');
  if (check(kern !== null, 'a kernel drawn alone')) {
    const p = await zoomOnto(p2, kern);
    await p2.mouse.click(p.x, p.y);
    await until(p2, (id) => window.__events.some((e) => e.type === 'task' && e.id === id), 'taskClicked on a kernel', kern.task);
    await until(p2, () => window.__view.state.flows > 0, 'launch flow drawn');
    const det = await p2.evaluate(() => window.__view.state.selectedTask);
    check(det && det.flows.some((f) => f.kind === 'launch' && f.to_task === det.id), 'the kernel has its launch flow');
    await p2.evaluate(() => { const s = window.__view.state; window.__view.zoomTo(s.startNs - 60000, s.endNs + 20000); });
    await settled(p2);
    await p2.screenshot({ path: join(art, 'timeline_flow.png') });
  }
  // A request the server rejects: its message is shown over the plot, and the view recovers.
  await p2.evaluate(() => window.__view.setFilter({ tracks: [99999] }));
  const msg = await until(p2, () => window.__view.state.message, 'error message shown');
  check(/no track 99999/.test(msg ?? ''), `the server's message is shown (${msg})`);
  await p2.evaluate(() => window.__view.setFilter({}));
  await settled(p2);
  eq(await p2.evaluate(() => window.__view.state.message), null, 'message cleared after a good window');
  await p2.close();
  // (The rejected request above is expected: the console logs its 400.)
  const unexpected = (list) => list.filter((m) => !/tracks=99999/.test(m) && !/status of 400/.test(m));
  check(unexpected(errors).length === 0, `no page errors (${unexpected(errors).slice(0, 3).join(' | ')})`);
  check(unexpected(failed).length === 0, `no failed requests (${unexpected(failed).slice(0, 3).join(' | ')})`);
  check(failed.filter((m) => /tracks=99999/.test(m)).length >= 1, 'the rejected request was seen');
} catch (e) {
  check(false, `${e.stack || e}`);
} finally {
  await browser?.close();
  await server.stop();
}
done('timeline_test');
