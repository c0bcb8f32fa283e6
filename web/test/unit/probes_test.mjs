// The probe parts of the UI state and the probe data helpers
// (src/core/state.ts, reducer.ts, src/rpc/probe_api.ts): re-run settings
// start from what the store's latest run probed, a second re-run of a run
// waits for the first, a late answer of an older re-run is dropped, derived
// statistics and the first-NaN rule. Expected values are written out here.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importCore } from './unit_lib.mjs';

const core = await importCore();
const { reduce, initialState, defaultUrlState, kDefaultTabs, probeSettingsOf, probeNodeName, statValue, entryValue, colourStats, firstNanNode } = core;

const stats = (o) => ({ count: 10, nan: 0, pos_inf: 0, neg_inf: 0, zero: 0, min: 0, max: 1, mean: 0.5, std: 0.1, l2: 1, abs_max: 1, ...o });
const runs = [{ id: 0, name: 'r', paths: ['r'], inputs: [], levels: ['framework'], has_trace: false }];
const ready = () => reduce(initialState(defaultUrlState(), kDefaultTabs), { type: 'runsLoaded', runs });
const level = {
  runs: [{ id: 1 }, { id: 2 }], stats_names: ['count', 'nan', 'mean'],
  nodes: {
    4: { probe: '/conv1/Conv:0', stats: stats({ zero: 5 }), plugin: { sparsity: { outlier_ratio: 0.25 } } },
    9: { probe: '/relu/Relu:0', stats: stats({ nan: 3 }) },
    12: { probe: '/fc/Gemm:in0', stats: stats({ pos_inf: 2, neg_inf: 1 }) },
  },
  trigger_hits: [],
};

test('probe names give their node', () => {
  assert.equal(probeNodeName('/conv1/Conv:0'), '/conv1/Conv');
  assert.equal(probeNodeName('/fc/Gemm:in1'), '/fc/Gemm');
  assert.equal(probeNodeName('/fc/Gemm:grad0'), '/fc/Gemm');
  assert.equal(probeNodeName('/a:b/c'), '/a:b/c');
});

test('derived statistics and plugin metrics', () => {
  assert.equal(statValue(stats({ zero: 5 }), 'zero_fraction'), 0.5);
  assert.equal(statValue(stats({ nan: 3 }), 'nan_fraction'), 0.3);
  assert.equal(statValue(stats({ pos_inf: 2, neg_inf: 1 }), 'inf_count'), 3);
  assert.equal(statValue(stats({ mean: null }), 'mean'), null);
  assert.equal(statValue(stats({ count: 0 }), 'zero_fraction'), null);
  assert.equal(entryValue(level.nodes[4], 'plugin:sparsity.outlier_ratio'), 0.25);
  assert.equal(entryValue(level.nodes[9], 'plugin:sparsity.outlier_ratio'), null);
  const names = colourStats(level);
  assert.deepEqual(names, ['count', 'nan', 'mean', 'zero_fraction', 'nan_fraction', 'inf_count', 'plugin:sparsity.outlier_ratio']);
});

test('the first NaN: a producer hit first, else a propagator, else the first node holding one', () => {
  const hit = (node_id, role, order, trigger = 'nan') => ({ trigger, probe: `n${node_id}:0`, node: `n${node_id}`, role, order, node_id });
  assert.equal(firstNanNode({ ...level, trigger_hits: [hit(9, 'propagator', 1), hit(12, 'producer', 5)] }).id, 12);
  assert.equal(firstNanNode({ ...level, trigger_hits: [hit(9, 'propagator', 4), hit(12, 'propagator', 2)] }).id, 12);
  // A hit on a node the level does not have (node_id null) is passed over.
  assert.equal(firstNanNode({ ...level, trigger_hits: [{ ...hit(0, 'producer', 0), node_id: null }] }).id, 9);
  assert.equal(firstNanNode({ ...level, nodes: { 4: level.nodes[4] } }), null);
});

test('re-run settings start from the latest run\'s probes; edits keep the rest', () => {
  let s = ready();
  assert.deepEqual(probeSettingsOf(s, 0), { probes: [], triggers: ['nan', 'inf'], keep: 'stats', input: -1 });
  s = reduce(s, { type: 'probeData', entry: { run: 0, level: 'framework', version: 0, status: 'ready', data: level, message: null } });
  assert.deepEqual(probeSettingsOf(s, 0).probes, ['/conv1/Conv', '/fc/Gemm', '/relu/Relu']);
  s = reduce(s, { type: 'setProbeSettings', run: 0, settings: { probes: ['/conv1/Conv'] } });
  s = reduce(s, { type: 'setProbeSettings', run: 0, settings: { input: 2 } });
  assert.deepEqual(probeSettingsOf(s, 0), { probes: ['/conv1/Conv'], triggers: ['nan', 'inf'], keep: 'stats', input: 2 });
});

test('one re-run per run at a time; an older re-run\'s late answer is dropped', () => {
  let s = ready();
  const request = { probes: ['/conv1/Conv'] };
  s = reduce(s, { type: 'startRerun', run: 0, request });
  assert.equal(s.reruns[0].status, 'starting');
  assert.equal(s.reruns[0].seq, 1);
  assert.equal(reduce(s, { type: 'startRerun', run: 0, request }), s, 'a second start while one runs changes nothing');
  s = reduce(s, { type: 'rerun', entry: { ...s.reruns[0], status: 'complete' } });
  s = reduce(s, { type: 'startRerun', run: 0, request });
  assert.equal(s.reruns[0].seq, 2);
  const late = reduce(s, { type: 'rerun', entry: { ...s.reruns[0], seq: 1, status: 'failed' } });
  assert.equal(late, s, 'the first re-run\'s answer does not touch the second');
  const v = s.probeVersion;
  assert.equal(reduce(s, { type: 'probesChanged' }).probeVersion, v + 1);
});
