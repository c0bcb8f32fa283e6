// The selection controller (src/core/selection_controller.ts) against a
// test double of the HTTP client (the real server is covered by the browser
// tests): each kind of selection is resolved into every view's terms from
// the answers the double gives, answers of a replaced selection are
// dropped, and it asks only what it needs.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importCore, until } from './unit_lib.mjs';

const { Store, SelectionController, initialState, parseHash, kDefaultTabs, reduce, kDetailsHint } = await importCore();

const kRuns = [
  { id: 0, name: 'ort', inputs: [], levels: ['framework', 'compiled'], has_trace: true },
  { id: 1, name: 'no trace', inputs: [], levels: ['framework'], has_trace: false },
];

/** A hand-made server: a compiled Conv (node 40) fused from framework nodes 4 and 5, run by tasks 100 and 101. */
class FakeApi {
  constructor() {
    this.calls = [];
    this.gates = new Map();
  }
  /** Holds the answers of `method` until the returned function is called. */
  hold(method) {
    let open;
    const p = new Promise((r) => { open = r; });
    this.gates.set(method, p);
    return open;
  }
  async answer(method, args, value) {
    this.calls.push([method, ...args]);
    const gate = this.gates.get(method);
    if (gate) { this.gates.delete(method); await gate; }
    if (value instanceof Error) throw value;
    return value;
  }
  called(method) { return this.calls.filter((c) => c[0] === method); }
  runs() { return this.answer('runs', [], kRuns); }
  timeline(run) { return this.answer('timeline', [run], { start_ns: 1000, end_ns: 9000, task_count: 2, has_calibration: false, tracks: [], runs: [], op_types: [] }); }
  node(run, level, id) {
    if (id === 404) return this.answer('node', [run, level, id], new Error('no node 404 on this level'));
    return this.answer('node', [run, level, id], {
      id, name: `n${id}`, op_type: level === 'compiled' ? 'FusedConv' : 'Conv', domain: '', scope: '', attributes: [], inputs: [], outputs: [],
      status: 'executed', fused_from: level === 'compiled' ? [{ id: 4, name: 'n4', op_type: 'Conv' }, { id: 5, name: 'n5', op_type: 'Relu' }] : [],
      fused_into: level === 'framework' ? { id: 40, name: 'n40', op_type: 'FusedConv' } : null, tasks: [],
    });
  }
  nodeTasks(run, node) { return this.answer('nodeTasks', [run, node], { node, via_nodes: [], tasks: [100, 101], start_ns: 2000, end_ns: 2600 }); }
  nodePaths(run, level, node) {
    return this.answer('nodePaths', [run, level, node], { node, ancestors: [1], descendants: [7], node_tasks: [100, 101], ancestor_tasks: [90], descendant_tasks: [120, 121] });
  }
  task(run, id) {
    return this.answer('task', [run, id], {
      id, name: `kernel_${id}`, category: 'kernel', op_type: 'FusedConv', kind: 'compute', track: { id: 3, name: 'stream 7' },
      start_ns: 2000, end_ns: 2300, duration_ns: 300, calibrated_start_ns: 2000, run: 0,
      node: { level: 'compiled', id: 40, name: 'n40', op_type: 'FusedConv' }, fused_from: [{ id: 4, name: 'n4', op_type: 'Conv' }],
      launch: null, parent: null, flows: [],
    });
  }
  summary(run) {
    return this.answer('summary', [run], { basis: 'tasks', total_us: 10, tasks: 2, linked_tasks: 2, unlinked_tasks: 0, streams: [],
      op_types: [{ op_type: 'FusedConv', kind: 'compute', nodes: 1, calls: 2, total_us: 6, average_us: 3, share: 0.6 }] });
  }
  summaryRange(run, from, to, clock) {
    return this.answer('summaryRange', [run, from, to, clock], { basis: 'tasks', total_us: 1, tasks: 1, linked_tasks: 1, unlinked_tasks: 0, streams: [], op_types: [] });
  }
  analyses(run) {
    return this.answer('analyses', [run], { findings: [{ rule: 'r', title: 't', severity: 'warning', message: 'm', nodes: [4, { id: 5 }], tasks: [100] }] });
  }
}

function setup(hash = '#run=0&level=compiled&grouping=scopes', opts = {}) {
  let s = initialState(parseHash(hash, kDefaultTabs), kDefaultTabs);
  const store = new Store(s);
  const api = new FakeApi();
  new SelectionController(store, api);
  if (opts.lineage) store.dispatch({ type: 'setLineage', on: true });
  store.dispatch({ type: 'runsLoaded', runs: kRuns });
  return { store, api };
}
const select = (store, selection, source = 'app', pane) => {
  store.dispatch({ type: 'select', selection, source, pane });
  return store.state.selectionVersion;
};
const resolved = (store, v) => until(store, (s) => s.resolved.version === v && s.resolved.done, `selection ${v} resolved`);

test('a node: its tasks (in view), its mapping row, its op type, its details', async () => {
  const { store, api } = setup();
  const v = select(store, { kind: 'node', level: 'compiled', id: 40, run: 0 }, 'mapping');
  const s = await resolved(store, v);
  assert.deepEqual(s.resolved.tasks, [100, 101]);
  assert.equal(s.resolved.focus, true);
  assert.deepEqual(s.resolved.extent, { startNs: 2000, endNs: 2600 });
  assert.deepEqual(s.resolved.mapping, { nodes: [40], tasks: [], opType: null, target: { node: 40 } });
  assert.equal(s.resolved.summaryOp, 'FusedConv');
  assert.equal(s.resolved.node.id, 40);
  assert.deepEqual([s.details.content.kind, s.details.content.node.id, s.details.loading], ['node', 40, false]);
  assert.deepEqual(s.resolved.lineageTasks, [], 'lineage off: no paths asked');
  assert.equal(api.called('nodePaths').length, 0);
  assert.deepEqual(api.called('node'), [['node', 0, 'compiled', 40]]);
});

test('a node clicked on the timeline\'s side is not brought into view there; lineage adds its paths\' tasks', async () => {
  const { store, api } = setup('#run=0&level=compiled&grouping=scopes', { lineage: true });
  const v = select(store, { kind: 'node', level: 'compiled', id: 40, run: 0 }, 'timeline');
  const s = await resolved(store, v);
  assert.equal(s.resolved.focus, false);
  assert.deepEqual(s.resolved.lineageTasks, [90, 100, 101, 120, 121], 'ancestor + own + descendant tasks');
  assert.deepEqual(api.called('nodePaths'), [['nodePaths', 0, 'compiled', 40]]);
  // Lineage off: the overlay goes; on again: asked again.
  store.dispatch({ type: 'setLineage', on: false });
  await until(store, (x) => x.resolved.lineageTasks.length === 0, 'lineage cleared');
  store.dispatch({ type: 'setLineage', on: true });
  await until(store, (x) => x.resolved.lineageTasks.length === 5, 'lineage again');
  assert.equal(api.called('nodePaths').length, 2);
});

test('a node of another run or of a run without a trace: no tasks asked, no mapping row to scroll to', async () => {
  let { store, api } = setup();
  let v = select(store, { kind: 'node', level: 'framework', id: 4, run: 1 }, 'graph', 0);
  let s = await resolved(store, v);
  assert.deepEqual([s.resolved.tasks, s.resolved.mapping.target], [[], null]);
  assert.equal(api.called('nodeTasks').length, 0);
  ({ store, api } = setup('#run=1&level=framework&grouping=scopes'));
  v = select(store, { kind: 'node', level: 'framework', id: 4, run: 1 }, 'graph', 0);
  s = await resolved(store, v);
  assert.deepEqual(s.resolved.mapping.target, { node: 4 });
  assert.equal(api.called('nodeTasks').length, 0);
});

test('a node the server does not know: the error in the details', async () => {
  const { store } = setup();
  const v = select(store, { kind: 'node', level: 'compiled', id: 404, run: 0 }, 'details');
  const s = await resolved(store, v);
  assert.deepEqual(s.details.content, { kind: 'error', message: 'no node 404 on this level' });
});

test('a task: highlighted, its node and fused_from for the graph, its row, its op type, details with times from the trace start', async () => {
  const { store } = setup();
  const v = select(store, { kind: 'task', ids: [100, 101] }, 'mapping');
  assert.deepEqual(store.state.resolved.tasks, [100, 101], 'the timeline\'s part is published at once');
  const s = await resolved(store, v);
  assert.equal(s.resolved.focus, true);
  assert.deepEqual([s.resolved.task.node.id, s.resolved.task.fused_from.map((r) => r.id)], [40, [4]]);
  assert.deepEqual(s.resolved.mapping, { nodes: [40], tasks: [100, 101], opType: null, target: { task: 100 } });
  assert.equal(s.resolved.summaryOp, 'FusedConv');
  assert.deepEqual([s.details.content.kind, s.details.content.task.id, s.details.content.originNs], ['task', 100, 1000]);
  const t = select(store, { kind: 'task', ids: [5] }, 'timeline');
  assert.equal((await resolved(store, t)).resolved.focus, false, 'clicked on the timeline: not moved there');
});

test('an op type: timeline filter, mapping rows, summary row, details with its summary row', async () => {
  const { store } = setup();
  const v = select(store, { kind: 'op_type', opType: 'FusedConv' }, 'summary');
  const s = await resolved(store, v);
  assert.equal(s.resolved.opFilter, 'FusedConv');
  assert.deepEqual(s.resolved.mapping, { nodes: [], tasks: [], opType: 'FusedConv', target: null });
  assert.equal(s.resolved.summaryOp, 'FusedConv');
  assert.deepEqual([s.details.content.kind, s.details.content.row.calls], ['op_type', 2]);
  assert.deepEqual([s.search.query, s.search.mode], ['FusedConv', 'op'], 'the graph\'s part is the search');
});

test('a finding from its list carries its evidence; from a link, it comes from the analyses', async () => {
  let { store } = setup();
  let v = select(store, { kind: 'finding', index: 0, nodes: [4, 5], tasks: [100], label: 'm' }, 'summary');
  let s = await resolved(store, v);
  assert.deepEqual([s.resolved.graphNodes, s.resolved.tasks, s.resolved.focus, s.resolved.summaryFinding], [[4, 5], [100], true, 0]);
  assert.deepEqual(s.resolved.mapping.target, { node: 4 });
  assert.deepEqual([s.details.content.kind, s.details.content.nodes, s.details.content.tasks], ['finding', 2, 1]);
  ({ store } = setup('#run=0&level=compiled&grouping=scopes&sel=finding:0'));
  s = await resolved(store, store.state.selectionVersion);
  assert.deepEqual([s.resolved.graphNodes, s.resolved.tasks], [[4, 5], [100]], 'the link\'s finding 0, {id} evidence read as ids');
  ({ store } = setup('#run=0&level=compiled&grouping=scopes&sel=finding:7'));
  s = await resolved(store, store.state.selectionVersion);
  assert.deepEqual(s.details.content, { kind: 'error', message: 'no finding 7 in this run\'s analyses' });
});

test('a range: its summary in the timeline\'s clock; opened from a link, the timeline zooms to it', async () => {
  let { store, api } = setup();
  store.dispatch({ type: 'setClock', clock: 'calibrated' });
  let v = select(store, { kind: 'range', startNs: 2000, endNs: 3000, tracks: [3] }, 'timeline');
  let s = await resolved(store, v);
  assert.deepEqual(api.called('summaryRange'), [['summaryRange', 0, 2000, 3000, 'calibrated']]);
  assert.equal(s.resolved.rangeSummary.tasks, 1);
  assert.equal(s.resolved.zoomTo, null);
  assert.deepEqual([s.details.content.kind, s.details.content.originNs], ['range', 1000]);
  ({ store, api } = setup('#run=0&level=compiled&grouping=scopes&sel=range:2000-3000'));
  s = await resolved(store, store.state.selectionVersion);
  assert.deepEqual(s.resolved.zoomTo, { startNs: 2000, endNs: 3000 });
});

test('answers for a replaced selection are dropped', async () => {
  const { store, api } = setup();
  const release = api.hold('node');
  const v1 = select(store, { kind: 'node', level: 'compiled', id: 40, run: 0 }, 'mapping');
  const v2 = select(store, { kind: 'task', ids: [101] }, 'timeline');
  const s2 = await resolved(store, v2);
  release();
  // Let the held answer land (it resolves on the microtask queue).
  await new Promise((r) => setImmediate(r));
  const s = store.state;
  assert.ok(v2 > v1);
  assert.equal(s, s2, 'nothing changed after the old answer came');
  assert.deepEqual([s.details.content.kind, s.resolved.node, s.resolved.task.id], ['task', null, 101]);
});

test('clearing: the details hint, unless the graph set its own (a group, an input)', async () => {
  const { store } = setup();
  select(store, { kind: 'task', ids: [100] }, 'timeline');
  await resolved(store, store.state.selectionVersion);
  let v = select(store, null, 'app');
  let s = await resolved(store, v);
  assert.deepEqual(s.details.content, { kind: 'empty', message: kDetailsHint });
  store.dispatch({ type: 'setDetails', content: { kind: 'empty', message: 'graph input x' } });
  select(store, { kind: 'op_type', opType: 'Conv' }, 'app');
  v = select(store, null, 'graph');
  store.dispatch({ type: 'setDetails', content: { kind: 'empty', message: 'graph input y' } });
  s = await resolved(store, v);
  assert.deepEqual(s.details.content, { kind: 'empty', message: 'graph input y' });
});

test('a layout file without a server: node details need the server, nothing is asked', async () => {
  const store = new Store(reduce(initialState(parseHash('', kDefaultTabs), kDefaultTabs), { type: 'fileOpened' }));
  const api = new FakeApi();
  new SelectionController(store, api);
  const v = select(store, { kind: 'node', level: 'framework', id: 3, run: 0 }, 'graph', 0);
  const s = await resolved(store, v);
  assert.deepEqual(s.details.content, { kind: 'empty', message: 'node 3 (details need the server)' });
  assert.deepEqual(api.calls, []);
});

test('nothing is resolved before the server\'s runs are in', async () => {
  const store = new Store(initialState(parseHash('#run=0&level=compiled&grouping=scopes&sel=task:100', kDefaultTabs), kDefaultTabs));
  const api = new FakeApi();
  new SelectionController(store, api);
  assert.deepEqual(api.calls, []);
  store.dispatch({ type: 'runsLoaded', runs: kRuns });
  const s = await resolved(store, store.state.selectionVersion);
  assert.deepEqual(api.called('task'), [['task', 0, 100]]);
  assert.equal(s.resolved.task.id, 100);
});
