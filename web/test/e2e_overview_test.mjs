// End-to-end test of the graph's first screen, against the real server
// (`model-inspector open`, embedded UI) in Chromium, at 1024×700 and
// 1920×1080, on the demo (ResNet-18 with its ORT run) and a GE graph dump
// (the public 234-op afterUBMatch sample copied into test/fixtures):
//   - it opens on a readable overview: the demo's four layers folded and
//     labelled (name, node count and time, op mix), in the direction whose
//     drawing fits the window better (left to right for this tall narrow
//     graph), covering most of the pane, not a sliver (pixels);
//   - labels are legible at the overview zoom (text drawn >= 9 px);
//   - the direction toggle goes to the URL and a reload keeps it;
//   - colour by time shows on folded groups and on silhouettes when zoomed
//     far out (each layer its own heat, pixels of the silhouettes);
//   - compiled level, layer1 unfolded: every node inside its frames, the
//     inserted ReorderOutput nodes inside layer1's frame, edge labels
//     overlapping no node and no other label; long node names cut in the
//     middle.
// The UI is read through window.__miDebug and waited on by its state.
// Screenshots: overview_<run>_<w>x<h>.png and friends.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, check, colorDistance, done, eq, fail, frames, launchBrowser, pixelsAt, poll, repoDir } from './lib.mjs';
import { startServer } from './server.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const geDump = join(repoDir, 'test/fixtures/samples/ascend/ge_graph_dumps/ge_proto_00046_afterUBMatch.txt');

const browser = await launchBrowser();
const kViewports = [{ width: 1024, height: 700 }, { width: 1920, height: 1080 }];

async function open(server, viewport, hash = '') {
  const page = await browser.newPage({ viewport });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(server.url + hash);
  await settle(page);
  return page;
}

async function settle(page) {
  await poll(page, () => {
    const p = window.__miDebug?.view?.('graph')?.pane(0);
    return p && p.current && document.body.dataset.ready;
  }, null, 60000, 'graph shown').catch((e) => fail(e.message));
  await frames(page);
}

/** Layout size, direction, the pane's size and the fitted scale in both directions. */
const geometry = (page) => page.evaluate(() => {
  const p = window.__miDebug.view('graph').pane(0), l = p.scene.layout;
  const vw = p.cam.viewW - 48, vh = p.cam.viewH - 48;
  return {
    dir: l.direction, w: l.width, h: l.height, viewW: p.cam.viewW, viewH: p.cam.viewH, scale: p.cam.scale,
    fitShown: Math.min(vw / l.width, vh / l.height), fitSwapped: Math.min(vw / l.height, vh / l.width),
    frames: l.frameCount, items: l.itemCount, hash: location.hash,
  };
});

const textRuns = (page) => page.evaluate(() => window.__miDebug.view('graph').textRuns(0));

/** Fraction of the canvas's columns and rows holding a non-background pixel (screenshot of the canvas). */
async function coverage(page) {
  const box = await page.evaluate(() => { const r = window.__miDebug.view('graph').pane(0).canvas.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
  const png = await page.screenshot({ clip: { x: box.x, y: box.y, width: box.w, height: box.h } });
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const bg = [d[0], d[1], d[2]];
    const cols = new Uint8Array(c.width), rows = new Uint8Array(c.height);
    for (let y = 0; y < c.height; ++y) {
      for (let x = 0; x < c.width; ++x) {
        const o = 4 * (y * c.width + x);
        if (Math.max(Math.abs(d[o] - bg[0]), Math.abs(d[o + 1] - bg[1]), Math.abs(d[o + 2] - bg[2])) > 24) { cols[x] = 1; rows[y] = 1; }
      }
    }
    let cx = 0, cy = 0, x0 = c.width, x1 = -1, y0 = c.height, y1 = -1;
    for (let x = 0; x < c.width; ++x) if (cols[x]) { cx++; x0 = Math.min(x0, x); x1 = x; }
    for (let y = 0; y < c.height; ++y) if (rows[y]) { cy++; y0 = Math.min(y0, y); y1 = y; }
    // The minimap sits in a corner: measure the span of the drawing instead of the count.
    return { spanX: (x1 - x0 + 1) / c.width, spanY: (y1 - y0 + 1) / c.height };
  }, png.toString('base64'));
}

function overlaps(a, b) {
  return a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3];
}

const demo = await startServer([]);
console.log(`  demo server at ${demo.url}`);
try {
  for (const vp of kViewports) {
    const tag = `${vp.width}x${vp.height}`;
    console.log(`  demo, ${tag}`);
    const page = await open(demo, vp);
    const g = await geometry(page);
    // Direction that fits: the demo's chain of stem, four layers and head
    // is long and thin, so left to right; the shown drawing fits at least
    // as large as the other direction would.
    eq(g.dir, 'lr', `${tag}: the demo opens left to right`);
    check(g.fitShown >= g.fitSwapped, `${tag}: the chosen direction fits better (${g.fitShown.toFixed(3)} >= ${g.fitSwapped.toFixed(3)})`);
    check(!/direction=/.test(g.hash), `${tag}: an automatic direction is not written to the URL (${g.hash})`);
    // Top-level groups folded: no frame, the four layers as folded boxes.
    const folded = await page.evaluate(() => {
      const l = window.__miDebug.view('graph').pane(0).scene.layout, out = [];
      for (let i = 0; i < l.itemCount; ++i) if (l.itemKind[i] === 3) out.push(l.str(l.itemTitle[i]));
      return out.sort();
    });
    eq(g.frames, 0, `${tag}: nothing unfolded on the first screen`);
    eq(folded.join(','), 'layer1,layer2,layer3,layer4', `${tag}: the four layers are folded`);
    // Legible labels: every layer's name, node count and time; op types of the stem and head.
    const t = await textRuns(page);
    const lines = t.lines.filter((x) => x.x >= 0 && x.x <= g.viewW && x.y >= 0 && x.y <= g.viewH);
    for (const name of ['layer1', 'layer2', 'layer3', 'layer4', 'Conv', 'MaxPool', 'Gemm']) {
      const line = lines.find((x) => x.text === name);
      check(line && line.px >= 9, `${tag}: "${name}" drawn legibly (${line ? line.px.toFixed(1) + ' px' : 'absent'})`);
    }
    const summaries = lines.filter((x) => /^\d+ nodes · /.test(x.text));
    check(summaries.length >= 4 && summaries.every((x) => x.px >= 9), `${tag}: the layers say their node count and time (${summaries.map((x) => `${x.text} @${x.px.toFixed(1)}px`).join(' | ')})`);
    const mixes = lines.filter((x) => /(Conv|Relu|Add) ×\d/.test(x.text) || /^same as layer/.test(x.text));
    check(mixes.length >= 1, `${tag}: op mix shown (${mixes.map((x) => x.text).join(' | ')})`);
    const cov = await coverage(page);
    check(cov.spanX >= 0.6, `${tag}: the drawing spans ${Math.round(cov.spanX * 100)}% of the pane's width (not a sliver)`);
    await page.screenshot({ path: join(art, `overview_demo_${tag}.png`) });

    // Direction toggle → URL → reload keeps it.
    await page.click('#direction');
    await poll(page, () => window.__miDebug.view('graph').pane(0).scene?.layout.direction === 'tb' && window.__miDebug.view('graph').pane(0).current, null, 30000, 'top to bottom');
    const tb = await geometry(page);
    check(/direction=tb/.test(tb.hash), `${tag}: the toggle writes direction=tb (${tb.hash})`);
    eq(await page.textContent('#direction'), '↓ TB', `${tag}: the toggle says what is drawn`);
    await page.reload();
    await settle(page);
    eq((await geometry(page)).dir, 'tb', `${tag}: a reload keeps top to bottom`);
    await page.click('#direction');
    await poll(page, () => window.__miDebug.view('graph').pane(0).scene?.layout.direction === 'lr' && window.__miDebug.view('graph').pane(0).current, null, 30000, 'left to right');
    check(/direction=lr/.test((await geometry(page)).hash), `${tag}: and back: direction=lr`);
    await page.close();

    // Colour by time at every zoom: folded layers carry their sum; on the
    // compiled level, everything unfolded and zoomed far out, the layers'
    // silhouettes carry their heat.
    const heat = await open(demo, vp, '#run=0&level=compiled&grouping=scopes&color=time');
    const foldedHeat = await heat.evaluate(() => {
      const s = window.__miDebug.view('graph').pane(0).scene, l = s.layout, out = [];
      for (let i = 0; i < l.itemCount; ++i) if (l.itemKind[i] === 3) out.push({ t: s.itemTime[i], c: Array.from(s.itemColor.slice(3 * i, 3 * i + 3)) });
      return out;
    });
    check(foldedHeat.length === 4 && foldedHeat.every((x) => x.t > 0), `${tag}: the folded layers carry their time (${foldedHeat.map((x) => x.t.toFixed(0)).join(', ')} µs)`);
    await heat.evaluate(async () => {
      const p = window.__miDebug.view('graph').pane(0), l = p.scene.layout, all = [];
      for (let g = 1; g < l.groupCount; ++g) all.push(g);
      for (const g of all) await p.expandGroup(g);
      p.fit();
      const s = p.scene.layout;
      // Far out: the frames become silhouettes.
      p.cam.centreOn(s.width / 2, s.height / 2, Math.min(0.035, p.cam.scale));
    });
    await frames(heat);
    const sil = await heat.evaluate(() => {
      const p = window.__miDebug.view('graph').pane(0), s = p.scene, l = s.layout;
      const st = s.lodStats(p.cam.scale), out = [];
      // Each top-level frame's silhouette colour and a screen point inside one of its bands.
      for (let k = 0; k < l.frameCount; ++k) {
        const g = l.frames[k];
        if (l.groupParent[g] !== 0) continue;
        const b = l.groupBounds, prof = l.frameProfiles;
        const lr = l.direction === 'lr';
        for (let j = 0; j < 16; ++j) {
          const lo = prof[32 * k + 2 * j], hi = prof[32 * k + 2 * j + 1];
          if (!(hi - lo > 4)) continue;
          const along0 = lr ? b[4 * g] : b[4 * g + 1], len = lr ? b[4 * g + 2] : b[4 * g + 3];
          const a = along0 + len * (j + 0.5) / 16, c = (lo + hi) / 2;
          out.push({ label: l.str(l.groupLabel[g]), x: p.cam.toScreenX(lr ? a : c), y: p.cam.toScreenY(lr ? c : a) });
          break;
        }
      }
      const r = p.canvas.getBoundingClientRect();
      return { st, pts: out, left: r.left, top: r.top };
    });
    check(sil.st.silhouettes >= 4, `${tag}: zoomed far out the frames are silhouettes (${sil.st.silhouettes})`);
    const png = await heat.screenshot({ path: join(art, `overview_heat_silhouettes_${tag}.png`) });
    const px = await pixelsAt(heat, png, sil.pts.map((q) => [sil.left + q.x, sil.top + q.y]));
    const grey = [0x9a, 0xa6, 0xbf];
    const coloured = px.filter((c) => c[0] - c[2] > 30);  // the heat ramp is warm: red > blue
    check(sil.pts.length >= 4 && coloured.length === sil.pts.length,
      `${tag}: every layer's silhouette shows heat, not grey (${px.map((c) => `rgb(${c})`).join(' ')})`);
    check(px.every((c) => colorDistance(c, grey) > 20), `${tag}: no flat grey silhouettes`);
    await heat.close();

    // Compiled level, layer1 unfolded, read at 1:1.
    const comp = await open(demo, vp, '#run=0&level=compiled&grouping=scopes&direction=tb');
    const geo = await comp.evaluate(async () => {
      const p = window.__miDebug.view('graph').pane(0);
      let l = p.scene.layout, layer1 = -1;
      for (let g = 1; g < l.groupCount; ++g) if (l.str(l.groupLabel[g]) === 'layer1') layer1 = g;
      await p.expandGroup(layer1);
      l = p.scene.layout;
      for (let g = 1; g < l.groupCount; ++g) if (l.groupParent[g] === layer1) await p.expandGroup(g);
      l = p.scene.layout;
      const b = l.groupBounds, ib = l.itemBox;
      p.cam.centreOn(b[4 * layer1] + b[4 * layer1 + 2] / 2, b[4 * layer1 + 1] + b[4 * layer1 + 3] / 2, 1);
      // Per item: the frames whose area it overlaps must contain it whole.
      const out = { outside: [], reorderInLayer1: 0, reorders: 0, subtitles: [] };
      for (let i = 0; i < l.itemCount; ++i) {
        const x = ib[4 * i], y = ib[4 * i + 1], w = ib[4 * i + 2], h = ib[4 * i + 3];
        for (let k = 0; k < l.frameCount; ++k) {
          const g = l.frames[k], fx = b[4 * g], fy = b[4 * g + 1], fw = b[4 * g + 2], fh = b[4 * g + 3];
          const ov = x < fx + fw && fx < x + w && y < fy + fh && fy < y + h;
          const inside = x >= fx - 0.5 && y >= fy - 0.5 && x + w <= fx + fw + 0.5 && y + h <= fy + fh + 0.5;
          if (ov && !inside) out.outside.push(`${l.str(l.itemTitle[i])} / ${l.str(l.groupLabel[g])}`);
        }
        if (l.itemKind[i] === 0 && l.str(l.itemTitle[i]) === 'ReorderOutput') {
          out.reorders++;
          if (x >= b[4 * layer1] && x + w <= b[4 * layer1] + b[4 * layer1 + 2] && y >= b[4 * layer1 + 1] && y + h <= b[4 * layer1 + 1] + b[4 * layer1 + 3]) out.reorderInLayer1++;
        }
        const sub = l.str(l.itemSubtitle[i]);
        if (sub.includes('…')) out.subtitles.push(sub);
      }
      const boxes = [];
      for (let i = 0; i < l.itemCount; ++i) boxes.push([p.cam.toScreenX(ib[4 * i]), p.cam.toScreenY(ib[4 * i + 1]), ib[4 * i + 2] * p.cam.scale, ib[4 * i + 3] * p.cam.scale]);
      out.boxes = boxes;
      return out;
    });
    await frames(comp);
    eq(geo.outside.length, 0, `${tag}: compiled, layer1 open: every item inside the frames it touches (${geo.outside.join('; ')})`);
    // Four ReorderOutputs sit between two ops of layer1.0 / layer1.1 (the fixture's graph, see hierarchical_layout_test).
    eq(geo.reorderInLayer1, 4, `${tag}: the inserted ReorderOutputs of layer1's blocks are drawn inside layer1`);
    check(geo.subtitles.length > 0 && geo.subtitles.every((s) => !s.startsWith('…') && !s.endsWith('…')),
      `${tag}: long names cut in the middle (${geo.subtitles.slice(0, 3).join(', ')})`);
    const tr = await textRuns(comp);
    const labels = tr.edgeLabels;
    check(labels.length >= 3, `${tag}: edge labels shown (${labels.length})`);
    let clash = 0;
    for (let a = 0; a < labels.length; ++a) {
      for (let b = a + 1; b < labels.length; ++b) if (overlaps(labels[a], labels[b])) clash++;
      for (const box of geo.boxes) if (overlaps(labels[a], box)) clash++;
    }
    eq(clash, 0, `${tag}: edge labels overlap no node and no other label`);
    await comp.screenshot({ path: join(art, `overview_compiled_layer1_${tag}.png`) });
    for (const p of [page, heat, comp]) check(!p.errors?.length, `${tag}: no page errors (${p.errors?.join('; ')})`);
    await comp.close();
  }
} finally {
  await demo.stop();
}

const ge = await startServer([geDump]);
console.log(`  GE server at ${ge.url}`);
try {
  for (const vp of kViewports) {
    const tag = `${vp.width}x${vp.height}`;
    const page = await open(ge, vp);
    const g = await geometry(page);
    console.log(`  GE, ${tag}: ${g.items} items, ${g.frames} frames, ${g.dir}, ${g.w.toFixed(0)}x${g.h.toFixed(0)}, scale ${g.scale.toFixed(3)}`);
    check(g.fitShown >= g.fitSwapped, `${tag}: GE: the chosen direction fits better (${g.fitShown.toFixed(3)} >= ${g.fitSwapped.toFixed(3)})`);
    const t = await textRuns(page);
    const legible = t.lines.filter((x) => x.px >= 9 && x.x >= 0 && x.x <= g.viewW && x.y >= 0 && x.y <= g.viewH);
    check(legible.length >= 8, `${tag}: GE: labels legible on the first screen (${legible.length}: ${legible.slice(0, 6).map((x) => x.text).join(', ')})`);
    const cov = await coverage(page);
    check(Math.max(cov.spanX, cov.spanY) >= 0.6 && Math.min(cov.spanX, cov.spanY) >= 0.15,
      `${tag}: GE: the drawing fills the pane (${Math.round(cov.spanX * 100)}% × ${Math.round(cov.spanY * 100)}%)`);
    await page.screenshot({ path: join(art, `overview_ge_${tag}.png`) });
    check(!page.errors.length, `${tag}: GE: no page errors (${page.errors.join('; ')})`);
    await page.close();
  }
} finally {
  await ge.stop();
  await browser.close();
}
done('e2e_overview_test');
