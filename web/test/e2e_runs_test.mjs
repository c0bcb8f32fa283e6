// End-to-end test of the runs that are not a graph + trace pair, against
// the real server (`model-inspector open --keep-going`, embedded UI) in
// Chromium, at 1024x700 and 1920x1080:
//   - a trace-only run (a PyTorch-profiler trace alone): no level in the
//     URL (never 'undefined'), no request answered 4xx, no console error,
//     no graph pane — the timeline, mapping and summary take the room (DOM
//     boxes, and the pixels where the graph pane was are the timeline's),
//     and the note offers the model next to the trace with the command
//     that pairs them;
//   - a torch_npu run (a profiler directory, no graph) and a GPU Kineto
//     trace alone: the same layout;
//   - switching from a run with a graph to one without leaves no graph
//     (the pane drops its scene), and back shows the graph again;
//   - `--keep-going` with a truncated trace among good runs: the server
//     serves, and choosing the bad run shows its error (file, place, what
//     was expected) and asks nothing of it;
//   - a graph and a trace that do not link (the framework model with an
//     ONNX Runtime profile of the optimized one): the note over the graph
//     gives the CLI summary's reasons, read from `model-inspector summary`;
//   - the demo run `open` serves with no PATH comes from the binary:
//     copied elsewhere and started from another folder, /api/runs lists
//     no path inside the checkout and the demo's graph renders.
// Screenshots: runs_*.png, and ui_trace_only.png (docs/images/ui_trace_only.png
// is a copy).

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  artifactsDir, check, colorDistance, done, eq, fail, launchBrowser, miBinary, pixelsAt, poll, repoDir,
} from './lib.mjs';
import { startServer } from './server.mjs';

const fx = (p) => join(repoDir, 'test/fixtures', p);
const kTraceOnly = fx('resnet18/torch_profile.pt.trace.json.gz'); // a Kineto trace beside model.onnx
const kNpu = fx('samples/ascend/msinsight_pt_text_level1_rank0');
const kGraphRun = fx('resnet18/ort_all');
const kUnlinkedModel = fx('resnet18/model.onnx');
const kUnlinkedTrace = fx('resnet18/ort_all/onnxruntime_profile.json');

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'mi-runs-test-'));

// The bad file: a real Kineto trace cut inside an event (a truncated download).
const bert = gunzipSync(readFileSync(fx('samples/traces/kineto/tracelens/h100__gaunernst_bert-small-uncased__1016001.json.gz'))).toString();
const cut = bert.indexOf('"ph": "X"', 4000) + 5;
if (cut < 5) fail('the bert trace has no complete event after byte 4000');
const kBad = join(tmp, 'truncated_trace.json');
writeFileSync(kBad, bert.slice(0, cut));
// Where the cut event starts (its '{'): the place the error should name.
const eventStart = bert.lastIndexOf('{', cut);
const badLine = bert.slice(0, eventStart).split('\n').length;
const badColumn = eventStart - bert.lastIndexOf('\n', eventStart - 1);

// The CLI's reasons for the unlinked pair, as `summary` prints them.
const summary = spawnSync(miBinary(), ['summary', '--quiet', kUnlinkedModel, kUnlinkedTrace], { encoding: 'utf8' });
const why = /(\d+) linked to nodes \/ (\d+) unlinked \(([^)]*)\)/.exec(summary.stdout);
if (!why) fail(`model-inspector summary gave no linked/unlinked line:\n${summary.stdout}\n${summary.stderr}`);

// Runs: 0 graph + trace, 1 trace only, 2 torch_npu, 3 bad, 4 a GPU Kineto
// trace alone (the docs' screenshot), 5 graph and trace that do not link.
const kGpuTrace = fx('samples/traces/kineto/tracelens/h100__gaunernst_bert-small-uncased__1016001.json.gz');
const server = await startServer(['--keep-going', kGraphRun, kTraceOnly, kNpu, kBad, kGpuTrace, '--run', kUnlinkedModel, kUnlinkedTrace]);
console.log(`  server at ${server.url}`);
await new Promise((r) => { const t = setInterval(() => { if (server.stderr().includes('serving')) { clearInterval(t); r(); } }, 50); });
check(/serving 6 runs, 1 that could not be opened/.test(server.stderr()), `the server says it serves 6 runs, one of them failed: ${server.stderr()}`);
check(server.stderr().includes('truncated_trace.json'), 'the bad file\'s error is printed');
const browser = await launchBrowser();

async function open(hash, viewport) {
  const page = await browser.newPage({ viewport });
  page.errors = [];
  page.failed = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  page.on('response', (r) => { if (r.status() >= 400) page.failed.push(`${r.status()} ${r.url()}`); });
  await page.goto(server.url + hash);
  if (!(await page.$('#run-note'))) fail('the page has no #run-note: the binary embeds an older UI; rebuild model-inspector');
  await poll(page, () => document.body.dataset.ready, null, 60000, 'runs loaded');
  return page;
}

const timelineDrawn = (page, run) => poll(page, (run) => {
  const tl = window.__miDebug.view('timeline');
  return tl && tl.state.run === run && tl.windowOf(0) !== null && !tl.busy && window.__miDebug.stats()['timeline.renders'] > 0;
}, run, 60000, `the timeline of run ${run}`);

const graphDrawn = (page, run) => poll(page, (run) => {
  const s = window.__miDebug.state(), p = window.__miDebug.view('graph').pane(0);
  return s.panes[0].run === run && p.scene !== null && p.current && Number(document.body.dataset.rendered) > 0;
}, run, 60000, `the graph of run ${run}`);

const box = (page, sel) => page.evaluate((sel) => {
  const e = document.querySelector(sel);
  if (!e) return null;
  const r = e.getBoundingClientRect();
  return { x: r.left, y: r.top, w: r.width, h: r.height, shown: r.width > 0 && r.height > 0 && getComputedStyle(e).display !== 'none' };
}, sel);

/** Picks run `id` in the header's run menu, as a user does. */
const pickRun = (page, id) => page.selectOption('#run', String(id));

/** The layout of a run without a graph: no graph pane, the bottom views over the work area, the note. */
async function checkNoGraphLayout(page, run, name, viewport) {
  await timelineDrawn(page, run);
  const s = await page.evaluate(() => window.__miDebug.state());
  eq(s.panes[0].level, '', `${name}: the pane names no level`);
  const hash = await page.evaluate(() => location.hash);
  check(!/level=|undefined/.test(hash), `${name}: the URL names no level and nothing undefined (${hash})`);
  check(!(await box(page, '#view')).shown, `${name}: no graph pane`);
  const work = await box(page, '#work'), bottom = await box(page, '#bottom'), note = await box(page, '#run-note');
  check(note.shown && note.h < work.h * 0.25, `${name}: the note shows and stays small (${note.h} of ${work.h} px)`);
  check(bottom.h >= work.h - note.h - 2, `${name}: the bottom views take the rest of the work area (${bottom.h} of ${work.h - note.h} px)`);
  check(bottom.y <= note.y + note.h + 1, `${name}: the bottom views start under the note (${bottom.y})`);
  check(!(await box(page, '#levels')).shown && !(await box(page, '#graph-tools')).shown, `${name}: no graph controls in the header`);
  const top = await box(page, '#top');
  check(top.h < 60, `${name}: the header is one row (${top.h} px)`);
  // Where the graph pane stood, the timeline is: its canvas starts in the
  // work area's upper half and reaches the bottom of the window.
  const tl = await box(page, '#timeline canvas');
  check(tl && tl.y < work.y + work.h * 0.5 && tl.y + tl.h >= work.y + work.h - 2,
    `${name}: the timeline canvas takes the work area from its upper half down (${JSON.stringify(tl)} in ${JSON.stringify(work)})`);
  // Pixels: its rows of tasks are drawn (not an empty pane): along the rows
  // under the time axis, down to the canvas's bottom, several colours (the
  // steady-state window of a sparse trace leaves its first rows thin).
  const png = await page.screenshot();
  const pts = [];
  for (let y = tl.y + 40; y < tl.y + tl.h - 8; y += 8) for (let f = 0.35; f < 1; f += 0.05) pts.push([tl.x + tl.w * f, y]);
  const px = await pixelsAt(page, png, pts);
  const colours = new Set(px.map((c) => c.join(',')));
  const background = px[0];
  const inked = px.filter((c) => colorDistance(c, background) > 40).length;
  // An empty pane inks none; a sparse trace's window only a few per cent.
  check(colours.size >= 4 && inked >= 10,
    `${name}: the timeline's rows are drawn (${colours.size} colours, ${inked} of ${pts.length} points inked)`);
  return png;
}

for (const viewport of [{ width: 1024, height: 700 }, { width: 1920, height: 1080 }]) {
  const vp = `${viewport.width}x${viewport.height}`;
  console.log(`  viewport ${vp}`);

  // A trace-only run opened by its link.
  const page = await open('#run=1', viewport);
  const options = await page.evaluate(() => [...document.querySelectorAll('#run option')].map((o) => o.textContent));
  check(options[1].endsWith('trace only, no graph') && options[3].endsWith('could not be opened') && !/—/.test(options[0]),
    `${vp}: the run menu says which runs have no graph and which could not be opened (${JSON.stringify(options)})`);
  const png = await checkNoGraphLayout(page, 1, `trace-only ${vp}`, viewport);
  writeFileSync(join(art, `runs_trace_only_${vp}.png`), png);
  const offer = await page.evaluate(() => [...document.querySelectorAll('#run-note .run-note-offer')].map((e) => e.dataset.offer));
  check(offer.some((c) => c === `model-inspector open --run ${kUnlinkedModel} ${kTraceOnly}`),
    `trace-only ${vp}: the model next to the trace is offered with the command pairing them (${JSON.stringify(offer)})`);
  // The summary and mapping tabs take the same room.
  for (const tab of ['summary', 'mapping']) {
    await page.click(`#tabs button[data-tab="${tab}"]`);
    await poll(page, (t) => document.getElementById(t).textContent.trim().length > 20, tab, 60000, `${tab} filled`);
    const b = await box(page, `#${tab}`), work = await box(page, '#work');
    check(b.shown && b.h > work.h * 0.6, `trace-only ${vp}: the ${tab} tab fills the work area (${b.h} of ${work.h} px)`);
  }
  await page.click('#tabs button[data-tab="timeline"]');

  // Switch to the graph run: the graph shows; back to the trace: it goes.
  await pickRun(page, 0);
  await graphDrawn(page, 0);
  check((await box(page, '#view')).shown, `switch ${vp}: the graph run shows its graph pane`);
  check(!(await box(page, '#run-note')).shown, `switch ${vp}: no note on a run with a graph`);
  writeFileSync(join(art, `runs_switch_graph_${vp}.png`), await page.screenshot());
  await pickRun(page, 1);
  await timelineDrawn(page, 1);
  eq(await page.evaluate(() => window.__miDebug.view('graph').pane(0).scene), null, `switch ${vp}: the graph pane dropped run 0's graph`);
  check(!(await box(page, '#view')).shown, `switch ${vp}: no graph pane for the trace-only run`);
  await pickRun(page, 0);
  await graphDrawn(page, 0);
  eq(await page.evaluate(() => window.__miDebug.state().panes[0].level), 'framework', `switch ${vp}: back on run 0, its first level`);

  // torch_npu: a profiler directory, no graph.
  await pickRun(page, 2);
  const npu = await checkNoGraphLayout(page, 2, `torch_npu ${vp}`, viewport);
  writeFileSync(join(art, `runs_torch_npu_${vp}.png`), npu);
  // Its waits (Notify Wait, Write Value, EVENT_RECORD / EVENT_WAIT SQEs)
  // are rows of kind sync: not work, so no share and no bar.
  await page.click('#tabs button[data-tab="summary"]');
  await poll(page, () => document.querySelectorAll('#summary tr.op-row').length > 0, null, 60000, 'torch_npu summary rows');
  const opRows = await page.$$eval('#summary tr.op-row', (r) => r.map((x) => ({ op: x.dataset.op, kind: x.children[1].textContent,
    share: x.children[6].textContent, marked: x.classList.contains('sync-row') })));
  const waits = opRows.filter((r) => r.kind === 'sync');
  check(waits.length > 0 && waits.every((r) => r.share === 'wait' && r.marked),
    `torch_npu ${vp}: sync rows say "wait" for their share (${JSON.stringify(waits)})`);
  const barOps = await page.$$eval('#summary svg.op-chart g.bar', (g) => g.map((x) => x.dataset.op));
  check(barOps.length > 0 && !barOps.some((op) => waits.some((w) => w.op === op)), `torch_npu ${vp}: no bar for a sync row (${barOps})`);
  await page.click('#tabs button[data-tab="timeline"]');

  // The bad run: its error, nothing asked of it.
  const before = page.failed.length;
  await pickRun(page, 3);
  await poll(page, () => !document.getElementById('run-error').hidden, null, 30000, 'the error panel');
  const err = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#run-error dd')].map((d) => [d.dataset.field, d.textContent])));
  eq(err.file, kBad, `bad run ${vp}: the file`);
  eq(err.place, `line ${badLine}, column ${badColumn}`, `bad run ${vp}: the place, where the cut event starts`);
  check(/truncated/.test(err.problem ?? ''), `bad run ${vp}: what is wrong (${err.problem})`);
  check(!(await box(page, '#bottom')).shown && !(await box(page, '#view')).shown, `bad run ${vp}: no graph, no bottom views`);
  const eb = await box(page, '#run-error');
  check(eb.shown && eb.h > 200, `bad run ${vp}: the error takes the room (${eb.h} px)`);
  writeFileSync(join(art, `runs_bad_${vp}.png`), await page.screenshot());
  eq(page.failed.length, before, `bad run ${vp}: no request for the bad run (${page.failed.slice(before).join(', ')})`);

  // A GPU trace alone: host and device tracks take the room.
  await pickRun(page, 4);
  const gpu = await checkNoGraphLayout(page, 4, `gpu trace-only ${vp}`, viewport);
  writeFileSync(join(art, `runs_gpu_trace_only_${vp}.png`), gpu);
  if (viewport.width === 1920) writeFileSync(join(art, 'ui_trace_only.png'), gpu);

  // The pair that does not link: the CLI's reasons over the graph.
  await pickRun(page, 5);
  await graphDrawn(page, 5);
  await poll(page, () => !document.getElementById('link-note').hidden, null, 30000, 'the link note');
  const text = await page.evaluate(() => document.querySelector('#link-note .link-note-text').textContent);
  check(text.includes(`${Number(why[2]).toLocaleString('en-US')} of`) && text.includes(why[3]),
    `unlinked ${vp}: the note gives the CLI's count and reasons "${why[2]} unlinked (${why[3]})": ${text}`);
  const note = await box(page, '#link-note'), view = await box(page, '#view');
  check(note.y >= view.y && note.y < view.y + 80, `unlinked ${vp}: the note sits at the top of the graph`);
  writeFileSync(join(art, `runs_unlinked_${vp}.png`), await page.screenshot());

  eq(page.failed.join(', '), '', `${vp}: no request failed`);
  eq(page.errors.join(' | '), '', `${vp}: no console error`);
  await page.close();
}

await browser.close();
await server.stop();

// The demo comes from the binary: copied elsewhere, started elsewhere.
{
  const bin = join(tmp, 'model-inspector');
  copyFileSync(miBinary(), bin);
  const demoTmp = join(tmp, 'demo-tmp');
  mkdirSync(demoTmp);
  const { spawn } = await import('node:child_process');
  const child = spawn(bin, ['open', '--port', '0', '--no-browser'], { cwd: tmp, env: { ...process.env, TMPDIR: demoTmp }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => { out += d; const m = out.match(/^(https?:\/\/\S+)\s*$/m); if (m) resolve(m[1]); });
    child.on('exit', (c) => reject(new Error(`exited ${c}: ${err}`)));
  }).catch((e) => fail(`the copied binary did not serve the demo: ${e.message}`));
  const runs = (await (await fetch(new URL('/api/runs', url))).json()).runs;
  eq(runs.length, 1, 'demo: one run');
  const listed = JSON.stringify(runs);
  check(!listed.includes(repoDir), `demo: /api/runs names no path inside the checkout (${listed.slice(0, 300)})`);
  check(!listed.includes(demoTmp), 'demo: nor the folder it was unpacked into');
  check(runs[0].paths.every((p) => p.startsWith('(bundled demo)/')), `demo: its paths say it is bundled (${runs[0].paths})`);
  eq(runs[0].levels.join(','), 'framework,compiled', 'demo: both graph levels');
  const layout = await fetch(new URL('/api/runs/0/levels/compiled/layout', url));
  eq(layout.status, 200, 'demo: its compiled graph lays out');
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  const left = spawnSync('ls', ['-A', demoTmp], { encoding: 'utf8' }).stdout.trim();
  eq(left, '', 'demo: the unpacked files are removed when the server stops');
}
rmSync(tmp, { recursive: true, force: true });
done('e2e_runs_test');
