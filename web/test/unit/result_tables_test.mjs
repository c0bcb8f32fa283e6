// base/result_tables.ts: any analysis result as titled blocks, with the
// same rules as the CLI's table encoder (src/encoders/encoders_test.cc
// lays out the same sample). Expected cells written out by hand.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importCore } from './unit_lib.mjs';

const { resultBlocks, headerOf, cellText, kMaxResultRows } = await importCore();

const sample = {
  name: 'rank 1', busy_ns: 62000, share: 0.1234, peak_bytes: 1536, rank: null, ok: true, ratio: 1.158878504672897,
  tracks: [3, 4],
  sources: [
    { source: 0, name: 'rank 0', busy_ns: 45000, idle: { total_ns: 40000 } },
    { source: 1, name: 'rank 1', busy_ns: 62000, idle: { total_ns: 37000 } },
  ],
  imbalance: { max_over_mean: 1.5, slowest: 'rank 1' },
};

test('units come from key names', () => {
  assert.equal(headerOf('busy_ns'), 'busy');
  assert.equal(headerOf('ns'), 'time');
  assert.equal(headerOf('idle.total_ns'), 'idle.total');
  assert.equal(headerOf('peak_bytes'), 'peak');
  // A member without a unit takes its object's (322000 ns of host idle).
  assert.equal(headerOf('idle_by_reason_ns.host'), 'idle by reason.host');
  assert.equal(cellText('idle_by_reason_ns.host', 322000), '322.0 µs');
  assert.equal(headerOf('by_share.count'), 'by share.count');
  assert.equal(cellText('busy_ns', 62000), '62.0 µs');    // 62000 ns
  assert.equal(cellText('total_us', 1500), '1.500 ms');   // 1500 us
  assert.equal(cellText('peak_bytes', 1536), '1.5 KiB');  // 1.5 x 1024
  assert.equal(cellText('share', 0.1234), '12.3 %');
  assert.equal(cellText('overlap_share', 0.5), '50.0 %');
  assert.equal(cellText('ratio', 1.158878504672897), '1.159');
  assert.equal(cellText('count', 12), '12');
  assert.equal(cellText('rank', null), '');
  assert.equal(cellText('ids', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), '1, 2, 3, 4, 5, 6, 7, 8, … (10 in all)');
});

test('scalars, tables and sections', () => {
  const blocks = resultBlocks(sample, 'Sample');
  assert.deepEqual(blocks.map((b) => [b.kind, b.title]), [
    ['fields', 'Sample'], ['table', 'Sample / sources'], ['fields', 'Sample / imbalance']]);
  assert.deepEqual(blocks[0].rows.map((c) => [c.key, c.text]), [
    ['name', 'rank 1'], ['busy_ns', '62.0 µs'], ['share', '12.3 %'], ['peak_bytes', '1.5 KiB'], ['rank', ''], ['ok', 'true'],
    ['ratio', '1.159'], ['tracks', '3, 4']]);
  const t = blocks[1];
  assert.deepEqual(t.header, ['source', 'name', 'busy', 'idle.total']);
  assert.deepEqual(t.numeric, [true, false, true, true]);
  assert.deepEqual(t.rows.map((r) => r.map((c) => c.text)), [['0', 'rank 0', '45.0 µs', '40.0 µs'], ['1', 'rank 1', '62.0 µs', '37.0 µs']]);
  assert.equal(t.total, 2);
  assert.deepEqual(blocks[2].rows.map((c) => c.text), ['1.5', 'rank 1']);
});

test('a top-level array is one table; long tables are cut and counted', () => {
  const rows = Array.from({ length: kMaxResultRows + 3 }, (_, i) => ({ rule: `r${i}`, time_ns: 1500 }));
  const [b] = resultBlocks(rows, 'Findings');
  assert.equal(b.kind, 'table');
  assert.equal(b.rows.length, kMaxResultRows);
  assert.equal(b.total, kMaxResultRows + 3);
  assert.equal(b.rows[0][1].text, '1.5 µs');
  assert.deepEqual(resultBlocks([], 'Empty')[0].rows.map((c) => c.text), ['none']);
  assert.deepEqual(resultBlocks({ gaps: [] }, 'Idle')[0].rows.map((c) => [c.key, c.text]), [['gaps', 'none']]);
});
