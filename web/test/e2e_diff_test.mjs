// End-to-end test of the diff in the UI, against the real server
// (`model-inspector open A B`, embedded UI) in Chromium: resnet18 optimized
// by ONNX Runtime at "extended" (run 0, the base) and at "all" (run 1, the
// new run), whose compiled graphs differ.
//   - Compare, the right pane on run 1's compiled level, the colour menu's
//     "diff": one GET /api/diff?base=0&new=1 (asked once: switching the
//     colour away and back asks nothing), the legend names the side and
//     counts each kind of change;
//   - the counts add up to the levels' node counts, read independently with
//     python3-onnx (len(graph.node) of each model.optimized.onnx): 40 in
//     ort_extended, 34 in ort_all (a pane holds every node of its level,
//     once: removed + changed + renamed + unchanged = 40 on the base side,
//     added + changed + renamed + unchanged = 34 on the new side); every
//     op type whose count changed (Conv 11 -> 20, FusedConv 9 -> 0,
//     ReorderOutput 0 -> 6, Add 8 -> 2, Relu 8 -> 2) means added or removed
//     nodes, so both sides have some;
//   - screenshot pixels: an added node of the right pane is drawn in the
//     "added" green, a removed node of the left pane in the "removed"
//     pink, an unchanged one in the unchanged grey (or its timing colour);
//   - one run in both panes (framework | compiled of run 1): the diff of its
//     levels (base=new=1), the framework side and the compiled side;
//   - the timeline compared with run 1 marks the op types the diff found
//     slower (its note and marks say so; none when nothing is slower) and
//     outlines the tasks of the nodes it found slower (the server's
//     /tasks?node= of those nodes);
//   - no page errors.
// Then the history tab of `open --history DB`, DB made by the CLI
// (`history add`: resnet18 extended, then all, then the transformer under
// another model name): offered, the model recorded last first, one dot per
// run of the picked model with the median and spread the CLI's
// `history trend --format json` gives, the line's blue at a dot, the table.
// Screenshots: diff_compare.png (also docs/images/ui_diff.png),
// diff_levels.png, diff_timeline.png, history_trend.png.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifactsDir, check, colorDistance, done, eq, fail, frames, launchBrowser, miBinary, pixelsAt, poll, repoDir, resolvedAfter } from './lib.mjs';
import { startServer } from './server.mjs';

const fx = (p) => join(repoDir, 'test/fixtures', p);
const art = artifactsDir();
mkdirSync(art, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(art, `${name}.png`) });

// Node counts of the compiled levels from python3-onnx (see above).
const kBaseCompiledNodes = 40;
const kNewCompiledNodes = 34;
// web/src/base/palette.ts: kDiffAdded, kDiffRemoved, kDiffSame.
const kAdded = [0x3f, 0xae, 0x5a];
const kRemoved = [0xe3, 0x77, 0xc2];
const kSame = [0xed, 0xed, 0xed];

const server = await startServer([fx('resnet18/ort_extended'), fx('resnet18/ort_all')]);
console.log(`  server at ${server.url}`);
const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
const errors = [];
page.on('pageerror', (e) => errors.push(e.message));
const diffRequests = [];
page.on('request', (r) => { if (r.url().includes('/api/diff')) diffRequests.push(r.url().replace(/^.*\/api/, '/api')); });
await page.goto(`${server.url}#run=0&level=compiled`);
await poll(page, () => document.body.dataset.ready === '1', null, 60000, 'runs loaded');

// Compare: the right pane on run 1's compiled level.
await page.click('#compare');
await poll(page, () => window.__miDebug.view('graph').pane(1)?.current, null, 60000, 'the second pane');
await page.selectOption('#pane1-level', '1:compiled');
await poll(page, () => {
  const s = window.__miDebug.state(), p = window.__miDebug.view('graph').pane(1);
  return s.panes[1].run === 1 && p.current && p.view?.run === 1 && p.scene;
}, null, 60000, 'run 1 compiled in the right pane');
const option = await page.evaluate(() => {
  const o = document.querySelector('#color-by option[value="diff"]');
  return { disabled: o.disabled, text: o.textContent };
});
check(!option.disabled, `the colour menu offers the diff (${option.text})`);
check(option.text.includes('run 0 → run 1'), `it names the runs: ${option.text}`);

// The diff: one request, the legend with counts.
await page.selectOption('#color-by', 'diff');
const legend = await poll(page, () => {
  const side = document.querySelector('#heat-legend .diff-side');
  if (!side) return false;
  const count = (k) => Number(document.querySelector(`#heat-legend .diff-${k} .count`)?.textContent ?? NaN);
  return { side: side.textContent, added: count('added'), removed: count('removed'), changed: count('changed'), renamed: count('renamed'), same: count('same') };
}, null, 120000, 'the diff legend');
eq(JSON.stringify(diffRequests), JSON.stringify(['/api/diff?base=0&new=1']), 'one diff request, base = left pane, new = right pane');
// The report itself, asked from here (not the page): the page's requests stay its own.
const report = await (await fetch(`${server.url}api/diff?base=0&new=1`)).json();
const compiled = report.structure.find((l) => l.level === 'compiled');
check(!!compiled, 'the report has the compiled level');
eq(compiled?.base_nodes, kBaseCompiledNodes, 'base compiled nodes (python3-onnx)');
eq(compiled?.new_nodes, kNewCompiledNodes, 'new compiled nodes (python3-onnx)');
// The legend is the active pane's (the left, base) side.
check(legend.side.includes('run 0 (base)'), `the legend names the side: ${legend.side}`);
eq(legend.added, 0, 'the base side has no added node');
eq(legend.removed + legend.changed + legend.renamed + legend.same, kBaseCompiledNodes, `base side counts add up to its nodes (${JSON.stringify(legend)})`);
check(legend.removed > 0, `the base side has removed nodes (FusedConv 9 -> 0): ${legend.removed}`);
eq(legend.removed, compiled?.removed, 'removed as the report says');
// The headline: the gate's verdict as the report has it; the changed nodes listed, a click selects one.
const gate = await page.evaluate(() => [...document.querySelectorAll('#heat-legend .diff-summary')].map((e) => e.textContent));
check(gate.some((l) => l.startsWith(`gate: ${report.failed ? 'fails' : 'passes'}`)), `the legend says the gate's verdict (${gate.join(' | ')})`);
const listed = await page.evaluate(() => [...document.querySelectorAll('#heat-legend .diff-node')].map((b) => Number(b.dataset.node)));
const baseChanged = compiled.changes.map((c) => c.base_node_id).filter((id) => id !== null);
eq(JSON.stringify(listed), JSON.stringify(baseChanged.slice(0, 30)), 'the legend lists the base side\'s changed nodes in graph order');
if (listed.length) {
  const v0 = await page.evaluate(() => window.__miDebug.state().selectionVersion);
  await page.click('#heat-legend .diff-node');
  await resolvedAfter(page, v0);
  const picked = await page.evaluate(() => ({ sel: window.__miDebug.state().selection, node: window.__miDebug.state().panes[0].node }));
  eq(picked.sel?.id, listed[0], 'a click on a listed node selects it');
  eq(picked.node, listed[0], 'in the base pane');
}
// The right pane (click it to make it active): the new side.
const sides = await page.evaluate(() => {
  const g = window.__miDebug.view('graph');
  return [0, 1].map((k) => ({ ...g.pane(k).scene.heat.diff }));
});
eq(sides[1].removed, 0, 'the new side has no removed node');
eq(sides[1].added + sides[1].changed + sides[1].renamed + sides[1].same, kNewCompiledNodes, `new side counts add up to its nodes (${JSON.stringify(sides[1])})`);
check(sides[1].added > 0, `the new side has added nodes (ReorderOutput 0 -> 6): ${sides[1].added}`);
eq(sides[1].added, compiled?.added, 'added as the report says');
eq(sides[0].changed, sides[1].changed, 'changed nodes are on both sides');
eq(sides[0].renamed, sides[1].renamed, 'renamed nodes are on both sides');

// Pixels: the centre of an added node (right pane), a removed one (left pane).
const kindIds = (k, kind) => compiled.changes.filter((c) => c.kind === kind).map((c) => (k === 0 ? c.base_node_id : c.new_node_id));
async function centreOf(k, ids) {
  return page.evaluate(async ({ k, ids }) => {
    const g = window.__miDebug.view('graph'), p = g.pane(k);
    for (const id of ids) {
      await p.reveal(id);
      await p.settled();
      if (!p.nodeVisible(id)) continue;
      p.centreOnNode(id);
      const c = g.itemScreenCenter(p.itemOfNode(id), k);
      const r = p.canvas.getBoundingClientRect();
      if (c) return { id, x: r.left + c.x, y: r.top + c.y };
    }
    return null;
  }, { k, ids });
}
const added = await centreOf(1, kindIds(1, 'added'));
const removed = await centreOf(0, kindIds(0, 'removed'));
await frames(page);
const png = await shot(page, 'diff_compare');
if (check(added !== null && removed !== null, 'an added and a removed node on screen')) {
  // Just inside the box's left edge: the fill, not the op-type text.
  const box = await page.evaluate(({ k, id }) => {
    const g = window.__miDebug.view('graph'), p = g.pane(k), i = p.itemOfNode(id), b = p.scene.layout.itemBox;
    const r = p.canvas.getBoundingClientRect();
    return { x: r.left + p.cam.toScreenX(b[4 * i] + 6), y: r.top + p.cam.toScreenY(b[4 * i + 1] + b[4 * i + 3] / 2) };
  }, { k: 1, id: added.id });
  const box0 = await page.evaluate(({ k, id }) => {
    const g = window.__miDebug.view('graph'), p = g.pane(k), i = p.itemOfNode(id), b = p.scene.layout.itemBox;
    const r = p.canvas.getBoundingClientRect();
    return { x: r.left + p.cam.toScreenX(b[4 * i] + 6), y: r.top + p.cam.toScreenY(b[4 * i + 1] + b[4 * i + 3] / 2) };
  }, { k: 0, id: removed.id });
  const [pa, pr] = await pixelsAt(page, png, [[box.x, box.y], [box0.x, box0.y]]);
  check(colorDistance(pa, kAdded) <= 40, `an added node is green (${pa} at ${box.x},${box.y})`);
  check(colorDistance(pr, kRemoved) <= 40, `a removed node is pink (${pr} at ${box0.x},${box0.y})`);
  check(colorDistance(pa, kSame) > 40, 'the added colour is not the unchanged grey');
}
// Colour away and back: no second request (the diff is kept).
await page.selectOption('#color-by', 'op');
await page.selectOption('#color-by', 'diff');
await poll(page, () => document.querySelector('#heat-legend .diff-side'), null, 30000, 'the legend back');
eq(diffRequests.length, 1, 'switching back to the diff asks nothing');

// The picture of the docs (docs/images/ui_diff.png): every node unfolded,
// both panes fitted.
{
  const docs = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  docs.on('pageerror', (e) => errors.push(e.message));
  await docs.goto(`${server.url}?max_items=0#run=0&level=compiled&compare=1:compiled&color=diff&panel=graph`);
  await poll(docs, () => {
    const g = window.__miDebug?.view('graph');
    return document.body.dataset.ready === '1' && g && [0, 1].every((k) => g.pane(k)?.current && g.pane(k).scene?.heat?.diff?.side);
  }, null, 120000, 'the docs page coloured by diff');
  await docs.evaluate(() => { const g = window.__miDebug.view('graph'); for (const k of [0, 1]) g.pane(k).fit(); });
  await frames(docs);
  await shot(docs, 'ui_diff');
  await docs.close();
}

// One run in both panes: its framework level against its compiled level.
await page.selectOption('#pane1-level', '1:compiled');
await page.evaluate(() => { location.hash = '#run=1&level=framework&compare=1:compiled&color=diff'; });
const levels = await poll(page, () => {
  const g = window.__miDebug.view('graph');
  const d = [0, 1].map((k) => g.pane(k)?.scene?.heat?.diff);
  return d[0]?.side && d[1]?.side && window.__miDebug.state().panes[0].run === 1 && d;
}, null, 120000, 'the levels diff');
check(diffRequests.includes('/api/diff?base=1&new=1'), `the levels diff asked for (${diffRequests.join(', ')})`);
check(levels[0].side.startsWith('framework (base)') && levels[1].side.startsWith('compiled (new)'), `sides: ${levels[0].side} | ${levels[1].side}`);
eq(levels[1].added + levels[1].changed + levels[1].renamed + levels[1].same, kNewCompiledNodes, 'compiled side counts add up to its nodes');
await frames(page);
await shot(page, 'diff_levels');

// The timeline compared with run 1: marks of the op types found slower.
await page.evaluate(() => { location.hash = '#run=0&level=compiled&tab=timeline&tcompare=1'; });
const marks = await poll(page, () => {
  const v = window.__miDebug.view('timeline');
  const st = v?.slowerState?.();
  return st && st.note && !st.note.endsWith('…') && st;
}, null, 120000, 'the timeline compare marks');
const slowerOps = report.timing
  ? [...report.timing.op_types, ...report.timing.unlinked_tasks].filter((d) => d.verdict === 'slower').map((d) => d.key).sort()
  : [];
eq(JSON.stringify([...marks.labels].sort()), JSON.stringify(slowerOps), `marked labels are the diff's slower op types (${marks.note})`);
check(diffRequests.filter((u) => u === '/api/diff?base=0&new=1').length === 1, 'the timeline reuses the diff the graph asked for');
if (slowerOps.length) {
  // The whole trace, so that the compared run's tasks are in view (it opens on the main run's steps).
  await page.click('.mi-tl-bar button:text-is("whole")');
  const drawn = await poll(page, () => window.__miDebug.view('timeline').slowerState().marked, null, 60000, 'marked boxes drawn');
  check(drawn > 0, `tasks of slower op types are marked (${drawn})`);
}
// The slower nodes' tasks in the compared run, outlined: the tasks the
// server lists for those nodes (at most 20 nodes, the most slowed first).
const slowerNodeIds = report.timing
  ? report.timing.nodes.filter((d) => d.verdict === 'slower' && d.new_node_id !== null).sort((a, b) => b.delta_ns - a.delta_ns).slice(0, 20).map((d) => d.new_node_id)
  : [];
const expectedTasks = new Set();
for (const id of slowerNodeIds) {
  const t = await (await fetch(`${server.url}api/runs/1/tasks?node=${id}`)).json();
  for (const task of t.tasks) expectedTasks.add(task);
}
const outlined = await poll(page, (n) => {
  const st = window.__miDebug.view('timeline').slowerState();
  return st && st.taskIds.length === n && (n === 0 || st.tasks.length > 0) && st;
}, expectedTasks.size, 60000, 'the slower nodes\' tasks outlined');
eq(JSON.stringify([...outlined.taskIds].sort((a, b) => a - b)), JSON.stringify([...expectedTasks].sort((a, b) => a - b)),
  `the outlined tasks are the slower nodes' tasks (${slowerNodeIds.length} nodes)`);
check(outlined.tasks.every((t) => t.source === 1), 'outlined in the compared run');
await frames(page);
await shot(page, 'diff_timeline');

eq(errors.join('; '), '', 'no page errors');
await page.close();
await server.stop();

// ---- the history tab ----
const tmp = mkdtempSync(join(tmpdir(), 'mi-history-ui-'));
const db = join(tmp, 'history.db');
const cli = (...args) => {
  const r = spawnSync(miBinary(), args, { encoding: 'utf8' });
  if (r.status !== 0) fail(`model-inspector ${args.join(' ')}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};
cli('history', 'add', '--history', db, '--model', 'resnet18', '--label', 'extended', fx('resnet18/ort_extended'));
cli('history', 'add', '--history', db, '--model', 'resnet18', '--label', 'all', fx('resnet18/ort_all'));
cli('history', 'add', '--history', db, '--model', 'transformer', '--label', 'all', fx('transformer/ort_all'));
const cliTrend = JSON.parse(cli('history', 'trend', 'resnet18', '--history', db, '--format', 'json'));
eq(cliTrend.points.length, 2, 'the CLI trend of resnet18 has its two runs');
const hserver = await startServer(['--history', db, fx('resnet18/ort_all')]);
const hpage = await browser.newPage({ viewport: { width: 1400, height: 900 } });
hpage.on('pageerror', (e) => errors.push(e.message));
await hpage.goto(`${hserver.url}#tab=history&panel=bottom`);
await poll(hpage, () => document.body.dataset.ready === '1', null, 60000, 'runs loaded');
const offered = await poll(hpage, () => !window.__miDebug.state().hiddenTabs.includes('history') && 'yes', null, 30000, 'the history tab offered');
eq(offered, 'yes', 'the history tab is offered');
await hpage.evaluate(() => window.__miDebug.view('history').settled());
const hs = await poll(hpage, () => {
  const v = window.__miDebug.view('history');
  return v.state.trend && !v.state.busy && { models: v.state.models, model: v.state.model, points: v.state.trend.points.length };
}, null, 60000, 'the trend drawn');
eq(JSON.stringify(hs.models), JSON.stringify(['transformer', 'resnet18']), 'models, the one recorded last first');
eq(hs.model, 'transformer', 'the model recorded last is shown first');
await hpage.selectOption('#history-model', 'resnet18');
const drawn = await poll(hpage, () => {
  const v = window.__miDebug.view('history');
  if (v.state.busy || v.state.model !== 'resnet18' || v.state.trend?.model !== 'resnet18') return false;
  const dots = [...document.querySelectorAll('.history-chart circle.history-point')];
  return {
    dots: dots.map((c) => ({ run: Number(c.dataset.run), title: c.querySelector('title').textContent, x: c.getBoundingClientRect().x + c.getBoundingClientRect().width / 2, y: c.getBoundingClientRect().y + c.getBoundingClientRect().height / 2 })),
    band: !!document.querySelector('.history-chart polygon.history-band'),
    rows: [...document.querySelectorAll('.history-table tr[data-run]')].map((r) => Number(r.dataset.run)),
  };
}, null, 60000, 'the resnet18 trend');
eq(drawn.dots.length, cliTrend.points.length, 'one dot per run with a trace');
check(drawn.band, 'the spread band is drawn');
eq(JSON.stringify(drawn.rows), JSON.stringify(cliTrend.points.map((p) => p.run_id).reverse()), 'the table lists the runs, newest first');
const fmtMs = (ns) => `${(ns / 1e6).toFixed(3)} ms`;
for (const [k, p] of cliTrend.points.entries()) {
  const d = drawn.dots[k];
  eq(d?.run, p.run_id, `dot ${k} is run ${p.run_id}`);
  const median = p.total_median_ns >= 1e6 ? fmtMs(p.total_median_ns) : `${(p.total_median_ns / 1e3).toFixed(1)} µs`;
  check(d?.title.includes(`total ${median} (median)`), `dot ${k}: the CLI's median ${median} (${d?.title})`);
}
// A slower run sits higher: the dots' order on screen follows the CLI's medians.
if (cliTrend.points.length === 2 && cliTrend.points[0].total_median_ns !== cliTrend.points[1].total_median_ns) {
  const higher = cliTrend.points[0].total_median_ns > cliTrend.points[1].total_median_ns ? 0 : 1;
  check(drawn.dots[higher].y < drawn.dots[1 - higher].y, 'the slower run is drawn higher');
}
const hpng = await hpage.screenshot({ path: join(art, 'history_trend.png') });
const [dotPx] = await pixelsAt(hpage, hpng, [[drawn.dots[0].x, drawn.dots[0].y]]);
check(colorDistance(dotPx, [0x2f, 0x6f, 0xde]) <= 40, `a dot is drawn in the trend's blue (${dotPx})`);
eq(errors.join('; '), '', 'no page errors (history)');
await browser.close();
await hserver.stop();
rmSync(tmp, { recursive: true, force: true });
done('e2e_diff_test');
