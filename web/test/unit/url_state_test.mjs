// The URL hash ↔ UI state (src/core/url_state.ts, state.ts): every field
// parses and formats back, links written before later fields existed keep
// their meaning, malformed values fall back to their defaults. The expected
// values are written out by hand from web/README.md's "URL fields".

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importCore } from './unit_lib.mjs';

const core = await importCore();
const { parseHash, formatHash, defaultUrlState, initialState, urlStateOf, kDefaultTabs } = core;

const kDefaults = {
  pane: { run: 0, level: 'framework', grouping: 'scopes', direction: 'auto', expand: [], collapse: [], node: null },
  selection: null, tab: 'timeline', panel: 'split', color: 'op', compare: null, timelineCompare: null, align: 'start', clock: 'raw',
  criticalPath: false,
  pins: [],
  probeStat: 'nan',
};

test('an empty hash is the default state', () => {
  assert.deepEqual(parseHash(''), kDefaults);
  assert.deepEqual(parseHash('#'), kDefaults);
  assert.deepEqual(defaultUrlState(), kDefaults);
  assert.equal(formatHash(defaultUrlState()), '#run=0&level=framework&grouping=scopes');
});

test('a first-slice link (main pane only) means the same and formats to itself', () => {
  const h = '#run=0&level=framework&grouping=scopes&expand=3,17&collapse=5&node=12';
  const u = parseHash(h);
  assert.deepEqual(u, { ...kDefaults, pane: { run: 0, level: 'framework', grouping: 'scopes', direction: 'auto', expand: [3, 17], collapse: [5], node: 12 } });
  assert.equal(formatHash(u), h);
  // Without the '#', with percent-encoded commas (as some mailers rewrite them).
  assert.deepEqual(parseHash('run=0&level=framework&grouping=scopes&expand=3%2C17&collapse=5&node=12'), u);
});

test('every field parses', () => {
  const h = '#run=1&level=compiled&grouping=fusion&direction=lr&expand=3,17&collapse=5&node=12&sel=task:812,813'
    + '&tab=summary&panel=bottom&color=probe&compare=0:framework&tcompare=2&align=first_run&clock=calibrated&cpath=1&pin=7,3'
    + '&pstat=plugin:sparsity.zero_fraction';
  assert.deepEqual(parseHash(h), {
    pane: { run: 1, level: 'compiled', grouping: 'fusion', direction: 'lr', expand: [3, 17], collapse: [5], node: 12 },
    selection: { kind: 'task', ids: [812, 813] }, tab: 'summary', panel: 'bottom', color: 'probe',
    compare: { run: 0, level: 'framework' }, timelineCompare: 2, align: 'first_run', clock: 'calibrated', criticalPath: true,
    pins: [7, 3], probeStat: 'plugin:sparsity.zero_fraction',
  });
  assert.equal(formatHash(parseHash(h)), h, 'formats back to the same hash');
});

test('each selection form round-trips through sel=', () => {
  const cases = [
    ['task:7', { kind: 'task', ids: [7] }],
    ['task:1,2,3', { kind: 'task', ids: [1, 2, 3] }],
    ['op:Conv', { kind: 'op_type', opType: 'Conv' }],
    ['op:com.microsoft:FusedConv', { kind: 'op_type', opType: 'com.microsoft:FusedConv' }],
    ['op:MatMul+Add', { kind: 'op_type', opType: 'MatMul+Add' }],
    ['finding:3', { kind: 'finding', index: 3, nodes: [], tasks: [], label: '' }],
    ['range:100-200', { kind: 'range', startNs: 100, endNs: 200, tracks: [] }],
    ['range:100-200:1,4', { kind: 'range', startNs: 100, endNs: 200, tracks: [1, 4] }],
  ];
  for (const [sel, want] of cases) {
    const u = { ...defaultUrlState(), selection: want };
    const h = formatHash(u);
    assert.deepEqual(parseHash(h).selection, want, `${sel} → ${h}`);
    if (!sel.includes('+')) assert.ok(h.endsWith(`&sel=${sel}`), `${h} ends with sel=${sel}`);
  }
});

test('each field other than the main pane\'s appears only away from its default', () => {
  const d = defaultUrlState();
  const one = (patch) => formatHash({ ...d, ...patch }).replace('#run=0&level=framework&grouping=scopes', '');
  assert.equal(one({ tab: 'timeline' }), '');
  assert.equal(one({ tab: 'mapping' }), '&tab=mapping');
  assert.equal(one({ panel: 'split' }), '');
  assert.equal(one({ panel: 'graph' }), '&panel=graph');
  assert.equal(one({ color: 'time' }), '&color=time');
  assert.equal(one({ compare: { run: 2, level: 'compiled' } }), '&compare=2:compiled');
  assert.equal(one({ timelineCompare: 0 }), '&tcompare=0');
  assert.equal(one({ align: 'first_run' }), '&align=first_run');
  assert.equal(one({ clock: 'calibrated' }), '&clock=calibrated');
  assert.equal(one({ criticalPath: false }), '');
  assert.equal(one({ criticalPath: true }), '&cpath=1');
  assert.equal(one({ pins: [] }), '');
  assert.equal(one({ pins: [4, 2] }), '&pin=4,2');
  assert.equal(one({ probeStat: 'nan' }), '');
  assert.equal(one({ probeStat: 'mean' }), '&pstat=mean');
  assert.equal(one({ pane: { ...d.pane, direction: 'lr' } }), '&direction=lr');
  // The default is the direction that fits the window; a chosen top to bottom is kept.
  assert.equal(one({ pane: { ...d.pane, direction: 'tb' } }), '&direction=tb');
  assert.equal(parseHash('#direction=tb').pane.direction, 'tb');
  assert.equal(parseHash('#direction=auto').pane.direction, 'auto');
});

test('malformed values fall back to their defaults', () => {
  const bad = parseHash('#run=-3&level=&grouping=bogus&direction=up&expand=3,x,-1,7&collapse=&node=12a&sel=task:'
    + '&tab=bogus&panel=left&color=red&compare=1:&tcompare=-1&align=end&clock=wall&cpath=yes&pin=x,-1&pstat=a%20b');
  assert.deepEqual(bad, { ...kDefaults, pane: { ...kDefaults.pane, expand: [3, 7] } });
  // Pins: bad ids dropped, a repeated one kept once.
  assert.deepEqual(parseHash('#pin=5,x,5,2').pins, [5, 2]);
  assert.equal(parseHash('#run=abc').pane.run, 0);
  assert.equal(parseHash('#node=-1').pane.node, null);
  for (const sel of ['task:1,,2', 'task:x', 'op:', 'finding:x', 'finding:', 'range:200-100', 'range:5-5', 'range:1-2:a', 'bogus:1', 'nocolon']) {
    assert.equal(parseHash(`#sel=${sel}`).selection, null, `sel=${sel}`);
  }
});

test('tab= accepts the bottom views\' ids; the first is the default', () => {
  assert.deepEqual(kDefaultTabs, ['timeline', 'mapping', 'summary']);
  assert.equal(parseHash('#tab=diff', ['timeline', 'diff']).tab, 'diff');
  assert.equal(parseHash('#tab=mapping', ['timeline', 'diff']).tab, 'timeline');
  assert.equal(formatHash({ ...defaultUrlState(['diff', 'timeline']), tab: 'diff' }, ['diff', 'timeline']), '#run=0&level=framework&grouping=scopes');
});

test('state → hash: the hash of a page opened from a link is that link', () => {
  const tabs = kDefaultTabs;
  for (const h of [
    '#run=0&level=framework&grouping=scopes',
    '#run=0&level=framework&grouping=scopes&expand=3,17&collapse=5&node=12',
    '#run=1&level=compiled&grouping=none&node=4&sel=range:10-900:2&tab=summary&color=time&compare=1:framework&tcompare=0&clock=calibrated',
    '#run=0&level=framework&grouping=scopes&tab=summary&cpath=1',
  ]) {
    const s = initialState(parseHash(h, tabs), tabs);
    assert.equal(formatHash(urlStateOf(s), tabs), h);
  }
});

test('a node selection lives in node=, not sel=; the second pane only while comparing', () => {
  const tabs = kDefaultTabs;
  const s = initialState(parseHash('#run=0&level=framework&grouping=scopes&compare=0:compiled', tabs), tabs);
  const withNode = { ...s, selection: { kind: 'node', level: 'framework', id: 9, run: 0 }, panes: [{ ...s.panes[0], node: 9 }, s.panes[1]] };
  assert.equal(formatHash(urlStateOf(withNode), tabs), '#run=0&level=framework&grouping=scopes&node=9&compare=0:compiled');
  assert.equal(formatHash(urlStateOf({ ...withNode, comparing: false }), tabs), '#run=0&level=framework&grouping=scopes&node=9');
});
