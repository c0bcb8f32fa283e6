// Decoder of the timeline window binary ("MITW", docs/reference/timeline-binary.md):
// the items of one visible time window at one level of detail, as sent by
// GET /api/runs/{run}/timeline/window.
//
// Every column is a typed-array view over the response buffer (no copies);
// strings are decoded lazily and memoised, like layout_binary.ts. On top of
// the raw columns the decoder builds the per-row index the view needs every
// frame: the items of each (track, nesting row), ordered by start, so that
// culling and hit testing are binary searches instead of scans.

export const kTimelineMagic = 0x5754494d; // "MITW" read as little-endian u32
export const kTimelineVersion = 1;
/** `task` of an aggregate (several narrow tasks merged into one item). */
export const kAggregateTask = 0xffffffff;
export const kFlagAggregate = 1;
export const kFlagLinked = 2;
const kHeaderBytes = 40;

/** TaskKind of the trace model (src/trace/trace.h), same numbering. */
export enum TaskKind {
  Compute = 0,
  DataMovement = 1,
  Sync = 2,
  HostOp = 3,
  Runtime = 4,
  Annotation = 5,
  Overhead = 6,
  Other = 7,
}
export const kTaskKindNames = ['compute', 'data_movement', 'sync', 'host_op', 'runtime', 'annotation', 'overhead', 'other'];

/** A malformed or unsupported timeline binary; the message says where. */
export class TimelineBinaryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimelineBinaryError';
  }
}

/** The items of one (track, row): indices into the columns, ordered by start. */
export interface RowItems {
  track: number;
  row: number;
  items: Uint32Array;
}

export interface TimelineWindow {
  version: number;
  itemCount: number;
  stringCount: number;
  startNs: number;
  endNs: number;
  /** Tasks overlapping the window after filtering (items can be fewer: aggregates). */
  totalTasks: number;
  start: Float64Array;
  end: Float64Array;
  task: Uint32Array;
  count: Uint32Array;
  track: Uint32Array;
  label: Uint32Array;
  busy: Float32Array;
  kind: Uint8Array;
  row: Uint8Array;
  flags: Uint8Array;
  /** String `i` of the table (memoised). */
  str(i: number): string;
  /** Items per (track, row), keyed by rowKey(track, row). */
  rows: Map<number, RowItems>;
}

export function rowKey(track: number, row: number): number {
  return track * 256 + row;
}

const align8 = (n: number): number => (n + 7) & ~7;

/** Decodes one MITW response; throws TimelineBinaryError on anything malformed. */
export function decodeTimelineWindow(buf: ArrayBuffer): TimelineWindow {
  if (buf.byteLength < kHeaderBytes) {
    throw new TimelineBinaryError(`timeline binary: ${buf.byteLength} bytes is shorter than the ${kHeaderBytes}-byte header`);
  }
  const dv = new DataView(buf);
  const magic = dv.getUint32(0, true);
  if (magic !== kTimelineMagic) {
    throw new TimelineBinaryError(`timeline binary: bad magic 0x${magic.toString(16)} at byte 0 (expected "MITW")`);
  }
  const version = dv.getUint32(4, true);
  if (version !== kTimelineVersion) {
    throw new TimelineBinaryError(`timeline binary: version ${version} at byte 4 is not supported (expected ${kTimelineVersion})`);
  }
  const n = dv.getUint32(8, true);
  const stringCount = dv.getUint32(12, true);
  const startNs = dv.getFloat64(16, true);
  const endNs = dv.getFloat64(24, true);
  const totalTasks = dv.getUint32(32, true);

  let off = kHeaderBytes;
  const need = (bytes: number, what: string): number => {
    const at = align8(off);
    if (at + bytes > buf.byteLength) {
      throw new TimelineBinaryError(
        `timeline binary: section ${what} (${bytes} bytes at byte ${at}) runs past the end (${buf.byteLength} bytes)`);
    }
    off = at + bytes;
    return at;
  };
  const start = new Float64Array(buf, need(8 * n, 'start_ns'), n);
  const end = new Float64Array(buf, need(8 * n, 'end_ns'), n);
  const task = new Uint32Array(buf, need(4 * n, 'task'), n);
  const count = new Uint32Array(buf, need(4 * n, 'count'), n);
  const track = new Uint32Array(buf, need(4 * n, 'track'), n);
  const label = new Uint32Array(buf, need(4 * n, 'label'), n);
  const busy = new Float32Array(buf, need(4 * n, 'busy'), n);
  const kind = new Uint8Array(buf, need(n, 'kind'), n);
  const row = new Uint8Array(buf, need(n, 'row'), n);
  const flags = new Uint8Array(buf, need(n, 'flags'), n);
  const lengths = new Uint32Array(buf, need(4 * stringCount, 'string lengths'), stringCount);
  const offsets = new Uint32Array(stringCount + 1);
  for (let i = 0; i < stringCount; ++i) offsets[i + 1] = offsets[i] + lengths[i];
  // The bytes follow the lengths directly (no alignment: they are bytes).
  const bytesAt = off;
  if (bytesAt + offsets[stringCount] > buf.byteLength) {
    throw new TimelineBinaryError(
      `timeline binary: string bytes (${offsets[stringCount]} at byte ${bytesAt}) run past the end (${buf.byteLength} bytes)`);
  }
  const bytes = new Uint8Array(buf, bytesAt, offsets[stringCount]);
  for (let i = 0; i < n; ++i) {
    if (label[i] >= stringCount) {
      throw new TimelineBinaryError(`timeline binary: item ${i} has label ${label[i]} but the table holds ${stringCount} strings`);
    }
  }

  const decoder = new TextDecoder();
  const memo: (string | undefined)[] = new Array(stringCount);
  const str = (i: number): string => {
    let s = memo[i];
    if (s === undefined) {
      if (i < 0 || i >= stringCount) return '';
      s = decoder.decode(bytes.subarray(offsets[i], offsets[i + 1]));
      memo[i] = s;
    }
    return s;
  };

  return {
    version, itemCount: n, stringCount, startNs, endNs, totalTasks,
    start, end, task, count, track, label, busy, kind, row, flags, str,
    rows: indexRows(n, track, row, start),
  };
}

/** Groups item indices by (track, row), each group ordered by start. */
function indexRows(n: number, track: Uint32Array, row: Uint8Array, start: Float64Array): Map<number, RowItems> {
  const sizes = new Map<number, number>();
  for (let i = 0; i < n; ++i) {
    const k = rowKey(track[i], row[i]);
    sizes.set(k, (sizes.get(k) ?? 0) + 1);
  }
  const rows = new Map<number, RowItems>();
  const fill = new Map<number, number>();
  for (const [k, size] of sizes) {
    rows.set(k, { track: Math.floor(k / 256), row: k % 256, items: new Uint32Array(size) });
    fill.set(k, 0);
  }
  for (let i = 0; i < n; ++i) {
    const k = rowKey(track[i], row[i]);
    const f = fill.get(k)!;
    rows.get(k)!.items[f] = i;
    fill.set(k, f + 1);
  }
  // The server sends each row in start order; sort only when it did not.
  for (const r of rows.values()) {
    const it = r.items;
    let sorted = true;
    for (let j = 1; j < it.length && sorted; ++j) if (start[it[j]] < start[it[j - 1]]) sorted = false;
    if (!sorted) it.sort((a, b) => start[a] - start[b]);
  }
  return rows;
}

/**
 * First index j in `items` (ordered by start) whose item may overlap t:
 * the first with start >= t, stepped back over predecessors still running
 * at t (items of one row do not overlap, so this is at most one or two).
 */
export function firstVisible(items: Uint32Array, start: Float64Array, end: Float64Array, t: number): number {
  let lo = 0, hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[items[mid]] < t) lo = mid + 1; else hi = mid;
  }
  let steps = 0;
  while (lo > 0 && end[items[lo - 1]] > t && steps++ < 64) --lo;
  return lo;
}
