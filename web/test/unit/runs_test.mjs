// Runs that are not a graph + trace pair (src/core/reducer.ts, state.ts,
// url_state.ts, components/run_notes.ts): a trace-only run has no level
// (never 'undefined', never a level the server would answer 404 for);
// switching to it drops the graph level; a run `open --keep-going` could
// not open is not usable; its error message is split into file, place and
// what was expected; the link note repeats the CLI summary's reasons.
// Expected values are written out by hand from the message formats of
// CONVENTIONS.md ("<file>:<line>:<col>: <what>; expected <X>, found '<Y>'").

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importCore } from './unit_lib.mjs';

const {
  reduce, initialState, parseHash, formatHash, urlStateOf, kDefaultTabs, paneHasGraph, runUsable, errorParts, linkNoteText, pairCommand,
} = await importCore();

const kRuns = [
  { id: 0, name: 'ort', paths: ['ort_all'], inputs: [], levels: ['framework', 'compiled'], has_trace: true },
  { id: 1, name: 'trace.json', paths: ['dir/trace.json'], inputs: [{ path: 'dir/trace.json', format: 'chrome_trace', role: 'trace' }], levels: [], has_trace: true },
  { id: 2, name: 'bad.json', paths: ['bad.json'], inputs: [], levels: [], has_trace: false, error: { code: 'malformed input', message: 'bad.json:1:18: truncated' } },
];
const open = (hash = '', runs = kRuns) => reduce(initialState(parseHash(hash, kDefaultTabs), kDefaultTabs), { type: 'runsLoaded', runs });

test('a trace-only run opens with no level, and its URL names none', () => {
  const s = open('#run=1');
  assert.equal(s.panes[0].level, '');
  assert.equal(paneHasGraph(s, s.panes[0]), false);
  const hash = formatHash(urlStateOf(s), kDefaultTabs);
  assert.equal(hash, '#run=1&grouping=scopes');
  assert.ok(!hash.includes('undefined'));
  // A link to a level the run lacks (an old link, a hand-edited one) also lands on none.
  assert.equal(open('#run=1&level=framework').panes[0].level, '');
});

test('switching runs: to a trace-only run drops the level; back to a graph run takes its first level', () => {
  let s = open('#run=0&level=compiled&node=4');
  assert.equal(paneHasGraph(s, s.panes[0]), true);
  s = reduce(s, { type: 'setRun', run: 1 });
  assert.deepEqual([s.panes[0].run, s.panes[0].level, s.panes[0].node, s.selection], [1, '', null, null]);
  assert.equal(paneHasGraph(s, s.panes[0]), false);
  s = reduce(s, { type: 'setRun', run: 0 });
  assert.deepEqual([s.panes[0].run, s.panes[0].level], [0, 'framework']);
  // The URL hash edited to a trace-only run.
  s = reduce(s, { type: 'urlChanged', url: parseHash('#run=1&level=framework') });
  assert.deepEqual([s.panes[0].run, s.panes[0].level], [1, '']);
});

test('a run that could not be opened is not usable; the others are', () => {
  const s = open('#run=2');
  assert.equal(s.panes[0].run, 2);
  assert.deepEqual([runUsable(s, 0), runUsable(s, 1), runUsable(s, 2), runUsable(s, 7)], [true, true, false, false]);
});

test('errorParts: file, place, what and what was expected', () => {
  assert.deepEqual(errorParts("model.onnx:12:5: unexpected token; expected '}', found 'x'"),
    { file: 'model.onnx', place: 'line 12, column 5', what: 'unexpected token', expected: "expected '}', found 'x'" });
  assert.deepEqual(errorParts('trace.json:1:18: truncated: the file ends inside a trace event that started at line 1'),
    { file: 'trace.json', place: 'line 1, column 18', what: 'truncated: the file ends inside a trace event that started at line 1', expected: '' });
  assert.deepEqual(errorParts('model.om@byte 96: bad magic, expected IMOD'),
    { file: 'model.om', place: 'byte 96', what: 'bad magic', expected: 'expected IMOD' });
  assert.deepEqual(errorParts('/runs/x.csv: no header row'), { file: '/runs/x.csv', place: '', what: 'no header row', expected: '' });
  assert.deepEqual(errorParts('something odd'), { file: '', place: '', what: 'something odd', expected: '' });
});

test('linkNoteText: the CLI reasons; nothing when the tasks link', () => {
  const base = { has_graph: true, has_trace: true, aligned_host_ops: 0, examples: [] };
  assert.equal(linkNoteText({ ...base, tasks: 7, linked_tasks: 0, unlinked_tasks: 7,
    reasons: [{ code: 'without_node_name', count: 5, text: 'name no node' }, { code: 'unknown_node', count: 2, text: 'name a node the graphs lack' }] }),
  'None of the 7 tasks link to a graph node, so every node shows as not executed: 5 name no node, 2 name a node the graphs lack.');
  assert.equal(linkNoteText({ ...base, tasks: 1200, linked_tasks: 1198, unlinked_tasks: 2,
    reasons: [{ code: 'unknown_node', count: 2, text: 'name a node the graphs lack' }] }),
  '2 of 1,200 tasks link to no graph node: 2 name a node the graphs lack.');
  // Copies and waits naming no node are normal: no note.
  assert.equal(linkNoteText({ ...base, tasks: 10, linked_tasks: 8, unlinked_tasks: 2, reasons: [{ code: 'without_node_name', count: 2, text: 'name no node' }] }), null);
  assert.equal(linkNoteText({ ...base, has_graph: false, tasks: 10, linked_tasks: 0, unlinked_tasks: 10, reasons: [] }), null);
});

test('pairCommand: the model then what the run was opened from, quoted for a shell when needed', () => {
  assert.equal(pairCommand('dir/model.onnx', kRuns[1]), 'model-inspector open --run dir/model.onnx dir/trace.json');
  const spaced = { ...kRuns[1], paths: ["my runs/it's.json"] };
  assert.equal(pairCommand('m.onnx', spaced), `model-inspector open --run m.onnx 'my runs/it'\\''s.json'`);
});
