// The diff in the UI without a browser: the diff controller against a test
// double of the HTTP client (which pairs it asks for, once each, and what
// it publishes), a pane's side of a hand-made report (which node ids get
// which mark), the colours of those marks, and the op types the timeline
// marks. The real server and page: test/e2e_diff_test.mjs.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importCore, until } from './unit_lib.mjs';

const {
  Store, DiffController, initialState, parseHash, kDefaultTabs, diffKey, graphDiffPair, timelineDiffPair,
  paneDiff, DiffKind, DiffTiming, diffFill, slowerLabels, slowerNodes,
} = await importCore();

const kRuns = [
  { id: 0, name: 'base', inputs: [], levels: ['framework', 'compiled'], has_trace: true },
  { id: 1, name: 'new', inputs: [], levels: ['framework', 'compiled'], has_trace: true },
  { id: 2, name: 'broken', inputs: [], levels: [], has_trace: false, error: { code: 'malformed input', message: 'x' } },
];

const delta = (key, level, b, n, verdict, pct) => ({
  key, level, base_node_id: b, new_node_id: n, base: {}, new: {}, delta_ns: 0, delta_pct: pct, noise_ns: 0, verdict,
});

/**
 * A report of runs 0 -> 1 written by hand: in the compiled level, base node
 * 7 removed, new node 9 added, base 3 / new 4 changed, base 5 / new 6
 * renamed; timing: base 1 / new 2 slower by 50 %, the changed pair faster
 * by 20 %, a framework node slower (not the compiled panes' business).
 */
const kReport = {
  schema: 'model-inspector/diff/1', base: {}, new: {},
  structure: [
    { level: 'framework', changes: [] },
    {
      level: 'compiled', changes: [
        { kind: 'removed', base_node_id: 7, new_node_id: null, base_name: 'fused_1', new_name: '', base_op_type: 'FusedConv', new_op_type: '', changes: [] },
        { kind: 'added', base_node_id: null, new_node_id: 9, base_name: '', new_name: 'reorder_3', base_op_type: '', new_op_type: 'ReorderOutput', changes: [] },
        { kind: 'changed', base_node_id: 3, new_node_id: 4, base_name: 'conv_a', new_name: 'conv_a', changes: ['attribute pads: [0, 0, 0, 0] -> [1, 1, 1, 1]'] },
        { kind: 'renamed', base_node_id: 5, new_node_id: 6, base_name: 'relu_1', new_name: 'relu_7', changes: [] },
      ],
    },
  ],
  timing: {
    total: { ...delta('total', '', null, null, 'slower', 12.3), base: { median_ns: 9750000 }, new: { median_ns: 10950000 }, noise_ns: 80000 },
    op_types: [delta('Conv', '', null, null, 'slower', 10), delta('Add', '', null, null, 'faster', -30),
      delta('Relu', '', null, null, 'same', 1), { ...delta('MatMul', '', null, null, 'slower', 60), delta_ns: 900 }],
    streams: [],
    nodes: [delta('a', 'compiled', 1, 2, 'slower', 50), delta('b', 'compiled', 3, 4, 'faster', -20), delta('c', 'framework', 1, 1, 'slower', 80)],
    unlinked_tasks: [delta('memcpy', '', null, null, 'slower', 5)],
    unmatched_base_tasks: [], unmatched_new_tasks: [],
  },
  overlap: [], overlap_lost: 0, failed: true,
  rules: [
    { rule: 'total>+5%', crossed: true, message: 'total +12.3% (+1.20 ms: 9.75 -> 10.95 ms, noise 0.08 ms) > +5%' },
    { rule: 'nodes!=0', crossed: false, message: 'nodes 0' },
  ],
};

class FakeApi {
  constructor(answer) { this.calls = []; this.answer = answer; }
  diff(base, next) {
    this.calls.push([base, next]);
    return this.answer instanceof Error ? Promise.reject(this.answer) : Promise.resolve(this.answer);
  }
}

function storeAt(hash) {
  const s = new Store(initialState(parseHash(hash, kDefaultTabs), kDefaultTabs));
  s.dispatch({ type: 'runsLoaded', runs: kRuns });
  return s;
}

test('the graph pair is the left pane against the right one, in compare mode only', () => {
  assert.ok('reason' in graphDiffPair(storeAt('#run=0&level=compiled').state));
  assert.deepEqual(graphDiffPair(storeAt('#run=0&level=compiled&compare=1:compiled').state), { base: 0, next: 1 });
  assert.deepEqual(graphDiffPair(storeAt('#run=1&level=framework&compare=1:compiled').state), { base: 1, next: 1 });
  assert.equal(timelineDiffPair(storeAt('#run=0&tcompare=1').state)?.next, 1);
  assert.equal(timelineDiffPair(storeAt('#run=0').state), null);
});

test('the controller asks each wanted pair once and publishes the report', async () => {
  const store = storeAt('#run=0&level=compiled&compare=1:compiled&tcompare=1');
  const api = new FakeApi(kReport);
  new DiffController(store, api);
  // Colour by op type: only the timeline's pair (0 -> 1) is wanted.
  const s = await until(store, (st) => st.diffs[diffKey(0, 1)]?.status === 'ready', 'the diff');
  assert.equal(s.diffs[diffKey(0, 1)].report, kReport);
  assert.deepEqual(api.calls, [[0, 1]]);
  // Colour by diff: the graph's pair is the same pair: nothing more asked.
  store.dispatch({ type: 'setColor', color: 'diff' });
  store.dispatch({ type: 'setColor', color: 'op' });
  store.dispatch({ type: 'setColor', color: 'diff' });
  assert.deepEqual(api.calls, [[0, 1]]);
});

test('a failed diff is published with its message and asked again only when wanted anew', async () => {
  const store = storeAt('#run=0&level=compiled&compare=1:compiled&color=diff');
  const api = new FakeApi(new Error('fail_on: nope'));
  new DiffController(store, api);
  const s = await until(store, (st) => st.diffs[diffKey(0, 1)]?.status === 'error', 'the error');
  assert.equal(s.diffs[diffKey(0, 1)].error, 'fail_on: nope');
  store.dispatch({ type: 'setLineage', on: true });
  assert.equal(api.calls.length, 1, 'not asked again while still wanted');
  store.dispatch({ type: 'setColor', color: 'op' });
  store.dispatch({ type: 'setColor', color: 'diff' });
  assert.equal(api.calls.length, 2, 'asked again once wanted anew');
});

test('a pane gets its side of the report by node id', () => {
  const entry = { base: 0, next: 1, status: 'ready', report: kReport, error: null };
  const left = paneDiff(0, 0, 'compiled', 0, 1, entry);
  assert.equal(left.reason, null);
  assert.match(left.side, /run 0 \(base\)/);
  assert.deepEqual([...left.marks.entries()].sort((a, b) => a[0] - b[0]), [
    [1, { kind: DiffKind.Same, timing: DiffTiming.Slower, pct: 50 }],
    [3, { kind: DiffKind.Changed, timing: DiffTiming.Faster, pct: -20 }],
    [5, { kind: DiffKind.Renamed, timing: DiffTiming.None, pct: 0 }],
    [7, { kind: DiffKind.Removed, timing: DiffTiming.None, pct: 0 }],
  ]);
  // The headline and the side's changed nodes with what changed.
  assert.deepEqual(left.summary, [
    'total 9.750 ms → 10.950 ms (+12.3 %, slower; noise 80.0 µs)',
    'gate: fails (1 of 2 rules crossed)',
    'total +12.3% (+1.20 ms: 9.75 -> 10.95 ms, noise 0.08 ms) > +5%',
  ]);
  assert.equal(left.failed, true);
  assert.deepEqual(left.nodes.map((n) => [n.id, n.kind, n.name, n.what, n.pane, n.level]), [
    [7, 'removed', 'fused_1', 'removed: FusedConv', 0, 'compiled'],
    [3, 'changed', 'conv_a', 'attribute pads: [0, 0, 0, 0] -> [1, 1, 1, 1]', 0, 'compiled'],
    [5, 'renamed', 'relu_1', 'renamed: relu_1 → relu_7', 0, 'compiled'],
  ]);
  const right = paneDiff(1, 1, 'compiled', 0, 1, entry);
  assert.deepEqual([...right.marks.keys()].sort((a, b) => a - b), [2, 4, 6, 9]);
  assert.equal(right.marks.get(9).kind, DiffKind.Added);
  assert.equal(right.marks.get(2).timing, DiffTiming.Slower);
  // A level the report lacks, a diff still loading or failed: the reason.
  assert.match(paneDiff(0, 0, 'other', 0, 1, entry).reason, /no other level/);
  assert.match(paneDiff(0, 0, 'compiled', 0, 1, { ...entry, status: 'loading', report: null }).reason, /asking the server/);
  assert.match(paneDiff(0, 0, 'compiled', 0, 1, { ...entry, status: 'error', report: null, error: 'boom' }).reason, /boom/);
});

test('one run against itself: the framework side is the base, the compiled side the new', () => {
  const report = { ...kReport, timing: null, structure: [{ level: 'framework->compiled', changes: [{ kind: 'removed', base_node_id: 11, new_node_id: null }, { kind: 'added', base_node_id: null, new_node_id: 12 }] }] };
  const entry = { base: 1, next: 1, status: 'ready', report, error: null };
  assert.equal(paneDiff(0, 1, 'framework', 1, 1, entry).marks.get(11).kind, DiffKind.Removed);
  assert.equal(paneDiff(1, 1, 'compiled', 1, 1, entry).marks.get(12).kind, DiffKind.Added);
  // Whatever pane shows it: the side follows the level.
  assert.equal(paneDiff(1, 1, 'framework', 1, 1, entry).marks.get(11).kind, DiffKind.Removed);
});

test('mark colours: kinds by fill, time changes on the diverging scale or as an outline', () => {
  const hex = (c) => c.map((v) => Math.round(v * 255).toString(16).padStart(2, '0')).join('');
  assert.equal(hex(diffFill(undefined).fill), 'ededed');
  assert.equal(hex(diffFill({ kind: DiffKind.Added, timing: DiffTiming.None, pct: 0 }).fill), '3fae5a');
  assert.equal(hex(diffFill({ kind: DiffKind.Removed, timing: DiffTiming.None, pct: 0 }).fill), 'e377c2');
  const changedSlower = diffFill({ kind: DiffKind.Changed, timing: DiffTiming.Slower, pct: 30 });
  assert.equal(hex(changedSlower.fill), 'f2b134');
  assert.equal(hex(changedSlower.outline), 'b2182b');
  // Unchanged and 2x slower: the diverging scale's full red; 2x faster: full blue.
  assert.equal(hex(diffFill({ kind: DiffKind.Same, timing: DiffTiming.Slower, pct: 100 }).fill), 'b2182b');
  assert.equal(hex(diffFill({ kind: DiffKind.Same, timing: DiffTiming.Faster, pct: -50 }).fill), '2166ac');
  // A small significant change still shows (a quarter of the way at least).
  const small = diffFill({ kind: DiffKind.Same, timing: DiffTiming.Slower, pct: 2 }).fill;
  assert.ok(small[1] < 0.85, `2 % slower is visibly red (${hex(small)})`);
});

test('the timeline marks the op types and unlinked tasks found slower, most slowed first', () => {
  assert.deepEqual(slowerLabels(kReport).map((d) => d.key), ['MatMul', 'Conv', 'memcpy']);
  assert.deepEqual(slowerLabels({ ...kReport, timing: null }), []);
  // Nodes: those found slower, by their id in the new run.
  assert.deepEqual(slowerNodes(kReport).map((d) => d.new_node_id), [2, 1]);
});
