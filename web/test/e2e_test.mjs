// End-to-end test: the real server (`model-inspector open`, MI_BINARY, with
// its embedded UI and bundled demo run) driven through Debian's Chromium.
// Open the demo, wait for the first render, screenshot, check op-type
// colours at node centres, search "Conv" (op mode), pick a result and check
// the details panel, collapse and expand a group by double-click (its
// header stays where it was on screen), switch to the compiled level,
// follow a fused_from link, reopen a deep link, and open with a token.
// It reads the UI through its debug surface (window.__miDebug, web/README.md)
// and waits on its state, never on fixed sleeps.
// Screenshots go to $MI_TEST_ARTIFACTS (default web/test-artifacts).

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

async function waitRendered(page, what) {
  try {
    await poll(page, () => Number(document.body.dataset.rendered || 0) > 0 && document.body.dataset.ready, null, 60000);
  } catch {
    const body = (await page.textContent('body')).slice(0, 400);
    fail(`${what}: no render within 60 s; page says: ${body}`);
  }
}

/** Layouts the main pane has loaded. */
const layoutCount = (page) => page.evaluate(() => window.__miDebug.stats()['graph.layouts'] ?? 0);

/** Waits until the main pane has loaded `n` layouts in total and drawn since. */
async function waitLayouts(page, n) {
  await poll(page, (n) => (window.__miDebug.stats()['graph.layouts'] ?? 0) >= n, n);
  await frames(page);
}

/** Op-type colour check at the left inside of node boxes on screen. */
async function checkColours(page, png, what) {
  const probe = await page.evaluate(() => {
    const g = window.__miDebug.view('graph'), p = g.pane(0), l = p.scene.layout, b = l.itemBox;
    const r = document.getElementById('graph').getBoundingClientRect();
    const out = [];
    for (let k = 0; k < l.itemCount && out.length < 16; ++k) {
      if (l.itemKind[k] !== 0 || b[4 * k + 2] * p.cam.scale < 24) continue;
      const x = r.left + p.cam.toScreenX(b[4 * k] + 4 / p.cam.scale + 2), y = r.top + g.itemScreenCenter(k).y;
      if (x > r.left + 2 && x < r.right - 200 && y > r.top + 60 && y < r.bottom - 160) {
        out.push({ x, y, op: l.str(l.itemTitle[k]), rgb: Array.from(p.scene.itemColor.slice(3 * k, 3 * k + 3), (v) => Math.round(v * 255)) });
      }
    }
    return out;
  });
  const px = await pixelsAt(page, png, probe.map((p) => [p.x, p.y]));
  let good = 0;
  probe.forEach((p, k) => { if (colorDistance(px[k], p.rgb) <= 24) good++; else console.error(`  ${what}: ${p.op} at ${p.x},${p.y}: ${px[k]} vs ${p.rgb}`); });
  check(probe.length >= 3, `${what}: at least 3 node boxes on screen to probe (${probe.length})`);
  check(good >= Math.ceil(probe.length * 0.8), `${what}: op-type colours at node boxes (${good}/${probe.length})`);
}

try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()); });
  const failed = [];
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
  // The same-origin requests the test itself makes (node details) are not the UI's.
  const t0 = Date.now();
  await page.goto(server.url);
  if (!(await page.$('#graph'))) fail('the page has no #graph canvas: the binary embeds no UI; run `cd web && npm ci && npm run build` before building model-inspector');
  await waitRendered(page, 'demo');
  console.log(`  first render ${Date.now() - t0} ms after navigation (${await page.evaluate(() => document.body.dataset.renderer)})`);
  eq(await page.evaluate(() => document.body.dataset.renderer), 'webgl2', 'renderer (SwiftShader WebGL2)');
  await shot(page, 'ui_fit');

  // 1. Structure view at reading zoom: the top of the graph.
  await page.evaluate(() => {
    const p = window.__miDebug.view('graph').pane(0), l = p.scene.layout;
    p.cam.scale = 1;
    p.cam.pin(l.width / 2, 0, p.cam.viewW / 2, 20);
  });
  await frames(page);
  const png = await shot(page, 'ui_structure');
  await checkColours(page, png, 'structure view');

  // 2. Search "Conv" by op type.
  await page.selectOption('#search-mode', 'op');
  await page.fill('#search', 'Conv');
  await page.press('#search', 'Enter');
  await page.waitForSelector('#results .result', { timeout: 15000 });
  const ops = await page.$$eval('#results .result .op', (e) => e.map((x) => x.textContent));
  check(ops.length > 0 && ops.every((o) => o === 'Conv'), `search Conv (op): ${ops.length} results, all Conv`);

  // 3. Pick a result in the middle (likely inside a group): details show Conv with shapes.
  const layoutsBefore = await layoutCount(page);
  const pick = Math.floor(ops.length / 2);
  await page.click(`#results .result >> nth=${pick}`);
  await poll(page, () => document.querySelector('#details .op-type')?.textContent === 'Conv');
  const details = await page.textContent('#details');
  check(/Inputs/.test(details) && /Outputs/.test(details), 'details list inputs and outputs');
  check(/\d+\s*[x×]\s*\d+/.test(details), `details show a shape (${details.slice(0, 160)}…)`);
  // Revealed and centred once the pane shows the picked node (the search picks, the graph view reveals).
  await poll(page, () => {
    const s = window.__miDebug.state(), p = window.__miDebug.view('graph').pane(0), id = s.panes[0].node;
    return id !== null && p.current && p.nodeVisible(id) && location.hash.includes(`node=${id}`);
  });
  await frames(page);
  const sel = await page.evaluate(() => {
    const D = window.__miDebug, g = D.view('graph'), p = g.pane(0), node = D.state().panes[0].node;
    const it = p.itemOfNode(node);
    const c = g.itemScreenCenter(it);
    return { node, kind: it >= 0 ? p.scene.layout.itemKind[it] : -1, c, w: p.cam.viewW, h: p.cam.viewH, hash: location.hash, layouts: D.stats()['graph.layouts'] };
  });
  eq(sel.kind, 0, 'the picked node is shown as a node (its groups were expanded)');
  check(sel.c && Math.abs(sel.c.x - sel.w / 2) < 4 && Math.abs(sel.c.y - sel.h / 2) < 4, `the picked node is centred (${JSON.stringify(sel.c)})`);
  check(sel.hash.includes(`node=${sel.node}`), `the hash carries the node (${sel.hash})`);
  console.log(`  reveal took ${sel.layouts - layoutsBefore} layout request(s)`);
  await shot(page, 'ui_search_select');
  const link = page.url(); // reopened in step 5

  // 4. Collapse a group by double-clicking its frame header, then expand it again.
  const frame = await page.evaluate(() => {
    const dbg = window.__miDebug.view('graph'), cam = dbg.pane(0).cam, l = dbg.pane(0).scene.layout, b = l.groupBounds;
    // The innermost frame around the view centre whose header is on screen.
    let best = -1;
    for (let k = 0; k < l.frameCount; ++k) {
      const g = l.frames[k];
      const p = dbg.groupHeaderScreen(g);
      if (p.x > 10 && p.x < cam.viewW - 10 && p.y > 10 && p.y < cam.viewH - 10 && b[4 * g + 2] * cam.scale > 80) best = g;
    }
    return best < 0 ? null : { g: best, p: dbg.groupHeaderScreen(best), top: { x: cam.toScreenX(b[4 * best] + b[4 * best + 2] / 2), y: cam.toScreenY(b[4 * best + 1]) } };
  });
  if (check(frame !== null, 'a frame header is on screen')) {
    const box = await page.$eval('#graph', (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top }; });
    let n = await layoutCount(page);
    await page.mouse.dblclick(box.x + frame.p.x, box.y + frame.p.y);
    await waitLayouts(page, n + 1);
    await poll(page, () => location.hash.includes('collapse='));
    const after = await page.evaluate((g) => {
      const dbg = window.__miDebug.view('graph'), p = dbg.pane(0), l = p.scene.layout, b = l.groupBounds;
      let item = -1;
      for (let i = 0; i < l.itemCount; ++i) if (l.itemKind[i] === 3 && l.itemRef[i] === g) item = i;
      return { expanded: dbg.isExpanded(g), item, c: dbg.itemScreenCenter(item), top: { x: p.cam.toScreenX(b[4 * g] + b[4 * g + 2] / 2), y: p.cam.toScreenY(b[4 * g + 1]) }, hash: location.hash };
    }, frame.g);
    check(!after.expanded && after.item >= 0, `group ${frame.g} collapsed into an item by double-click`);
    check(Math.abs(after.top.x - frame.top.x) < 2 && Math.abs(after.top.y - frame.top.y) < 2, `collapsed group stays in place (${JSON.stringify(frame.top)} → ${JSON.stringify(after.top)})`);
    check(after.hash.includes('collapse='), `hash carries the collapse (${after.hash})`);
    await shot(page, 'ui_collapsed');
    n = await layoutCount(page);
    await page.mouse.dblclick(box.x + after.c.x, box.y + after.c.y);
    await waitLayouts(page, n + 1);
    const again = await page.evaluate((g) => window.__miDebug.view('graph').isExpanded(g), frame.g);
    check(again, `group ${frame.g} expanded again by double-click`);
  }

  // 5. Deep link: reopen the current URL in a new page; same level and node.
  const page2 = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  await page2.goto(link);
  await waitRendered(page2, 'deep link');
  await poll(page2, () => document.querySelector('#details .op-type')?.textContent === 'Conv');
  const st2 = await page2.evaluate(() => { const p = window.__miDebug.state().panes[0]; return { node: p.node, level: p.level }; });
  eq(st2.node, sel.node, 'deep link reopens the selected node');
  // The user edits the hash: the state (and the view) follow it.
  const n2 = await layoutCount(page2);
  await page2.evaluate(() => { location.hash = '#run=0&level=compiled&grouping=scopes&color=time'; });
  await waitLayouts(page2, n2 + 1);
  const edited = await page2.evaluate(() => {
    const s = window.__miDebug.state(), p = window.__miDebug.view('graph').pane(0);
    return { level: s.panes[0].level, node: s.panes[0].node, sel: s.selection, color: s.color, shown: p.view.level, colour: p.scene.options.colorMode };
  });
  eq(JSON.stringify(edited), JSON.stringify({ level: 'compiled', node: null, sel: null, color: 'time', shown: 'compiled', colour: 'time' }),
    'an edited hash is applied: level, no selection, colour mode');
  await page2.close();

  // 6. Switch to the compiled level.
  const levels = await page.$$eval('#levels button', (b) => b.map((x) => x.dataset.level));
  if (check(levels.includes('compiled'), `levels offered: ${levels}`)) {
    const n = await layoutCount(page);
    await page.click('#levels button[data-level="compiled"]');
    await waitLayouts(page, n + 1);
    await poll(page, () => location.hash.includes('level=compiled'));
    const st = await page.evaluate(() => ({
      level: window.__miDebug.state().panes[0].level, hash: location.hash, items: window.__miDebug.view('graph').pane(0).scene.layout.itemCount,
      active: document.querySelector('#levels .active')?.dataset.level,
    }));
    check(st.level === 'compiled' && st.active === 'compiled' && st.hash.includes('level=compiled') && st.items > 0, `compiled level shown (${JSON.stringify(st)})`);
    await shot(page, 'ui_compiled');
    // A compiled node with fused_from: its link opens the framework node.
    const fused = await page.evaluate(async () => {
      const p = window.__miDebug.view('graph').pane(0), l = p.scene.layout, run = window.__miDebug.state().panes[0].run;
      for (let i = 0, tries = 0; i < l.itemCount && tries < 60; ++i) {
        if (l.itemKind[i] !== 0) continue;
        tries++;
        const d = await (await fetch(`/api/runs/${run}/levels/compiled/nodes/${l.itemModelId[i]}`)).json();
        if (d.fused_from && d.fused_from.length > 1) return { id: d.id, from: d.fused_from[0] };
      }
      return null;
    });
    if (check(fused !== null, 'a compiled node with fused_from')) {
      await clickNode(page, fused.id);
      await page.waitForSelector(`#details a.node-link[data-node="${fused.from.id}"]`);
      await page.click(`#details a.node-link[data-node="${fused.from.id}"]`);
      await poll(page, (op) => window.__miDebug.state().panes[0].level === 'framework' && document.querySelector('#details .op-type')?.textContent === op, fused.from.op_type);
      eq(await page.evaluate(() => window.__miDebug.state().panes[0].node), fused.from.id, 'fused_from link opens the framework node');
      await shot(page, 'ui_fused_from');
    }
  }
  // 7. API errors are shown: a search with a bad regex.
  await page.selectOption('#search-mode', 'regex');
  await page.fill('#search', '([');
  await page.press('#search', 'Enter');
  await page.waitForSelector('#results .error', { timeout: 15000 });
  check((await page.textContent('#results .error')).length > 0, 'bad regex: the server error is shown');
  eq(errors.join('; '), '', 'no page errors');
  const unexpected = failed.filter((f) => !(f.startsWith('400 ') && f.includes('mode=regex')));
  eq(unexpected.join('; '), '', 'no failed requests besides the bad regex');
  await page.close();
} finally {
  await browser.close();
  await server.stop();
}

// 8. Token: a server started with --token needs it; the UI keeps ?token= and sends X-MI-Token.
const tokenServer = await startServer([...extra, '--token', 'e2e-secret-token']);
const browser2 = await launchBrowser();
try {
  const page = await browser2.newPage({ viewport: { width: 900, height: 600 } });
  const u = new URL(tokenServer.url);
  if (!u.searchParams.get('token')) u.searchParams.set('token', 'e2e-secret-token');
  // The token the UI sends with its own API requests (X-MI-Token, kept from ?token=).
  const sent = [];
  page.on('request', (r) => { if (new URL(r.url()).pathname.startsWith('/api/')) sent.push(r.headers()['x-mi-token'] ?? null); });
  await page.goto(u.href);
  await waitRendered(page, 'token');
  check(sent.length > 0 && sent.every((t) => t === 'e2e-secret-token'), `the UI's API requests carry X-MI-Token (${sent.length}: ${[...new Set(sent)]})`);
  // The page got a cookie too; without cookie and header the API refuses, with the header it answers.
  const st = await page.evaluate(async (token) => ({
    none: (await fetch('/api/runs', { credentials: 'omit' })).status,
    header: (await fetch('/api/runs', { credentials: 'omit', headers: { 'X-MI-Token': token } })).status,
  }), sent[0]);
  eq(st.none, 403, 'API without the token is refused');
  eq(st.header, 200, 'API with the X-MI-Token header the UI kept from ?token= answers');
} finally {
  await browser2.close();
  await tokenServer.stop();
}
done('e2e_test');
