// The cluster view's rules that need no browser: the tab offered only once
// the server holds a cluster (reducer `showTab`), which ranks a collective
// opens, and the heat map's pixel pass (src/views/cluster/cluster_draw.ts)
// on a hand-made grid: a pixel holding several ranks shows the largest
// value among them, so one slow rank among 1,024 stays visible. Expected
// colours: the ramp's stops written out below.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importCore } from './unit_lib.mjs';

const { reduce, initialState, parseHash, drawGrid, gridRange, cellAt, labelStride, collectiveRanksToOpen } = await importCore();

const kTabs = ['timeline', 'mapping', 'summary', 'cluster'];

test('showTab: the cluster tab is hidden until offered, then shown when asked', () => {
  const s = initialState(parseHash('', kTabs), kTabs, ['cluster']);
  assert.deepEqual(s.hiddenTabs, ['cluster']);
  assert.equal(s.tab, 'timeline');
  const offered = reduce(s, { type: 'showTab', tab: 'cluster' });
  assert.deepEqual(offered.hiddenTabs, []);
  assert.equal(offered.tab, 'timeline', 'offered, not shown');
  const shown = reduce(s, { type: 'showTab', tab: 'cluster', focus: true });
  assert.equal(shown.tab, 'cluster');
  assert.equal(reduce(shown, { type: 'showTab', tab: 'cluster', focus: true }), shown, 'again: no change');
  assert.equal(reduce(s, { type: 'showTab', tab: 'nope', focus: true }), s, 'an unknown tab is ignored');
});

const coll = (starts, last) => ({ last_rank: last, ranks: starts.map((t, rank) => ({ rank, start_ns: t, end_ns: 100 })) });

test('a collective opens all its ranks when few, else the last to arrive and the earliest', () => {
  assert.deepEqual(collectiveRanksToOpen(coll([5, 3, 9], 2)), [0, 1, 2]);
  // 12 ranks arriving in reverse order of their ids; rank 0 is last.
  const c = coll([120, 110, 100, 90, 80, 70, 60, 50, 40, 30, 20, 10], 0);
  assert.deepEqual(collectiveRanksToOpen(c, 4), [0, 9, 10, 11], 'rank 0 (last) and the three earliest (11, 10, 9)');
});

/** A 2D context double holding one ImageData (what drawGrid writes). */
function imageContext() {
  const ctx = {
    image: null, at: null,
    createImageData: (w, h) => ({ width: w, height: h, data: new Uint8ClampedArray(w * h * 4) }),
    putImageData(img, x, y) { this.image = img; this.at = [x, y]; },
    save() {}, restore() {}, setTransform() {},
  };
  return ctx;
}
const pixel = (img, x, y) => Array.from(img.data.slice((y * img.width + x) * 4, (y * img.width + x) * 4 + 3));
const kPale = [0xff, 0xf7, 0xbc], kDark = [0x67, 0x00, 0x0d], kNoData = [0xe4, 0xe4, 0xe4];

test('heat map pixels: one pixel per cell, min pale, max dark, no data grey', () => {
  // 2 ranks x 3 steps, rank 1 step 2 without figures.
  const g = { rows: 2, cols: 3, values: Float64Array.from([10, 20, 30, 40, 50, NaN]) };
  const range = gridRange(g);
  assert.deepEqual([range.min, range.max, range.count], [10, 50, 5]);
  const ctx = imageContext();
  globalThis.performance ??= { now: () => 0 };
  drawGrid(ctx, 1, g, { x: 4, y: 2, w: 3, h: 2, rows: 2, cols: 3 }, range);
  assert.deepEqual(ctx.at, [4, 2]);
  assert.deepEqual(pixel(ctx.image, 0, 0), kPale, 'value 10 = min');
  assert.deepEqual(pixel(ctx.image, 1, 1), kDark, 'value 50 = max');
  assert.deepEqual(pixel(ctx.image, 2, 1), kNoData, 'no figures');
});

test('heat map pixels: 1,024 ranks in 64 pixel rows keep the one slow rank', () => {
  const rows = 1024, cols = 4;
  const values = new Float64Array(rows * cols).fill(10);
  values[777 * cols + 2] = 99; // rank 777, step 2
  values[0] = 0;
  const g = { rows, cols, values };
  const ctx = imageContext();
  drawGrid(ctx, 1, g, { x: 0, y: 0, w: 4, h: 64, rows, cols }, gridRange(g));
  const y = Math.floor((777 * 64) / 1024); // 48: ranks 768..783
  assert.deepEqual(pixel(ctx.image, 2, y), kDark, 'the pixel row holding rank 777 shows its value');
  assert.notDeepEqual(pixel(ctx.image, 2, y - 1), kDark);
  assert.notDeepEqual(pixel(ctx.image, 1, y), kDark, 'other steps of those ranks are not');
  // And the click on that pixel finds a cell in that row band.
  const c = cellAt({ x: 0, y: 0, w: 4, h: 64, rows, cols }, 2.5, y + 0.5);
  assert.ok(c.row >= 768 && c.row <= 783 && c.col === 2, JSON.stringify(c));
});

test('axis labels: a 1/2/5 stride keeping labels apart', () => {
  assert.equal(labelStride(10, 200, 13), 1);
  assert.equal(labelStride(1024, 400, 13), 50);
  assert.equal(labelStride(64, 300, 13), 5);
});
