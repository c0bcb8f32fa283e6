// End-to-end test of the first minute's remaining points, against the real
// server in Chromium at 1024x700 and 1920x1080:
//   - colour by status: on the demo's compiled graph every node is coloured
//     by what the link data says, the legend's counts add up to the node
//     items and equal the layout's own node_status section; folded groups
//     (the overview) show their aggregate (not the no-data grey); colour by
//     compare metric is disabled with a reason on a single run, and on two
//     runs of the same framework model (the resnet18 fixture's ort_all and
//     ort_extended) colours nodes by the time change with the diverging
//     scale; the change of an item equals log2(time / compared time) from
//     the two runs' own node times (read from each run's layout);
//   - SVG export: the edge labels' boxes (measured by the browser from the
//     exported file) overlap no other text and no node box;
//   - the timeline's bar takes one row at 1920 and at most two at 1024
//     (rows counted from the DOM geometry of its children), so several
//     track rows show at 1024x700;
//   - folded groups' text (name, "N nodes · time", op mix) fits their boxes
//     at the first screen and at 1:1 (measured with a canvas in the
//     renderers' font against the width each line may take), on the demo's
//     two levels and a GE run;
//   - the minimap: after zooming to a node in the minimap's corner, the
//     node's screen box does not intersect the minimap (it moved or folded).
// Screenshots (checked by pixels or the DOM): first_minute_* in the
// artifacts directory.

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  artifactsDir, check, colorDistance, done, eq, fail, frames, launchBrowser, pixelsAt, poll, repoDir,
} from './lib.mjs';
import { startServer } from './server.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const kViewports = [{ width: 1024, height: 700 }, { width: 1920, height: 1080 }];
const tag = (v) => `${v.width}x${v.height}`;
const demo = await startServer();
const two = await startServer(['--run', join(repoDir, 'test/fixtures/resnet18/ort_all'), '--run', join(repoDir, 'test/fixtures/resnet18/ort_extended')]);
// A trace alone, with host threads and GPU streams (tracks to show).
const geRun = await startServer([join(repoDir, 'test/fixtures/samples/ascend/ge_graph_dumps')]);
const trace = await startServer([join(repoDir, 'test/fixtures/samples/traces/kineto/tracelens/h100__gaunernst_bert-small-uncased__1016001.json.gz')]);
const browser = await launchBrowser();

async function open(server, viewport, hash = '') {
  const page = await browser.newPage({ viewport, acceptDownloads: true });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(server.url + hash);
  await poll(page, () => Number(document.body.dataset.rendered || 0) > 0 && document.body.dataset.ready, null, 60000)
    .catch(() => fail(`no first render within 60 s (${server.url}${hash})`));
  await poll(page, () => window.__miDebug.view('graph').pane(0).settled(), null, 60000, 'layout settled');
  return page;
}

/** Per item of pane 0: kind, box, fill colour; and the layout's node status / times. */
const sceneInfo = (page) => page.evaluate(() => {
  const p = window.__miDebug.view('graph').pane(0), s = p.scene, l = s.layout;
  const items = [];
  for (let i = 0; i < l.itemCount; ++i) items.push({ kind: l.itemKind[i], ref: l.itemRef[i], color: Array.from(s.itemColor.slice(3 * i, 3 * i + 3)) });
  return {
    items, heat: s.heat, nodeCount: l.nodeCount, status: l.nodeStatus ? Array.from(l.nodeStatus) : null,
    times: l.nodeTimeUs ? Array.from(l.nodeTimeUs) : null, tasks: l.nodeTaskCount ? Array.from(l.nodeTaskCount) : null, ids: Array.from(l.nodeModelId), nodeItem: Array.from(l.nodeItem),
  };
});

async function statusChecks(v) {
  const t = tag(v);
  // Overview (folded groups), then everything expanded.
  for (const [name, hash] of [['overview', '#level=compiled&color=status'], ['expanded', `#level=compiled&color=status&expand=${Array.from({ length: 30 }, (_, i) => i + 1).join(',')}`]]) {
    const page = await open(demo, v, hash);
    const s = await sceneInfo(page);
    check(s.heat.status, `${t} ${name}: the scene has status counts`);
    // Expected from the layout's node_status section (NodeStatus: 1 executed, 2 fused, 3 not executed, 4 inserted).
    const nodeItems = s.items.filter((x) => x.kind === 0);
    const hist = [0, 0, 0, 0, 0];
    for (const it of nodeItems) hist[s.status[it.ref]]++;
    const c = s.heat.status;
    eq(c.ran + c.fused + c.inserted + c.notRun + c.unlinked, nodeItems.length, `${t} ${name}: status counts cover every node item`);
    eq(c.unlinked, hist[0], `${t} ${name}: unlinked = node items without status`);
    eq(c.inserted, hist[4], `${t} ${name}: inserted = node items with status inserted`);
    eq(c.fused, hist[2], `${t} ${name}: fused = node items with status fused`);
    check(c.ran > 0, `${t} ${name}: the demo's compiled nodes ran (${c.ran})`);
    // Folded groups (ItemKind 3): their aggregate, grey (#c9c9c9) → green
    // (#4caf6a) by the share of their nodes that ran (executed, fused, or
    // inserted with tasks) among those with link data; #f4f4f4 without any.
    const groups = s.items.map((x, i) => ({ ...x, i })).filter((x) => x.kind === 3);
    if (name === 'overview') {
      check(groups.length > 0, `${t}: the overview folds groups`);
      const grey = [0xc9, 0xc9, 0xc9].map((x) => x / 255), green = [0x4c, 0xaf, 0x6a].map((x) => x / 255), none = [0xf4, 0xf4, 0xf4].map((x) => x / 255);
      let greenGroups = 0;
      for (const g of groups) {
        let known = 0, ran = 0;
        for (let n = 0; n < s.nodeCount; ++n) {
          if (s.nodeItem[n] !== g.i || !s.status[n]) continue;
          known++;
          if (s.status[n] === 1 || s.status[n] === 2 || (s.status[n] === 4 && s.tasks[n] > 0)) ran++;
        }
        const want = known ? grey.map((x, k) => x + (green[k] - x) * (ran / known)) : none;
        if (known && ran === known) greenGroups++;
        check(Math.max(...g.color.map((x, k) => Math.abs(x - want[k]))) < 0.01, `${t}: folded group ${g.ref} shows its aggregate (${ran}/${known} ran): ${g.color.map((x) => x.toFixed(2))}`);
      }
      check(greenGroups > 0, `${t}: some folded groups ran whole (${greenGroups})`);
      // The legend explains the colours.
      const legend = await page.$eval('.colour-legend', (e) => e.textContent);
      check(/ran \(tasks linked\)/.test(legend) && /not executed/.test(legend) && /no link data/.test(legend), `${t}: the status legend explains the colours (${legend.slice(0, 120)})`);
      const png = await page.screenshot({ path: join(art, `first_minute_status_${t}.png`) });
      // A folded group that ran whole shows green on screen: pixels of its box (under its label) in the green.
      const box = await page.evaluate(() => {
        const p = window.__miDebug.view('graph').pane(0), l = p.scene.layout, r = p.canvas.getBoundingClientRect(), b = l.itemBox, cam = p.cam;
        for (let i = 0; i < l.itemCount; ++i) {
          if (l.itemKind[i] !== 3 || !(p.scene.itemColor[3 * i + 1] > p.scene.itemColor[3 * i] + 0.2)) continue;
          return { x: r.left + cam.toScreenX(b[4 * i]), y: r.top + cam.toScreenY(b[4 * i + 1]), w: b[4 * i + 2] * cam.scale, h: b[4 * i + 3] * cam.scale };
        }
        return null;
      });
      const pts = [];
      for (let fx = 0.1; fx < 0.95; fx += 0.1) for (let fy = 0.15; fy < 0.9; fy += 0.15) pts.push([box.x + fx * box.w, box.y + fy * box.h]);
      const px = await pixelsAt(page, png, pts);
      const greens = px.filter((c) => colorDistance(c, [0x4c, 0xaf, 0x6a]) < 40).length;
      check(greens > 0, `${t}: a folded group that ran is drawn green on screen (${greens} of ${pts.length} pixels in its box ${JSON.stringify(box)}: ${px.slice(0, 12).map((c) => c.join(".")).join(" ")})`);
    }
    // Compare metric: one run, nothing to compare: disabled with a reason.
    const opt = await page.$eval('#color-by option[value="compare"]', (o) => ({ disabled: o.disabled, title: o.title }));
    eq(opt.disabled, true, `${t} ${name}: "time vs compare run" is disabled on a single run`);
    check(/no compare run/.test(opt.title), `${t} ${name}: it says why (${opt.title})`);
    check(!page.errors.length, `${t} ${name}: no page errors (${page.errors.join('; ')})`);
    await page.close();
  }
}

async function compareChecks(v) {
  const t = tag(v);
  // Run 0 (ort_all) against run 1 (ort_extended) on the framework graph: the same model.onnx.
  const page = await open(two, v, '#run=0&level=framework&tcompare=1&color=compare');
  await poll(page, () => { const h = window.__miDebug.view('graph').pane(0).scene.heat.compare; return h && h.run === 1 && !h.reason; }, null, 30000, 'compared run times');
  const s = await sceneInfo(page);
  // The compared run's node times, from its own layout (fetched here, not through the view).
  const other = await page.evaluate(async () => {
    const p = window.__miDebug.view('graph').pane(0);
    const l = await p.host.api.layout({ run: 1, level: 'framework', grouping: 'scopes', direction: 'tb', maxItems: 100000, expand: [], collapse: [], overview: false });
    const m = {};
    for (let i = 0; i < l.nodeCount; ++i) if (l.nodeTimeUs && l.nodeTimeUs[i] >= 0) m[l.nodeModelId[i]] = l.nodeTimeUs[i];
    return m;
  }).catch((e) => fail(`compared layout: ${e.message}`));
  // Per item: log2(sum time / sum compared time) over its nodes timed in both; colour on the diverging scale.
  const sums = new Map();
  for (let n = 0; n < s.ids.length; ++n) {
    const tc = other[s.ids[n]], tt = s.times?.[n];
    if (!(tt > 0) || !(tc > 0)) continue;
    const e = sums.get(s.nodeItem[n]) ?? [0, 0];
    e[0] += tt; e[1] += tc;
    sums.set(s.nodeItem[n], e);
  }
  check(sums.size > 0, `${t}: nodes timed in both runs (${sums.size} items)`);
  const blue = [0x21, 0x66, 0xac].map((x) => x / 255), red = [0xb2, 0x18, 0x2b].map((x) => x / 255), white = [0.97, 0.97, 0.97];
  let checked = 0, faster = 0, slower = 0;
  for (const [it, [a, b]] of sums) {
    const r = Math.max(-1, Math.min(1, Math.log2(a / b)));
    const end = r < 0 ? blue : red;
    const want = white.map((w, k) => w + (end[k] - w) * Math.abs(r));
    const got = s.items[it].color;
    if (check(Math.max(...want.map((x, k) => Math.abs(x - got[k]))) < 0.01, `${t}: item ${it} coloured by log2(${a.toFixed(1)}/${b.toFixed(1)}) = ${r.toFixed(3)}`)) checked++;
    if (a > b * 1.05) slower++; else if (a * 1.05 < b) faster++;
  }
  eq(s.heat.compare.faster, faster, `${t}: legend count of faster items`);
  eq(s.heat.compare.slower, slower, `${t}: legend count of slower items`);
  const legend = await page.$eval('.colour-legend', (e) => e.textContent);
  check(/time vs run 1/.test(legend) && /faster/.test(legend), `${t}: the compare legend names the run and the scale (${legend.slice(0, 100)})`);
  await page.screenshot({ path: join(art, `first_minute_compare_${t}.png`) });
  console.log(`  ${t}: compare colours checked on ${checked} items (${faster} faster, ${slower} slower)`);
  // The compiled graphs are different files: no matching, and it says so.
  await page.selectOption('#color-by', 'op');
  const page2 = await open(two, v, '#run=0&level=compiled&tcompare=1&color=compare');
  await poll(page2, () => { const h = window.__miDebug.view('graph').pane(0).scene.heat.compare; return h && h.reason; }, null, 30000, 'compare reason');
  const reason = await page2.$eval('.compare-reason', (e) => e.textContent);
  check(/another file/.test(reason), `${t}: different compiled files are not compared (${reason})`);
  check(!page.errors.length && !page2.errors.length, `${t}: no page errors (${[...page.errors, ...page2.errors].join('; ')})`);
  await page.close(); await page2.close();
}

async function svgChecks(v) {
  const t = tag(v);
  const exp = Array.from({ length: 30 }, (_, i) => i + 1).join(',');
  for (const [level, dir] of [['compiled', 'lr'], ['framework', 'tb'], ['compiled', 'tb']]) {
    const page = await open(demo, v, `#level=${level}&direction=${dir}&expand=${exp}`);
    await page.click('#export summary');
    await page.selectOption('#export-extent', 'graph');
    await page.selectOption('#export-scale', '1');
    const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click('#export-svg')]);
    const path = join(art, `first_minute_export_${level}_${dir}_${t}.svg`);
    await dl.saveAs(path);
    // Boxes measured by the browser from the file: edge labels are the 9 px text in rgb(84,84,84).
    const r = await page.evaluate((svg) => {
      const host = document.createElement('div');
      host.innerHTML = svg;
      document.body.append(host);
      const texts = [...host.querySelectorAll('text')].map((e) => {
        const b = e.getBBox();
        return { s: e.textContent, x: b.x, y: b.y, w: b.width, h: b.height, edge: e.getAttribute('font-size') === '9' && e.getAttribute('fill') === 'rgb(84,84,84)' };
      });
      const items = [...host.querySelectorAll('g.items rect')].map((e) => { const b = e.getBBox(); return { x: b.x, y: b.y, w: b.width, h: b.height }; });
      host.remove();
      // Glyph boxes reach a pixel past the text's line box: 0.5 px tolerance each side.
      const ov = (a, b) => a.x + 0.5 < b.x + b.w && b.x + 0.5 < a.x + a.w && a.y + 0.5 < b.y + b.h && b.y + 0.5 < a.y + a.h;
      const bad = [];
      const edges = texts.filter((x) => x.edge);
      for (const e of edges) {
        for (const o of texts) if (o !== e && ov(e, o)) bad.push(`"${e.s}" overlaps text "${o.s}"`);
        for (const it of items) if (ov(e, it)) bad.push(`"${e.s}" overlaps a node box at ${Math.round(it.x)},${Math.round(it.y)}`);
      }
      return { edges: edges.length, bad };
    }, readFileSync(path, 'utf8'));
    check(r.edges > 0, `${t} ${level} ${dir}: the SVG has edge labels (${r.edges})`);
    eq(r.bad.join('; '), '', `${t} ${level} ${dir}: no edge label overlaps another label or a node`);
    await page.close();
  }
}

/**
 * Folded groups' text fits their boxes: at the first screen and at 1:1, the
 * summary ("N nodes · time") and op mix lines of every folded group, and at
 * 1:1 its name, measure (canvas, the renderers' font) within the width they
 * may take, i.e. they are not cut.
 */
async function boxTextChecks(v) {
  const t = tag(v);
  for (const [server, hash, name] of [[demo, '#level=compiled', 'demo compiled'], [demo, '#level=framework', 'demo framework'], [geRun, '', 'GE']]) {
    const page = await open(server, v, hash);
    for (const zoom of ['first screen', '1:1']) {
      const r = await page.evaluate(async (zoom) => {
        const g = window.__miDebug.view('graph'), p = g.pane(0), l = p.scene.layout;
        if (zoom === '1:1') { p.cam.centreOn(l.width / 2, l.height / 2, 1); }
        await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
        const titles = new Set();
        for (let i = 0; i < l.itemCount; ++i) if (l.itemKind[i] === 3) titles.add(l.str(l.itemTitle[i]));
        const ctx = document.createElement('canvas').getContext('2d');
        const font = 'system-ui, "Segoe UI", Helvetica, Arial, sans-serif';
        // Names: at 1:1 (inside the box); zoomed out a name crowded by its
        // neighbours' labels is cut in the middle by design.
        const lines = g.textRuns(0).lines.filter((x) => (x.bold && titles.has(x.text) && zoom === '1:1') || /^\d+ nodes · /.test(x.text) || / ×\d+(, |$)/.test(x.text));
        const cut = [];
        for (const x of lines) {
          ctx.font = `${x.bold ? 'bold ' : ''}${x.px}px ${font}`;
          const w = ctx.measureText(x.text).width;
          if (w > x.max + 0.5) cut.push(`"${x.text}" ${w.toFixed(1)} > ${x.max.toFixed(1)} px`);
        }
        return { scale: p.cam.scale, lines: lines.length, cut };
      }, zoom);
      check(r.lines > 0, `${t} ${name} ${zoom}: folded groups' lines drawn (${r.lines} at scale ${r.scale.toFixed(2)})`);
      eq(r.cut.join('; '), '', `${t} ${name} ${zoom}: every folded group's line fits its box`);
    }
    await page.close();
  }
}

async function timelineChecks(v) {
  const t = tag(v);
  const page = await browser.newPage({ viewport: v });
  await page.goto(trace.url);
  await poll(page, () => document.querySelector('.mi-tl-bar') && window.__miDebug.view('timeline')?.state.run >= 0 && Number(document.body.dataset.timeline ?? -1) >= 0, null, 60000, 'timeline open');
  await poll(page, () => window.__miDebug.view('timeline').laneBoxes().length > 0, null, 30000, 'timeline tracks');
  await frames(page);
  const rows = await page.$eval('.mi-tl-bar', (bar) => {
    const tops = [];
    for (const c of bar.children) {
      const r = c.getBoundingClientRect();
      if (!r.width || !r.height || getComputedStyle(c).display === 'none') continue;
      if (!tops.some((y) => Math.abs(y - r.top) < r.height / 2)) tops.push(r.top);
    }
    return { rows: tops.length, height: bar.getBoundingClientRect().height };
  });
  if (v.width >= 1920) eq(rows.rows, 1, `${t}: the timeline bar is one row`);
  else check(rows.rows <= 2, `${t}: the timeline bar takes at most two rows (${rows.rows}, ${rows.height} px)`);
  // The filters popover holds the clock and the kinds; it opens and closes.
  await page.click('#mi-tl-filters summary');
  check(await page.$eval('.mi-tl-kinds input[value="compute"]', (e) => e.getBoundingClientRect().width > 0), `${t}: the kinds show in the filters popover`);
  await page.click('#mi-tl-filters summary');
  // Several track rows show in the plot.
  const lanes = await page.evaluate(() => {
    const tl = window.__miDebug.view('timeline'), plot = tl.canvas.getBoundingClientRect();
    return tl.laneBoxes().filter((b) => !b.counter && b.y >= 0 && b.y + b.h <= plot.height).length;
  });
  check(lanes >= 3, `${t}: several track rows in view (${lanes})`);
  await page.screenshot({ path: join(art, `first_minute_timeline_${t}.png`) });
  await page.close();
}

async function minimapChecks(v) {
  const t = tag(v);
  const page = await open(demo, v, `#level=compiled&direction=tb&expand=${Array.from({ length: 30 }, (_, i) => i + 1).join(',')}`);
  // The node nearest the bottom-right corner of the layout: zoom on it there, where the minimap sits.
  const r = await page.evaluate(async () => {
    const g = window.__miDebug.view('graph'), p = g.pane(0), l = p.scene.layout, b = l.itemBox;
    let best = -1, bd = -Infinity;
    for (let i = 0; i < l.itemCount; ++i) if (l.itemKind[i] === 0 && b[4 * i] + b[4 * i + 1] > bd) { bd = b[4 * i] + b[4 * i + 1]; best = i; }
    const cam = p.cam;
    cam.scale = 1.5;
    // Put the node's box 40 px from the canvas's bottom-right corner.
    cam.pin(b[4 * best] + b[4 * best + 2], b[4 * best + 1] + b[4 * best + 3], cam.viewW - 40, cam.viewH - 40);
    p.requestRender();
    await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
    const c = p.canvas.getBoundingClientRect();
    const node = { x: c.left + cam.toScreenX(b[4 * best]), y: c.top + cam.toScreenY(b[4 * best + 1]), w: b[4 * best + 2] * cam.scale, h: b[4 * best + 3] * cam.scale };
    const mm = p.minimap.canvas.getBoundingClientRect();
    const shown = getComputedStyle(p.minimap.canvas).display !== 'none' && getComputedStyle(p.minimap.canvas).visibility !== 'hidden';
    return { node, mm: { x: mm.left, y: mm.top, w: mm.width, h: mm.height }, shown, placement: p.minimap.placement };
  });
  const hit = r.shown && r.node.x < r.mm.x + r.mm.w && r.mm.x < r.node.x + r.node.w && r.node.y < r.mm.y + r.mm.h && r.mm.y < r.node.y + r.node.h;
  check(!hit, `${t}: the node zoomed to in the minimap's corner is not under the minimap (${r.placement}, node ${JSON.stringify(r.node)}, minimap ${JSON.stringify(r.mm)})`);
  check(r.placement !== 'br', `${t}: the minimap left the bottom-right corner (${r.placement})`);
  await page.screenshot({ path: join(art, `first_minute_minimap_${t}.png`) });
  // Its × hides it (kept), the map button shows it again.
  if (r.shown) {
    await page.click('.pane#pane0 .minimap-close');
    await frames(page);
    eq(await page.evaluate(() => localStorage.getItem('mi.minimap')), 'off', `${t}: × keeps the minimap hidden`);
    eq(await page.evaluate(() => window.__miDebug.view('graph').pane(0).minimap.placement), 'folded', `${t}: hidden to its button`);
  }
  await page.click('.pane#pane0 .minimap-button');
  await frames(page);
  eq(await page.evaluate(() => localStorage.getItem('mi.minimap')), 'on', `${t}: the map button shows it again`);
  await page.evaluate(() => localStorage.removeItem('mi.minimap'));
  await page.close();
}

for (const v of kViewports) {
  await boxTextChecks(v);
  await svgChecks(v);
  await statusChecks(v);
  await compareChecks(v);
  await timelineChecks(v);
  await minimapChecks(v);
}
await browser.close();
await demo.stop();
await two.stop();
await trace.stop();
await geRun.stop();
done('e2e_first_minute');
