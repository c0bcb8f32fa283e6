// End-to-end test of the linked views (timeline, mapping table,
// summary and graph panes around one selection): one real server
// (`model-inspector open`, MI_BINARY, embedded UI) with three runs — the
// bundled ORT ResNet-18 run, the ORT transformer run, and an Ascend run (the
// GE graph dumps of test/fixtures/ge/resnet_block with an msprof op_summary
// written here whose kernels name the Build graph's nodes, so tasks link to
// nodes and conv1's fused_from is scale_conv1, conv1, bn_conv1) — driven
// through Debian's Chromium:
//   - click a Conv node in the graph → its tasks (GET /tasks?node=) are the
//     timeline's highlighted tasks, and its mapping row is marked;
//   - click a task on the timeline → details show the task, the compiled
//     graph centres on its node, the framework level outlines its fused_from;
//   - select an op type in the summary → the timeline asks for op=<type> and
//     draws only that type, the graph highlights the type's nodes;
//   - shift-drag a range on the timeline → the summary view shows the range
//     summary, equal to `model-inspector summary RUN --from-us A --to-us B
//     --format json` of the CLI;
//   - mapping: virtualised rows, server sort by a header click, a node cell /
//     fused_from entry / tasks cell selects that object everywhere; a node
//     selected in the graph whose row is far down is scrolled into sight;
//   - the URL hash records the selection, tab and timeline compare, and a
//     new page with it restores them;
//   - several runs: the run picker moves the timeline; timeline compare of two runs.
// The UI is read through its debug surface (window.__miDebug: the store's
// state, the views' handles) and waited on by its state, never by sleeps.
// Screenshots: ui_linked_*, and ui_timeline (docs/images/ui_timeline.png is a copy).

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  artifactsDir, check, clickEmptyGraph, clickNode, done, eq, fail, frames, launchBrowser, miBinary, poll, repoDir, resolvedAfter,
} from './lib.mjs';
import { startServer } from './server.mjs';

const art = artifactsDir();
mkdirSync(art, { recursive: true });
const skipped = (what) => console.log(`  skipped: ${what}`);

// ---- the Ascend run: GE dumps + an op_summary naming the Build graph's nodes ----
const ascendDir = mkdtempSync(join(tmpdir(), 'mi-linked-ascend-'));
for (const f of ['ge_proto_00000000_graph_1_PreRunBegin.txt', 'ge_proto_00000120_graph_1_Build.txt']) {
  copyFileSync(join(repoDir, 'test/fixtures/ge/resnet_block', f), join(ascendDir, f));
}
{
  // msprof op_summary, current variant (shared/formats/ascend.md §1.3): three
  // iterations of the Build graph's five kernels on stream 2.
  const header = ['Device_id', 'Model ID', 'Task ID', 'Stream ID', 'Op Name', 'OP Type', 'OP State', 'Task Type', 'Task Start Time(us)',
    'Task Duration(us)', 'Task Wait Time(us)', 'Block Num', 'Mix Block Num', 'HF32 Eligible', 'Input Shapes', 'Input Data Types',
    'Input Formats', 'Output Shapes', 'Output Data Types', 'Output Formats', 'Context ID', 'aicore_time(us)', 'aic_total_cycles',
    'aiv_time(us)', 'aiv_total_cycles', 'cube_utilization(%)'];
  const kernels = [['trans_TransData_0', 'TransData', 'AI_VECTOR_CORE', 12.5], ['conv1', 'Conv2D', 'AI_CORE', 310.25],
    ['relu1', 'Relu', 'AI_VECTOR_CORE', 20.5], ['pool1', 'MaxPool', 'AI_VECTOR_CORE', 40.75], ['trans_TransData_1', 'TransData', 'AI_VECTOR_CORE', 8.5]];
  const lines = [header.join(',')];
  let t = 1717575960208000, task = 10;
  for (let it = 0; it < 3; ++it) {
    for (const [name, type, unit, dur] of kernels) {
      lines.push(['0', '1', String(task++), '2', name, type, 'static', unit, t.toFixed(3), String(dur), '0', '32', '0', 'NO',
        '"1,3,224,224"', 'DT_FLOAT16', 'NC1HWC0', '"1,4,55,55,16"', 'DT_FLOAT16', 'NC1HWC0', 'N/A', String(dur), '1000', '0', '0', '50'].join(','));
      t += dur + 2;
    }
    t += 100;
  }
  writeFileSync(join(ascendDir, 'op_summary_20250101120000.csv'), lines.join('\n') + '\n');
}

const runPaths = [join(repoDir, 'test/fixtures/resnet18/ort_all'), join(repoDir, 'test/fixtures/transformer/ort_all'), ascendDir];
const kResnet = 0, kTransformer = 1, kAscend = 2;
const server = await startServer(runPaths);
// These checks read the graph unfolded to the item budget, top to bottom: the
// first screen before the overview (page option ?fold=budget; the overview
// itself is e2e_overview_test's).
server.url += '?fold=budget';
console.log(`  server at ${server.url}`);
const browser = await launchBrowser();
const shot = (page, name) => page.screenshot({ path: join(art, `${name}.png`) });

/** The timeline has its first window and nothing in flight. */
const timelineIdle = (page) => poll(page, () => {
  const tl = window.__miDebug.view('timeline');
  return tl && tl.windowOf(0) !== null && !tl.busy && window.__miDebug.stats()['timeline.renders'] > 0;
}, null, 60000, 'the timeline window');

/** The selection version now (to wait for the next one's resolution). */
const selVersion = (page) => page.evaluate(() => window.__miDebug.state().selectionVersion);

/** Clears the selection as a user would: "whole run" in the summary for a range, else a click on empty graph space. */
async function clearSelection(page) {
  const sel = await page.evaluate(() => window.__miDebug.state().selection);
  if (!sel) return;
  if (sel.kind !== 'range') { await clickEmptyGraph(page); return; }
  const v = await selVersion(page);
  await page.click('#tabs button[data-tab="summary"]');
  await page.click('#summary button.summary-whole');
  await resolvedAfter(page, v);
}

async function open(hash, viewport = { width: 1500, height: 1000 }) {
  const page = await browser.newPage({ viewport });
  page.errors = [];
  page.failed = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) page.errors.push(m.text()); });
  page.on('response', (r) => { if (r.status() >= 400) page.failed.push(`${r.status()} ${r.url()}`); });
  await page.goto(server.url + hash);
  if (!(await page.$('#bottom'))) fail('the page has no #bottom panel: the binary embeds an older UI; rebuild model-inspector');
  await poll(page, () => Number(document.body.dataset.rendered || 0) > 0 && document.body.dataset.ready, null, 60000, 'first render');
  return page;
}

/** The server's JSON, fetched in the page (same token and origin as the UI). */
const apiJson = (page, path) => page.evaluate(async (p) => (await fetch(p)).json(), path);

/** Screen point of task `taskId` in the timeline's current window (single item), or null. */
const taskPoint = (page, taskId) => page.evaluate((id) => {
  const tl = window.__miDebug.view('timeline'), w = tl.windowOf(0);
  if (!w) return null;
  for (let i = 0; i < w.itemCount; ++i) {
    if (w.task[i] !== id || w.count[i] !== 1) continue;
    const r = tl.canvas.getBoundingClientRect();
    const x0 = Math.max(tl.xOf(w.start[i]), 0), x1 = Math.min(tl.xOf(w.end[i]), r.width);
    const y = tl.rowCenterY(0, w.track[i], w.row[i]);
    if (y === null || x1 - x0 < 2 || y < 20 || y > r.height - 4) return null;
    return { x: r.left + (x0 + x1) / 2, y: r.top + y };
  }
  return null;
}, taskId);

/** Zooms the timeline onto task `t` (details JSON) and clicks it. */
async function clickTask(page, t) {
  await page.evaluate((t) => {
    const tl = window.__miDebug.view('timeline'), pad = Math.max(t.duration_ns, 1000) * 2;
    tl.zoomTo(t.start_ns - pad, t.end_ns + pad);
  }, t);
  await poll(page, () => !window.__miDebug.view('timeline').busy, null, 30000, 'timeline fetch after zoom');
  let pt = null;
  for (let k = 0; k < 40 && !pt; ++k) {
    pt = await taskPoint(page, t.id);
    if (!pt) {
      // Its lane may be scrolled away: scroll the lanes down a step.
      await page.evaluate(() => window.__miDebug.view('timeline').panBy(0, -60));
      await frames(page);
    }
  }
  if (!pt) throw new Error(`task ${t.id} not found as a single item in the timeline window`);
  const v = await selVersion(page);
  await page.mouse.click(pt.x, pt.y);
  await resolvedAfter(page, v);
}

function cliSummary(run, fromUs, toUs) {
  const out = execFileSync(miBinary(), ['summary', runPaths[run], '--from-us', String(fromUs), '--to-us', String(toUs), '--format', 'json', '--quiet'],
    { encoding: 'utf8', maxBuffer: 64 << 20 });
  return JSON.parse(out);
}

const has = { cliWindow: false };
try {
  const help = execFileSync(miBinary(), ['summary', '--help'], { encoding: 'utf8' });
  has.cliWindow = help.includes('--from-us');
} catch { /* checked below */ }

try {
  // ---------------------------------------------------------------- ResNet-18 (ORT)
  const page = await open(`#run=${kResnet}&level=compiled`);
  await timelineIdle(page);
  eq(await page.evaluate(() => window.__miDebug.view('timeline').state.run), kResnet, 'the timeline shows the main pane\'s run');
  const runs = await page.$$eval('#run option', (o) => o.map((x) => x.textContent));
  eq(runs.length, 3, `run picker offers the three runs (${runs.join(' | ')})`);

  // 1. Click a Conv node in the graph → its tasks are highlighted on the timeline.
  const mapping = await apiJson(page, `/api/runs/${kResnet}/mapping?offset=0&limit=200&sort=total_ns&desc=1`);
  const conv = mapping.rows.find((r) => r.kind === 'node' && /Conv/.test(r.op_type) && r.task_count > 0 && r.fused_from.length >= 2);
  if (!check(!!conv, 'a compiled Conv node with tasks and fused_from in the mapping')) throw new Error('no Conv row');
  await clickNode(page, conv.node.id);
  const nodeTasks = await apiJson(page, `/api/runs/${kResnet}/tasks?node=${conv.node.id}`);
  check(nodeTasks.tasks.length === conv.task_count, `tasks?node= lists the row's ${conv.task_count} tasks (${nodeTasks.tasks.length})`);
  const hl = await poll(page, (n) => {
    const s = window.__miDebug.state(), tl = window.__miDebug.view('timeline').state;
    const drawn = tl.highlighted.map((t) => t.id);
    return drawn.length >= n && { sel: s.selection, selected: s.resolved.tasks, drawn, ids: tl.highlightIds };
  }, nodeTasks.tasks.length, 30000, 'highlighted tasks drawn on the timeline');
  eq(hl.sel.kind, 'node', 'graph click selects the node');
  eq([...hl.selected].sort((a, b) => a - b).join(), [...nodeTasks.tasks].sort((a, b) => a - b).join(), 'the node\'s tasks are the timeline highlight');
  eq([...hl.drawn].sort((a, b) => a - b).join(), [...nodeTasks.tasks].sort((a, b) => a - b).join(), 'the timeline drew those tasks as highlighted');
  const summaryMark = await poll(page, () => document.querySelector('#summary tr.op-row.selected')?.dataset.op, null, 30000, 'summary row of the node\'s op type');
  eq(summaryMark, conv.op_type, 'the summary marks the node\'s op-type row');
  await frames(page);
  await shot(page, 'ui_linked_node');
  await shot(page, 'ui_timeline');

  // Lineage on: the node's dependency paths (GET .../paths) are the timeline's
  // path overlay — its ancestors', its own and its descendants' tasks.
  const paths = await apiJson(page, `/api/runs/${kResnet}/levels/compiled/nodes/${conv.node.id}/paths`);
  const expectPath = new Set([...paths.ancestor_tasks, ...nodeTasks.tasks, ...paths.descendant_tasks]);
  check(paths.ancestors.length + paths.descendants.length > 0, `the Conv node has ancestors or descendants (${paths.ancestors.length} / ${paths.descendants.length})`);
  await page.click('#lineage');
  const lin = await poll(page, () => {
    const s = window.__miDebug.state(), tl = window.__miDebug.view('timeline').state;
    return s.resolved.lineageTasks.length > 0 && tl.pathIds.length > 0
      && { lineage: s.resolved.lineageTasks, pathIds: tl.pathIds, lineageItems: window.__miDebug.view('graph').pane(0).highlights.lineage?.length ?? 0 };
  }, null, 30000, 'node paths on the timeline');
  eq([...lin.lineage].sort((a, b) => a - b).join(), [...expectPath].sort((a, b) => a - b).join(), 'lineage tasks = ancestor + own + descendant tasks of /paths');
  eq([...lin.pathIds].sort((a, b) => a - b).join(), [...expectPath].sort((a, b) => a - b).join(), 'the timeline path overlay holds them');
  check(lin.lineageItems > 1, `the graph highlights the lineage too (${lin.lineageItems} items)`);
  await page.click('#lineage');
  await poll(page, () => window.__miDebug.state().resolved.lineageTasks.length === 0 && window.__miDebug.view('timeline').state.pathIds.length === 0, null, 30000, 'lineage off clears the path');

  // Mapping marks the node's row.
  await page.click('#tabs button[data-tab="mapping"]');
  await poll(page, () => document.querySelectorAll('#mapping .mapping-row[data-index]').length > 0, null, 30000, 'mapping rows');
  // (An empty list is truthy: wait until a row is marked.)
  const marked = await poll(page, () => { const m = Array.from(document.querySelectorAll('#mapping .mapping-row.selected')).map((r) => Number(r.dataset.node)); return m.length > 0 && m; }, null, 10000, 'a marked mapping row');
  check(marked.includes(conv.node.id), `mapping marks the selected node's row (${marked})`);
  // A node whose row is far down, selected in the graph: the table asks the
  // server where the row is (find_node= -> found_index) and scrolls it into
  // sight, marked; a filter that drops it gets a note in the bar.
  {
    const far = mapping.rows.map((r, i) => ({ r, i })).filter(({ r }) => r.kind === 'node' && r.task_count > 0).pop();
    const view = await page.evaluate(() => { const v = document.querySelector('#mapping .mapping-viewport'); return { top: v.scrollTop, h: v.clientHeight }; });
    if (!check(!!far && far.i * 24 >= view.top + view.h, `row ${far?.i} of ${mapping.total} starts below the mapping's view (${view.top}+${view.h} px)`)) throw new Error('no far row');
    const located = await apiJson(page, `/api/runs/${kResnet}/mapping?limit=0&find_node=${far.r.node.id}`);
    eq(located.found_index, far.i, 'find_node= gives the row\'s index in the current order');
    await clickNode(page, far.r.node.id);
    const seen = await poll(page, (id) => {
      const v = document.querySelector('#mapping .mapping-viewport'), row = v.querySelector(`.mapping-row[data-node="${id}"]`);
      if (!row) return false;
      const a = row.getBoundingClientRect(), b = v.getBoundingClientRect();
      // Wholly inside the client area (the last row sits at its bottom edge).
      return a.top >= b.top - 0.5 && a.bottom <= b.top + v.clientTop + v.clientHeight + 0.5 && { selected: row.classList.contains('selected'), index: Number(row.dataset.index) };
    }, far.r.node.id, 30000, 'the far row scrolled into sight');
    check(seen.selected && seen.index === far.i, `the selected node's row ${seen.index} is in sight and marked (${seen.selected})`);
    // The user scrolls back up: the table stays there.
    await page.hover('#mapping .mapping-viewport');
    await page.mouse.wheel(0, -100000);
    await poll(page, () => document.querySelector('#mapping .mapping-viewport').scrollTop === 0, null, 10000, 'wheel to the top');
    await poll(page, () => !window.__miDebug.view('mapping').state.locating, null, 30000, 'the locate answer');
    await frames(page);
    eq(await page.evaluate(() => document.querySelector('#mapping .mapping-viewport').scrollTop), 0, 'a user scroll afterwards is not undone');
    await page.fill('#mapping .mapping-filter', 'no such row');
    const note = await poll(page, () => { const n = document.querySelector('#mapping .mapping-find-note'); return !n.hidden && n.textContent; }, null, 30000, 'hidden-row note');
    eq(note, 'selected row hidden by the filter', 'a filter that drops the selected row says so');
    await page.fill('#mapping .mapping-filter', '');
    await poll(page, (n) => document.querySelector('#mapping .mapping-find-note').hidden && window.__miDebug.view('mapping').state.total === n
      && window.__miDebug.view('mapping').rowAt(0) !== null, mapping.total, 30000, 'filter cleared');
  }

  // 2. Mapping: virtualised, server sort, clicks select.
  // Rows are drawn on the frame after their page arrives: wait for them.
  const mstate = await poll(page, () => {
    const m = window.__miDebug.view('mapping').state;
    return m.domRows > 0 && { total: m.total, dom: m.domRows, h: document.querySelector('#mapping .mapping-viewport').clientHeight };
  }, null, 30000, 'mapping rows in the DOM');
  check(mstate.dom > 0 && mstate.dom <= Math.ceil(mstate.h / 24) + 22, `mapping keeps only the visible rows in the DOM (${mstate.dom} of ${mstate.total}, viewport ${mstate.h} px)`);
  const pageRequests = () => page.evaluate(() => window.__miDebug.stats()['mapping.page_requests'] ?? 0);
  const sortedBy = async (col) => {
    const before = await pageRequests();
    await page.click(`#mapping .mapping-head [data-col="${col}"]`);
    await poll(page, (b) => window.__miDebug.stats()['mapping.page_requests'] > b && window.__miDebug.view('mapping').rowAt(0) !== null, before, 30000, `sort by ${col}`);
    return page.evaluate(() => {
      const m = window.__miDebug.view('mapping'), st = m.state, out = [];
      for (let i = 0; i < Math.min(st.total, 100); ++i) out.push(m.rowAt(i));
      return { rows: out, sort: st.sort, desc: st.desc };
    });
  };
  let s = await sortedBy('tasks');
  check(s.sort === 'task_count' && s.desc, `header click sorts by task count, descending (${s.sort} ${s.desc})`);
  check(s.rows.every((r, i) => i === 0 || s.rows[i - 1].task_count >= r.task_count), 'rows descend by task count');
  s = await sortedBy('tasks');
  check(!s.desc && s.rows.every((r, i) => i === 0 || s.rows[i - 1].task_count <= r.task_count), 'second click: ascending');
  s = await sortedBy('node');
  check(s.sort === 'name' && s.rows.every((r, i) => i === 0 || s.rows[i - 1].name.localeCompare(r.name, 'en') <= 0 || s.rows[i - 1].name <= r.name),
    `node header sorts by name (${s.rows.slice(0, 4).map((r) => r.name)})`);
  s = await sortedBy('total');
  check(s.sort === 'total_ns' && s.desc && s.rows.every((r, i) => i === 0 || s.rows[i - 1].total_ns >= r.total_ns), 'total header sorts by total time');
  // Filter box and status filter (server side).
  {
    const before = await pageRequests();
    await page.fill('#mapping .mapping-filter', 'Relu');
    await poll(page, (b) => window.__miDebug.stats()['mapping.page_requests'] > b && window.__miDebug.view('mapping').rowAt(0) !== null, before, 30000, 'mapping filter');
    const f = await page.evaluate(() => {
      const m = window.__miDebug.view('mapping'), total = m.state.total, out = [];
      for (let i = 0; i < total; ++i) out.push(m.rowAt(i));
      return { total, rows: out };
    });
    check(f.total > 0 && f.total < mstate.total && f.rows.every((r) => r && JSON.stringify(r).toLowerCase().includes('relu')), `filter box: ${f.total} of ${mstate.total} rows, all mention Relu`);
    await page.fill('#mapping .mapping-filter', '');
    // The cleared box answers after its 200 ms debounce: wait for its rows before the status filter.
    await poll(page, (n) => { const m = window.__miDebug.view('mapping'); return m.state.query === '' && m.state.total === n && m.rowAt(0) !== null; },
      mstate.total, 30000, 'filter box cleared');
    const b2 = await pageRequests();
    await page.selectOption('#mapping .mapping-status', 'inserted');
    await poll(page, (b) => window.__miDebug.stats()['mapping.page_requests'] > b && window.__miDebug.view('mapping').rowAt(0) !== null, b2, 30000, 'status filter');
    const st = await page.evaluate(() => {
      const m = window.__miDebug.view('mapping'), total = m.state.total, out = [];
      for (let i = 0; i < total; ++i) out.push(m.rowAt(i)?.status);
      return out;
    });
    check(st.length > 0 && st.every((x) => x === 'inserted'), `status filter: ${st.length} inserted rows`);
    await page.selectOption('#mapping .mapping-status', '');
    await poll(page, (n) => window.__miDebug.view('mapping').state.total === n && window.__miDebug.view('mapping').rowAt(0) !== null, mstate.total, 30000, 'filters cleared');
  }
  // A node cell selects the node in the graph.
  const rowK = s.rows.findIndex((r) => r.kind === 'node' && r.fused_from.length >= 2 && r.node.id !== conv.node.id);
  if (check(rowK >= 0, 'a mapping row with fused_from')) {
    const row = s.rows[rowK];
    let v = await selVersion(page);
    await page.click(`#mapping .mapping-row[data-index="${rowK}"] .col-node`);
    await resolvedAfter(page, v);
    await poll(page, (id) => window.__miDebug.state().panes[0].node === id && document.querySelector('#details .node-name')?.textContent !== undefined, row.node.id, 30000, 'node selected from the mapping');
    eq(await page.evaluate(() => window.__miDebug.state().panes[0].level), 'compiled', 'node cell: the compiled level stays');
    // The tasks cell selects the node's tasks.
    v = await selVersion(page);
    await page.click(`#mapping .mapping-row[data-index="${rowK}"] .col-tasks`);
    await resolvedAfter(page, v);
    const sel = await page.evaluate(() => window.__miDebug.state().selection);
    eq(sel.kind === 'task' && sel.ids.length, row.task_count, 'tasks cell selects the row\'s tasks');
    // A fused_from entry selects the framework node (the graph switches level).
    v = await selVersion(page);
    const ff = row.fused_from[0];
    await page.click(`#mapping .mapping-row[data-index="${rowK}"] .ff-link[data-node="${ff.id}"]`);
    await resolvedAfter(page, v);
    await poll(page, (id) => window.__miDebug.state().panes[0].level === 'framework' && window.__miDebug.state().panes[0].node === id, ff.id, 30000, 'fused_from entry opens the framework node');
    check(true, `fused_from entry ${ff.name} selected on the framework level`);
    await shot(page, 'ui_linked_mapping');
  }

  // 3. A task on the timeline → details show it, the graph centres on its node, the framework level outlines its fused_from.
  await page.click('#levels button[data-level="compiled"]');
  await poll(page, () => window.__miDebug.state().panes[0].level === 'compiled' && window.__miDebug.view('graph').pane(0).current);
  await page.click('#tabs button[data-tab="timeline"]');
  const task = await apiJson(page, `/api/runs/${kResnet}/tasks/${nodeTasks.tasks[0]}`);
  check(task.node && task.node.id === conv.node.id && task.fused_from.length >= 2, `task ${task.id} runs compiled node ${conv.node.id} with fused_from (${JSON.stringify(task.node)})`);
  await clickTask(page, task);
  // The details show the task; the graph selects its node and centres on it.
  const afterTask = await poll(page, (id) => {
    const D = window.__miDebug, g = D.view('graph'), p = g.pane(0), s = D.state();
    const it = p.itemOfNode(id), c = it >= 0 ? g.itemScreenCenter(it) : null;
    const centred = c && Math.abs(c.x - p.cam.viewW / 2) < 4 && Math.abs(c.y - p.cam.viewH / 2) < 4;
    return document.querySelector('#details .task-name') && s.panes[0].node === id && centred && { sel: s.selection, node: s.panes[0].node, c, w: p.cam.viewW, h: p.cam.viewH,
      details: document.getElementById('details').textContent, tl: D.view('timeline').state.selected };
  }, task.node.id, 30000, 'task details, its node selected and centred');
  eq(afterTask.sel.kind === 'task' && afterTask.sel.ids[0], task.id, 'timeline click selects the task');
  eq(afterTask.tl.join(), String(task.id), 'the timeline\'s own selection is the task');
  eq(afterTask.node, task.node.id, 'the compiled graph selects the task\'s node');
  check(afterTask.c && Math.abs(afterTask.c.x - afterTask.w / 2) < 4 && Math.abs(afterTask.c.y - afterTask.h / 2) < 4, `the graph centres on the task's node (${JSON.stringify(afterTask.c)} in ${afterTask.w}×${afterTask.h})`);
  check(afterTask.details.includes(task.name) && afterTask.details.includes(task.track.name) && /Fused from/.test(afterTask.details),
    'details show the task: name, track, fused_from');
  check(afterTask.details.includes(task.node.name), 'details link the task\'s node');
  await shot(page, 'ui_linked_task');
  const taskHash = await page.evaluate(() => location.hash);
  check(taskHash.includes(`sel=task:${task.id}`), `the hash records the task selection (${taskHash})`);
  // Framework level: the task's fused_from nodes are outlined.
  await page.click('#levels button[data-level="framework"]');
  const fw = await poll(page, (n) => {
    const p = window.__miDebug.view('graph').pane(0), visible = p.linkedIds.filter((id) => p.nodeVisible(id)).length;
    return p.view.level === 'framework' && p.linkedIds.length === n && visible === n
      && { ids: p.linkedIds, visible, items: (p.highlights.linked ?? []).length };
  }, task.fused_from.length, 30000, 'fused_from revealed and outlined on the framework level');
  eq([...fw.ids].sort((a, b) => a - b).join(), task.fused_from.map((r) => r.id).sort((a, b) => a - b).join(), 'framework level: the task\'s fused_from nodes are linked');
  check(fw.visible === task.fused_from.length && fw.items > 0, `framework level: fused_from revealed and drawn (${fw.visible} visible, ${fw.items} items)`);
  await shot(page, 'ui_linked_fused_from');

  // 4. Deep link: a new page with the task hash restores the selection.
  const p2 = await open(taskHash, { width: 1200, height: 900 });
  await timelineIdle(p2);
  const restored = await poll(p2, (id) => {
    const st = window.__miDebug.state(), s = st.selection;
    return s && s.kind === 'task' && document.querySelector('#details .task-name') && st.resolved.tasks.includes(id) && st.resolved.done
      && { s, node: st.panes[0].node, level: st.panes[0].level };
  }, task.id, 30000, 'deep link restores the task');
  eq(restored.s.ids.join(), String(task.id), 'deep link: task selection restored');
  check(restored.level !== 'compiled' || restored.node === task.node.id, `deep link: graph shows the task's node (${JSON.stringify(restored)})`);
  eq(p2.errors.join('; '), '', 'no page errors (deep link)');
  await p2.close();

  // 5. Op type: select Conv in the summary → timeline filtered to it, graph highlights its nodes.
  await page.click('#tabs button[data-tab="summary"]');
  await poll(page, () => document.querySelectorAll('#summary tr.op-row').length > 0, null, 30000, 'summary rows');
  const summaryRows = await page.$$eval('#summary tr.op-row', (r) => r.map((x) => x.dataset.op));
  const apiSummary = await apiJson(page, `/api/runs/${kResnet}/summary`);
  eq(summaryRows.join(), apiSummary.op_types.map((o) => o.op_type).join(), 'summary view lists the summary\'s op types in order');
  const bars = await page.$$eval('#summary svg.op-chart g.bar', (g) => g.length);
  check(bars === Math.min(16, apiSummary.op_types.filter((o) => o.kind !== 'sync').length), `bar chart: one bar per op type that is not a wait (${bars})`);
  const streams = await page.$$eval('#summary table.summary-streams tr[data-stream]', (r) => r.length);
  eq(streams, apiSummary.streams.length, 'summary view: one row per stream');
  // The whole-trace analyses summary.json carries: idle by cause, memory, critical path.
  const fmtBytes = (b) => (b >= 1024 ** 3 ? `${(b / 1024 ** 3).toFixed(1)} GiB` : b >= 1024 ** 2 ? `${(b / 1024 ** 2).toFixed(1)} MiB`
    : b >= 1024 ? `${(b / 1024).toFixed(1)} KiB` : `${b} B`);
  const whole = await page.evaluate(() => ({
    idle: Array.from(document.querySelectorAll('#summary table.summary-idle tr[data-stream]'), (r) => r.dataset.stream),
    memoryPeak: document.querySelector('#summary .memory-peak')?.textContent ?? null,
    cpShare: document.querySelector('#summary .critical-path .cp-share')?.textContent ?? null,
    overlap: document.querySelectorAll('#summary table.summary-overlap tr[data-device]').length,
    hostSync: document.querySelector('#summary .host-sync')?.textContent ?? null,
  }));
  const idleStreams = apiSummary.streams.filter((st) => st.idle).map((st) => String(st.stream_id));
  if (check(idleStreams.length > 0, `the ResNet-18 summary has idle breakdowns (${idleStreams.length} streams)`)) {
    eq(whole.idle.join(), idleStreams.join(), 'summary view: one idle-by-cause row per stream with idle fields');
  }
  if (check(apiSummary.memory, 'the ResNet-18 summary has a memory estimate')) {
    eq(whole.memoryPeak, fmtBytes(apiSummary.memory.peak_activation_bytes), 'summary view: memory peak = summary.memory.peak_activation_bytes');
  }
  if (check(apiSummary.critical_path, 'the ResNet-18 summary has a critical path')) {
    eq(whole.cpShare, `${(apiSummary.critical_path.share * 100).toFixed(1)} %`, 'summary view: critical path share = summary.critical_path.share');
  }
  eq(whole.overlap, (apiSummary.overlap ?? []).length, 'summary view: one overlap row per device');
  if (apiSummary.host_sync) {
    const calls = apiSummary.host_sync.calls;
    check(whole.hostSync && (calls ? whole.hostSync.startsWith(`${calls} call(s)`) : /no host synchronize calls/.test(whole.hostSync)),
      `summary view: host synchronize line for ${calls} call(s) (${whole.hostSync})`);
  }
  await shot(page, 'ui_linked_summary');
  const opType = apiSummary.op_types.find((o) => /Conv/.test(o.op_type)).op_type;
  let v = await selVersion(page);
  await page.click(`#summary tr.op-row[data-op="${opType}"]`);
  await resolvedAfter(page, v);
  await page.click('#tabs button[data-tab="timeline"]');
  await poll(page, (op) => {
    const tl = window.__miDebug.view('timeline');
    return (window.__miDebug.stats()['timeline.last_request'] ?? '').includes(`op=${encodeURIComponent(op)}`) && !tl.busy;
  }, opType, 30000, 'timeline request with the op filter');
  const filtered = await page.evaluate(() => {
    const tl = window.__miDebug.view('timeline'), w = tl.windowOf(0), labels = new Set();
    for (let i = 0; i < w.itemCount; ++i) labels.add(w.str(w.label[i]));
    return { labels: [...labels], items: w.itemCount, matches: window.__miDebug.view('graph').pane(0).matchIds.length, hash: location.hash };
  });
  check(filtered.items > 0 && filtered.labels.length === 1 && filtered.labels[0] === opType, `timeline shows only ${opType} (${filtered.labels})`);
  check(filtered.matches > 0, `graph highlights the ${opType} nodes (${filtered.matches})`);
  check(filtered.hash.includes(`sel=op:${opType}`), `hash records the op type (${filtered.hash})`);
  const searchOps = await page.$$eval('#results .result .op', (e) => e.map((x) => x.textContent));
  check(searchOps.length > 0 && searchOps.every((o) => o === opType), `the search list shows the ${opType} nodes`);
  await shot(page, 'ui_linked_op_filter');
  // Clearing the selection (click on empty graph space) removes the filter.
  await clickEmptyGraph(page);
  await poll(page, () => !(window.__miDebug.stats()['timeline.last_request'] ?? '').includes('op=') && !window.__miDebug.view('timeline').busy, null, 30000, 'filter cleared');
  eq(await page.evaluate(() => window.__miDebug.view('graph').pane(0).matchIds.length + document.querySelectorAll('#results .result').length), 0, 'clearing the op type clears the graph highlight and the search list');

  // 6. Area selection on the timeline → range summary, checked against the CLI.
  await page.evaluate(() => { const tl = window.__miDebug.view('timeline'), m = tl.state; tl.zoomTo(m.startNs, m.endNs); });
  await page.keyboard.press('Escape');
  await page.evaluate(() => window.__miDebug.view('timeline').canvas.focus());
  await page.keyboard.press('0');
  await poll(page, () => !window.__miDebug.view('timeline').busy, null, 30000, 'timeline fit');
  const box = await page.evaluate(() => {
    const tl = window.__miDebug.view('timeline'), r = tl.canvas.getBoundingClientRect(), lanes = tl.laneBoxes().filter((l) => l.source === 0 && l.h > 0);
    const w = r.width;
    return { x0: r.left + w * 0.45, x1: r.left + w * 0.7, y0: r.top + lanes[0].y + 2, y1: r.top + lanes[lanes.length - 1].y + lanes[lanes.length - 1].h - 2 };
  });
  v = await selVersion(page);
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x0, box.y0);
  await page.mouse.down();
  await page.mouse.move((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2, { steps: 4 });
  await page.mouse.move(box.x1, box.y1, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await resolvedAfter(page, v);
  const range = await page.evaluate(() => ({ sel: window.__miDebug.state().selection, summary: window.__miDebug.state().resolved.rangeSummary, details: document.getElementById('details').textContent, hash: location.hash }));
  if (check(range.sel?.kind === 'range' && range.summary, `shift-drag selects a range with a summary (${JSON.stringify(range.sel)})`)) {
    check(range.hash.includes(`sel=range:${range.sel.startNs}-${range.sel.endNs}`), `hash records the range (${range.hash})`);
    check(/Time range/.test(range.details), 'details show the range summary');
    await page.click('#tabs button[data-tab="summary"]');
    const shown = await page.$$eval('#summary tr.op-row', (r) => r.map((x) => ({ op: x.dataset.op, cells: Array.from(x.children, (c) => c.textContent) })));
    eq(shown.map((r) => r.op).join(), range.summary.op_types.map((o) => o.op_type).join(), 'summary view shows the range\'s op types');
    check(/Range/.test(await page.textContent('#summary .summary-head')), 'summary view says it shows a range');
    const wholeInRange = await page.$$eval('#summary table.summary-idle, #summary table.summary-overlap, #summary .host-sync, #summary .memory-line, #summary .critical-path',
      (e) => e.map((x) => x.className));
    eq(wholeInRange.join(), '', 'range summary: the whole-trace sections (idle, overlap, host sync, memory, critical path) are hidden');
    await shot(page, 'ui_linked_range');
    if (!has.cliWindow) {
      skipped('range summary against the CLI (summary has no --from-us yet)');
    } else {
      // The UI's range in ns; the CLI takes µs: ask for the same range in µs (3 decimals = ns).
      const fromUs = (range.sel.startNs / 1000).toFixed(3), toUs = (range.sel.endNs / 1000).toFixed(3);
      const cli = cliSummary(kResnet, fromUs, toUs);
      console.log(`  range ${fromUs}–${toUs} µs: UI ${range.summary.tasks} tasks, ${range.summary.total_us} µs; CLI ${cli.tasks} tasks, ${cli.total_us} µs`);
      eq(cli.tasks, range.summary.tasks, `range ${fromUs}–${toUs} µs: task count as the CLI`);
      eq(cli.total_us, range.summary.total_us, 'range: total as the CLI');
      const byOp = (s) => Object.fromEntries(s.op_types.map((o) => [o.op_type, [o.calls, o.total_us]]));
      eq(JSON.stringify(byOp(range.summary)), JSON.stringify(byOp(cli)), 'range: per op type calls and totals as the CLI');
      eq(JSON.stringify(range.summary.streams.map((t) => [t.name, t.busy_us])), JSON.stringify(cli.streams.map((t) => [t.name, t.busy_us])), 'range: per stream busy as the CLI');
      // And the numbers in the table are those.
      const first = shown[0], o = cli.op_types[0];
      check(first.cells[3] === String(o.calls), `summary table: ${o.op_type} calls ${first.cells[3]} = CLI ${o.calls}`);
    }
    // Deep link to the range (with the summary tab open).
    const rangeHash = await page.evaluate(() => location.hash);
    check(rangeHash.includes('tab=summary'), `hash records the bottom tab (${rangeHash})`);
    const p3 = await open(rangeHash, { width: 1200, height: 800 });
    const r3 = await poll(p3, () => window.__miDebug.state().resolved.rangeSummary && window.__miDebug.state().selection, null, 30000, 'range deep link');
    eq(`${r3.startNs}-${r3.endNs}`, `${range.sel.startNs}-${range.sel.endNs}`, 'deep link restores the range');
    eq(await p3.evaluate(() => window.__miDebug.state().resolved.rangeSummary.tasks), range.summary.tasks, 'deep link: same range summary');
    eq(await p3.evaluate(() => window.__miDebug.state().tab), 'summary', 'deep link restores the bottom tab');
    await p3.close();
  }

  // 7. Findings of the analyses (when the server has them).
  const analyses = await page.evaluate(async () => { const r = await fetch(`/api/runs/${window.__miDebug.state().panes[0].run}/analyses`); return r.ok ? r.json() : null; });
  if (!analyses) skipped('findings (GET /analyses answers 404: no analyses yet)');
  else if (!analyses.findings?.length) console.log('  analyses: no findings for this run');
  else {
    await clearSelection(page);
    await page.click('#tabs button[data-tab="summary"]');
    await page.waitForSelector('#summary li.finding');
    v = await selVersion(page);
    await page.click('#summary li.finding >> nth=0');
    await resolvedAfter(page, v);
    const f = await page.evaluate(() => ({ sel: window.__miDebug.state().selection, tasks: window.__miDebug.state().resolved.tasks, linked: window.__miDebug.view('graph').pane(0).linkedIds }));
    eq(f.sel.kind, 'finding', 'a finding entry selects the finding');
    const want = (analyses.findings[0].tasks ?? []).map((x) => (typeof x === 'number' ? x : x.id));
    eq(f.tasks.join(), want.join(), 'finding: its tasks are highlighted on the timeline');
    await shot(page, 'ui_linked_finding');
  }
  if (analyses?.critical_path?.tasks?.length) {
    await page.click('#summary button.show-critical-path');
    const cp = await poll(page, () => { const tl = window.__miDebug.view('timeline'); return tl.state.path.length > 0 && window.__miDebug.view('graph').pane(0).linkedIds.length > 0 && { path: tl.state.path.length, linked: window.__miDebug.view('graph').pane(0).linkedIds.length }; }, null, 30000, 'critical path drawn');
    check(cp.path > 0 && cp.linked > 0, `critical path on timeline (${cp.path} tasks) and graph (${cp.linked} nodes)`);
    await page.click('#summary button.show-critical-path');
  }
  eq(page.errors.join('; '), '', 'no page errors (ResNet-18)');
  eq(page.failed.filter((f) => !f.includes('/analyses') && !f.includes('/critical-path')).join('; '), '', 'no failed requests besides optional analyses');

  // 8. Several runs: the run picker moves the timeline; compare two runs on the timeline.
  await page.click('#tabs button[data-tab="timeline"]');
  await page.selectOption('#run', String(kTransformer));
  await poll(page, (r) => window.__miDebug.view('timeline').state.run === r && !window.__miDebug.view('timeline').busy && window.__miDebug.view('timeline').windowOf(0), kTransformer, 60000, 'timeline of the second run');
  await page.selectOption('#tl-compare', String(kResnet));
  await poll(page, () => window.__miDebug.view('timeline').laneBoxes().some((l) => l.source === 1) && !window.__miDebug.view('timeline').busy, null, 60000, 'compare lanes');
  const cmp = await page.evaluate(() => ({ hash: location.hash, lanes: window.__miDebug.view('timeline').laneBoxes().map((l) => l.source) }));
  check(cmp.lanes.includes(0) && cmp.lanes.includes(1), 'timeline compare: lanes of both runs');
  check(cmp.hash.includes(`tcompare=${kResnet}`) && cmp.hash.includes(`run=${kTransformer}`), `hash records the timeline compare (${cmp.hash})`);
  await frames(page);
  await shot(page, 'ui_linked_compare');
  const p4 = await open(cmp.hash, { width: 1200, height: 800 });
  await poll(p4, () => window.__miDebug.view('timeline')?.laneBoxes().some((l) => l.source === 1), null, 60000, 'compare from the hash');
  eq(await p4.evaluate(() => document.getElementById('tl-compare').value), String(kResnet), 'deep link restores the timeline compare');
  await p4.close();
  // Colour mode and graph compare live in the URL too.
  await page.selectOption('#color-by', 'time');
  await page.click('#compare');
  await poll(page, () => window.__miDebug.state().comparing && window.__miDebug.view('graph').pane(1)?.current, null, 30000, 'graph compare');
  const gh = await page.evaluate(() => location.hash);
  check(gh.includes('color=time') && /compare=\d+:\w+/.test(gh), `hash records colour mode and graph compare (${gh})`);
  const p5 = await open(gh, { width: 1200, height: 800 });
  const g5 = await poll(p5, () => {
    const s = window.__miDebug.state();
    return s.comparing && window.__miDebug.view('graph').pane(1)?.current && { color: s.color, level: s.panes[1].level };
  }, null, 60000, 'compare from the hash');
  eq(g5.color, 'time', 'deep link restores the colour mode');
  eq(g5.level, await page.evaluate(() => window.__miDebug.state().panes[1].level), 'deep link restores the second pane');
  await p5.close();
  await page.click('#compare');
  await page.selectOption('#color-by', 'op');
  // Maximise the bottom panel and back (URL field panel=).
  await page.click('#max-bottom');
  check(await page.evaluate(() => document.getElementById('view').offsetHeight === 0 && location.hash.includes('panel=bottom')), 'maximised bottom panel hides the graph, hash has panel=bottom');
  await page.click('#max-split');
  check(await page.evaluate(() => document.getElementById('view').offsetHeight > 0 && !location.hash.includes('panel=')), 'split again');
  await page.close();

  // ---------------------------------------------------------------- Transformer: a node's tasks
  const pt = await open(`#run=${kTransformer}&level=compiled`);
  await timelineIdle(pt);
  const tm = await apiJson(pt, `/api/runs/${kTransformer}/mapping?offset=0&limit=50&sort=total_ns&desc=1`);
  const top = tm.rows.find((r) => r.kind === 'node' && r.task_count > 0);
  await clickNode(pt, top.node.id);
  const tt = await apiJson(pt, `/api/runs/${kTransformer}/tasks?node=${top.node.id}`);
  const thl = await poll(pt, (n) => window.__miDebug.view('timeline').state.highlighted.length >= n && window.__miDebug.state().resolved.tasks, tt.tasks.length, 30000, 'transformer highlight');
  eq([...thl].sort((a, b) => a - b).join(), [...tt.tasks].sort((a, b) => a - b).join(), `transformer: ${top.op_type} node's tasks highlighted`);
  eq(pt.errors.join('; '), '', 'no page errors (transformer)');
  await pt.close();

  // ---------------------------------------------------------------- Ascend: GE graphs + op_summary
  const pa = await open(`#run=${kAscend}&level=compiled`);
  await timelineIdle(pa);
  const am = await apiJson(pa, `/api/runs/${kAscend}/mapping?offset=0&limit=50&sort=total_ns&desc=1`);
  const conv1 = am.rows.find((r) => r.name === 'conv1');
  if (check(conv1 && conv1.op_type === 'Conv2D' && conv1.task_count === 3, `Ascend: conv1 (Conv2D) has its 3 kernels (${JSON.stringify(conv1)})`)) {
    check(conv1.fused_from.map((f) => f.name).sort().join() === 'bn_conv1,conv1,scale_conv1', `Ascend: conv1 fused_from (${conv1.fused_from.map((f) => f.name)})`);
    await clickNode(pa, conv1.node.id);
    const ids = await poll(pa, () => window.__miDebug.view('timeline').state.highlighted.length >= 3 && window.__miDebug.state().resolved.tasks, null, 30000, 'Ascend highlight');
    const at = await apiJson(pa, `/api/runs/${kAscend}/tasks?node=${conv1.node.id}`);
    eq([...ids].sort((a, b) => a - b).join(), [...at.tasks].sort((a, b) => a - b).join(), 'Ascend: the Conv2D node\'s kernels highlighted on the timeline');
    await shot(pa, 'ui_linked_ascend_node');
    // A kernel on the timeline → the framework level outlines conv1's fused_from.
    const task = await apiJson(pa, `/api/runs/${kAscend}/tasks/${at.tasks[1]}`);
    await clickTask(pa, task);
    await poll(pa, (id) => window.__miDebug.state().panes[0].node === id, conv1.node.id, 30000, 'Ascend: graph selects conv1');
    await pa.click('#levels button[data-level="framework"]');
    const afw = await poll(pa, () => window.__miDebug.state().panes[0].level === 'framework' && window.__miDebug.view('graph').pane(0).linkedIds.length === 3 && window.__miDebug.view('graph').pane(0).linkedIds, null, 30000, 'Ascend fused_from');
    eq([...afw].sort((a, b) => a - b).join(), conv1.fused_from.map((f) => f.id).sort((a, b) => a - b).join(), 'Ascend: framework level outlines scale_conv1, conv1, bn_conv1');
    await shot(pa, 'ui_linked_ascend_fused_from');
    // Summary: TransData (layout conversion) is a row of its own.
    await pa.click('#tabs button[data-tab="summary"]');
    await poll(pa, () => document.querySelectorAll('#summary tr.op-row').length > 0);
    const aops = await pa.$$eval('#summary tr.op-row', (r) => r.map((x) => x.dataset.op));
    check(aops.includes('TransData') && aops.includes('Conv2D'), `Ascend summary rows (${aops})`);
  }
  eq(pa.errors.join('; '), '', 'no page errors (Ascend)');
  await pa.close();
} finally {
  await browser.close();
  await server.stop();
  rmSync(ascendDir, { recursive: true, force: true });
}
done('e2e_linked_test');
