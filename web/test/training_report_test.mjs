// `model-inspector diagnose SNAPSHOT` end to end on real training
// snapshots (make_training_snapshot.py: model_inspector.train's Monitor on a
// real PyTorch run with the learning rate of fc1 raised 1000x at step 20,
// and the same run without the fault), the HTML report rendered in
// Debian's Chromium:
//   - the diagnosis (--json) names the anomaly step and the captured steps
//     the snapshot holds (read back with Python's sqlite3, not the C++
//     reader); the text output says the same; --fail-on-anomaly exits 1 on
//     the faulty run and 0 on the healthy one;
//   - --report writes a page that loads from file:// requesting nothing,
//     with no script and no console error; --pdf writes FILE.pdf, a PDF
//     of A4 pages;
//   - the screenshot shows the score badge in its band's colour, the heat
//     map cell of the worst layer at the anomaly step in its band's colour
//     (red: critical), one heat map cell per layer and step, one trigger
//     mark per step with a trigger hit (sqlite3) with the anomaly's at the
//     snapshot's anomaly step, the captured window's shading over the
//     captured steps, the chain's producer drawn in the producer colours;
//     the bands are written out below from docs/guides/training-report.md;
//   - bad input: a missing file (exit 3), a file that is not a snapshot
//     (--report refused, exit 2), a truncated snapshot, --pdf without
//     --report (exit 2), a report into a missing folder (exit 6): each with
//     a message and no report file left behind.
// Env: MI_BINARY (the CLI), MI_PYTHONPATH (the Python package; default the
// build's), MI_PYTHON, MI_TEST_ARTIFACTS (screenshots: training_report.png,
// of which docs/images/training_report.png is a copy, and
// training_report_healthy.png).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { artifactsDir, check, colorDistance, done, eq, fail, launchBrowser, miBinary, pixelsAt, repoDir } from './lib.mjs';

const bin = miBinary();
const kPython = process.env.MI_PYTHON || '/usr/bin/python3';
const kBuiltPackage = process.env.MI_PYTHONPATH || resolve(dirname(bin), '../../python');
if (existsSync(join(kBuiltPackage, 'model_inspector', '__init__.py'))) {
  process.env.PYTHONPATH = [kBuiltPackage, process.env.PYTHONPATH].filter(Boolean).join(':');
} else {
  const own = spawnSync(kPython, ['-c', 'import model_inspector.train'], { encoding: 'utf8', env: process.env });
  if (own.status !== 0) {
    fail(`${kBuiltPackage} holds no model_inspector package and ${kPython} cannot import one; build the target model_inspector_python or set MI_PYTHONPATH\n${own.stderr}`);
  }
}
const art = artifactsDir();
mkdirSync(art, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'mi-training-report-'));

// ---- the snapshots, and what they hold (sqlite3) --------------------------
const made = spawnSync(kPython, [join(repoDir, 'web/test/make_training_snapshot.py'), tmp], { encoding: 'utf8', env: process.env, timeout: 600000 });
if (made.status !== 0) fail(`make_training_snapshot.py failed (${made.status}):\n${made.stdout}\n${made.stderr}`);
const truth = JSON.parse(made.stdout);
const snap = truth.snapshot;
check(snap.anomaly_step !== null, 'the faulty run fired a trigger (sqlite3)');
check(snap.anomaly_step >= truth.fault_step, `at or after the fault's step ${truth.fault_step}: ${snap.anomaly_step}`);
eq(truth.healthy.anomaly_step, null, 'the healthy run fired nothing (sqlite3)');

const run = (args) => spawnSync(bin, args, { encoding: 'utf8', env: process.env, timeout: 300000 });

// ---- the diagnosis as JSON and text ----------------------------------------
const j = run(['diagnose', snap.path, '--json']);
eq(j.status, 0, `diagnose --json exits 0 (anomaly or not): ${j.stderr}`);
const result = JSON.parse(j.stdout);
eq(result.anomaly_step, snap.anomaly_step, 'the diagnosis names the snapshot\'s anomaly step');
eq(JSON.stringify(result.captured_steps), JSON.stringify(snap.captured_steps), 'and its captured steps');
eq(result.steps.length, snap.steps.length, 'every step of the snapshot');
const t = run(['diagnose', snap.path]);
eq(t.status, 0, `diagnose (text) exits 0: ${t.stderr}`);
check(t.stdout.includes(`Anomaly: step ${snap.anomaly_step}\n`), `the text names the anomaly step:\n${t.stdout}`);
check(t.stdout.includes(`Health score: ${Math.round(result.score)}/100`), 'and the score');
eq(run(['diagnose', snap.path, '--fail-on-anomaly']).status, 1, '--fail-on-anomaly: exit 1 when a trigger fired');
const h = run(['diagnose', truth.healthy.path, '--fail-on-anomaly']);
eq(h.status, 0, `--fail-on-anomaly: exit 0 on the healthy run: ${h.stderr}`);
check(h.stdout.includes('Anomaly: none, no trigger fired.'), 'the healthy run: no anomaly');

// ---- the report and its PDF ------------------------------------------------
const html = join(tmp, 'diagnosis.html');
const r = run(['diagnose', snap.path, '--report', html, '--pdf']);
eq(r.status, 0, `diagnose --report --pdf exits 0: ${r.stderr}`);
check(existsSync(html), 'the HTML report is written');
const pdf = readFileSync(join(tmp, 'diagnosis.pdf'));
eq(pdf.subarray(0, 4).toString('latin1'), '%PDF', 'diagnosis.pdf is a PDF');
// A4 pages (the page's @page rule): 210 x 297 mm = 595.3 x 841.9 pt.
const boxes4 = [...pdf.toString('latin1').matchAll(/MediaBox \[0 0 ([0-9.]+) ([0-9.]+)\]/g)].map((m) => [Number(m[1]), Number(m[2])]);
check(boxes4.length >= 1 && boxes4.every(([w, h]) => Math.abs(w - 595.3) < 1 && Math.abs(h - 841.9) < 1), `A4 pages: ${JSON.stringify(boxes4)}`);
const healthyHtml = join(tmp, 'healthy.html');
eq(run(['diagnose', truth.healthy.path, '--report', healthyHtml]).status, 0, 'the healthy report');

// ---- bad input -----------------------------------------------------------------
{
  const out = join(tmp, 'bad.html');
  const missing = run(['diagnose', join(tmp, 'missing.db'), '--report', out]);
  eq(missing.status, 3, `a missing file: exit 3 (${missing.stderr.trim()})`);
  const resnet = join(repoDir, 'test/fixtures/resnet18/model.onnx');
  const notSnap = run(['diagnose', resnet, '--report', out]);
  eq(notSnap.status, 2, `--report on a model that is no snapshot: exit 2 (${notSnap.stderr.trim()})`);
  check(notSnap.stderr.includes('training snapshots'), 'the message says --report is for training snapshots');
  const whole = readFileSync(snap.path);
  const cut = join(tmp, 'truncated.db');
  writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 3)));
  const truncated = run(['diagnose', cut, '--report', out]);
  check(truncated.status !== 0 && truncated.status !== 70, `a truncated snapshot fails cleanly (exit ${truncated.status}: ${truncated.stderr.trim()})`);
  check(truncated.stderr.includes('truncated.db'), 'naming the file');
  const noReport = run(['diagnose', snap.path, '--pdf']);
  eq(noReport.status, 2, `--pdf without --report: exit 2 (${noReport.stderr.trim()})`);
  const noDir = run(['diagnose', snap.path, '--report', join(tmp, 'no/such/dir/x.html')]);
  eq(noDir.status, 6, `a report into a missing folder: exit 6 (${noDir.stderr.trim()})`);
  check(!existsSync(out), 'no report file is left by a failed run');
}

// ---- the page in Chromium --------------------------------------------------------
const hex = (s) => [1, 3, 5].map((i) => parseInt(s.slice(i, i + 2), 16));
// The score bands (docs/guides/training-report.md).
const band = (score) => (score === null ? '#eaeef2' : score >= 90 ? '#2da44e' : score >= 70 ? '#9be9a8' : score >= 50 ? '#f2cc60' : score >= 25 ? '#fb8f44' : '#cf222e');
const kProducerStroke = hex('#cf222e');
const kCaptured = hex('#ddf4ff');

const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
async function open(path) {
  const url = pathToFileURL(path).href;
  const requests = [];
  const errors = [];
  let dialogs = 0;
  const onRequest = (q) => { if (q.url() !== url) requests.push(q.url()); };
  const onConsole = (m) => { if (m.type() === 'error') errors.push(m.text()); };
  const onDialog = (d) => { dialogs++; d.dismiss().catch(() => {}); };
  page.on('request', onRequest);
  page.on('console', onConsole);
  page.on('dialog', onDialog);
  await page.goto(url, { waitUntil: 'load' });
  page.off('request', onRequest);
  page.off('console', onConsole);
  page.off('dialog', onDialog);
  eq(requests.length, 0, `${path} requests nothing (${requests.join(', ')})`);
  eq(errors.length, 0, `no console errors (${errors.join(' | ')})`);
  eq(dialogs, 0, 'no dialog');
  eq(await page.evaluate(() => document.querySelectorAll('script').length), 0, 'no script element');
}
const boxes = (selector) => page.evaluate((sel) => Array.from(document.querySelectorAll(sel)).map((e) => {
  const b = e.getBoundingClientRect();
  return { x: b.left + window.scrollX, y: b.top + window.scrollY, w: b.width, h: b.height, step: e.getAttribute('data-step'), layer: e.getAttribute('data-layer'), title: e.querySelector('title')?.textContent ?? '' };
}), selector);

{
  await open(html);
  const png = await page.screenshot({ fullPage: true, path: join(art, 'training_report.png') });
  // The heat map: one cell per layer and step.
  const cells = await boxes('svg.heatmap rect.cell');
  eq(cells.length, result.heatmap.layers.length * result.heatmap.steps.length, `one cell per layer and step (${result.heatmap.layers.length} x ${result.heatmap.steps.length})`);
  // The worst layer at the anomaly step (from the diagnosis's JSON).
  const col = result.heatmap.steps.indexOf(snap.anomaly_step);
  check(col >= 0, 'the heat map has the anomaly step');
  let worst = -1;
  result.heatmap.values.forEach((row, i) => {
    if (row[col] !== null && (worst < 0 || row[col] < result.heatmap.values[worst][col])) worst = i;
  });
  const worstLayer = result.heatmap.layers[worst];
  const worstScore = result.heatmap.values[worst][col];
  eq(band(worstScore), '#cf222e', `the worst layer at the anomaly step is critical (score ${worstScore})`);
  const cell = cells.find((c) => Number(c.layer) === worstLayer && Number(c.step) === snap.anomaly_step);
  check(cell, 'its cell is drawn');
  // The score badge's swatch; a healthy cell (step 0 of the first layer).
  const [badge] = await boxes('#score .swatch');
  const first = cells.find((c) => Number(c.step) === result.heatmap.steps[0] && Number(c.layer) === result.heatmap.layers[0]);
  const firstScore = result.heatmap.values[0][0];
  // The captured window's shading: left of the plotted line, inside the loss panel.
  const [shade] = await boxes('svg.timeline rect.captured');
  check(shade.title === `captured steps ${snap.captured_steps[0]} to ${snap.captured_steps[snap.captured_steps.length - 1]}`, `the shading covers the captured steps (${shade.title})`);
  const producer = await boxes('svg.graph g.node.producer rect');
  eq(producer.length, 1, 'one producer drawn on the graph');
  const px = await pixelsAt(page, png, [
    [cell.x + cell.w / 2, cell.y + cell.h / 2],
    [badge.x + badge.w / 2, badge.y + badge.h / 2],
    [first.x + first.w / 2, first.y + first.h / 2],
    [shade.x + 3, shade.y + 3],
    [producer[0].x, producer[0].y + producer[0].h / 2]]);
  check(colorDistance(px[0], hex('#cf222e')) <= 6, `the worst cell at the anomaly step is red: ${px[0]}`);
  check(colorDistance(px[1], hex(band(result.score))) <= 6, `the score badge in the band of ${result.score}: ${px[1]}`);
  check(colorDistance(px[2], hex(band(firstScore))) <= 6, `the first cell in the band of ${firstScore}: ${px[2]}`);
  check(colorDistance(px[3], kCaptured) <= 6, `the captured window is shaded: ${px[3]}`);
  check(colorDistance(px[4], kProducerStroke) <= 40, `the producer's outline is red: ${px[4]}`);
  // The trigger marks: one per step with a hit, the anomaly's at its step.
  const hitSteps = [...new Set(snap.triggers.map((x) => x.step))].sort((a, b) => a - b);
  const marks = await boxes('svg.timeline g.trigger');
  eq(JSON.stringify(marks.map((m) => Number(m.step)).sort((a, b) => a - b)), JSON.stringify(hitSteps), 'a mark per step with a trigger hit');
  const anomalyMarks = await boxes('svg.timeline g.trigger.anomaly');
  eq(anomalyMarks.length, 1, 'one anomaly mark');
  eq(Number(anomalyMarks[0].step), snap.anomaly_step, 'at the anomaly step');
  // The chain's producer is the diagnosis's first link, by name.
  if (result.chain.length > 0) {
    const name = await page.evaluate(() => document.querySelector('svg.graph g.node.producer text').textContent);
    const link = result.chain[0];
    eq(name, link.layer_name || snap.layers.find((l) => l.id === link.layer).name, 'the producer node is the chain\'s first link');
  }
  // The causes in the diagnosis's order.
  const causes = await page.evaluate(() => Array.from(document.querySelectorAll('section.cause')).map((s) => s.getAttribute('data-cause')));
  eq(JSON.stringify(causes), JSON.stringify(result.causes.map((c) => c.cause)), 'the causes in ranked order');
  // Readable at 1280 px: nothing wider than the window but the graph's box.
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= 1280, `no horizontal scrolling at 1280 px (${wide})`);
}
{
  await open(healthyHtml);
  await page.screenshot({ fullPage: true, path: join(art, 'training_report_healthy.png') });
  eq(await page.evaluate(() => document.querySelector('#anomaly .head').textContent), 'No trigger fired', 'the healthy report says no trigger fired');
  eq((await boxes('svg.timeline g.trigger')).length, 0, 'no trigger mark');
}
await browser.close();
done('training_report_test');
