// End-to-end test of tensor probes in the UI and of saved sessions, against
// the real server (`model-inspector open`, embedded UI) in Chromium, on
// probe stores written by the Python package and ONNX Runtime
// (make_probe_runs.py: the runner, never hand-written data). Expected
// numbers come from the stores read back through model_inspector.ProbeStore,
// not from the server.
//   - node details: a probed node's statistics in the latest run and a
//     sparkline over the last runs whose points equal the store's series;
//   - colour by probe statistic (mean): the node with the largest mean is
//     drawn in the top heat colour and the smallest in the bottom one
//     (screenshot pixels), the legend gives both values;
//   - a corrupted weight (+Inf in layer1.0's first conv): the producer the
//     trigger recorded is marked (probe panel link, red outline pixels);
//   - a recurrent op (LSTM): the step slider walks the 6 time steps, each
//     showing the store's statistics of that step;
//   - right-click a node → remove its probe and re-run, then add it back
//     and re-run: the runner runs through the server, the store gains the
//     runs, the node's details follow (no probe, then a series one longer);
//     a re-run the runner refuses (a bad trigger) shows its error;
//   - saved session: bookmarks, a note, colour mode and statistic, camera
//     and re-run settings saved by "save session" into the .mis `open`
//     was given, the folder moved elsewhere, `open moved/s.mis` restores
//     them; a session whose run is missing fails naming it.
// Screenshots: probes_*.png (docs/images/ui_probes.png is
// probes_nan_colour_1920x1080.png).

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { artifactsDir, check, clickNode, colorDistance, done, eq, fail, frames, launchBrowser, miBinary, pixelsAt, poll, repoDir, uiState } from './lib.mjs';
import { startServer } from './server.mjs';

const kPython = process.env.MI_PYTHON || '/usr/bin/python3';
// The package built beside the binary (build/python), unless given. A build
// without one (the sanitizer build: MI_PYTHON is off there) uses the package
// the interpreter itself imports (setup.sh's .pth points it at build/python),
// as python_tests does in that build.
const kBuiltPackage = process.env.MI_PYTHONPATH || resolve(dirname(miBinary()), '../../python');
if (existsSync(join(kBuiltPackage, 'model_inspector', '__init__.py'))) {
  process.env.PYTHONPATH = [kBuiltPackage, process.env.PYTHONPATH].filter(Boolean).join(':');
} else {
  const own = spawnSync(kPython, ['-c', 'import model_inspector, sys; sys.stdout.write(model_inspector.__file__)'], { encoding: 'utf8', env: process.env });
  if (own.status !== 0) {
    fail(`${kBuiltPackage} holds no model_inspector package and ${kPython} cannot import one; build the target model_inspector_python, run scripts/setup.sh, or set MI_PYTHONPATH\n${own.stderr}`);
  }
  console.log(`  this build has no Python package; using ${kPython}'s own: ${own.stdout}`);
}
process.env.MI_PYTHON = kPython;

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'mi-probes-test-'));
const work = join(tmp, 'work');
const made = spawnSync(kPython, [join(repoDir, 'web/test/make_probe_runs.py'), work], { encoding: 'utf8', env: process.env, timeout: 600000 });
if (made.status !== 0) fail(`make_probe_runs.py failed (${made.status}):\n${made.stdout}\n${made.stderr}`);
const facts = JSON.parse(made.stdout);
eq(JSON.stringify(facts.resnet.runs), '[1,2,3]', 'the resnet store keeps its three runs');
eq(facts.nan_first_hit?.node, '/layer1/layer1.0/conv1/Conv', 'the trigger stopped the corrupted model at the conv with the +Inf weight');
eq(facts.nan_first_hit?.role, 'producer', 'that conv is the producer');

/** The store's rows of one probe (step: null = the whole tensor) in a run directory's latest run. */
const row = (dir, probe, step = null) => facts[dir].probes.find((p) => p.probe === probe && (p.step ?? null) === step);

/** Reads the store again (after re-runs): runs and one probe's series of a statistic. */
function storeNow(dir, probe, stat) {
  const code = `import json, sys\nfrom model_inspector import ProbeStore\nwith ProbeStore(sys.argv[1]) as s:\n` +
    `    print(json.dumps({"runs": [r["id"] for r in s.runs()], "series": s.series(sys.argv[2], stat=sys.argv[3], last=10),` +
    ` "latest": sorted({p["probe"] for p in s.probes()})}))`;
  const r = spawnSync(kPython, ['-c', code, join(work, 'runs', dir), probe, stat], { encoding: 'utf8', env: process.env });
  if (r.status !== 0) fail(`reading the store failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const session = join(work, 's.mis');
// Runs: 0 resnet (three runs), 1 the corrupted model, 2 the LSTM.
let server = await startServer([join(work, 'runs/resnet'), join(work, 'runs/nan'), join(work, 'runs/lstm'), '--session', session]);
console.log(`  server at ${server.url}`);
const base = server.url.replace(/\/$/, '');
const api = async (path) => (await fetch(base + path)).json();
/** The framework node id of `name` in run `run` (the server's search, exact name). */
async function nodeId(run, name) {
  const r = await api(`/api/runs/${run}/levels/framework/search?q=${encodeURIComponent(name)}&mode=text`);
  const m = r.matches.find((x) => x.name === name);
  if (!m) fail(`run ${run} has no node ${name}`);
  return m.id;
}
const browser = await launchBrowser();

async function open(hash, viewport = { width: 1920, height: 1080 }, url = base) {
  const page = await browser.newPage({ viewport });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  await page.goto(`${url}/${hash}`);
  await poll(page, () => document.body.dataset.ready === '1', null, 60000, 'runs loaded');
  await poll(page, () => window.__miDebug.view('graph').pane(0).settled(), null, 60000, 'layout shown');
  return page;
}

/** The probes of the node shown in the details, as drawn: per probe its stat rows and sparkline values. */
const shownProbes = (page) => page.evaluate(() => {
  const place = document.querySelector('#details .probes-place');
  if (!place || place.dataset.state !== 'ready') return null;
  return [...place.querySelectorAll('.probe')].map((p) => ({
    probe: p.dataset.probe,
    rows: Object.fromEntries([...p.querySelectorAll(':scope > table.probe-stats tr[data-stat]')].map((tr) => [
      tr.dataset.stat, { text: tr.children[1].textContent, spark: tr.querySelector('svg.sparkline') ? JSON.parse(tr.querySelector('svg.sparkline').dataset.values) : null },
    ])),
    steps: p.querySelector('.probe-steps') ? { step: Number(p.querySelector('.probe-steps').dataset.step), max: Number(p.querySelector('input.probe-step').max) } : null,
  }));
});
const near = (a, b, rel = 1e-6) => Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b));
/** The details' text of a statistic, read back as a number (5 significant digits). */
const num = (t) => Number(t.replace(/\s*%$/, ''));

// ---- node details: statistics and sparklines over the last runs ----
const conv1 = await nodeId(0, '/conv1/Conv');
const fc = await nodeId(0, '/fc/Gemm');
let page = await open(`#run=0&level=framework&node=${conv1}`);
await poll(page, () => document.querySelector('#details .probes-place')?.dataset.state === 'ready', null, 30000, 'conv1 probes shown');
let probes = await shownProbes(page);
const out = probes.find((p) => p.probe === '/conv1/Conv:0');
check(out, `conv1's output probe is shown (${probes.map((p) => p.probe)})`);
const latest = row('resnet', '/conv1/Conv:0').stats;
for (const s of ['mean', 'max', 'std']) {
  check(near(num(out.rows[s].text), latest[s], 1e-4), `conv1 ${s} shown ${out.rows[s].text}, the store's latest run has ${latest[s]}`);
  const series = facts.resnet.series['/conv1/Conv:0'][s].map((p) => p.value);
  eq(out.rows[s].spark.length, 3, `conv1 ${s}: a sparkline point per kept run`);
  check(out.rows[s].spark.every((v, i) => near(v, series[i])), `conv1 ${s} sparkline ${out.rows[s].spark} = the store's series ${series}`);
}
eq(out.rows.nan.text, '0', 'no NaN in conv1');
await page.screenshot({ path: join(art, 'probes_details_1920x1080.png') });

// ---- colour by probe statistic ----
await page.selectOption('#probe-stat', 'mean');
await poll(page, () => window.__miDebug.state().color === 'probe' && location.hash.includes('pstat=mean'), null, 10000, 'colour by mean in the URL');
await poll(page, () => window.__miDebug.state().graph.heat?.probe?.withData > 0, null, 20000, 'probe heat in the legend');
const heat = (await uiState(page)).graph.heat.probe;
const means = facts.resnet.probes.filter((p) => p.kind === 'output' && p.index === 0 && (p.step ?? null) === null).map((p) => ({ node: p.node, v: p.stats.mean }));
const lo = means.reduce((a, b) => (b.v < a.v ? b : a)), hi = means.reduce((a, b) => (b.v > a.v ? b : a));
// The legend's range is over the items drawn (folded groups take their largest): the largest node mean is in it.
check(near(heat.max, hi.v, 1e-6), `legend max ${heat.max} = the largest node mean ${hi.v} (${hi.node})`);
const loId = await nodeId(0, lo.node), hiId = await nodeId(0, hi.node);
/**
 * A node's fill colour (the scene's) and what the screen shows inside its
 * box at a few points clear of its outline (the label covers the middle):
 * the point closest to the fill.
 */
async function itemPixel(id) {
  const at = await page.evaluate(async (id) => {
    const g = window.__miDebug.view('graph'), p = g.pane(0);
    await p.reveal(id);
    p.centreOnNode(id);
    const it = p.itemOfNode(id);
    const r = p.canvas.getBoundingClientRect();
    const b = p.scene.layout.itemBox;
    const x0 = r.left + p.cam.toScreenX(b[4 * it]), y0 = r.top + p.cam.toScreenY(b[4 * it + 1]);
    const w = b[4 * it + 2] * p.cam.scale, h = b[4 * it + 3] * p.cam.scale;
    const col = p.scene.itemColor;
    return {
      points: [[x0 + 5, y0 + 5], [x0 + w - 6, y0 + 5], [x0 + 5, y0 + h - 6], [x0 + w - 6, y0 + h - 6], [x0 + w / 2, y0 + 4]],
      rgb: [col[3 * it], col[3 * it + 1], col[3 * it + 2]].map((v) => Math.round(v * 255)),
    };
  }, id);
  // Away from the node: the selection's outline is drawn only on the selected one.
  await page.mouse.move(1, 1);
  await frames(page);
  const png = await page.screenshot();
  const px = await pixelsAt(page, png, at.points);
  const best = px.reduce((a, c) => (colorDistance(c, at.rgb) < colorDistance(a, at.rgb) ? c : a));
  return { rgb: at.rgb, px: best };
}
const hiPx = await itemPixel(hiId);
const loPx = await itemPixel(loId);
const ends = await page.evaluate(() => {
  const bar = document.querySelector('#heat-legend .heat-bar');
  return bar ? getComputedStyle(bar).backgroundImage : '';
});
check(/gradient/.test(ends), 'the legend draws the ramp');
check(colorDistance(hiPx.rgb, loPx.rgb) > 60, `largest mean ${hiPx.rgb} and smallest ${loPx.rgb} get far-apart colours`);
check(colorDistance(hiPx.px, hiPx.rgb) <= 24, `the largest mean's node is drawn in its colour on screen (${hiPx.px} vs ${hiPx.rgb})`);
check(colorDistance(loPx.px, loPx.rgb) <= 24, `the smallest mean's node is drawn in its colour on screen (${loPx.px} vs ${loPx.rgb})`);
await page.screenshot({ path: join(art, 'probes_colour_mean_1920x1080.png') });
eq(page.errors.join('\n'), '', 'no page errors (details, colour)');
await page.close();

// ---- the first NaN / Inf: the producer the trigger recorded, marked ----
const bad = await nodeId(1, '/layer1/layer1.0/conv1/Conv');
page = await open('#run=1&level=framework');
await poll(page, () => document.querySelector('#probes a.probe-mark.mark-nan'), null, 30000, 'the first-NaN mark in the probe panel');
const markNode = await page.evaluate(() => Number(document.querySelector('#probes a.probe-mark.mark-nan').dataset.node));
eq(markNode, bad, 'the probe panel marks the producer the trigger recorded');
await page.click('#probes a.probe-mark.mark-nan');
await poll(page, (id) => window.__miDebug.state().panes[0].node === id, bad, 20000, 'the marked node selected');
const mark = await page.evaluate(async (id) => {
  const g = window.__miDebug.view('graph'), p = g.pane(0);
  await p.reveal(id);
  p.centreOnNode(id);
  const it = p.itemOfNode(id);
  const b = p.scene.layout.itemBox;
  const r = p.canvas.getBoundingClientRect();
  // A point on the node's left border, inside the 4 px outline.
  return { x: r.left + p.cam.toScreenX(b[4 * it] + 1), y: r.top + p.cam.toScreenY(b[4 * it + 1] + b[4 * it + 3] / 2), scale: p.cam.scale };
}, bad);
await frames(page);
let png = await page.screenshot({ path: join(art, 'probes_first_nan_1920x1080.png') });
const [edge] = await pixelsAt(page, png, [[mark.x, mark.y]]);
check(colorDistance(edge, [0xd5, 0x00, 0x00]) <= 60, `the marked node's outline is the NaN mark's red (${edge} at scale ${mark.scale})`);
// Both marks name it: compared with the clean run before, it is the first divergent node too.
eq(await page.evaluate(() => Number(document.querySelector('#probes a.probe-mark.mark-divergent')?.dataset.node)), bad,
  'the first divergent node against the clean run is the corrupted conv');
// The picture of the guide: colour by NaN count, the producer selected with its statistics.
await page.selectOption('#probe-stat', 'nan');
await poll(page, () => document.querySelector('#details .probes-place')?.dataset.state === 'ready', null, 30000, 'the producer\'s probes shown');
const nanRow = await page.evaluate(() => document.querySelector('#details .probe[data-probe="/layer1/layer1.0/conv1/Conv:0"] tr[data-stat="nan"] td.num')?.textContent);
eq(Number(nanRow), row('nan', '/layer1/layer1.0/conv1/Conv:0').stats.nan, 'the producer\'s NaN count = the store\'s');
await page.evaluate(() => window.__miDebug.view('graph').pane(0).centreOnNode(window.__miDebug.state().panes[0].node));
await frames(page);
await page.screenshot({ path: join(art, 'probes_nan_colour_1920x1080.png') });
eq(page.errors.join('\n'), '', 'no page errors (marks)');
await page.close();

// ---- a recurrent op: per-time-step values with the step slider ----
const lstm = await nodeId(2, '/lstm/LSTM');
page = await open(`#run=2&level=framework&node=${lstm}`);
await poll(page, () => document.querySelector('#details .probes-place')?.dataset.state === 'ready', null, 30000, 'the LSTM probes shown');
probes = await shownProbes(page);
const y = probes.find((p) => p.probe === '/lstm/LSTM:0');
check(y?.steps, 'the LSTM output has a step slider');
eq(y.steps.max, 5, 'six time steps (0..5)');
for (const k of [0, 3, 5]) {
  await page.evaluate((k) => {
    const s = document.querySelector('.probe[data-probe="/lstm/LSTM:0"] input.probe-step');
    s.value = String(k);
    s.dispatchEvent(new Event('input'));
  }, k);
  const shown = await page.evaluate(() => {
    const box = document.querySelector('.probe[data-probe="/lstm/LSTM:0"] .probe-steps');
    return { step: Number(box.dataset.step), mean: box.querySelector('tr[data-stat="mean"] td.num').textContent, max: box.querySelector('tr[data-stat="max"] td.num').textContent };
  });
  const want = row('lstm', '/lstm/LSTM:0', k).stats;
  eq(shown.step, k, `slider at step ${k}`);
  check(near(num(shown.mean), want.mean, 1e-4) && near(num(shown.max), want.max, 1e-4), `step ${k}: mean ${shown.mean} max ${shown.max} = the store's ${want.mean} ${want.max}`);
}
await page.screenshot({ path: join(art, 'probes_steps_1920x1080.png') });
eq(page.errors.join('\n'), '', 'no page errors (steps)');
await page.close();

// ---- right-click: remove a probe and re-run, add it back and re-run ----
page = await open(`#run=0&level=framework&color=probe&pstat=mean`, { width: 1024, height: 700 });
async function menuOn(id) {
  const at = await page.evaluate(async (id) => {
    const g = window.__miDebug.view('graph'), p = g.pane(0);
    await p.reveal(id);
    p.centreOnNode(id);
    const c = g.itemScreenCenter(p.itemOfNode(id), 0);
    const r = p.canvas.getBoundingClientRect();
    return { x: r.left + c.x, y: r.top + c.y };
  }, id);
  await frames(page);
  await page.mouse.click(at.x, at.y, { button: 'right' });
  await poll(page, () => { const m = document.getElementById('node-menu'); return m && !m.hidden && m.querySelector('button[data-action]'); }, null, 20000, 'the node menu');
  return page.evaluate(() => [...document.querySelectorAll('#node-menu button[data-action]')].map((b) => ({ action: b.dataset.action, disabled: b.disabled, text: b.textContent })));
}
async function rerunDone(status) {
  await poll(page, (st) => document.getElementById('rerun-status')?.dataset.status === st, status, 120000, `re-run ${status}`);
}
let items = await menuOn(fc);
check(items.some((i) => i.action === 'remove-rerun' && !i.disabled), `the menu offers "remove probe and re-run" on a probed node (${JSON.stringify(items)})`);
await page.click('#node-menu button[data-action="remove-rerun"]');
await rerunDone('complete');
let st = storeNow('resnet', '/fc/Gemm:0', 'mean');
eq(JSON.stringify(st.runs), '[1,2,3,4]', 'the re-run added run 4 to the store');
check(!st.latest.includes('/fc/Gemm:0') && st.latest.includes('/conv1/Conv:0'), 'run 4 probed every node but fc');
await clickNode(page, fc);
await poll(page, () => document.querySelector('#details .probes-place')?.dataset.state === 'ready', null, 30000, 'fc details');
eq((await shownProbes(page)).length, 0, 'fc has no probe in the latest run: the details say so');
items = await menuOn(fc);
check(items.some((i) => i.action === 'add-rerun' && !i.disabled), 'the menu offers "add probe and re-run" now');
await page.click('#node-menu button[data-action="add-rerun"]');
await rerunDone('complete');
st = storeNow('resnet', '/fc/Gemm:0', 'mean');
eq(JSON.stringify(st.runs), '[1,2,3,4,5]', 'the second re-run added run 5');
await poll(page, () => { const p = document.querySelector('#details .probes-place'); return p?.dataset.state === 'ready' && p.querySelector('.probe'); }, null, 30000, 'fc probes back in the details');
probes = await shownProbes(page);
const fcMean = probes.find((p) => p.probe === '/fc/Gemm:0').rows.mean.spark;
eq(fcMean.length, st.series.length, `fc's sparkline has a point per run holding it (${st.series.map((p) => p.run)})`);
check(fcMean.every((v, i) => near(v, st.series[i].value)), `fc's sparkline ${fcMean} = the store's series`);
await page.screenshot({ path: join(art, 'probes_rerun_1024x700.png') });
// A re-run the runner refuses: the failure, its reason and the runner's own words are shown; the store is unchanged.
await page.fill('#rerun-triggers', 'bogus');
await page.press('#rerun-triggers', 'Enter');
await page.evaluate(() => document.getElementById('rerun-triggers').dispatchEvent(new Event('change')));
await poll(page, () => document.getElementById('rerun-go') && !document.getElementById('rerun-go').disabled, null, 10000, 'the Re-run button');
await page.click('#rerun-go');
await rerunDone('failed');
const failure = await page.evaluate(() => document.getElementById('rerun-status').textContent);
check(/exited with status 2/.test(failure) && failure.includes("trigger 'bogus'"), `the failed re-run says why: ${failure}`);
eq(JSON.stringify(storeNow('resnet', '/fc/Gemm:0', 'mean').runs), '[1,2,3,4,5]', 'the failed re-run added no run');
await page.fill('#rerun-triggers', 'nan, inf');
await page.evaluate(() => document.getElementById('rerun-triggers').dispatchEvent(new Event('change')));

// ---- saved session: save into the .mis, move the folder, restore ----
await clickNode(page, conv1);
await page.click('#details button.bookmark');
await page.fill('#details textarea.note', 'first conv: inputs look fine');
await page.press('#details textarea.note', 'Control+Enter');
await poll(page, () => document.querySelector('#notes li'), null, 10000, 'the note listed');
const camBefore = await page.evaluate(() => { const p = window.__miDebug.view('graph').pane(0); p.cam.zoomAt(1.5, 100, 100); return { x: p.cam.toWorldX(0), y: p.cam.toWorldY(0), scale: p.cam.scale }; });
const hashBefore = await page.evaluate(() => location.hash.replace(/^#/, ''));
await page.click('#save-session');
await poll(page, () => /^saved to /.test(document.getElementById('session-status').textContent), null, 20000, 'session saved');
const doc = JSON.parse(readFileSync(session, 'utf8'));
eq(doc.format, 'model-inspector-session', 'the .mis names its format');
eq(JSON.stringify(doc.runs.map((r) => r.paths[0])), JSON.stringify(['runs/resnet', 'runs/nan', 'runs/lstm']), 'run paths relative to the .mis folder');
eq(JSON.stringify(doc.bookmarks.map((b) => [b.run, b.node])), JSON.stringify([[0, conv1]]), 'the bookmark saved');
eq(doc.notes[0]?.text, 'first conv: inputs look fine', 'the note saved');
eq(doc.view.hash, hashBefore, 'the view: the URL state');
check(doc.view.hash.includes('color=probe') && doc.view.probe_stat === 'mean', 'the colour mode and statistic saved');
check(near(doc.view.viewport.scale, camBefore.scale) && near(doc.view.viewport.x, camBefore.x, 1e-3), 'the camera saved');
check(doc.probes.patterns.includes('/fc/Gemm') && doc.probes.triggers.join() === 'nan,inf', 'the re-run settings saved');
await page.close();
await server.stop();

// "Another machine": the folder elsewhere, the original gone.
const moved = join(tmp, 'elsewhere', 'moved');
mkdirSync(dirname(moved), { recursive: true });
renameSync(work, moved);
server = await startServer([join(moved, 's.mis')]);
const base2 = server.url.replace(/\/$/, '');
page = await open('', { width: 1920, height: 1080 }, base2);
await poll(page, () => /^restored from /.test(document.getElementById('session-status').textContent), null, 30000, 'session restored');
await poll(page, (h) => location.hash.replace(/^#/, '') === h, hashBefore, 20000, 'the saved view in the URL');
const restored = await uiState(page);
eq(restored.color, 'probe', 'colour by probe restored');
eq(restored.probeStat, 'mean', 'the statistic restored');
eq(restored.panes[0].node, conv1, 'the selected node restored');
await poll(page, (id) => document.querySelector(`#bookmarks li[data-node="${id}"]`), conv1, 20000, 'the bookmark restored');
await poll(page, () => document.querySelector('#details textarea.note')?.value === 'first conv: inputs look fine', null, 20000, 'the note restored');
const cam = await poll(page, (v) => {
  const p = window.__miDebug.view('graph').pane(0);
  const c = { x: p.cam.toWorldX(0), y: p.cam.toWorldY(0), scale: p.cam.scale };
  return Math.abs(c.scale - v.scale) < 1e-6 && Math.abs(c.x - v.x) < 0.5 && Math.abs(c.y - v.y) < 0.5 ? c : null;
}, doc.view.viewport, 20000, 'the camera restored');
check(cam, 'the camera restored');
await poll(page, () => document.querySelectorAll('#probes .probe-chip').length > 0, null, 20000, 'the re-run settings restored');
const chips = await page.evaluate(() => [...document.querySelectorAll('#probes .probe-chip')].map((c) => c.dataset.probe));
eq(JSON.stringify(chips), JSON.stringify(doc.probes.patterns), 'the re-run probes restored');
const runsThere = (await (await fetch(`${base2}/api/runs`)).json()).runs.map((r) => r.paths[0]);
eq(JSON.stringify(runsThere), JSON.stringify(['runs/resnet', 'runs/nan', 'runs/lstm'].map((p) => join(moved, p))), 'the runs opened from the moved folder');
await page.screenshot({ path: join(art, 'probes_session_restored_1920x1080.png') });
eq(page.errors.join('\n'), '', 'no page errors (restored session)');
await page.close();
await server.stop();

// A session whose run is gone: `open` fails, naming it as written and where it looked.
copyFileSync(join(moved, 's.mis'), join(moved, 's2.mis'));
rmSync(join(moved, 'runs/lstm'), { recursive: true });
const gone = spawnSync(miBinary(), ['open', '--no-browser', '--port', '0', join(moved, 's2.mis')], { encoding: 'utf8', timeout: 60000 });
check(gone.status !== 0, `open of a session with a missing run fails (exit ${gone.status})`);
check(gone.stderr.includes("input 'runs/lstm' not found") && gone.stderr.includes(join(moved, 'runs/lstm')), `the error names the missing run: ${gone.stderr.trim()}`);

await browser.close();
rmSync(tmp, { recursive: true, force: true });
done('e2e_probes_test');
