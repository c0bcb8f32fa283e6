// Decoder of the MITW timeline window binary (web/src/timeline_binary.ts) on
// buffers written here by the rule of docs/reference/timeline-binary.md:
// columns, the per-row index, lazy strings, unaligned string bytes, and the
// errors for bad magic / version / truncation / a label outside the table.
// The check against the real server's format=json is in timeline_test.mjs.

import assert from 'node:assert/strict';
import { importTs } from './lib.mjs';

const tb = await importTs('rpc/timeline_binary');
const { formatCursor, formatDuration, formatTick, niceStep } = await importTs('views/timeline/timeline_render');

/** Writes an MITW buffer: items = [{start,end,task,count,track,label,busy,kind,row,flags}]. */
function encode(items, strings, { start = 0, end = 1000, total = items.length, magic = 'MITW', version = 1, cut = 0 } = {}) {
  const parts = [];
  let size = 0;
  const push = (u8) => { parts.push(u8); size += u8.length; };
  const pad = () => { const p = (8 - (size % 8)) % 8; if (p) push(new Uint8Array(p)); };
  const header = new DataView(new ArrayBuffer(40));
  for (let i = 0; i < 4; ++i) header.setUint8(i, magic.charCodeAt(i));
  header.setUint32(4, version, true);
  header.setUint32(8, items.length, true);
  header.setUint32(12, strings.length, true);
  header.setFloat64(16, start, true);
  header.setFloat64(24, end, true);
  header.setUint32(32, total, true);
  push(new Uint8Array(header.buffer));
  const col = (Ctor, f) => { pad(); push(new Uint8Array(Ctor.from(items.map(f)).buffer)); };
  col(Float64Array, (x) => x.start);
  col(Float64Array, (x) => x.end);
  col(Uint32Array, (x) => x.task);
  col(Uint32Array, (x) => x.count);
  col(Uint32Array, (x) => x.track);
  col(Uint32Array, (x) => x.label);
  col(Float32Array, (x) => x.busy);
  col(Uint8Array, (x) => x.kind);
  col(Uint8Array, (x) => x.row);
  col(Uint8Array, (x) => x.flags);
  const bytes = strings.map((s) => new TextEncoder().encode(s));
  pad();
  push(new Uint8Array(Uint32Array.from(bytes.map((b) => b.length)).buffer));
  for (const b of bytes) push(b); // no padding before the bytes
  const out = new Uint8Array(size);
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out.buffer.slice(0, size - cut);
}

const A = 0xffffffff;
const items = [
  // track 2 row 0 sent out of start order on purpose; track 0 has two rows.
  { start: 500, end: 700, task: 9, count: 1, track: 2, label: 1, busy: 1, kind: 1, row: 0, flags: 2 },
  { start: 100, end: 200, task: 3, count: 1, track: 2, label: 0, busy: 1, kind: 0, row: 0, flags: 2 },
  { start: 0, end: 400, task: 1, count: 1, track: 0, label: 0, busy: 1, kind: 0, row: 0, flags: 0 },
  { start: 10, end: 50, task: 2, count: 1, track: 0, label: 2, busy: 1, kind: 2, row: 1, flags: 0 },
  { start: 400, end: 410, task: A, count: 17, track: 0, label: 2, busy: 0.25, kind: 0, row: 0, flags: 1 },
];
const strings = ['Conv', 'Memcpy HtoD', 'cudaStreamSynchronize ü'];
const w = tb.decodeTimelineWindow(encode(items, strings, { start: -5, end: 1e15 + 3, total: 33 }));
assert.equal(w.itemCount, 5);
assert.equal(w.stringCount, 3);
assert.equal(w.startNs, -5);
assert.equal(w.endNs, 1e15 + 3);
assert.equal(w.totalTasks, 33);
assert.deepEqual(Array.from(w.start), items.map((x) => x.start));
assert.deepEqual(Array.from(w.task), items.map((x) => x.task));
assert.deepEqual(Array.from(w.count), items.map((x) => x.count));
assert.deepEqual(Array.from(w.kind), items.map((x) => x.kind));
assert.deepEqual(Array.from(w.flags), items.map((x) => x.flags));
assert.equal(w.busy[4], 0.25);
assert.equal(w.str(2), 'cudaStreamSynchronize ü');
assert.equal(w.str(w.label[0]), 'Memcpy HtoD');
// Zero-copy views over the one buffer.
assert.equal(w.start.buffer, w.task.buffer);
// Per-row index, ordered by start.
assert.deepEqual(Array.from(w.rows.get(tb.rowKey(2, 0)).items), [1, 0]);
assert.deepEqual(Array.from(w.rows.get(tb.rowKey(0, 0)).items), [2, 4]);
assert.deepEqual(Array.from(w.rows.get(tb.rowKey(0, 1)).items), [3]);
assert.equal(w.rows.size, 3);
// firstVisible: the item still running at t comes first.
const r0 = w.rows.get(tb.rowKey(0, 0)).items;
assert.equal(tb.firstVisible(r0, w.start, w.end, 300), 0);
assert.equal(tb.firstVisible(r0, w.start, w.end, 405), 1);
assert.equal(tb.firstVisible(r0, w.start, w.end, 500), 2);

// An empty window (no items, no strings) decodes.
const empty = tb.decodeTimelineWindow(encode([], []));
assert.equal(empty.itemCount, 0);
assert.equal(empty.rows.size, 0);
// One string (4 length bytes): the bytes follow the lengths without padding.
assert.equal(tb.decodeTimelineWindow(encode([items[1]], ['Conv'])).str(0), 'Conv');

// Errors say what and where.
assert.throws(() => tb.decodeTimelineWindow(encode(items, strings, { magic: 'MILY' })), /bad magic .* at byte 0/);
assert.throws(() => tb.decodeTimelineWindow(encode(items, strings, { version: 2 })), /version 2 at byte 4 is not supported/);
assert.throws(() => tb.decodeTimelineWindow(new ArrayBuffer(12)), /shorter than the 40-byte header/);
assert.throws(() => tb.decodeTimelineWindow(encode(items, strings, { cut: 3 })), /string bytes .* run past the end/);
assert.throws(() => tb.decodeTimelineWindow(encode(items, strings).slice(0, 100)), /section \w+ .* runs past the end/);
assert.throws(() => tb.decodeTimelineWindow(encode(items, strings.slice(0, 2))), /item 3 has label 2 but the table holds 2 strings/);

// Axis and duration formatting.
assert.equal(formatDuration(830), '830 ns');
assert.equal(formatDuration(1250000), '1.25 ms');
assert.equal(formatDuration(12_345), '12.35 µs');
assert.equal(formatDuration(3e9), '3 s');
assert.equal(niceStep(130), 200);
assert.equal(niceStep(4100), 5000);
assert.equal(niceStep(1e6), 1e6);
assert.equal(formatTick(2_000_000, 1_000_000), '2 ms');
assert.equal(formatTick(2_500_000, 500_000), '2.5 ms');
assert.equal(formatTick(1200, 200), '1.2 µs');
assert.equal(formatTick(40, 20), '40 ns');
assert.equal(formatCursor(5687589, 20000, 13), '5687.59 µs');
assert.equal(formatCursor(1234567, 1e6, 2000), '1.235 ms');
console.log('PASS: timeline_binary_test');
