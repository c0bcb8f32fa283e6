// End-to-end test of a graph with a fault, against the real server
// (`model-inspector open`, embedded UI) in Chromium: a model whose node
// 'reads_ghost' reads 'ghost_tensor', which no node, graph input or
// initializer provides (test/bad_inputs/onnx/dangling_input.onnx, written
// by make_bad_inputs.py). Without --keep-going the server opens it (a
// viewer shows faulty graphs) and says what is wrong on stderr; the graph
// draws the tensor as a missing input: one item of its own, red and dashed
// (the fill differs from an ordinary graph input's grey), with an edge to
// the node that reads it; clicking it says why; the node's details mark
// the input missing. Screenshot: faults_missing_input.png.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  artifactsDir, check, clickNode, colorDistance, done, eq, fail, frames, launchBrowser, pixelsAt, poll, repoDir,
} from './lib.mjs';
import { startServer } from './server.mjs';

const kModel = join(repoDir, 'test/bad_inputs/onnx/dangling_input.onnx');
const art = artifactsDir();
mkdirSync(art, { recursive: true });

// Colours of web/src/base/palette.ts (kFaultFill, kIoFill) in 0..255.
const kFaultFill = [0xfd, 0xe8, 0xe8];
const kIoFill = [0xee, 0xee, 0xee];

const server = await startServer([kModel]);
console.log(`  server at ${server.url}`);
await new Promise((r) => { const t = setInterval(() => { if (server.stderr().includes('serving')) { clearInterval(t); r(); } }, 50); });
check(/dangling_input/.test(server.stderr()) && server.stderr().includes('ghost_tensor'),
  `the fault is reported on stderr: ${server.stderr()}`);
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()); });
  await page.goto(server.url + '?fold=budget');
  await poll(page, () => Number(document.body.dataset.rendered || 0) > 0 && document.body.dataset.ready, null, 60000, 'graph rendered');
  await frames(page);

  // The layout: one missing-input item (kind 4) titled 'ghost_tensor', with
  // an edge into the node 'reads_ghost'.
  const items = await page.evaluate(() => {
    const g = window.__miDebug.view('graph'), p = g.pane(0), l = p.scene.layout, b = l.itemBox;
    const r = document.getElementById('graph').getBoundingClientRect();
    const out = [];
    for (let k = 0; k < l.itemCount; ++k) {
      const c = g.itemScreenCenter(k);
      const edgesIn = [];
      for (let e = 0; e < l.edgeCount; ++e) if (l.edgeFrom[e] === k) edgesIn.push(l.str(l.itemTitle[l.edgeTo[e]]));
      out.push({
        k, kind: l.itemKind[k], title: l.str(l.itemTitle[k]), to: edgesIn,
        x: r.left + c.x, y: r.top + c.y, w: b[4 * k + 2] * p.cam.scale, h: b[4 * k + 3] * p.cam.scale,
        rgb: Array.from(p.scene.itemColor.slice(3 * k, 3 * k + 3), (v) => Math.round(v * 255)),
      });
    }
    return out;
  });
  const missing = items.filter((i) => i.kind === 4);
  eq(missing.map((i) => i.title).join(), 'ghost_tensor', 'one missing-input item, the tensor nothing provides');
  eq(missing[0].to.join(), 'Add', 'its edge goes to the node that reads it (op Add)');
  const input = items.find((i) => i.kind === 1);
  if (!input) fail('no ordinary graph input item to compare with');
  eq(input.title, 'x', 'the ordinary graph input');

  // Pixels: inside the pill, left of its centred label, the fault's fill;
  // the ordinary input's fill is the grey one.
  const png = await page.screenshot({ path: join(art, 'faults_missing_input.png') });
  const probe = (i) => [i.x - i.w / 2 + Math.max(i.h / 2, 6), i.y - i.h / 4];
  const [fault, plain] = await pixelsAt(page, png, [probe(missing[0]), probe(input)]);
  check(colorDistance(fault, kFaultFill) <= 12, `missing input drawn in the fault's fill: ${fault} vs ${kFaultFill}`);
  check(colorDistance(plain, kIoFill) <= 12, `graph input drawn in the grey fill: ${plain} vs ${kIoFill}`);
  check(colorDistance(fault, plain) >= 12, `the missing input looks different from a graph input: ${fault} vs ${plain}`);

  // Clicking it says what is wrong.
  await page.mouse.click(missing[0].x, missing[0].y);
  await poll(page, () => (document.querySelector('#details')?.textContent ?? '').includes('missing input'), null, 10000, 'details say missing input');
  const said = await page.textContent('#details');
  check(said.includes('ghost_tensor') && said.includes('produced by no node'), `details of the missing input: ${said}`);

  // The reading node's details mark its input missing.
  const node = await page.evaluate(() => {
    const l = window.__miDebug.view('graph').pane(0).scene.layout;
    for (let k = 0; k < l.itemCount; ++k) if (l.itemKind[k] === 0) return l.itemModelId[k];
    return -1;
  });
  await clickNode(page, node);
  await poll(page, () => document.querySelector('#details .missing-input') !== null, null, 10000, 'missing mark in the node details');
  eq(await page.textContent('#details .missing-input'), 'missing', 'the input is marked missing');
  check(errors.length === 0, `no console errors: ${errors.join('; ')}`);
} finally {
  await browser.close();
  await server.stop();
}
done('e2e_faults_test');
