// End-to-end test of search, shortcuts, export and the critical path in the
// URL, against the real server (`model-inspector open`) in Chromium, at
// 1024x700 and 1920x1080, on the demo run (ResNet-18) and a GE run (the
// public GE graph dump of test/fixtures/samples/ascend/ge_graph_dumps):
//   - the search box shows an example made from the level's paths or names
//     and defaults to auto; `/` focuses it
//     (not while typing elsewhere), Ctrl+F focuses it from the page and
//     falls through to the browser's find when pressed in the box, Esc
//     leaves it for the graph with the results kept;
//   - `layer1/*/conv*` finds exactly the four convs of layer1's blocks
//     (written out below from the demo's node names) and the results say
//     it was read as a glob on scope-path suffixes; on the GE run
//     `res*_branch1` finds the names a grep of the dump file finds;
//   - `?` opens the help overlay listing every shortcut (inside the
//     window), Esc closes it;
//   - export: the menu closes after a choice; PNG of the whole graph at 2x
//     has the layout's size times 2 (read from the PNG header) and a node's
//     pixel in its colour; SVG of the selection parses and its viewBox is
//     the selected node's box with the margin;
//   - the critical path's "show" puts cpath=1 in the URL, and a page opened
//     on that URL draws it again (graph and summary button).
// Screenshots (checked by pixels or the DOM): search_*, shortcuts_*,
// export_* in the artifacts directory.

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  artifactsDir, check, clickNode, colorDistance, done, eq, fail, frames, launchBrowser, pixelsAt, poll, repoDir,
} from './lib.mjs';
import { startServer } from './server.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const kGeDump = join(repoDir, 'test/fixtures/samples/ascend/ge_graph_dumps');
const demo = await startServer();
const ge = await startServer([kGeDump]);
console.log(`  demo at ${demo.url}, GE run at ${ge.url}`);
const browser = await launchBrowser();
const kViewports = [{ width: 1024, height: 700 }, { width: 1920, height: 1080 }];

// The demo's framework nodes in scopes ".../layer1/<block>/conv*":
// layer1 has blocks layer1.0 and layer1.1, each with conv1 and conv2
// (test/fixtures/resnet18/model.onnx, the PyTorch export's node names).
const kLayer1Convs = [
  '/layer1/layer1.0/conv1/Conv', '/layer1/layer1.0/conv2/Conv', '/layer1/layer1.1/conv1/Conv', '/layer1/layer1.1/conv2/Conv',
];
// The GE dump's node names, read from the file with a regex (not our importer).
const geNames = [...readFileSync(join(kGeDump, 'ge_proto_00046_afterUBMatch.txt'), 'utf8').matchAll(/^ {4}name: "([^"]+)"/gm)].map((m) => m[1]);
const kGeBranch1 = geNames.filter((n) => /^res[^/]*_branch1$/i.test(n)).sort();

async function open(server, viewport, hash = '') {
  const page = await browser.newPage({ viewport, acceptDownloads: true });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) page.errors.push(m.text()); });
  await page.goto(server.url + hash);
  await poll(page, () => Number(document.body.dataset.rendered || 0) > 0 && document.body.dataset.ready, null, 60000)
    .catch(() => fail(`no first render within 60 s (${server.url}${hash})`));
  return page;
}

const active = (page) => page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName || '');
const tag = (v) => `${v.width}x${v.height}`;

/** Runs `query` through the box (Enter) and waits for its answer. */
async function search(page, query) {
  await page.fill('#search', query);
  const seq = await page.evaluate(() => window.__miDebug.state().search.seq);
  await page.press('#search', 'Enter');
  return poll(page, (seq) => {
    const s = window.__miDebug.state().search;
    return s.seq > seq && s.results && s.results.seq === s.seq && s.results;
  }, seq, 30000, `search ${query}`);
}

/** Whether element `sel` lies inside the window. */
const inWindow = (page, sel) => page.$eval(sel, (e) => {
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth + 0.5 && r.bottom <= innerHeight + 0.5;
});

/** Width and height of a PNG from its IHDR chunk (bytes 16..23). */
const pngSize = (b) => ({ width: b.readUInt32BE(16), height: b.readUInt32BE(20) });

/** Clicks a menu entry of the export menu (opening it) and saves the download. */
async function exportVia(page, button, extent, scale, name) {
  await page.click('#export summary');
  await page.selectOption('#export-extent', extent);
  await page.selectOption('#export-scale', String(scale));
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click(button)]);
  const path = join(art, name);
  await dl.saveAs(path);
  check(!(await page.$eval('#export', (d) => d.open)), `${name}: the export menu closed after the choice`);
  return { path, record: await page.evaluate(() => window.__miDebug.view('graph').exporter.last) };
}

async function demoChecks(v) {
  const page = await open(demo, v);
  const t = tag(v);
  // Example and default mode.
  const box = await page.$eval('#search', (e) => ({ placeholder: e.placeholder, mode: document.getElementById('search-mode').value }));
  // The example is made from the level's scope paths: layer1/<block>/conv1.
  eq(box.placeholder, 'e.g. layer1/*/conv*  ( / )', `${t}: the search box shows a glob example`);
  eq(box.mode, 'auto', `${t}: search mode defaults to auto`);
  check(await inWindow(page, '#search'), `${t}: the search box is inside the window`);

  // '/' focuses the search box from the page.
  await page.focus('#graph');
  await page.keyboard.press('/');
  eq(await active(page), 'search', `${t}: / focuses the search box`);
  eq(await page.inputValue('#search'), '', `${t}: the / is not typed into the box`);

  // The glob of the issue, read on scope-path suffixes.
  const r = await search(page, 'layer1/*/conv*');
  eq(r.error, null, `${t}: layer1/*/conv* answers`);
  eq(r.matches.map((m) => m.name).sort().join(), kLayer1Convs.join(), `${t}: layer1/*/conv* finds layer1's four block convs`);
  const readAs = await page.$eval('#results .search-read-as', (e) => e.textContent);
  console.log(`  ${t}: layer1/*/conv* → ${r.matches.map((m) => m.name).join(', ')}; ${readAs}`);
  check(/glob/.test(readAs) && /scope-path suffixes/.test(readAs), `${t}: the results say how the pattern was read (${readAs})`);
  eq(await page.$$eval('#results li.result', (l) => l.length), 4, `${t}: four rows in the list`);
  check(await inWindow(page, '#results .search-read-as'), `${t}: the "read as" line is inside the window`);
  // The graph outlines the matches it draws.
  const drawn = await poll(page, () => window.__miDebug.view('graph').pane(0).highlights.matches.length, null, 10000).catch(() => 0);
  check(drawn > 0, `${t}: the graph outlines the matches it shows (${drawn} items)`);
  await page.screenshot({ path: join(art, `search_glob_${t}.png`) });

  // A substring reads as text and says so.
  const r2 = await search(page, 'conv1');
  eq(r2.total, 9, `${t}: conv1 as text: the stem conv and the eight blocks' conv1`);
  check(/substring/.test(await page.$eval('#results .search-read-as', (e) => e.textContent)), `${t}: a plain query reads as a substring`);

  // '?' typed in the box is text, not the help.
  await page.fill('#search', '');
  await page.press('#search', '?');
  eq(await page.$eval('#shortcuts', (e) => e.hidden), true, `${t}: ? typed in the search box does not open the help`);
  eq(await page.inputValue('#search'), '?', `${t}: ? typed in the search box is text`);

  // Esc leaves the box for the graph; the results stay.
  await search(page, 'layer1/*/conv*');
  await page.press('#search', 'Escape');
  eq(await active(page), 'graph', `${t}: Esc leaves the search box for the graph`);
  eq(await page.inputValue('#search'), 'layer1/*/conv*', `${t}: Esc keeps the query`);
  eq(await page.evaluate(() => window.__miDebug.state().search.results?.total), 4, `${t}: Esc keeps the results`);

  // Ctrl+F from the page focuses the box; in the box it is the browser's find.
  await page.evaluate(() => {
    window.__ctrlF = [];
    window.addEventListener('keydown', (e) => { if (e.ctrlKey && e.key === 'f') window.__ctrlF.push(e.defaultPrevented); });
  });
  await page.keyboard.press('Control+f');
  eq(await active(page), 'search', `${t}: Ctrl+F focuses the search box`);
  await page.keyboard.press('Control+f');
  eq(JSON.stringify(await page.evaluate(() => window.__ctrlF)), '[true,false]', `${t}: Ctrl+F in the box is left to the browser's find`);
  await page.press('#search', 'Escape');

  // '?' opens the help overlay, which lists every shortcut and fits the window.
  const before = await page.screenshot();
  await page.keyboard.press('?');
  await poll(page, () => !document.getElementById('shortcuts').hidden, null, 5000, 'help overlay');
  const help = await page.$eval('#shortcuts', (e) => ({
    text: e.textContent, kbd: Array.from(e.querySelectorAll('kbd'), (k) => k.textContent), sections: Array.from(e.querySelectorAll('h3'), (h) => h.textContent),
  }));
  for (const k of ['/', 'Ctrl+F', '?', 'Esc', 'Enter', '0', '+', 'W', 'S', 'A', 'D', 'F']) check(help.kbd.includes(k), `${t}: the help lists ${k} (${help.kbd.join(' ')})`);
  eq(help.sections.join(), 'Anywhere,Search box,Graph,Timeline', `${t}: the help's sections`);
  check(await inWindow(page, '#shortcuts .shortcuts-box'), `${t}: the help fits the window`);
  const withHelp = await page.screenshot({ path: join(art, `shortcuts_${t}.png`) });
  // The overlay dims the page: a corner pixel is darker than without it.
  const [[a], [b]] = await Promise.all([pixelsAt(page, before, [[4, v.height - 4]]), pixelsAt(page, withHelp, [[4, v.height - 4]])]);
  check(b[0] + b[1] + b[2] < a[0] + a[1] + a[2] - 30, `${t}: the help dims the page (${a} → ${b})`);
  await page.keyboard.press('Escape');
  eq(await page.$eval('#shortcuts', (e) => e.hidden), true, `${t}: Esc closes the help`);

  // Export the whole graph as PNG at 2x.
  const { path: pngPath, record: rec } = await exportVia(page, '#export-png', 'graph', 2, `export_graph_2x_${t}.png`);
  const png = readFileSync(pngPath);
  const lay = await page.evaluate(() => { const l = window.__miDebug.view('graph').pane(0).scene.layout; return { w: l.width, h: l.height }; });
  const size = pngSize(png);
  // The whole layout plus a 16 px margin on each side, times 2.
  eq(`${size.width}x${size.height}`, `${Math.round((lay.w + 32) * 2)}x${Math.round((lay.h + 32) * 2)}`, `${t}: whole-graph PNG at 2x has the layout's size times 2`);
  check(size.width > v.width || size.height > v.height, `${t}: the PNG is not the viewport (${size.width}x${size.height})`);
  eq(rec?.scale, 2, `${t}: PNG at the scale asked`);
  console.log(`  ${t}: whole-graph PNG at 2x: ${size.width} x ${size.height} px, ${png.length} bytes (layout ${lay.w} x ${lay.h})`);
  // Pixels: a point just inside the left edge of the first and last node items, in their fill colour.
  const probes = await page.evaluate(() => {
    const s = window.__miDebug.view('graph').pane(0).scene, l = s.layout, b = l.itemBox, out = [];
    const nodes = [];
    for (let i = 0; i < l.itemCount; ++i) if (l.itemKind[i] === 0) nodes.push(i);
    for (const i of [nodes[0], nodes[nodes.length - 1]]) {
      out.push({ i, x: (b[4 * i] + 5 + 16) * 2, y: (b[4 * i + 1] + b[4 * i + 3] / 2 + 16) * 2, rgb: Array.from(s.itemColor.slice(3 * i, 3 * i + 3), (c) => Math.round(c * 255)) });
    }
    return out;
  });
  const px = await pixelsAt(page, png, probes.map((p) => [p.x, p.y]).concat([[2, 2]]));
  probes.forEach((p, k) => check(colorDistance(px[k], p.rgb) <= 24, `${t}: exported PNG: node item ${p.i} in its colour at (${Math.round(p.x)}, ${Math.round(p.y)}) (${px[k]} vs ${p.rgb})`));
  check(colorDistance(px[probes.length], [255, 255, 255]) <= 2, `${t}: exported PNG: white margin (${px[probes.length]})`);

  // Select a node, export the selection as SVG at 1x: the viewBox is its box plus the margin.
  const conv = r.matches.find((m) => m.name === kLayer1Convs[0]).id;
  await clickNode(page, conv);
  const { path: svgPath, record: srec } = await exportVia(page, '#export-svg', 'selection', 1, `export_selection_${t}.svg`);
  const box2 = await page.evaluate((id) => {
    const p = window.__miDebug.view('graph').pane(0), b = p.scene.layout.itemBox, i = p.itemOfNode(id);
    return [b[4 * i] - 16, b[4 * i + 1] - 16, b[4 * i + 2] + 32, b[4 * i + 3] + 32];
  }, conv);
  const svg = await page.evaluate((text) => {
    const d = new DOMParser().parseFromString(text, 'image/svg+xml');
    const r = d.documentElement;
    return {
      error: d.querySelector('parsererror')?.textContent ?? null, root: r.nodeName, viewBox: r.getAttribute('viewBox'),
      width: r.getAttribute('width'), texts: Array.from(d.querySelectorAll('text'), (x) => x.textContent), items: d.querySelectorAll('g.items rect, g.items path').length,
    };
  }, readFileSync(svgPath, 'utf8'));
  check(svg.error === null && svg.root === 'svg', `${t}: selection SVG parses (${svg.error ?? 'ok'})`);
  eq(svg.viewBox, box2.map((x) => String(Math.round(x * 100) / 100)).join(' '), `${t}: selection SVG covers the selected node and its margin`);
  eq(svg.width, String(Math.round(box2[2])), `${t}: selection SVG at 1x is as wide as its box`);
  check(svg.items > 0 && svg.texts.some((x) => /Conv|conv/.test(x)), `${t}: selection SVG draws the node and its label (${svg.items} shapes, texts ${svg.texts.slice(0, 4).join(' | ')})`);
  eq(srec?.extent, 'selection', `${t}: export record says selection`);
  console.log(`  ${t}: selection SVG: viewBox ${svg.viewBox}, width ${svg.width}, ${svg.items} shapes`);
  await page.screenshot({ path: join(art, `export_menu_closed_${t}.png`) });

  // The critical path: "show" puts cpath=1 in the URL; the link draws it again.
  await page.click('#tabs button[data-tab="summary"]');
  const hasPath = await poll(page, () => document.querySelector('#summary button.show-critical-path') || document.querySelector('#summary .error'), null, 60000, 'summary');
  if (!hasPath || !(await page.$('#summary button.show-critical-path'))) {
    check(false, `${t}: the demo's summary has a critical path with "show"`);
  } else {
    await page.click('#summary button.show-critical-path');
    await poll(page, () => window.__miDebug.state().criticalPath && location.hash.includes('cpath=1'), null, 10000, 'cpath=1 in the URL');
    const hash = await page.evaluate(() => location.hash);
    check(/[#&]cpath=1(&|$)/.test(hash), `${t}: the critical path is in the URL (${hash})`);
    const p2 = await open(demo, v, hash);
    const cp = await poll(p2, () => {
      const s = window.__miDebug.state(), g = window.__miDebug.view('graph').pane(0);
      return s.criticalPath && g.linkedIds.length > 0 && { nodes: s.criticalPath.nodes.length, linked: g.linkedIds.length };
    }, null, 60000, 'critical path from the link').catch(() => null);
    check(!!cp, `${t}: a page opened on the link draws the critical path (${JSON.stringify(cp)})`);
    console.log(`  ${t}: ${hash} reopens the critical path: ${JSON.stringify(cp)}`);
    await p2.screenshot({ path: join(art, `critical_path_link_${t}.png`) });
    await p2.click('#tabs button[data-tab="summary"]');
    const active2 = await poll(p2, () => document.querySelector('#summary button.show-critical-path.active') !== null, null, 30000).catch(() => false);
    check(active2, `${t}: the summary's "show" is pressed on the linked page`);
    await p2.click('#summary button.show-critical-path');
    await poll(p2, () => !window.__miDebug.state().criticalPath && !location.hash.includes('cpath'), null, 10000).catch(() => null);
    check(!(await p2.evaluate(() => location.hash)).includes('cpath'), `${t}: hiding the path takes it out of the URL`);
    eq(p2.errors.join('; '), '', `${t}: no page errors (critical path link)`);
    await p2.close();
  }
  eq(page.errors.join('; '), '', `${t}: no page errors (demo)`);
  await page.close();
}

async function geChecks(v) {
  const t = tag(v);
  const page = await open(ge, v);
  // The example fits this graph's flat names: a leading word and '*', which finds nodes.
  const example = await poll(page, () => { const p = document.getElementById('search').placeholder; return !p.includes('layer1') && p; }, null, 30000, 'GE example')
    .catch(() => '');
  const word = /^e\.g\. ([A-Za-z]+)\*  \( \/ \)$/.exec(example)?.[1];
  check(!!word, `GE ${t}: the search box's example is made from the graph's names (${example})`);
  if (word) {
    const want = geNames.filter((n) => n.startsWith(word));
    const ex = await search(page, `${word}*`);
    console.log(`  GE ${t}: example ${example.trim()} → ${ex.total} nodes (grep: ${want.length})`);
    check(want.length >= 2 && ex.total === want.length, `GE ${t}: the example ${word}* finds the ${want.length} names grep finds that start with ${word} (${ex.total})`);
  }
  await page.focus('#graph');
  await page.keyboard.press('/');
  eq(await active(page), 'search', `GE ${t}: / focuses the search box`);
  const r = await search(page, 'res*_branch1');
  check(kGeBranch1.length === 4, `GE dump has four res*_branch1 nodes by grep (${kGeBranch1.join(' ')})`);
  eq(r.matches.map((m) => m.name).sort().join(), kGeBranch1.join(), `GE ${t}: res*_branch1 finds the names grep finds`);
  check(/glob/.test(await page.$eval('#results .search-read-as', (e) => e.textContent)), `GE ${t}: read as a glob`);
  await page.screenshot({ path: join(art, `search_ge_${t}.png`) });
  // Picking a result selects and centres the node: its pixel is in its colour.
  await page.click('#results li.result >> nth=0');
  const sel = await poll(page, () => { const s = window.__miDebug.state(); return s.selection?.kind === 'node' && s.resolved.done && s.selection.id; }, null, 30000, 'GE pick');
  eq(sel, r.matches[0].id, `GE ${t}: the picked result is selected`);
  await poll(page, (id) => { const g = window.__miDebug.view('graph'), p = g.pane(0), i = p.itemOfNode(id); const c = i >= 0 && g.itemScreenCenter(i); return c && Math.abs(c.x - p.cam.viewW / 2) < 4 && Math.abs(c.y - p.cam.viewH / 2) < 4; }, sel, 30000, 'GE pick centred');
  await frames(page);
  const probe = await page.evaluate((id) => {
    const g = window.__miDebug.view('graph'), p = g.pane(0), s = p.scene, b = s.layout.itemBox, i = p.itemOfNode(id);
    const r = p.canvas.getBoundingClientRect();
    return { x: r.left + p.cam.toScreenX(b[4 * i] + 6), y: r.top + g.itemScreenCenter(i).y, rgb: Array.from(s.itemColor.slice(3 * i, 3 * i + 3), (c) => Math.round(c * 255)) };
  }, sel);
  const shot = await page.screenshot({ path: join(art, `search_ge_pick_${t}.png`) });
  const [px] = await pixelsAt(page, shot, [[probe.x, probe.y]]);
  check(colorDistance(px, probe.rgb) <= 24, `GE ${t}: the picked node is drawn in its colour at the centre (${px} vs ${probe.rgb})`);
  // Whole-graph PNG at 1x of the GE graph.
  const { path } = await exportVia(page, '#export-png', 'graph', 1, `export_ge_graph_${t}.png`);
  const lay = await page.evaluate(() => { const l = window.__miDebug.view('graph').pane(0).scene.layout; return { w: l.width, h: l.height }; });
  const size = pngSize(readFileSync(path));
  eq(`${size.width}x${size.height}`, `${Math.round(lay.w + 32)}x${Math.round(lay.h + 32)}`, `GE ${t}: whole-graph PNG at 1x has the layout's size`);
  console.log(`  GE ${t}: res*_branch1 → ${r.matches.map((m) => m.name).join(', ')}; whole-graph PNG at 1x ${size.width} x ${size.height} px`);
  eq(page.errors.join('; '), '', `GE ${t}: no page errors`);
  await page.close();
}

try {
  for (const v of kViewports) {
    await demoChecks(v);
    await geChecks(v);
  }
} finally {
  await browser.close();
  await demo.stop();
  await ge.stop();
}
done('e2e_search_test');
