// End-to-end test of the Training view against the real server
// (`model-inspector open SNAPSHOT`, embedded UI) in Chromium at 1920x1080
// and 1024x700, on a snapshot the real monitor wrote around a real torch
// training run with an injected fault (make_training_ui_snapshot.py: a small
// transformer block, ff1's learning rate x1000 from step 25). Expected
// numbers come from that script: the anomaly step from a plain torch run
// of the same seed with the triggers' rules applied by hand, the tensors'
// numbers read from the snapshot with python's sqlite3 and numpy; the
// order of the causes is the diagnosis' (the server's analysis route).
//   - the tab opens by itself on a snapshot, with the model's score;
//   - timeline: trigger marks at the anomaly step, the captured window;
//   - heat map: the pixel at the faulty layer's cell at the anomaly step
//     has the ramp colour of its score and is far from a healthy cell's;
//     hovering it shows layer, step, score and the metrics;
//   - a click on a heat-map row selects that layer's graph node (state),
//     a node picked in the graph outlines its row;
//   - sparklines = the snapshot's layer_steps columns;
//   - histograms, attention (per head), projection (PCA, t-SNE when
//     written), normal vs anomalous sample = the snapshot's rows;
//   - causes in the diagnosis' order, a snippet copied; the chain's nodes
//     marked on the graph (the producer's outline red in the screenshot).
// Screenshots: training_*.png (docs/images/ui_training.png is
// training_1920x1080.png).

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { artifactsDir, check, clickNode, colorDistance, done, eq, fail, frames, launchBrowser, miBinary, pixelsAt, poll, repoDir, uiState } from './lib.mjs';
import { startServer } from './server.mjs';

const kPython = process.env.MI_PYTHON || '/usr/bin/python3';
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

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'mi-training-test-'));
const made = spawnSync(kPython, [join(repoDir, 'web/test/make_training_ui_snapshot.py'), work], { encoding: 'utf8', env: process.env, timeout: 600000 });
if (made.status !== 0) fail(`make_training_ui_snapshot.py failed (${made.status}):\n${made.stdout}\n${made.stderr}`);
const facts = JSON.parse(made.stdout);
const anomaly = Number(facts.meta.anomaly_step);
eq(anomaly, facts.expected_anomaly_step, `the monitor caught the anomaly at the step the plain run's triggers give (${facts.expected_trigger})`);
const faultLayer = facts.layers[facts.fault.layer];
check(faultLayer !== undefined, `the snapshot has the faulty layer ${facts.fault.layer}`);

// The heat ramp (base/palette.ts's stops, pale yellow → dark red), written out: the expected colours.
const kRamp = ['#fff7bc', '#fec44f', '#fb9a29', '#e34a33', '#b30000', '#67000d'].map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));
function ramp(t) {
  const x = Math.min(1, Math.max(0, t)) * (kRamp.length - 1);
  const k = Math.min(kRamp.length - 2, Math.floor(x)), f = x - k;
  return kRamp[k].map((c, i) => c + (kRamp[k + 1][i] - c) * f);
}
/** A health score's colour: 100 the ramp's start, 0 its end. */
const scoreRgb = (score) => ramp((100 - score) / 100);
const near = (a, b, rel = 1e-5) => a === b || (a !== null && b !== null && Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b)));
const nearList = (a, b, rel) => a.length === b.length && a.every((v, i) => near(v, b[i], rel));

const server = await startServer([facts.snapshot]);
console.log(`  server at ${server.url}`);
const base = server.url.replace(/\/$/, '');
const api = async (path) => (await fetch(base + path)).json();
const diagnosis = await api('/api/runs/0/analyses/training_diagnosis');
const overview = await api('/api/runs/0/training/overview');
check(Array.isArray(diagnosis.causes) && diagnosis.causes.length > 0, `the diagnosis names causes (${JSON.stringify(diagnosis.causes?.map((c) => c.cause))})`);
const browser = await launchBrowser();

async function open(viewport) {
  const page = await browser.newPage({ viewport });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  await page.goto(`${base}/`);
  await poll(page, () => document.body.dataset.ready === '1', null, 60000, 'runs loaded');
  await poll(page, () => window.__miDebug.state().tab === 'training', null, 20000, 'the Training tab opened by itself');
  await poll(page, () => window.__miDebug.view('training')?.state.status === 'ready', null, 120000, 'the diagnosis shown');
  await page.evaluate(() => window.__miDebug.view('training').settled());
  await poll(page, () => window.__miDebug.view('graph').pane(0).settled(), null, 60000, 'layout shown');
  return page;
}

/** The pixel at the centre of the heat-map cell of `layer` at `step` (scrolled into view first). */
async function cellPixel(page, layer, step) {
  await page.evaluate(() => document.getElementById('training-heat').scrollIntoView({ block: 'center' }));
  await page.mouse.move(1, 1);
  await frames(page);
  const at = await page.evaluate(({ layer, step }) => window.__miDebug.view('training').cellClientPoint(layer, step), { layer, step });
  if (!at) throw new Error(`no heat-map cell for layer ${layer} at step ${step}`);
  const png = await page.screenshot();
  const [px] = await pixelsAt(page, png, [[at.x, at.y]]);
  return { px, at };
}

for (const viewport of [{ width: 1920, height: 1080 }, { width: 1024, height: 700 }]) {
  const tag = `${viewport.width}x${viewport.height}`;
  const page = await open(viewport);
  const view = () => page.evaluate(() => window.__miDebug.view('training').state);

  // ---- header and timeline ----
  const head = await page.evaluate(() => ({
    score: document.querySelector('.training-score')?.dataset.score, anomaly: document.querySelector('.training-anomaly')?.textContent,
  }));
  check(near(Number(head.score), diagnosis.score, 1e-9), `the model's score shown ${head.score} = the diagnosis' ${diagnosis.score}`);
  check(head.anomaly.includes(`step ${anomaly}`), `the header names the anomaly step: ${head.anomaly}`);
  const tl = await page.evaluate(() => ({
    marks: [...document.querySelectorAll('.training-timeline .trigger-mark')].map((g) => Number(g.dataset.step)),
    first: Number(document.querySelector('.training-timeline .captured-window')?.dataset.first),
    last: Number(document.querySelector('.training-timeline .captured-window')?.dataset.last),
    loss: JSON.parse(document.querySelector('.training-timeline .series-loss')?.dataset.values ?? '[]'),
  }));
  check(tl.marks.includes(anomaly), `a trigger mark at step ${anomaly} (${tl.marks})`);
  eq(tl.first, Math.min(...facts.captured_steps), 'the captured window starts at the first captured step');
  eq(tl.last, Math.max(...facts.captured_steps), 'the captured window ends at the last captured step');
  check(nearList(tl.loss, facts.monitored_losses, 1e-5), 'the timeline draws the losses of the training run');

  // ---- heat map pixels ----
  const hm = diagnosis.heatmap;
  const row = hm.layers.indexOf(faultLayer), col = hm.steps.indexOf(anomaly);
  check(row >= 0 && col >= 0, `the heat map has ${facts.fault.layer} (${row}) and step ${anomaly} (${col})`);
  const badScore = hm.values[row][col];
  // A healthy cell: the faulty layer early on, before the fault.
  const healthyStep = hm.steps.find((s) => s >= 2 && s < facts.fault.step && hm.values[row][hm.steps.indexOf(s)] !== null);
  const goodScore = hm.values[row][hm.steps.indexOf(healthyStep)];
  check(badScore !== null && goodScore !== null && badScore < goodScore,
    `${facts.fault.layer} scores lower at the anomaly step ${anomaly} (${badScore}) than at step ${healthyStep} (${goodScore})`);
  const bad = await cellPixel(page, faultLayer, anomaly);
  const good = await cellPixel(page, faultLayer, healthyStep);
  check(colorDistance(bad.px, scoreRgb(badScore)) <= 3, `the anomalous cell's pixel ${bad.px} is the ramp colour of score ${badScore} (${scoreRgb(badScore).map(Math.round)})`);
  check(colorDistance(good.px, scoreRgb(goodScore)) <= 3, `the healthy cell's pixel ${good.px} is the ramp colour of score ${goodScore}`);
  check(colorDistance(bad.px, good.px) > 40, `anomalous ${bad.px} and healthy ${good.px} cells are far apart in colour`);
  // The tooltip: layer, step, score and the metrics.
  await page.mouse.move(bad.at.x, bad.at.y);
  const tip = await poll(page, () => {
    const t = document.querySelector('.training-tooltip');
    return t && !t.hidden && t.dataset.step ? { layer: Number(t.dataset.layer), step: Number(t.dataset.step), text: t.textContent } : null;
  }, null, 10000, 'the heat-map tooltip');
  eq(tip.layer, faultLayer, 'the tooltip is the hovered layer\'s');
  eq(tip.step, anomaly, 'the tooltip is the hovered step\'s');
  check(tip.text.includes(facts.fault.layer) && tip.text.includes(`score ${Math.round(badScore)}`) && tip.text.includes('grad norm'),
    `the tooltip names layer, score and metrics: ${tip.text}`);
  await page.screenshot({ path: join(art, `training_heat_${tag}.png`) });

  // ---- heat-map row → graph node, graph node → row ----
  const faultNode = overview.layers.find((l) => l.id === faultLayer).node;
  const v0 = (await uiState(page)).selectionVersion;
  await page.mouse.click(bad.at.x, bad.at.y);
  await poll(page, (v) => window.__miDebug.state().selectionVersion > v, v0, 10000, 'a selection after the row click');
  let st = await uiState(page);
  eq(st.selection?.kind, 'node', 'a heat-map row click selects a node');
  eq(st.selection?.id, faultNode, `it is ${facts.fault.layer}'s graph node`);
  const nodeName = (await api(`/api/runs/0/levels/framework/nodes/${faultNode}`)).name;
  eq(nodeName, facts.fault.layer, 'the selected graph node is named as the layer');
  await poll(page, (id) => window.__miDebug.state().panes[0].node === id, faultNode, 20000, 'the graph pane selected the node');
  eq(await page.evaluate(() => document.querySelector('.training-table tr.selected')?.dataset.layer), String(faultLayer), 'the layer\'s sparkline row is marked');
  const otherName = 'head';
  const otherLayer = facts.layers[otherName], otherNode = overview.layers.find((l) => l.id === otherLayer).node;
  await clickNode(page, otherNode);
  st = await uiState(page);
  eq(st.selection?.id, otherNode, 'the graph click selected the head node');
  const sel = await view();
  eq(sel.rows[sel.selectedRow]?.layer, otherLayer, 'a node picked in the graph outlines its heat-map row');
  eq(await page.evaluate(() => document.querySelector('.training-table tr.selected')?.dataset.layer), String(otherLayer), 'and marks its sparkline row');

  // ---- the chain marked on the graph ----
  const chainNodes = diagnosis.chain.map((c) => c.node).filter((n) => typeof n === 'number' && n >= 0);
  eq(JSON.stringify(st.trainingMarks?.nodes.map((n) => n.id)), JSON.stringify([...new Set(chainNodes)]), 'the chain\'s nodes are marked on the graph');
  const producer = diagnosis.chain.find((c) => c.role === 'producer');
  if (check(producer && typeof producer.node === 'number', `the chain has a producer with a graph node (${JSON.stringify(producer)})`)) {
    const mark = await page.evaluate(async (id) => {
      const g = window.__miDebug.view('graph'), p = g.pane(0);
      await p.reveal(id);
      p.centreOnNode(id);
      const it = p.itemOfNode(id);
      const b = p.scene.layout.itemBox;
      const r = p.canvas.getBoundingClientRect();
      return { x: r.left + p.cam.toScreenX(b[4 * it] + 1), y: r.top + p.cam.toScreenY(b[4 * it + 1] + b[4 * it + 3] / 2) };
    }, producer.node);
    await page.mouse.move(1, 1);
    await frames(page);
    const png = await page.screenshot();
    const [edge] = await pixelsAt(page, png, [[mark.x, mark.y]]);
    check(colorDistance(edge, [0xd5, 0x00, 0x00]) <= 60, `the producer ${producer.layer_name}'s outline is red on the graph (${edge})`);
  }

  // ---- sparklines = layer_steps ----
  await poll(page, (n) => document.querySelectorAll('.training-table td[data-metric] svg.sparkline').length >= n, hm.layers.length * 4, 30000, 'every sparkline drawn');
  const sparks = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('.training-sparks tr[data-layer]')].map((tr) => [
    tr.dataset.layer, Object.fromEntries([...tr.querySelectorAll('td[data-metric]')].map((td) => [td.dataset.metric, JSON.parse(td.querySelector('svg').dataset.values)])),
  ])));
  for (const layer of hm.layers) {
    for (const m of ['grad_norm', 'update_ratio', 'act_rms', 'dead_fraction']) {
      const want = facts.series[String(layer)][m];
      check(nearList(sparks[layer][m], want, 1e-9), `layer ${layer} ${m} sparkline = the snapshot's layer_steps`);
    }
  }

  // ---- the captured step: histograms, attention, projection, samples ----
  const step = (await view()).step;
  eq(step, facts.captured_steps.includes(anomaly) ? anomaly : facts.captured_steps[0], 'the tensor views open on the anomaly step');
  const hists = await page.evaluate(() => [...document.querySelectorAll('.training-hist-cell')].map((c) => ({
    layer: Number(c.dataset.layer), counts: JSON.parse(c.querySelector('svg').dataset.counts), lo: Number(c.querySelector('svg').dataset.lo), hi: Number(c.querySelector('svg').dataset.hi),
  })));
  const wantHists = facts.histograms.filter((h) => h.step === step && h.kind === 'activation');
  eq(hists.length, wantHists.length, `a histogram per layer with one at step ${step}`);
  for (const h of wantHists) {
    const shown = hists.find((x) => x.layer === h.layer);
    check(shown && JSON.stringify(shown.counts) === JSON.stringify(h.counts) && near(shown.lo, h.lo) && near(shown.hi, h.hi),
      `layer ${h.layer}'s histogram = the snapshot's (${JSON.stringify(shown?.counts)} vs ${JSON.stringify(h.counts)})`);
  }
  const wantAttn = facts.attention.filter((a) => a.step === step);
  check(wantAttn.length > 0, `the snapshot holds attention weights at step ${step}`);
  const attn = await page.evaluate(() => {
    const g = document.querySelector('.training-attn-grid');
    return g && { layer: Number(g.dataset.layer), heads: Number(g.dataset.heads), cells: [...g.querySelectorAll('canvas')].map((c) => ({ max: Number(c.dataset.max), q: Number(c.dataset.queries), k: Number(c.dataset.keys) })) };
  });
  const a0 = wantAttn.find((a) => a.layer === attn?.layer);
  if (check(a0, `the attention shown (layer ${attn?.layer}) is one the snapshot holds`)) {
    eq(attn.heads, a0.heads, 'a picture per head');
    eq(attn.cells.length, a0.heads, 'head canvases');
    check(attn.cells.every((c, h) => c.q === a0.queries && c.k === a0.keys && near(c.max, a0.head_max[h], 1e-6)),
      `each head's queries × keys and largest weight = numpy's (${attn.cells.map((c) => c.max)} vs ${a0.head_max})`);
  }
  const projLayer = (await view()).projectionLayer;
  for (const method of ['pca', 'tsne']) {
    const want = facts.projections.filter((p) => p.step === step && p.layer === projLayer && p.method === method);
    if (method === 'tsne' && !want.length) { console.log('  no t-SNE projection in the snapshot (scikit-learn missing where it was written)'); continue; }
    check(want.length > 0, `the snapshot holds a ${method} projection of layer ${projLayer} at step ${step}`);
    if (method === 'tsne') {
      await page.click('.training-method button[data-method="tsne"]');
      await page.evaluate(() => window.__miDebug.view('training').settled());
    }
    const pts = await poll(page, (m) => {
      const b = document.querySelector('.training-proj-body');
      return b && b.dataset.method === m ? [...b.querySelectorAll('circle.point')].map((c) => ({ sample: Number(c.dataset.sample), x: Number(c.dataset.x), y: Number(c.dataset.y), anomalous: c.classList.contains('anomalous') })) : null;
    }, method, 20000, `the ${method} projection drawn`);
    eq(pts.length, want.length, `${method}: a point per sample`);
    check(want.every((w) => pts.some((p) => p.sample === w.sample && near(p.x, w.x) && near(p.y, w.y) && p.anomalous === w.anomalous)),
      `${method}: every point where the snapshot puts it, anomalous ones marked`);
    check(want.some((w) => w.anomalous), `${method}: the anomalous samples are among them`);
  }
  const samples = await page.evaluate(() => [...document.querySelectorAll('.training-sample-table td.training-sample-cell')].map((td) => ({
    layer: Number(td.parentElement.dataset.layer), role: td.dataset.role, absMax: td.dataset.absMax === '' ? null : Number(td.dataset.absMax),
  })));
  const roles = facts.samples.filter((s) => s.step === step);
  eq(JSON.stringify(roles.map((r) => r.role).sort()), '["anomalous","normal"]', 'the monitor singled out a normal and an anomalous sample');
  for (const r of roles) {
    const want = facts.sample_stats.filter((s) => s.step === step && s.sample === r.sample);
    const shown = samples.filter((s) => s.role === r.role);
    check(want.length > 0 && want.every((w) => shown.some((s) => s.layer === w.layer && near(s.absMax, w.abs_max, 1e-9))),
      `the ${r.role} sample's per-layer |x| max = the snapshot's sample_stats`);
  }

  // ---- causes, in the diagnosis' order; a snippet copied ----
  const causes = await page.evaluate(() => [...document.querySelectorAll('.training-cause')].map((li) => li.dataset.cause));
  eq(JSON.stringify(causes), JSON.stringify(diagnosis.causes.map((c) => c.cause)), 'the causes in the diagnosis\' order');
  const withSnippet = diagnosis.causes.findIndex((c) => c.fix.snippet);
  if (withSnippet >= 0) {
    await page.click(`.training-cause[data-index="${withSnippet}"] .training-copy`);
    eq((await view()).copied, diagnosis.causes[withSnippet].fix.snippet, 'the copy button takes the cause\'s snippet');
  }

  await page.evaluate(() => document.querySelector('.training-view').scrollTo(0, 0));
  await frames(page);
  await page.screenshot({ path: join(art, `training_${tag}.png`) });
  await page.evaluate(() => document.querySelector('.training-step-box').scrollIntoView({ block: 'start' }));
  await frames(page);
  await page.screenshot({ path: join(art, `training_step_${tag}.png`) });
  eq(page.errors.join('\n'), '', `no page errors (${tag})`);
  await page.close();
}

await browser.close();
await server.stop();
done('e2e_training_test');
