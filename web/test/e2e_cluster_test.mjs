// End-to-end test of the cluster view against the real server
// (`model-inspector open DIR` on a directory of ranks, embedded UI) in
// Chromium, on the real 2-rank torch_npu text export
// (test/fixtures/samples/cluster/msinsight_pt_text_level1_2rank_2024):
//   - the first screen is the cluster view (no run is open yet: the server
//     opens ranks only when asked), with the report's world size;
//   - the heat map is drawn: at each cell's centre the screenshot's pixel
//     has the heat ramp's colour of that cell's value between the map's
//     min and max (the ramp's stops are written out here, not taken from
//     the UI), and the three metrics differ where the report's figures do;
//   - a click on rank 1's cell opens rank 1 as a run (the run list gains
//     "rank 1", its inputs are rank 1's folder only), the timeline tab
//     shows it, and the timeline's view is that step: the report's step
//     window (start, wall) lies within 2 % of the ProfilerStep the rank's
//     own run reports (GET .../analyses/step_breakdown, an independent
//     reading of the same trace);
//   - picking the first collective in the list draws its alignment (the
//     last rank's row red, the other blue) and selects its kernels on both
//     ranks: the run of ranks 0 and 1 opens, the selection holds one task
//     per rank, each named as the collective and starting where the
//     report says that rank arrived (± 1 µs), on the tracks of two
//     different ranks; the timeline highlights them;
//   - no page errors.
// Screenshots: cluster_first.png, cluster_rank_step.png,
// cluster_collective.png, cluster_collective_timeline.png.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, check, colorDistance, done, eq, fail, launchBrowser, pixelsAt, poll, repoDir } from './lib.mjs';
import { startServer } from './server.mjs';

const kCluster = join(repoDir, 'test/fixtures/samples/cluster/msinsight_pt_text_level1_2rank_2024');
const art = artifactsDir();
mkdirSync(art, { recursive: true });

// The heat ramp (base/palette.ts's stops, pale yellow → dark red), written out: the expected colours.
const kRamp = ['#fff7bc', '#fec44f', '#fb9a29', '#e34a33', '#b30000', '#67000d'].map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));
function ramp(t) {
  const x = Math.min(1, Math.max(0, t)) * (kRamp.length - 1);
  const k = Math.min(kRamp.length - 2, Math.floor(x)), f = x - k;
  return kRamp[k].map((c, i) => c + (kRamp[k + 1][i] - c) * f);
}

const server = await startServer([kCluster]);
console.log(`  server at ${server.url}`);
check(/cluster: rank 1 read|cluster: rank 0 read/.test(server.stderr()), `the terminal shows the ranks' progress: ${server.stderr().trim().split('\n').slice(0, 4).join(' | ')}`);
const browser = await launchBrowser();
const shot = (page, name) => page.screenshot({ path: join(art, `${name}.png`) });
const apiJson = (page, path) => page.evaluate(async (p) => (await fetch(p)).json(), path);

const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
page.errors = [];
page.on('pageerror', (e) => page.errors.push(e.message));
page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) page.errors.push(m.text()); });
await page.goto(server.url);
await poll(page, () => document.body.dataset.ready, null, 60000, 'runs loaded');
if (!(await page.evaluate(() => !!document.querySelector('#tabs button[data-tab="cluster"]')))) fail('the page has no cluster tab: the binary embeds an older UI; rebuild model-inspector');
await poll(page, () => window.__miDebug.stats()['cluster.heat_draws'] >= 1 && window.__miDebug.view('cluster')?.settled(), null, 60000, 'the heat map drawn');

// ---- first screen -------------------------------------------------------
const report = await apiJson(page, '/api/cluster');
eq(report.schema, 'model-inspector/cluster/1', 'GET /api/cluster is the cluster report');
eq(JSON.stringify(report.ranks.map((r) => r.rank)), '[0,1]', 'the report has ranks 0 and 1');
const first = await page.evaluate(() => ({
  tab: window.__miDebug.state().tab, runs: window.__miDebug.state().runs.length, head: document.getElementById('cluster-head').textContent,
  hidden: document.querySelector('#tabs button[data-tab="cluster"]').hidden,
}));
eq(first.tab, 'cluster', 'the first screen is the cluster view');
eq(first.runs, 0, 'no run is open before the user asks for a rank');
check(!first.hidden, 'the cluster tab is offered');
check(first.head.includes('2 ranks read') && first.head.includes(`world size ${report.world_size}`), `the head line: ${first.head}`);
await shot(page, 'cluster_first');

// ---- the heat map's pixels ---------------------------------------------
check(report.steps.length >= 1, `the report has steps (${report.steps.length})`);
const fields = { wall: 'wall_ns', exposed: 'exposed_communication_ns', idle: 'idle_ns' };
for (const [metric, field] of Object.entries(fields)) {
  await page.evaluate((m) => window.__miDebug.view('cluster').setMetric(m), metric);
  await poll(page, () => window.__miDebug.view('cluster').settled(), null, 10000, 'redrawn');
  const cells = [];
  for (let s = 0; s < report.steps.length; s++) {
    for (const r of report.steps[s].ranks) cells.push({ rank: r.rank, step: s, v: r[field] });
  }
  const min = Math.min(...cells.map((c) => c.v)), max = Math.max(...cells.map((c) => c.v));
  const points = await page.evaluate((cs) => cs.map((c) => window.__miDebug.view('cluster').cellCenter(c.rank, c.step)), cells);
  const png = await page.screenshot();
  const px = await pixelsAt(page, png, points.map((p) => [p.x, p.y]));
  cells.forEach((c, k) => {
    const want = ramp(max > min ? (c.v - min) / (max - min) : 0);
    check(colorDistance(px[k], want) <= 6, `${metric}: rank ${c.rank} step ${c.step} (${c.v} ns) drawn ${px[k]}, ramp gives ${want.map(Math.round)}`);
  });
  if (max > min) {
    const hi = cells.findIndex((c) => c.v === max), lo = cells.findIndex((c) => c.v === min);
    check(colorDistance(px[hi], px[lo]) > 60, `${metric}: the largest and the smallest value look different`);
  }
}
await page.evaluate(() => window.__miDebug.view('cluster').setMetric('wall'));

// ---- a cell click opens the rank's timeline at that step -----------------
const step = 0, rank = 1;
const sr = report.steps[step].ranks.find((r) => r.rank === rank);
await poll(page, () => window.__miDebug.view('cluster').settled(), null, 10000, 'redrawn');
const cell = await page.evaluate(({ rank, step }) => window.__miDebug.view('cluster').cellCenter(rank, step), { rank, step });
await page.mouse.click(cell.x, cell.y);
await poll(page, () => {
  const s = window.__miDebug.state();
  return s.tab === 'timeline' && s.runs.length >= 1 && s.selection?.kind === 'range' && s.resolved.done && !window.__miDebug.view('cluster').state.busy;
}, null, 120000, 'rank 1 opened at the step');
const after = await page.evaluate(() => ({ s: window.__miDebug.state(), cluster: window.__miDebug.view('cluster').state }));
eq(after.cluster.message, '', 'the cell click reported no error');
const runId = after.s.panes[0].run;
const runs = await apiJson(page, '/api/runs');
const opened = runs.runs[runId];
eq(opened?.name, 'rank 1', 'the main run is the new run "rank 1"');
check(opened && opened.inputs.length > 0 && opened.inputs.every((i) => i.path.includes('rank1_ascend_pt')), `its inputs are rank 1's files only (${opened?.inputs.map((i) => i.path.split('/').slice(-2).join('/'))})`);
await poll(page, () => {
  const tl = window.__miDebug.view('timeline');
  return tl && tl.windowOf(0) !== null && !tl.busy && tl.state.run >= 0;
}, null, 60000, 'the timeline window');
const tl = await page.evaluate(() => window.__miDebug.view('timeline').state);
eq(tl.run, runId, 'the timeline shows the rank\'s run');
const breakdown = await apiJson(page, `/api/runs/${runId}/analyses/step_breakdown`);
const label = report.steps[step].label;
const own = breakdown.steps.find((s) => s.name === label);
check(!!own, `the rank's own step breakdown has ${label} (${breakdown.steps.map((s) => s.name)})`);
if (own) {
  const wall = own.end_ns - own.start_ns;
  check(Math.abs(sr.start_ns - own.start_ns) <= 0.02 * wall, `the report's start of ${label} on rank 1 (${sr.start_ns}) is the rank's own (${own.start_ns})`);
  check(Math.abs(sr.wall_ns - wall) <= 0.02 * wall, `the report's wall of ${label} on rank 1 (${sr.wall_ns}) is the rank's own (${wall})`);
  // The view shows the step: its window is the step's, within the margin the timeline adds.
  check(tl.startNs <= own.start_ns + 0.02 * wall && tl.endNs >= own.end_ns - 0.02 * wall, `the timeline shows ${label}: view ${tl.startNs}..${tl.endNs}, step ${own.start_ns}..${own.end_ns}`);
  check(tl.endNs - tl.startNs <= 1.25 * wall, `the timeline is zoomed to the step (view ${tl.endNs - tl.startNs} ns, step ${wall} ns)`);
}
await shot(page, 'cluster_rank_step');

// ---- a collective: its alignment, its kernels on both ranks ------------
await page.click('#tabs button[data-tab="cluster"]');
check(report.collectives.length > 0, `the report lists collectives (${report.collectives.length})`);
const c = report.collectives[0];
const vBefore = await page.evaluate(() => window.__miDebug.state().selectionVersion);
await page.click('#cluster-collectives tr[data-index="0"]');
await poll(page, (v) => {
  const s = window.__miDebug.state();
  return s.selectionVersion > v && s.selection?.kind === 'task' && s.resolved.done && !window.__miDebug.view('cluster').state.busy;
}, vBefore, 120000, 'the collective selected');
const sel = await page.evaluate(() => ({ s: window.__miDebug.state(), cluster: window.__miDebug.view('cluster').state }));
eq(sel.cluster.message, '', 'picking the collective reported no error');
const both = sel.s.panes[0].run;
eq((await apiJson(page, '/api/runs')).runs[both].name, 'ranks 0, 1', 'the collective opened the run of its two ranks');
const ids = sel.s.selection.ids;
eq(ids.length, c.ranks.length, `one task per rank of ${c.name}`);
const tasks = await Promise.all(ids.map((id) => apiJson(page, `/api/runs/${both}/tasks/${id}`)));
const groups = new Set();
for (const t of tasks) {
  eq(t.name, c.name, `task ${t.id} is the collective`);
  const part = c.ranks.find((r) => Math.abs(r.start_ns - t.start_ns) <= 1000);
  check(!!part, `task ${t.id} starts (${t.start_ns}) where a rank arrived (${c.ranks.map((r) => r.start_ns)})`);
  groups.add(t.track.group);
}
eq(groups.size, 2, `the tasks lie on two ranks' tracks (${[...groups]})`);
await poll(page, (n) => window.__miDebug.view('timeline')?.state.highlightIds.length === n, ids.length, 60000, 'the timeline highlights them');
// The alignment: the last rank's row red, the other's blue (at the end of the bars: the transfer).
await poll(page, () => window.__miDebug.view('cluster').settled(), null, 10000, 'redrawn');
const alignPng = await page.screenshot();
await shot(page, 'cluster_collective');
const rows = await page.evaluate(() => {
  const cv = document.getElementById('cluster-align'), b = cv.getBoundingClientRect();
  return { left: b.left, top: b.top, width: b.width };
});
const ranksSorted = c.ranks.map((r) => r.rank).sort((a, b) => a - b);
const rowH = await page.evaluate((n) => {
  const h = document.getElementById('cluster-align').getBoundingClientRect().height;
  return Math.max(1, Math.min(22, (h - 26 - 22) / Math.max(1, n)));
}, ranksSorted.length);
const endX = rows.left + rows.width - 12 - 2; // just inside the last end (the axis runs to the last end)
const latest = c.ranks.reduce((a, b) => (b.end_ns > a.end_ns ? b : a));
const pts = ranksSorted.map((r, i) => [endX, rows.top + 26 + i * rowH + rowH / 2 - 1]);
const apx = await pixelsAt(page, alignPng, pts);
ranksSorted.forEach((r, i) => {
  if (r !== latest.rank) return; // only the bar reaching the axis' end is sure to cover that pixel
  const want = r === c.last_rank ? [0xe3, 0x4a, 0x33] : [0x2f, 0x6f, 0xde];
  check(colorDistance(apx[i], want) <= 20, `alignment: rank ${r}'s transfer drawn ${apx[i]} (${r === c.last_rank ? 'last rank: red' : 'blue'})`);
});
await page.click('#tabs button[data-tab="timeline"]');
await poll(page, () => { const t = window.__miDebug.view('timeline'); return t && !t.busy && t.state.highlighted.length > 0; }, null, 60000, 'highlights drawn');
await shot(page, 'cluster_collective_timeline');

eq(page.errors.length, 0, `no page errors (${page.errors.join(' | ')})`);
await browser.close();
await server.stop();
done('e2e_cluster_test');
