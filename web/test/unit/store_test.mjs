// The reducer and the store (src/core/reducer.ts, store.ts): each rule of
// the UI state, written out by hand from web/README.md (folding kept per
// level, a node of another level switches the main pane or goes to the
// compare pane showing it, the search an op-type selection sets goes with
// it, stale answers are dropped, ...).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importCore } from './unit_lib.mjs';

const { reduce, initialState, parseHash, formatHash, urlStateOf, kDefaultTabs, Store, emptyResolved } = await importCore();

const kRuns = [
  { id: 0, name: 'ort', inputs: [], levels: ['framework', 'compiled'], has_trace: true },
  { id: 1, name: 'onnx only', inputs: [], levels: ['framework'], has_trace: false },
];
const open = (hash = '', runs = kRuns) => {
  const s = initialState(parseHash(hash, kDefaultTabs), kDefaultTabs);
  return runs ? reduce(s, { type: 'runsLoaded', runs }) : s;
};
const run = (s, ...actions) => actions.reduce(reduce, s);

test('runsLoaded: a link naming a missing run or level falls back to the first', () => {
  let s = open('#run=5&level=compiled&grouping=scopes&expand=3');
  assert.equal(s.status, 'ready');
  assert.deepEqual([s.panes[0].run, s.panes[0].level, s.panes[0].expand], [0, 'compiled', []], 'run 0 has the level; the folding was run 5\'s');
  s = open('#run=1&level=compiled&grouping=scopes');
  assert.deepEqual([s.panes[0].run, s.panes[0].level], [1, 'framework']);
  s = open('#run=0&level=compiled&grouping=scopes&expand=4');
  assert.deepEqual([s.panes[0].level, s.panes[0].expand], ['compiled', [4]], 'a valid link is kept as is');
});

test('runsLoaded: node= without sel= selects the node; compare= to a level the run lacks turns compare off', () => {
  let s = open('#run=0&level=compiled&grouping=scopes&node=12');
  assert.deepEqual(s.selection, { kind: 'node', level: 'compiled', id: 12, run: 0 });
  assert.equal(s.selectionSource, 'url');
  assert.equal(s.selectionVersion, 1);
  s = open('#run=0&level=framework&grouping=scopes&node=12&sel=task:5');
  assert.deepEqual(s.selection, { kind: 'task', ids: [5] }, 'sel= wins over node=');
  assert.equal(s.panes[0].node, 12, 'node= stays the graph part');
  s = open('#run=0&level=framework&grouping=scopes&sel=op:Conv');
  assert.deepEqual([s.search.query, s.search.mode, s.search.fromSelection], ['Conv', 'op', true], 'a linked op type searches its nodes');
  s = open('#run=0&level=framework&grouping=scopes&compare=1:compiled');
  assert.equal(s.comparing, false);
  s = open('#run=0&level=framework&grouping=scopes&compare=0:compiled');
  assert.equal(s.comparing, true);
  assert.deepEqual([s.panes[1].run, s.panes[1].level], [0, 'compiled']);
});

test('each level keeps its own folding while the pane shows another', () => {
  let s = open('#run=0&level=framework&grouping=scopes&expand=3&collapse=9&node=2');
  s = run(s, { type: 'setLevel', pane: 0, level: 'compiled' });
  assert.deepEqual([s.panes[0].level, s.panes[0].expand, s.panes[0].collapse, s.panes[0].node], ['compiled', [], [], null]);
  s = run(s, { type: 'setFolding', pane: 0, expand: [7], collapse: [] });
  s = run(s, { type: 'setLevel', pane: 0, level: 'framework' });
  assert.deepEqual([s.panes[0].expand, s.panes[0].collapse], [[3], [9]]);
  s = run(s, { type: 'setLevel', pane: 0, level: 'compiled' });
  assert.deepEqual(s.panes[0].expand, [7]);
  assert.equal(reduce(s, { type: 'setLevel', pane: 0, level: 'compiled' }), s, 'the level shown: no change');
});

test('the run picker: the run\'s first level, no folding, no selection', () => {
  let s = open('#run=0&level=compiled&grouping=fusion&expand=3&node=5');
  s = run(s, { type: 'setRun', run: 1 });
  assert.deepEqual(s.panes[0], { run: 1, level: 'framework', grouping: 'fusion', direction: 'auto', expand: [], collapse: [], node: null });
  assert.equal(s.selection, null);
  assert.equal(s.selectionVersion, 2);
  s = run(s, { type: 'setRun', run: 0 });
  assert.deepEqual(s.panes[0].expand, [], 'the old run\'s folding is not kept');
});

test('direction: auto by default, a choice applies to both panes and keeps their folding', () => {
  let s = open('#run=0&level=framework&expand=3');
  assert.equal(s.panes[0].direction, 'auto');
  s = run(s, { type: 'setDirection', direction: 'tb' });
  assert.equal(s.panes[0].direction, 'tb');
  assert.deepEqual(s.panes[0].expand, [3], 'group ids do not depend on the direction');
  assert.equal(run(s, { type: 'setDirection', direction: 'tb' }), s, 'no change, same state');
  assert.equal(formatHash(urlStateOf(s)).includes('direction=tb'), true);
});

test('grouping applies to both panes and clears their folding', () => {
  let s = open('#run=0&level=framework&grouping=scopes&expand=3&compare=0:compiled');
  s = run(s, { type: 'setFolding', pane: 1, expand: [1], collapse: [2] }, { type: 'setGrouping', grouping: 'none' });
  assert.deepEqual(s.panes.map((p) => [p.grouping, p.expand, p.collapse]), [['none', [], []], ['none', [], []]]);
});

test('a node selected elsewhere: the main pane switches to its level; in compare mode the pane showing it answers', () => {
  let s = open('#run=0&level=compiled&grouping=scopes');
  s = run(s, { type: 'select', selection: { kind: 'node', level: 'framework', id: 4, run: 0 }, source: 'mapping' });
  assert.deepEqual([s.panes[0].level, s.panes[0].node, s.active], ['framework', 4, 0]);
  s = open('#run=0&level=framework&grouping=scopes&compare=0:compiled');
  s = run(s, { type: 'select', selection: { kind: 'node', level: 'compiled', id: 8, run: 0 }, source: 'details' });
  assert.deepEqual([s.panes[0].level, s.panes[0].node, s.panes[1].node, s.active], ['framework', null, 8, 1]);
  // A level no pane shows and the run lacks: the main pane keeps its level.
  s = open('#run=1&level=framework&grouping=scopes');
  s = run(s, { type: 'select', selection: { kind: 'node', level: 'compiled', id: 3, run: 1 }, source: 'mapping' });
  assert.deepEqual([s.panes[0].level, s.panes[0].node], ['framework', 3]);
});

test('a graph click selects in its pane; clicking the selected node again changes nothing', () => {
  let s = open('#run=0&level=framework&grouping=scopes&compare=0:compiled');
  const click = { type: 'select', selection: { kind: 'node', level: 'compiled', id: 8, run: 0 }, source: 'graph', pane: 1 };
  s = run(s, click);
  assert.deepEqual([s.panes[1].node, s.active, s.selectionVersion], [8, 1, 1]);
  assert.equal(reduce(s, click), s);
  const v = s.selectionVersion;
  s = run(s, { ...click, source: 'mapping', pane: undefined });
  assert.equal(s.selectionVersion, v + 1, 'the same node from another view is selected again (resolved again)');
});

test('clearing the selection clears every pane\'s node; a finding clears the main pane\'s', () => {
  let s = open('#run=0&level=framework&grouping=scopes&node=3');
  s = run(s, { type: 'select', selection: null, source: 'app' });
  assert.equal(s.panes[0].node, null);
  s = run(s, { type: 'setPaneNode', pane: 0, node: 5 }, { type: 'select', selection: { kind: 'task', ids: [1] }, source: 'timeline' });
  assert.equal(s.panes[0].node, 5, 'a task keeps the node (the graph view sets it to the task\'s)');
  s = run(s, { type: 'select', selection: { kind: 'finding', index: 0, nodes: [1], tasks: [], label: '' }, source: 'summary' });
  assert.equal(s.panes[0].node, null);
});

test('an op-type selection sets the search; it goes when another selection comes (a node picked from its list keeps it)', () => {
  let s = open();
  s = run(s, { type: 'select', selection: { kind: 'op_type', opType: 'Conv' }, source: 'summary' });
  assert.deepEqual([s.search.query, s.search.mode, s.search.fromSelection, s.search.seq], ['Conv', 'op', true, 1]);
  s = run(s, { type: 'select', selection: { kind: 'node', level: 'framework', id: 2, run: 0 }, source: 'search', pane: 0 });
  assert.equal(s.search.query, 'Conv');
  s = run(s, { type: 'select', selection: { kind: 'task', ids: [3] }, source: 'timeline' });
  assert.deepEqual([s.search.query, s.search.fromSelection, s.search.results], ['', false, null]);
  // A query the user typed stays.
  s = run(s, { type: 'search', query: 'conv1', mode: 'text' }, { type: 'select', selection: { kind: 'range', startNs: 1, endNs: 2, tracks: [] }, source: 'timeline' });
  assert.equal(s.search.query, 'conv1');
});

test('search answers: an older query\'s are dropped; a level switch drops the pane\'s, re-running an op-type selection\'s', () => {
  let s = run(open(), { type: 'search', query: 'a', mode: 'text' }, { type: 'search', query: 'ab', mode: 'text' });
  const answer = (seq) => ({ type: 'searchResults', results: { seq, pane: 0, run: 0, level: 'framework', matches: [], total: 0, error: null } });
  assert.equal(reduce(s, answer(1)), s, 'older seq dropped');
  s = run(s, answer(2));
  assert.equal(s.search.results.seq, 2);
  s = run(s, { type: 'setLevel', pane: 0, level: 'compiled' });
  assert.deepEqual([s.search.results, s.search.query, s.search.seq], [null, 'ab', 2]);
  s = run(s, { type: 'select', selection: { kind: 'op_type', opType: 'Relu' }, source: 'app' }, { type: 'setLevel', pane: 0, level: 'framework' });
  assert.deepEqual([s.search.query, s.search.seq], ['Relu', 4], 'asked again on the new level');
});

test('resolution parts of an older selection are dropped', () => {
  let s = run(open(), { type: 'select', selection: { kind: 'task', ids: [1] }, source: 'timeline' });
  const v1 = s.selectionVersion;
  s = run(s, { type: 'select', selection: { kind: 'task', ids: [2] }, source: 'timeline' });
  assert.equal(reduce(s, { type: 'resolved', version: v1, patch: { tasks: [1] }, done: true }), s);
  assert.equal(reduce(s, { type: 'setDetails', version: v1, content: { kind: 'error', message: 'x' } }), s);
  s = run(s, { type: 'resolved', version: s.selectionVersion, patch: { tasks: [2] } });
  assert.deepEqual([s.resolved.tasks, s.resolved.done], [[2], false]);
  s = run(s, { type: 'resolved', version: s.selectionVersion, patch: {}, done: true });
  assert.deepEqual([s.resolved.tasks, s.resolved.done], [[2], true]);
  assert.deepEqual(emptyResolved(3).mapping, { nodes: [], tasks: [], opType: null, target: null });
});

test('compare mode: the second pane defaults to the other level and is kept while off', () => {
  let s = open('', null);
  s = reduce(s, { type: 'setCompare', on: true });
  assert.equal(s.comparing, false);
  assert.equal(s.banner, 'compare needs the server (model-inspector open)');
  s = run(open('#run=0&level=compiled&grouping=scopes'), { type: 'setCompare', on: true });
  assert.deepEqual([s.comparing, s.panes[1].level, s.panes[1].run], [true, 'framework', 0]);
  s = run(s, { type: 'setFolding', pane: 1, expand: [6], collapse: [] }, { type: 'setActivePane', pane: 1 }, { type: 'setCompare', on: false });
  assert.deepEqual([s.comparing, s.active], [false, 0]);
  s = run(s, { type: 'setCompare', on: true });
  assert.deepEqual(s.panes[1].expand, [6]);
  s = run(s, { type: 'setLevel', pane: 1, level: 'framework', run: 1 });
  assert.deepEqual([s.panes[1].run, s.panes[1].level, s.panes[1].expand], [1, 'framework', []]);
});

test('an edited URL applies every field and its selection', () => {
  let s = open('#run=0&level=framework&grouping=scopes');
  s = reduce(s, { type: 'urlChanged', url: parseHash('#run=0&level=compiled&grouping=scopes&node=4&tab=mapping&panel=graph&color=time&clock=calibrated&tcompare=1&align=first_run') });
  assert.deepEqual([s.panes[0].level, s.tab, s.panel, s.color, s.clock, s.timelineCompare, s.align], ['compiled', 'mapping', 'graph', 'time', 'calibrated', 1, 'first_run']);
  assert.deepEqual([s.selection, s.selectionSource], [{ kind: 'node', level: 'compiled', id: 4, run: 0 }, 'url']);
  s = reduce(s, { type: 'urlChanged', url: parseHash('#run=0&level=compiled&grouping=scopes&sel=op:Conv&compare=0:framework') });
  assert.deepEqual([s.selection, s.comparing, s.panes[1].level], [{ kind: 'op_type', opType: 'Conv' }, true, 'framework']);
  s = reduce(s, { type: 'urlChanged', url: parseHash('#run=0&level=compiled&grouping=scopes') });
  assert.deepEqual([s.selection, s.comparing], [null, false]);
});

test('unknown tabs are refused; unchanged values return the same state', () => {
  const s = open();
  assert.equal(reduce(s, { type: 'setTab', tab: 'bogus' }), s);
  assert.equal(reduce(s, { type: 'setTab', tab: 'timeline' }), s);
  assert.equal(reduce(s, { type: 'setColor', color: 'op' }), s);
  assert.equal(reduce(s, { type: 'setFolding', pane: 0, expand: [], collapse: [] }), s);
  assert.equal(reduce(s, { type: 'setTab', tab: 'summary' }).tab, 'summary');
});

test('the store tells every subscriber each change in order, also those dispatched by a subscriber', () => {
  const store = new Store(open());
  const seen = [];
  store.subscribe((s, prev, a) => {
    seen.push(['first', a.type, prev.tab, s.tab]);
    if (a.type === 'setTab' && s.tab === 'mapping') store.dispatch({ type: 'setTab', tab: 'summary' });
  });
  store.subscribe((s, prev, a) => seen.push(['second', a.type, prev.tab, s.tab]));
  const v = store.version;
  store.dispatch({ type: 'setTab', tab: 'mapping' });
  store.dispatch({ type: 'setTab', tab: 'summary' });
  assert.deepEqual(seen, [
    ['first', 'setTab', 'timeline', 'mapping'], ['second', 'setTab', 'timeline', 'mapping'],
    ['first', 'setTab', 'mapping', 'summary'], ['second', 'setTab', 'mapping', 'summary'],
  ]);
  assert.equal(store.version, v + 2, 'the no-op second dispatch is not a change');
  assert.equal(store.state.tab, 'summary');
});

test('the critical path: shown is kept in the state the URL reads; a link asks for it; another run drops it', () => {
  let s = open();
  assert.equal(s.criticalPathOn, false);
  const path = { tasks: [3, 4], nodes: [7] };
  s = run(s, { type: 'setCriticalPath', path });
  assert.deepEqual([s.criticalPath, s.criticalPathOn], [path, true]);
  s = run(s, { type: 'setCriticalPath', path: null });
  assert.deepEqual([s.criticalPath, s.criticalPathOn], [null, false]);
  // A link with cpath=1 asks before the summary has the path.
  s = open('#run=0&level=framework&grouping=scopes&cpath=1');
  assert.deepEqual([s.criticalPath, s.criticalPathOn], [null, true]);
  // A run without a path answers null: the ask goes.
  const dropped = run(s, { type: 'setCriticalPath', path: null });
  assert.equal(dropped.criticalPathOn, false);
  // Shown, then the run picker: the old run's path goes.
  s = run(s, { type: 'setCriticalPath', path }, { type: 'setRun', run: 1 });
  assert.deepEqual([s.criticalPath, s.criticalPathOn], [null, false]);
  // An edited URL without cpath= hides it.
  s = run(open(), { type: 'setCriticalPath', path });
  s = run(s, { type: 'urlChanged', url: parseHash('#run=0&level=framework&grouping=scopes') });
  assert.deepEqual([s.criticalPath, s.criticalPathOn], [null, false]);
});

test('training marks: set, the same marks again keep the state, cleared with null', () => {
  const s = open();
  const marks = { run: 0, nodes: [{ id: 5, role: 'producer' }, { id: 7, role: 'propagator' }] };
  const a = reduce(s, { type: 'setTrainingMarks', marks });
  assert.deepEqual(a.trainingMarks, marks);
  assert.equal(reduce(a, { type: 'setTrainingMarks', marks: { run: 0, nodes: [{ id: 5, role: 'producer' }, { id: 7, role: 'propagator' }] } }), a, 'equal marks: no change');
  assert.notEqual(reduce(a, { type: 'setTrainingMarks', marks: { run: 0, nodes: [{ id: 5, role: 'propagator' }, { id: 7, role: 'propagator' }] } }), a, 'another role: a change');
  assert.equal(reduce(a, { type: 'setTrainingMarks', marks: null }).trainingMarks, null);
  assert.equal(reduce(s, { type: 'setTrainingMarks', marks: null }), s, 'none to none: no change');
});
