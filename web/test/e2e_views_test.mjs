// End-to-end test of the graph panes' tools, against the real server
// (`model-inspector open`, demo run, embedded UI) in Chromium: heat map
// (colour by time / share: colours differ from the op colours, the legend
// shows the range), lineage highlight, search reveal of a node inside a
// collapsed group (reveal= on the layout request, expand state read back from
// group_flags), side-by-side compare (select a compiled Conv → the framework
// pane highlights its fused_from), export (PNG, SVG parsed with DOMParser,
// Model Explorer JSON), the operator doc in the details panel. Parts that
// need a newer server (node times, reveal, exports, docs) say "skipped" when
// the server does not have them yet. The UI is read through its debug surface
// (window.__miDebug) and waited on by its state. Screenshots: ui_heatmap,
// ui_lineage, ui_reveal, ui_compare, ui_export_*.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, check, clickNode, colorDistance, done, eq, fail, frames, launchBrowser, pixelsAt, poll } from './lib.mjs';
import { startServer } from './server.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const extra = process.env.MI_E2E_ARGS ? process.env.MI_E2E_ARGS.split(' ').filter(Boolean) : [];
const server = await startServer(extra);
// These checks read the graph unfolded to the item budget, top to bottom: the
// first screen before the overview (page option ?fold=budget; the overview
// itself is e2e_overview_test's).
server.url += '?fold=budget';
console.log(`  server at ${server.url}`);
const browser = await launchBrowser();
const shot = (page, name) => page.screenshot({ path: join(art, `${name}.png`) });
const skipped = (what) => console.log(`  skipped: ${what}`);


async function open(viewport = { width: 1400, height: 900 }, hash = '') {
  const page = await browser.newPage({ viewport, acceptDownloads: true });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) page.errors.push(m.text()); });
  await page.goto(server.url + hash);
  await poll(page, () => Number(document.body.dataset.rendered || 0) > 0 && document.body.dataset.ready, null, 60000)
    .catch(() => fail('no first render within 60 s'));
  return page;
}

try {
  // 1. Heat map: colour by time, then share.
  const page = await open();
  const has = await page.evaluate(() => {
    const l = window.__miDebug.view('graph').pane(0).scene.layout;
    return { times: !!l.nodeTimeUs, status: !!l.nodeStatus, profiles: !!l.frameProfiles };
  });
  console.log(`  layout sections: node times ${has.times}, node status ${has.status}, frame profiles ${has.profiles}`);
  if (!has.times) {
    skipped('heat map colours (the server sends no node_time_us, section 32)');
  } else {
    await page.selectOption('#color-by', 'time');
    await poll(page, () => window.__miDebug.view('graph').pane(0).scene.options.colorMode === 'time' && document.querySelector('.heat-max'));
    const heat = await page.evaluate(() => {
      const s = window.__miDebug.view('graph').pane(0).scene, l = s.layout;
      let differ = 0, withData = 0, grey = 0;
      // The op colour of each node item, computed the same way as colour-by-op does.
      for (let i = 0; i < l.itemCount; ++i) {
        if (l.itemKind[i] !== 0) continue;
        if (s.itemTime[i] >= 0) withData++; else grey++;
      }
      return { withData, grey, min: document.querySelector('.heat-min')?.textContent, max: document.querySelector('.heat-max')?.textContent, heat: s.heat };
    });
    check(heat.withData > 0, `heat map: nodes with time data (${heat.withData}, ${heat.grey} without)`);
    check(!!heat.min && !!heat.max && heat.min !== heat.max, `heat legend shows the range (${heat.min} … ${heat.max})`);
    check(await page.$('.heat-bar') !== null, 'heat legend has the gradient bar');
    // Colours differ from the op colours: compare the scene's colours before / after per item.
    const colours = () => page.evaluate(() => Array.from(window.__miDebug.view('graph').pane(0).scene.itemColor));
    const heatCol = await colours();
    await page.selectOption('#color-by', 'op');
    await poll(page, () => window.__miDebug.view('graph').pane(0).scene.options.colorMode === 'op');
    const opCol = await colours();
    await page.selectOption('#color-by', 'time');
    await poll(page, () => window.__miDebug.view('graph').pane(0).scene.options.colorMode === 'time');
    const cmp = await page.evaluate(({ heatCol, opCol }) => {
      const l = window.__miDebug.view('graph').pane(0).scene.layout;
      let n = 0, diff = 0;
      for (let i = 0; i < l.itemCount; ++i) {
        if (l.itemKind[i] !== 0) continue;
        n++;
        const d = Math.max(...[0, 1, 2].map((c) => Math.abs(heatCol[3 * i + c] - opCol[3 * i + c])));
        if (d > 0.1) diff++;
      }
      return { n, diff };
    }, { heatCol, opCol });
    check(cmp.diff >= cmp.n * 0.5, `heat colours differ from op colours (${cmp.diff}/${cmp.n} nodes)`);
    // Zoom to the hottest node and check its pixel colour is the heat colour.
    const probe = await page.evaluate(() => {
      const g = window.__miDebug.view('graph'), p = g.pane(0), s = p.scene, l = s.layout, b = l.itemBox;
      let best = -1;
      for (let i = 0; i < l.itemCount; ++i) if (l.itemKind[i] === 0 && (best < 0 || s.itemTime[i] > s.itemTime[best])) best = i;
      p.cam.centreOn(b[4 * best] + b[4 * best + 2] / 2, b[4 * best + 1] + b[4 * best + 3] / 2, 0.9);
      const r = p.canvas.getBoundingClientRect();
      return { x: r.left + p.cam.toScreenX(b[4 * best] + 6), y: r.top + g.itemScreenCenter(best).y, rgb: Array.from(s.itemColor.slice(3 * best, 3 * best + 3), (v) => Math.round(v * 255)) };
    });
    await frames(page);
    const png = await shot(page, 'ui_heatmap_hottest');
    const [px] = await pixelsAt(page, png, [[probe.x, probe.y]]);
    check(colorDistance(px, probe.rgb) <= 24, `hottest node drawn in its heat colour (${px} vs ${probe.rgb})`);
    // A wider view for the docs (docs/images/ui_heatmap.png).
    await page.evaluate(() => { const p = window.__miDebug.view('graph').pane(0), l = p.scene.layout; p.cam.centreOn(l.width / 2, l.height * 0.3, 0.55); });
    await frames(page);
    await shot(page, 'ui_heatmap');
    await page.selectOption('#color-by', 'share');
    await poll(page, () => window.__miDebug.view('graph').pane(0).scene.options.colorMode === 'share' && /%/.test(document.querySelector('.heat-max')?.textContent ?? ''));
    const share = await page.evaluate(() => ({ max: document.querySelector('.heat-max')?.textContent }));
    check(/%/.test(share.max ?? ''), `share legend in percent (${share.max})`);
    await page.selectOption('#color-by', 'op');
  }
  if (has.status) {
    const st = await page.$$eval('#status-legend .status-row', (r) => r.map((x) => x.textContent));
    console.log(`  status legend: ${st.join(' | ') || '(no fused / inserted / not executed nodes here)'}`);
  }

  // 2. Level of detail: zoomed far out, frames are drawn as silhouettes.
  if (!has.profiles) {
    skipped('silhouettes (no frame_profiles section)');
  } else {
    const lod = await page.evaluate(() => {
      const p = window.__miDebug.view('graph').pane(0), l = p.scene.layout;
      p.cam.centreOn(l.width / 2, l.height / 2, 0.03);
      return p.scene.lodStats(p.cam.scale);
    });
    check(lod.silhouettes > 0 && lod.hiddenItems > 0, `zoomed out: silhouettes drawn (${JSON.stringify(lod)})`);
    await frames(page);
    await shot(page, 'ui_lod_far');
  }

  // 3. Lineage: select a node in the middle, toggle the highlight.
  const mid = await page.evaluate(() => {
    const l = window.__miDebug.view('graph').pane(0).scene.layout;
    const nodes = [];
    for (let i = 0; i < l.itemCount; ++i) if (l.itemKind[i] === 0) nodes.push(i);
    return l.itemModelId[nodes[Math.floor(nodes.length / 2)]];
  });
  await clickNode(page, mid);
  await page.check('#lineage');
  const lineageCount = () => page.evaluate(() => window.__miDebug.view('graph').pane(0).highlights.lineage?.length ?? 0);
  const lin = await poll(page, () => window.__miDebug.view('graph').pane(0).highlights.lineage?.length);
  check(lin > 0, `lineage highlights ancestors / descendants (${lin} items)`);
  await page.evaluate(() => { const cam = window.__miDebug.view('graph').pane(0).cam; cam.centreOn(cam.toWorldX(cam.viewW / 2), cam.toWorldY(cam.viewH / 2), 0.5); });
  await frames(page);
  await shot(page, 'ui_lineage');
  await page.uncheck('#lineage');
  eq(await lineageCount(), 0, 'lineage off');

  // 4. Export: PNG and SVG of the view, through the menu (downloads), and Model Explorer JSON.
  await page.click('#export summary');
  const [pngDl] = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
  const pngPath = join(art, 'ui_export_view.png');
  await pngDl.saveAs(pngPath);
  const { readFileSync, statSync } = await import('node:fs');
  const pngBytes = readFileSync(pngPath);
  check(pngBytes.length > 2000 && pngBytes.subarray(1, 4).toString() === 'PNG', `PNG export: ${pngBytes.length} bytes, PNG magic`);
  // The menu closed after the choice: open it again.
  check(!(await page.$eval('#export', (d) => d.open)), 'the export menu closes after a choice');
  await page.click('#export summary');
  const [svgDl] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  const svgPath = join(art, 'ui_export_view.svg');
  await svgDl.saveAs(svgPath);
  const svgText = readFileSync(svgPath, 'utf8');
  const svgCheck = await page.evaluate((t) => {
    const d = new DOMParser().parseFromString(t, 'image/svg+xml');
    return { error: d.querySelector('parsererror')?.textContent ?? null, root: d.documentElement.nodeName, paths: d.querySelectorAll('path').length, rects: d.querySelectorAll('rect').length, texts: d.querySelectorAll('text').length };
  }, svgText);
  check(svgCheck.error === null && svgCheck.root === 'svg', `SVG export parses (${svgCheck.error ?? 'ok'})`);
  check(svgCheck.paths > 0 && svgCheck.rects > 0, `SVG export has <path> edges and <rect> nodes (${JSON.stringify(svgCheck)}, ${statSync(svgPath).size} bytes)`);
  // The SVG rendered by the browser looks like the view: screenshot it.
  const svgPage = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  await svgPage.setContent(`<body style="margin:0">${svgText}</body>`);
  await svgPage.screenshot({ path: join(art, 'ui_export_svg_rendered.png') });
  await svgPage.close();
  const me = await page.evaluate(async () => {
    const st = window.__miDebug.state().panes[0];
    const out = {};
    for (const what of ['graph', 'node-data']) {
      const r = await fetch(`/api/runs/${st.run}/levels/${st.level}/export/model-explorer-${what}`);
      const t = await r.text();
      if (!r.ok) { out[what] = { error: t, status: r.status }; continue; }
      out[what] = { bytes: t.length, json: (() => { try { JSON.parse(t); return true; } catch { return false; } })() };
    }
    return out;
  });
  if (me.graph.status === 404) {
    skipped(`Model Explorer export (server: ${me.graph.error})`);
  } else {
    check(me.graph.json && me.graph.bytes > 100, `Model Explorer graph JSON (${JSON.stringify(me.graph)})`);
    check(me['node-data'].json && me['node-data'].bytes > 2, `Model Explorer node data JSON (${JSON.stringify(me['node-data'])})`);
    await page.click('#export summary');
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-me-graph')]);
    check(/graph\.json$/.test(dl.suggestedFilename()), `Model Explorer graph download (${dl.suggestedFilename()})`);
  }
  eq(page.errors.join('; '), '', 'no page errors (heat map, lineage, export)');
  await page.close();

  // 5. Search reveal: a node inside a collapsed group, on a fresh page.
  const p2 = await open();
  // Fold a node's two innermost enclosing groups (inner first, then outer), so it sits two levels deep.
  const hidden = await p2.evaluate(async () => {
    const p = window.__miDebug.view('graph').pane(0);
    let l = p.scene.layout;
    const b = l.itemBox, gb = l.groupBounds;
    for (let i = 0; i < l.itemCount; ++i) {
      if (l.itemKind[i] !== 0) continue;
      const around = [];
      for (let k = 0; k < l.frameCount; ++k) {
        const g = l.frames[k];
        if (b[4 * i] >= gb[4 * g] && b[4 * i + 1] >= gb[4 * g + 1] && b[4 * i] + b[4 * i + 2] <= gb[4 * g] + gb[4 * g + 2] && b[4 * i + 1] + b[4 * i + 3] <= gb[4 * g + 1] + gb[4 * g + 3]) around.push(g);
      }
      if (around.length < 2) continue;
      around.sort((x, y) => l.groupDepth[y] - l.groupDepth[x]);
      const id = l.itemModelId[i];
      await p.collapseGroup(around[0]);
      await p.collapseGroup(around[1]);
      l = p.scene.layout;
      const d = await (await fetch(`/api/runs/${p.view.run}/levels/${p.view.level}/nodes/${id}`)).json();
      return { id, name: d.name, groups: [around[0], around[1]], folded: !p.nodeVisible(id) };
    }
    return null;
  });
  if (!check(hidden !== null && hidden.folded, `a node inside two collapsed groups (${JSON.stringify(hidden)})`)) throw new Error('no hidden node');
  await p2.selectOption('#search-mode', 'text');
  await p2.fill('#search', hidden.name);
  await p2.press('#search', 'Enter');
  await p2.waitForSelector(`#results .result[data-node="${hidden.id}"]`, { timeout: 15000 });
  const before = await p2.evaluate(() => ({ layouts: window.__miDebug.stats()['graph.layouts'], expanded: window.__miDebug.view('graph').expandedGroups() }));
  await p2.click(`#results .result[data-node="${hidden.id}"]`);
  await poll(p2, (id) => window.__miDebug.state().panes[0].node === id && window.__miDebug.view('graph').pane(0).nodeVisible(id)
    && location.hash.includes(`node=${id}`) && location.hash.includes('expand='), hidden.id);
  await frames(p2);
  const rev = await p2.evaluate(() => {
    const D = window.__miDebug, g = D.view('graph'), p = g.pane(0), st = D.state().panes[0];
    const c = g.itemScreenCenter(p.itemOfNode(st.node));
    return { layouts: D.stats()['graph.layouts'], expand: st.expand, expanded: g.expandedGroups(), c, w: p.cam.viewW, h: p.cam.viewH, hash: location.hash };
  });
  check(rev.c && Math.abs(rev.c.x - rev.w / 2) < 4 && Math.abs(rev.c.y - rev.h / 2) < 4, `revealed node centred (${JSON.stringify(rev.c)})`);
  const newly = rev.expanded.filter((g) => !before.expanded.includes(g));
  check(newly.length > 0 && newly.every((g) => rev.expand.includes(g)), `expand state read back from group_flags (new ${newly}, state ${rev.expand})`);
  check(hidden.groups.every((g) => rev.expanded.includes(g)), `both folded groups expanded (${hidden.groups})`);
  if (rev.layouts - before.layouts === 1) console.log('  reveal: one layout request (server-side reveal=)');
  else console.log(`  reveal: ${rev.layouts - before.layouts} layout requests (server without reveal=: client fallback)`);
  check(rev.hash.includes('expand='), `hash carries the revealed groups (${rev.hash})`);
  await shot(p2, 'ui_reveal');
  // The state alone (no reveal=) reproduces the view: reload the hash in a new page.
  const p3 = await browser.newPage({ viewport: { width: 900, height: 600 } });
  await p3.goto(server.url + rev.hash.replace(/&node=\d+/, ''));
  await poll(p3, () => Number(document.body.dataset.rendered || 0) > 0);
  check(await p3.evaluate((id) => window.__miDebug.view('graph').pane(0).nodeVisible(id), hidden.id), 'the hash without reveal= shows the node (state is the client\'s)');
  await p3.close();
  // Details: the operator documentation (when the server sends it).
  const doc = await poll(p2, (id) => { const c = window.__miDebug.state().details.content; return c.kind === 'node' && c.node.id === id && { doc: c.node.doc }; }, hidden.id)
    .then((x) => x.doc);
  if (doc === undefined) skipped('operator doc (server without "doc")');
  else if (doc === null) console.log('  operator doc: null for this op');
  else {
    await p2.waitForSelector('#details details.doc');
    await p2.click('#details details.doc summary');
    const t = await p2.textContent('#details details.doc');
    check(t.includes(doc.summary.slice(0, 20)), `details show the operator doc (${t.slice(0, 80)}…)`);
  }
  await p2.close();

  // 6. Compare: framework | compiled; select a compiled Conv with fused_from → the framework pane highlights them.
  const p4 = await open({ width: 1600, height: 900 });
  await p4.click('#compare');
  await poll(p4, () => window.__miDebug.view('graph').pane(1)?.current);
  const panes = await p4.evaluate(() => window.__miDebug.state().panes.map((p) => p.level));
  eq(panes.join('|'), 'framework|compiled', 'compare: framework | compiled by default');
  const target = await p4.evaluate(async () => {
    const p = window.__miDebug.view('graph').pane(1), l = p.scene.layout;
    const ids = [];
    for (let n = 0; n < l.nodeCount; ++n) ids.push(l.nodeModelId[n]);
    let fallback = null;
    for (const id of ids.slice(0, 200)) {
      const r = await fetch(`/api/runs/${p.view.run}/levels/compiled/nodes/${id}`);
      const d = r.ok ? await r.json() : null;
      if (!d || !d.fused_from || d.fused_from.length < 2) continue;
      if (/Conv/.test(d.op_type)) return { id: d.id, op: d.op_type, from: d.fused_from.map((r) => r.id) };
      fallback ??= { id: d.id, op: d.op_type, from: d.fused_from.map((r) => r.id) };
    }
    return fallback;
  });
  if (check(target !== null, 'a compiled node with fused_from (Conv preferred)')) {
    // Make it visible in the right pane and click it there: the left pane links (reveals) its fused_from.
    await clickNode(p4, target.id, 1);
    await poll(p4, (n) => {
      const m = window.__miDebug.view('graph').pane(0);
      return m.linkedIds.length === n && m.linkedIds.every((id) => m.nodeVisible(id));
    }, target.from.length);
    await frames(p4);
    const linked = await p4.evaluate(() => {
      const m = window.__miDebug.view('graph').pane(0);
      return { ids: m.linkedIds, items: Array.from(m.highlights.linked ?? []), visible: m.linkedIds.filter((id) => m.nodeVisible(id)).length, sel: window.__miDebug.state().panes[1].node, op: document.querySelector('#details .op-type')?.textContent };
    });
    eq(linked.sel, target.id, `compare: the compiled ${target.op} is selected in the right pane`);
    eq([...linked.ids].sort().join(','), [...target.from].sort().join(','), 'compare: the framework pane links its fused_from');
    check(linked.items.length > 0 && linked.visible === target.from.length, `compare: fused_from nodes revealed and highlighted (${linked.visible}/${target.from.length})`);
    // A linked node's outline is drawn in the link colour (pixel just outside its box).
    const probe = await p4.evaluate(() => {
      const m = window.__miDebug.view('graph').pane(0), l = m.scene.layout, b = l.itemBox;
      const i = m.highlights.linked[0];
      const r = m.canvas.getBoundingClientRect();
      return { x: r.left + m.cam.toScreenX(b[4 * i] + b[4 * i + 2] / 2), y: r.top + m.cam.toScreenY(b[4 * i + 1]) - 0.5 };
    });
    const png = await shot(p4, 'ui_compare');
    const [px] = await pixelsAt(p4, png, [[probe.x, probe.y]]);
    check(colorDistance(px, [0xd0, 0x27, 0x9a]) <= 40, `compare: linked outline drawn (${px} at ${probe.x},${probe.y})`);
    // And back: select a framework node → the compiled pane highlights its fused_into.
    await clickNode(p4, target.from[0], 0);
    const back = await poll(p4, () => {
      const c = window.__miDebug.state().details.content, linked = window.__miDebug.view('graph').pane(1).linkedIds;
      return c.kind === 'node' && c.node.fused_into && linked.length > 0 && { linked, target: c.node.fused_into.id };
    });
    eq(back.linked.join(','), String(back.target), 'compare: a framework node links its fused_into in the compiled pane');
  }
  eq(p4.errors.join('; '), '', 'no page errors (compare)');
  await p4.close();
} finally {
  await browser.close();
  await server.stop();
}
done('e2e_views_test');
