// End-to-end test of the panels, against the real server
// (`model-inspector open`, embedded UI) in Chromium, at 1024×700 and
// 1920×1080, on the demo run (resnet18 ORT), a GE model (ATC .om JSON), GE
// graph dumps and a torch_npu profiler directory:
// - the layout: the header stays on one line and nothing in it is cut; the
//   header, graph, bottom panel, side panel and their handles never overlap;
//   the minimap hides while the whole graph is in view (pixels of the
//   screenshot) and shows once zoomed in; the timeline shows several rows;
//   the side panel grows with the window (no fixed width);
// - resizable panels: dragging the side handle and the bottom splitter
//   resizes them, the sizes survive a reload, a double-click restores them;
// - names elided in the middle (the tail visible, the whole name on hover
//   and in a copy); a weight's dtype and shape on one line;
// - the model panel: the demo's ONNX header (checked against python3-onnx)
//   and the .om JSON's model attributes (checked against the JSON file);
// - the weight peek: a Conv's weight values in the details panel equal
//   numpy_helper's (Debian's /usr/bin/python3 with python3-onnx);
// - bookmarks: star a node, it is listed, kept across a reload, a click
//   selects it, × removes it.
// Screenshots: panels_<run>_<w>x<h>.png and panels_peek_*.png.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, check, clickEmptyGraph, clickNode, colorDistance, done, eq, fail, frames, launchBrowser, pixelsAt, poll, repoDir } from './lib.mjs';
import { startServer } from './server.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const runDirs = {
  demo: join(repoDir, 'test/fixtures/resnet18/ort_all'),
  om: join(repoDir, 'test/fixtures/samples/ascend/atc_om_json/test.om.json'),
  ge: join(repoDir, 'test/fixtures/ge/resnet_block'),
  npu: join(repoDir, 'test/fixtures/samples/ascend/msinsight_pt_text_level1_rank0'),
};
const runIndex = { demo: 0, om: 1, ge: 2, npu: 3 };
const server = await startServer(Object.values(runDirs));
console.log(`  server at ${server.url}`);
const token = new URL(server.url).searchParams.get('token');
const apiGet = async (path) => {
  const r = await fetch(new URL(path, server.url), { headers: token ? { 'X-MI-Token': token } : {} });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
};
const browser = await launchBrowser();
const viewports = [{ width: 1024, height: 700 }, { width: 1920, height: 1080 }];

async function open(context, run, hash = '') {
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(`${server.url}#run=${run}${hash}`);
  await poll(page, () => document.body.dataset.ready && window.__miDebug && window.__miDebug.state().status === 'ready', null, 60000, 'UI ready');
  return page;
}

/** Boxes of the page's panels (visible ones), as {id: {x, y, w, h}}. */
const panelBoxes = (page) => page.evaluate(() => {
  const out = {};
  for (const id of ['top', 'view', 'splitter', 'bottom', 'side-splitter', 'side']) {
    const e = document.getElementById(id);
    if (!e || e.hidden || getComputedStyle(e).display === 'none') continue;
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) out[id] = { x: r.x, y: r.y, w: r.width, h: r.height };
  }
  return out;
});

const overlap = (a, b) => Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x)) * Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));

async function checkLayout(page, tag, vp) {
  // Header: one line, nothing cut.
  const head = await page.evaluate(() => {
    const top = document.getElementById('top');
    const r = top.getBoundingClientRect();
    const kids = [...top.children].filter((e) => getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().width > 0)
      .map((e) => { const b = e.getBoundingClientRect(); return { id: e.id || e.className, top: b.top, bottom: b.bottom, right: b.right }; });
    return { h: r.height, right: r.right, scroll: top.scrollWidth, client: top.clientWidth, kids };
  });
  check(head.h <= 44, `${tag}: header height ${head.h} px (one line is ≤ 44)`);
  check(head.scroll <= head.client + 1, `${tag}: header content ${head.scroll} px wider than the header ${head.client} px (controls cut)`);
  const minTop = Math.min(...head.kids.map((k) => k.top));
  for (const k of head.kids) {
    check(k.top < minTop + 20, `${tag}: header item ${k.id} on a second line (top ${k.top})`);
    check(k.right <= head.right + 0.5, `${tag}: header item ${k.id} past the window's right edge`);
  }
  // Panels never overlap and stay inside the window.
  const boxes = await panelBoxes(page);
  const ids = Object.keys(boxes);
  for (let i = 0; i < ids.length; ++i) {
    const a = boxes[ids[i]];
    check(a.x >= -0.5 && a.y >= -0.5 && a.x + a.w <= vp.width + 0.5 && a.y + a.h <= vp.height + 0.5, `${tag}: #${ids[i]} outside the window ${JSON.stringify(a)}`);
    for (let j = i + 1; j < ids.length; ++j) {
      // #view and #bottom share #work with the splitter between them.
      check(overlap(a, boxes[ids[j]]) < 1, `${tag}: #${ids[i]} overlaps #${ids[j]} (${JSON.stringify(a)} / ${JSON.stringify(boxes[ids[j]])})`);
    }
  }
  // The side panel grows with the window.
  if (vp.width >= 1920) check(boxes.side.w >= 450, `${tag}: side panel ${boxes.side.w} px at ${vp.width} px (fixed width)`);
  // A run without a graph has no graph pane (its views take the room).
  if (vp.width <= 1024 && boxes.view) check(boxes.view.w >= 600, `${tag}: graph ${boxes.view?.w} px wide at ${vp.width} px`);
  return boxes;
}

async function checkTimelineRows(page, tag) {
  await page.click('#tabs button[data-tab="timeline"]');
  const t = await poll(page, () => {
    const v = window.__miDebug.view('timeline');
    const lanes = v?.laneBoxes?.();
    if (!lanes || !lanes.length || v.busy) return null;
    const h = v.canvas.getBoundingClientRect().height;
    const visibleLanes = lanes.filter((l) => l.y >= 0 && l.y + Math.min(l.h, 18) <= h).length;
    return { h, lanes: lanes.length, visibleLanes };
  }, null, 60000, 'timeline lanes');
  // 18 px per task row (timeline_render.ts kRowH) under a ~24 px axis.
  const rows = Math.floor((t.h - 24) / 18);
  check(rows >= 6, `${tag}: timeline ${t.h} px tall: ${rows} task rows (expected several)`);
  check(t.visibleLanes >= Math.min(3, t.lanes), `${tag}: ${t.visibleLanes} of ${t.lanes} timeline lanes in view`);
  await page.click('#tabs button[data-tab="timeline"]');
}

/** The first node of `op` on `level` of run `run` that has weight inputs. */
async function nodeWithWeights(run, level, op) {
  const r = await apiGet(`/api/runs/${run}/levels/${level}/search?q=${op}&mode=op`);
  for (const m of r.matches) {
    const d = await apiGet(`/api/runs/${run}/levels/${level}/nodes/${m.id}`);
    const w = (d.inputs || []).find((v) => v.initializer);
    if (w) return { node: d, weight: w.name };
  }
  fail(`no ${op} with a weight on ${level} of run ${run}`);
}

/** python3-onnx's numpy_helper on an initializer of the demo model: first 64 values, min, max. */
function numpyPeek(model, name) {
  const py = 'import json,sys,onnx\nfrom onnx import numpy_helper\nm=onnx.load(sys.argv[1])\n'
    + 't=[t for t in m.graph.initializer if t.name==sys.argv[2]][0]\na=numpy_helper.to_array(t).astype("float64").reshape(-1)\n'
    + 'print(json.dumps({"values":a[:64].tolist(),"min":a.min(),"max":a.max(),"n":int(a.size),"shape":list(t.dims)}))';
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', py, model, name], { encoding: 'utf8' }));
}
function onnxHeader(model) {
  const py = 'import json,sys,onnx\nm=onnx.load(sys.argv[1],load_external_data=False)\n'
    + 'print(json.dumps({"ir":m.ir_version,"producer":m.producer_name+" "+m.producer_version,"opsets":[[o.domain,o.version] for o in m.opset_import],"inputs":[i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]}))';
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', py, model], { encoding: 'utf8' }));
}

try {
  const runs = (await apiGet('/api/runs')).runs;
  eq(runs.length, 4, 'runs served');

  for (const vp of viewports) {
    const size = `${vp.width}x${vp.height}`;
    const context = await browser.newContext({ viewport: vp });

    // --- the demo: layout, minimap, timeline, details, peek, bookmarks ---
    let page = await open(context, runIndex.demo);
    await poll(page, () => Number(document.body.dataset.rendered || 0) > 0, null, 60000, 'first render');
    await frames(page);
    await checkLayout(page, `demo ${size}`, vp);

    // Minimap: hidden while everything is in view (the pixels under it are
    // the graph's, not its #fafafa plate), shown once zoomed in.
    const mm = await page.evaluate(() => {
      const m = document.getElementById('minimap');
      const r = m.getBoundingClientRect();
      return { x: r.x, y: r.y, w: r.width, h: r.height, vis: getComputedStyle(m).visibility };
    });
    eq(mm.vis, 'hidden', `demo ${size}: minimap with the whole graph in view`);
    await page.focus('#graph');
    for (let i = 0; i < 4; ++i) await page.keyboard.press('+');
    await poll(page, () => getComputedStyle(document.getElementById('minimap')).visibility === 'visible', null, 10000, 'minimap after zoom-in');
    await frames(page);
    const zoomed = await page.screenshot({ path: join(art, `panels_demo_zoomed_${size}.png`) });
    const [plate] = await pixelsAt(page, zoomed, [[mm.x + 3, mm.y + mm.h - 3]]);
    check(colorDistance(plate, [250, 250, 250]) <= 6, `demo ${size}: zoomed-in minimap drawn (pixel ${plate})`);
    await page.keyboard.press('0');
    await poll(page, () => getComputedStyle(document.getElementById('minimap')).visibility === 'hidden', null, 10000, 'minimap hidden after fit');

    await checkTimelineRows(page, `demo ${size}`);

    // Details of a Conv with a weight: names, one-line types, the peek.
    const { node, weight } = await nodeWithWeights(runIndex.demo, 'framework', 'Conv');
    await clickNode(page, node.id);
    await poll(page, (id) => document.querySelector('#details .details-head') && window.__miDebug.state().selection?.id === id
      && document.querySelector('#details table.values'), node.id, 30000, 'node details');
    const cells = await page.evaluate(() => [...document.querySelectorAll('#details table.values td.nw')].map((td) => ({
      text: td.textContent, h: td.getBoundingClientRect().height,
      line: parseFloat(getComputedStyle(td).lineHeight) || 16,
    })));
    check(cells.length >= 4, `demo ${size}: dtype / shape cells in the details (${cells.length})`);
    for (const c of cells) check(c.h < 2 * c.line + 4, `demo ${size}: "${c.text}" wraps (${c.h} px)`);
    const nameBox = await page.evaluate(() => {
      const m = document.querySelector('#details .node-name .mid');
      const r = m.getBoundingClientRect(), side = document.getElementById('side').getBoundingClientRect();
      const tail = m.querySelector('.mid-tail').getBoundingClientRect();
      // A copy of the selected name (the page's copy handler fills the clipboard data).
      const range = document.createRange();
      range.selectNodeContents(m);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      const data = new DataTransfer();
      m.dispatchEvent(new ClipboardEvent('copy', { clipboardData: data, bubbles: true, cancelable: true }));
      const copied = data.getData('text/plain');
      getSelection().removeAllRanges();
      return { full: m.dataset.full, title: m.title, copied, right: r.right, sideRight: side.right, tailRight: tail.right, h: r.height };
    });
    eq(nameBox.full, node.name, `demo ${size}: full node name kept`);
    eq(nameBox.title, node.name, `demo ${size}: node name on hover`);
    eq(nameBox.copied, node.name, `demo ${size}: node name copied whole`);
    check(nameBox.tailRight <= nameBox.sideRight, `demo ${size}: the name's end is visible`);
    check(nameBox.h < 24, `demo ${size}: node name on one line (${nameBox.h} px)`);

    // A long name in a narrow side panel: elided in the middle, its end in view.
    const all = await apiGet(`/api/runs/${runIndex.demo}/levels/framework/search?q=${encodeURIComponent('/')}&mode=text&limit=1000`);
    const longest = all.matches.reduce((a, b) => (b.name.length > a.name.length ? b : a));
    await clickNode(page, longest.id);
    await poll(page, (id) => window.__miDebug.state().selection?.id === id && document.querySelector('#details .node-name .mid'), longest.id, 30000, 'long-named node');
    await page.evaluate(() => { document.getElementById('side').style.width = '220px'; });
    await frames(page);
    const narrow = await page.evaluate(() => {
      const m = document.querySelector('#details .node-name .mid'), head = m.querySelector('.mid-head'), tail = m.querySelector('.mid-tail');
      const mr = m.getBoundingClientRect(), tr = tail.getBoundingClientRect();
      return { full: m.dataset.full, elided: head.scrollWidth > head.clientWidth, tailIn: tr.left >= mr.left && tr.right <= mr.right + 0.5, tail: tail.textContent };
    });
    await page.evaluate(() => { document.getElementById('side').style.width = ''; });
    eq(narrow.full, longest.name, `demo ${size}: long name kept whole`);
    check(narrow.elided, `demo ${size}: "${longest.name}" elided in a 220 px panel`);
    check(narrow.tailIn && longest.name.endsWith(narrow.tail) && narrow.tail.length >= 4, `demo ${size}: the end "${narrow.tail}" of "${longest.name}" stays in view`);
    await clickNode(page, node.id);
    await poll(page, (id) => window.__miDebug.state().selection?.id === id && document.querySelector('#details table.values'), node.id, 30000, 'node details again');

    const want = numpyPeek(join(repoDir, 'test/fixtures/resnet18/model.onnx'), weight);
    await page.click(`#details button.peek[data-peek="${weight}"]`);
    const peek = await poll(page, (w) => {
      const b = [...document.querySelectorAll('#details .peek-body')].find((e) => e.dataset.peek === w);
      return b && { text: b.textContent, values: b.querySelector('.peek-values').textContent };
    }, weight, 30000, 'weight peek');
    const api = await apiGet(`/api/runs/${runIndex.demo}/levels/framework/values?name=${encodeURIComponent(weight)}&limit=64`);
    eq(JSON.stringify(api.values), JSON.stringify(want.values), `demo ${size}: ${weight} first values = numpy_helper's`);
    eq(api.stats.min, want.min, `${weight} min`);
    eq(api.stats.max, want.max, `${weight} max`);
    eq(api.elements, want.n, `${weight} elements`);
    check(peek.text.includes(`[${want.shape.join('×')}]`), `demo ${size}: peek shows the shape ${want.shape}: ${peek.text.slice(0, 120)}`);
    check(peek.values.startsWith(`[${String(Number(want.values[0].toPrecision(5)))}`), `demo ${size}: peek shows the first value ${want.values[0]}: ${peek.values.slice(0, 60)}`);
    await page.screenshot({ path: join(art, `panels_peek_${size}.png`) });

    // Bookmarks: star, listed, kept across a reload, click selects, × removes.
    await page.click('#details .bookmark');
    await poll(page, (id) => document.querySelector(`#bookmarks li[data-node="${id}"]`), node.id, 5000, 'bookmark listed');
    page = await reload(page);
    await poll(page, (id) => document.querySelector(`#bookmarks li[data-node="${id}"]`), node.id, 10000, 'bookmark after reload');
    await clickEmptyGraph(page);
    const v0 = await page.evaluate(() => window.__miDebug.state().selectionVersion);
    await page.click(`#bookmarks li[data-node="${node.id}"] .mid`);
    await poll(page, ({ id, v0 }) => { const s = window.__miDebug.state(); return s.selectionVersion > v0 && s.selection?.kind === 'node' && s.selection.id === id; },
      { id: node.id, v0 }, 10000, 'bookmark click selects');
    await page.click(`#bookmarks li[data-node="${node.id}"] button`);
    await poll(page, () => !document.querySelector('#bookmarks li'), null, 5000, 'bookmark removed');

    // Model panel: the ONNX header as python3-onnx reads it.
    const header = onnxHeader(join(repoDir, 'test/fixtures/resnet18/model.onnx'));
    const model = await poll(page, () => {
      const m = document.querySelector('#model .model-props');
      return m && { text: document.getElementById('model').textContent, rows: [...m.querySelectorAll('tr')].map((r) => [r.cells[0].textContent, r.cells[1].textContent]) };
    }, null, 30000, 'model panel');
    const row = (k) => model.rows.find((r) => r[0] === k)?.[1];
    eq(row('IR version'), String(header.ir), `demo ${size}: IR version`);
    eq(row('producer'), header.producer, `demo ${size}: producer`);
    eq(row('opsets'), header.opsets.map(([d, v]) => `${d || 'ai.onnx'} ${v}`).join(', '), `demo ${size}: opsets`);
    for (const i of header.inputs) check(model.text.includes(i), `demo ${size}: model input ${i} listed`);
    await page.screenshot({ path: join(art, `panels_demo_${size}.png`) });

    // Resizable panels, kept across reloads; double-click restores.
    const before = await panelBoxes(page);
    const sh = before['side-splitter'];
    await page.mouse.move(sh.x + sh.w / 2, sh.y + 200);
    await page.mouse.down();
    await page.mouse.move(sh.x + sh.w / 2 - 120, sh.y + 200, { steps: 4 });
    await page.mouse.up();
    const sp = before.splitter;
    await page.mouse.move(sp.x + 300, sp.y + sp.h / 2);
    await page.mouse.down();
    await page.mouse.move(sp.x + 300, sp.y + sp.h / 2 - 60, { steps: 4 });
    await page.mouse.up();
    const dragged = await panelBoxes(page);
    check(Math.abs(dragged.side.w - (before.side.w + 120)) <= 3, `${size}: side panel ${before.side.w} → ${dragged.side.w} px after a 120 px drag`);
    check(Math.abs(dragged.bottom.h - (before.bottom.h + 60)) <= 3, `${size}: bottom panel ${before.bottom.h} → ${dragged.bottom.h} px after a 60 px drag`);
    page = await reload(page);
    const kept = await panelBoxes(page);
    check(Math.abs(kept.side.w - dragged.side.w) <= 1, `${size}: side width kept across a reload (${dragged.side.w} → ${kept.side.w})`);
    check(Math.abs(kept.bottom.h - dragged.bottom.h) <= 1, `${size}: bottom height kept across a reload (${dragged.bottom.h} → ${kept.bottom.h})`);
    await page.dblclick('#side-splitter');
    await page.dblclick('#splitter');
    const reset = await panelBoxes(page);
    check(Math.abs(reset.side.w - before.side.w) <= 1, `${size}: double-click restores the side width`);
    check(Math.abs(reset.bottom.h - before.bottom.h) <= 1, `${size}: double-click restores the bottom height`);
    check(!page.errors.length, `demo ${size}: page errors ${page.errors.join('; ')}`);
    await page.close();

    // --- the ATC .om JSON: the model attributes in the model panel ---
    page = await open(context, runIndex.om);
    await poll(page, () => Number(document.body.dataset.rendered || 0) > 0, null, 60000, 'om first render');
    await checkLayout(page, `om ${size}`, vp);
    const om = JSON.parse(readFileSync(runDirs.om, 'utf8'));
    const memSize = om.attr.find((a) => a.key === 'memory_size').value.i;
    const omRows = await poll(page, () => {
      const m = document.querySelector('#model .model-props');
      return m && [...m.querySelectorAll('tr')].map((r) => [r.cells[0].textContent, r.cells[1].textContent]);
    }, null, 30000, 'om model panel');
    eq(omRows.find((r) => r[0] === 'memory_size')?.[1], String(memSize), `om ${size}: memory_size from the .om JSON`);
    eq(omRows.find((r) => r[0] === 'model name')?.[1], om.name, `om ${size}: model name`);
    await page.screenshot({ path: join(art, `panels_om_${size}.png`) });
    check(!page.errors.length, `om ${size}: page errors ${page.errors.join('; ')}`);
    await page.close();

    // --- GE graph dumps and the torch_npu run: layout and timeline ---
    for (const k of ['ge', 'npu']) {
      page = await open(context, runIndex[k]);
      if (runs[runIndex[k]].levels.length) await poll(page, () => Number(document.body.dataset.rendered || 0) > 0, null, 60000, `${k} first render`);
      await frames(page);
      await checkLayout(page, `${k} ${size}`, vp);
      if (runs[runIndex[k]].has_trace) await checkTimelineRows(page, `${k} ${size}`);
      await page.screenshot({ path: join(art, `panels_${k}_${size}.png`) });
      check(!page.errors.length, `${k} ${size}: page errors ${page.errors.join('; ')}`);
      await page.close();
    }
    await context.close();
  }
} finally {
  await browser.close();
  await server.stop();
}
done('e2e_panels_test');

async function reload(page) {
  await page.reload();
  await poll(page, () => document.body.dataset.ready && window.__miDebug && window.__miDebug.state().status === 'ready', null, 60000, 'UI ready after reload');
  await poll(page, () => Number(document.body.dataset.rendered || 0) > 0, null, 60000, 'render after reload');
  return page;
}
