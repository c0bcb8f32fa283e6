// Scene: the drawable form of one Layout, built once per layout and shared by
// both renderers: rect instances (frames behind edges, items in front), edge
// segments tessellated from the spline rule of layout-binary.md, arrowhead
// triangles, and a uniform grid over items for culling and hit testing.
// Everything is a flat typed array so a 100k-node layout is a few buffers.

import {
  graphNodeCount, GroupKind, ItemKind, kEdgeReversed, kGroupVisible, kNone, kProfileBands, NodeStatus, opName, type Layout,
} from '../../rpc/layout_binary';
import {
  darker, divergingColor, kDiffAdded, kDiffChanged, kDiffFaster, kDiffRemoved, kDiffRenamed, kDiffSame, kDiffSlower, heatColor, kFaultFill, kFaultStroke, kFusedMark, kStatusFused, kStatusInserted, kStatusNotRun, kStatusRan, kStatusUnlinked, kGroupStyles, kInsertedStroke, kIoFill, kIoStroke, kNoDataFill, kNoDataStroke, kProbeDivergentMark, kProbeNanMark, kTrainProducerMark, kTrainPropagatorMark, mix, opColor, type Rgb,
} from '../../base/palette';
import type { ColorMode, DiffCounts } from '../../core/state';
import { DiffKind, DiffTiming, type DiffMark } from './diff_marks';

/**
 * Floats per rect instance: x y w h | fill rgba | stroke rgb, width | radius, flags, lod.
 * `lod`: the smallest size (sqrt(w·h), world px) of the frames around the
 * instance; zoomed far out, an instance whose lod × scale < kLodFramePx lies
 * inside a frame drawn as its silhouette and is skipped (see lodPx()).
 */
export const kRectStride = 15;
export const kRectDashed = 1;
export const kRectTopRounded = 2;
/** Floats per edge segment: x0 y0 x1 y1 | world width | distance at x0 | dashed | highlight | lod. */
export const kSegStride = 9;
/** Floats per silhouette vertex: x y | rgb | own lod, parent lod. */
export const kPolyStride = 7;
/** A frame smaller than this on screen (sqrt of its area, CSS px) is drawn as its silhouette... */
export const kLodFramePx = 56;
/** ...but only below this zoom (nodes under ~7 px tall; text is long gone). */
export const kLodMaxScale = 0.2;
/** "No frame around": an lod that never triggers. */
export const kLodNever = 1e30;

/** The screen-size threshold of the silhouette level of detail at `scale` (0: off). */
export function lodPx(scale: number): number {
  return scale < kLodMaxScale ? kLodFramePx : 0;
}


export interface SceneOptions {
  /**
   * Fill by op type (default), total linked time (log scale), share of the
   * total (linear), status (ran / fused / inserted / not run / no link data)
   * or the time change against a compared run (diverging).
   */
  colorMode: ColorMode;
  /** Colour by compare metric: per model node id, its time in the compared run (µs). */
  compareTimes?: Map<number, number> | null;
  /** The compared run, or why none can be compared (for the legend). */
  compareRun?: number | null;
  compareReason?: string | null;
  /** Colour by diff: per model node id its mark (diff_marks.ts); the pane's side, or why there is no diff. */
  diffMarks?: Map<number, DiffMark> | null;
  diffSide?: string | null;
  diffReason?: string | null;
  /** Passed on to the legend as they are. */
  diffNotes?: Pick<DiffCounts, 'summary' | 'failed' | 'nodes'>;
  /** Colour by probe statistic: per model node id its value in the latest run; the statistic, or why there is none. */
  probeValues?: Map<number, number> | null;
  probeStat?: string;
  probeReason?: string | null;
  /** Probe marks in every colour mode: per model node id, first NaN / Inf producer or first divergent node. */
  probeMarks?: Map<number, ProbeMark> | null;
}

export type ProbeMark = 'nan' | 'divergent' | 'producer' | 'propagator';

/** A mark's outline colour; the priority of marks on one item (a folded group shows its strongest). */
function markColor(m: ProbeMark): Rgb {
  return m === 'nan' ? kProbeNanMark : m === 'producer' ? kTrainProducerMark : m === 'propagator' ? kTrainPropagatorMark : kProbeDivergentMark;
}
const kMarkRank: Record<ProbeMark, number> = { producer: 4, nan: 3, propagator: 2, divergent: 1 };

/** Colour by diff: a node's fill (structural change, else its time change) and, for a changed node that is also slower / faster, its outline. */
export function diffFill(m: DiffMark | undefined): { fill: Rgb; outline: Rgb | null } {
  if (!m) return { fill: kDiffSame, outline: null };
  const timed = m.timing === DiffTiming.Slower ? kDiffSlower : m.timing === DiffTiming.Faster ? kDiffFaster : null;
  switch (m.kind) {
    case DiffKind.Added: return { fill: kDiffAdded, outline: timed };
    case DiffKind.Removed: return { fill: kDiffRemoved, outline: timed };
    case DiffKind.Changed: return { fill: kDiffChanged, outline: timed };
    case DiffKind.Renamed: return { fill: kDiffRenamed, outline: timed };
    default:
      // Unchanged: the time change on the diverging scale, at least a
      // quarter of its strength so that any significant change shows.
      if (!timed) return { fill: kDiffSame, outline: null };
      {
        const x = Math.log2(Math.max(0.01, 1 + m.pct / 100));
        const t = Math.sign(x || (m.timing === DiffTiming.Slower ? 1 : -1)) * Math.max(0.25, Math.min(1, Math.abs(x)));
        return { fill: divergingColor(t), outline: null };
      }
  }
}

/** A time change within this factor counts as "the same" (legend counts). */
const kSameRatio = 1.05;

/** The range of the heat map (colorMode time / share), for the legend. */
export interface HeatRange {
  /** Whether the layout carries per-node times (section 32) at all. */
  available: boolean;
  /** Smallest and largest value > 0 among items (µs, or share 0..1). */
  min: number;
  max: number;
  /** Sum of all node times (µs). */
  totalUs: number;
  /** Items with / without data. */
  withData: number;
  withoutData: number;
  /** Colour by status: node items per status. */
  status?: { ran: number; fused: number; inserted: number; notRun: number; unlinked: number };
  /** Colour by compare metric: items faster / slower / the same / without data in either run. */
  compare?: { run: number | null; reason: string | null; faster: number; slower: number; same: number; noData: number };
  /** Colour by diff: the pane's nodes per change (folded ones included). */
  diff?: DiffCounts;
  /** Colour by probe statistic: the statistic, its range over the items, items with / without a value, or why there are none. */
  probe?: { stat: string; reason: string | null; min: number; max: number; withData: number; withoutData: number };
}
export const kHeaderHeight = 24;
export const kArrowLength = 8.4;

export class FloatBuilder {
  data: Float32Array;
  length = 0;
  constructor(capacity: number) { this.data = new Float32Array(Math.max(16, capacity)); }
  reserve(n: number): void {
    if (this.length + n <= this.data.length) return;
    let cap = this.data.length * 2;
    while (cap < this.length + n) cap *= 2;
    const d = new Float32Array(cap);
    d.set(this.data.subarray(0, this.length));
    this.data = d;
  }
  push(...v: number[]): void {
    this.reserve(v.length);
    for (let i = 0; i < v.length; ++i) this.data[this.length++] = v[i];
  }
  view(): Float32Array { return this.data.subarray(0, this.length); }
}

export function pushRect(b: FloatBuilder, x: number, y: number, w: number, h: number, fill: Rgb, fa: number,
  stroke: Rgb, sw: number, radius: number, flags: number, lod = kLodNever): void {
  b.reserve(kRectStride);
  const d = b.data;
  let i = b.length;
  d[i++] = x; d[i++] = y; d[i++] = w; d[i++] = h;
  d[i++] = fill[0]; d[i++] = fill[1]; d[i++] = fill[2]; d[i++] = fa;
  d[i++] = stroke[0]; d[i++] = stroke[1]; d[i++] = stroke[2]; d[i++] = sw;
  d[i++] = radius; d[i++] = flags; d[i++] = lod;
  b.length = i;
}

/** Per item, the value the heat map colours it by (µs; -1 none): a node's time, a folded group's sum. */
export function itemTimes(l: Layout): Float32Array {
  const out = new Float32Array(l.itemCount).fill(-1);
  const t = l.nodeTimeUs;
  if (!t) return out;
  for (let n = 0; n < l.nodeCount; ++n) {
    const it = l.nodeItem[n];
    if (it === kNone || it >= l.itemCount || !(t[n] >= 0)) continue;
    out[it] = out[it] < 0 ? t[n] : out[it] + t[n];
  }
  return out;
}

/** Instances longer than this along the main axis are always drawn. */
export const kCullBand = 1500;

/**
 * An instance batch ordered for culling along the layout's main axis (y for
 * top-to-bottom, x for left-to-right): first the "long" instances (extent >
 * kCullBand) in their original order (big frames before the frames inside
 * them), then the rest stably sorted by their start. The visible ones are
 * then `[0, longCount)` plus one contiguous range found by binary search.
 */
export interface CulledBatch {
  data: Float32Array;
  count: number;
  longCount: number;
  /** Start of each sorted instance (after the long ones), ascending. */
  keys: Float32Array;
  /** New index → original index. */
  perm: Uint32Array;
}

export function cullOrder(src: Float32Array, stride: number, count: number, start: (i: number) => number, end: (i: number) => number): CulledBatch {
  const long: number[] = [];
  const short: number[] = [];
  for (let i = 0; i < count; ++i) (end(i) - start(i) > kCullBand ? long : short).push(i);
  const starts = new Float32Array(count);
  for (let i = 0; i < count; ++i) starts[i] = start(i);
  short.sort((a, b) => starts[a] - starts[b] || a - b);
  const perm = new Uint32Array(count);
  const data = new Float32Array(count * stride);
  const keys = new Float32Array(short.length);
  let k = 0;
  for (const i of long) { data.set(src.subarray(i * stride, (i + 1) * stride), k * stride); perm[k++] = i; }
  for (let j = 0; j < short.length; ++j) {
    const i = short[j];
    data.set(src.subarray(i * stride, (i + 1) * stride), k * stride);
    perm[k++] = i;
    keys[j] = starts[i];
  }
  return { data, count, longCount: long.length, keys, perm };
}

/**
 * An instance batch ordered by lod, largest first (stable, so cards, chips and
 * nested frames keep their drawing order). Zoomed far out, the instances not
 * under a silhouette (lod × scale ≥ threshold) are a prefix of it: drawn
 * without submitting the ones the silhouettes hide.
 */
export interface LodBatch {
  data: Float32Array;
  count: number;
  /** Per instance, its lod, descending. */
  lods: Float32Array;
}

export function lodOrder(src: Float32Array, stride: number, count: number, lodAt: number): LodBatch {
  const idx = Array.from({ length: count }, (_, i) => i);
  idx.sort((a, b) => src[b * stride + lodAt] - src[a * stride + lodAt] || a - b);
  const data = new Float32Array(count * stride);
  const lods = new Float32Array(count);
  idx.forEach((i, k) => { data.set(src.subarray(i * stride, (i + 1) * stride), k * stride); lods[k] = src[i * stride + lodAt]; });
  return { data, count, lods };
}

/** Length of the prefix of descending `lods` with lod × scale ≥ t. */
export function descPrefix(lods: Float32Array, count: number, scale: number, t: number): number {
  let lo = 0, hi = count;
  while (lo < hi) { const m = (lo + hi) >> 1; if (lods[m] * scale >= t) lo = m + 1; else hi = m; }
  return lo;
}

/** Number of instances of a LodBatch not hidden at `scale` (lod × scale ≥ t). */
export function lodPrefix(b: LodBatch, scale: number, t: number): number {
  return descPrefix(b.lods, b.count, scale, t);
}

/** Range [lo, hi) of sorted instances that may touch [v0, v1] on the main axis (indices into the batch). */
export function visibleRange(b: CulledBatch, v0: number, v1: number): [number, number] {
  const keys = b.keys;
  let lo = 0, hi = keys.length;
  const a = v0 - kCullBand;
  while (lo < hi) { const m = (lo + hi) >> 1; if (keys[m] < a) lo = m + 1; else hi = m; }
  const first = lo;
  hi = keys.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (keys[m] <= v1) lo = m + 1; else hi = m; }
  return [b.longCount + first, b.longCount + lo];
}

/** Uniform grid over item boxes: CSR lists of item indices per cell. */
export class ItemGrid {
  readonly cell: number;
  readonly cols: number;
  readonly rows: number;
  readonly start: Uint32Array;
  readonly items: Uint32Array;
  constructor(l: Layout) {
    const I = l.itemCount;
    const area = Math.max(1, l.width * l.height);
    this.cell = Math.max(64, Math.sqrt(area / Math.max(1, I / 4)));
    this.cols = Math.max(1, Math.ceil(l.width / this.cell) + 1);
    this.rows = Math.max(1, Math.ceil(l.height / this.cell) + 1);
    const n = this.cols * this.rows;
    const counts = new Uint32Array(n + 1);
    const box = l.itemBox;
    const each = (i: number, f: (c: number) => void): void => {
      const c0 = this.colOf(box[4 * i]), c1 = this.colOf(box[4 * i] + box[4 * i + 2]);
      const r0 = this.rowOf(box[4 * i + 1]), r1 = this.rowOf(box[4 * i + 1] + box[4 * i + 3]);
      for (let r = r0; r <= r1; ++r) for (let c = c0; c <= c1; ++c) f(r * this.cols + c);
    };
    for (let i = 0; i < I; ++i) each(i, (c) => { counts[c + 1]++; });
    for (let c = 0; c < n; ++c) counts[c + 1] += counts[c];
    this.start = counts;
    this.items = new Uint32Array(counts[n]);
    const fill = counts.slice(0, n);
    for (let i = 0; i < I; ++i) each(i, (c) => { this.items[fill[c]++] = i; });
  }
  colOf(x: number): number { return Math.min(this.cols - 1, Math.max(0, Math.floor(x / this.cell))); }
  rowOf(y: number): number { return Math.min(this.rows - 1, Math.max(0, Math.floor(y / this.cell))); }
}

export class Scene {
  readonly rects: Float32Array;
  /** Rects [0, frameRectCount) are frames, drawn before the edges. */
  readonly frameRectCount: number;
  readonly rectCount: number;
  readonly segs: Float32Array;
  readonly segCount: number;
  /** Per edge, its segments [segBegin[e], segBegin[e+1]) (for highlighting). */
  readonly segBegin: Uint32Array;
  readonly arrows: Float32Array; // x y per triangle vertex
  readonly arrowCount: number; // triangles
  readonly edgeBox: Float32Array; // x0 y0 x1 y1 per edge
  /** Culling-ordered copies for the WebGL renderer (main axis: y for tb, x for lr). */
  readonly frameBatch: CulledBatch;
  readonly itemBatch: CulledBatch;
  readonly segBatch: CulledBatch;
  readonly arrowBatch: CulledBatch;
  /** Frame and item rects ordered by lod (see LodBatch), for far zoom. */
  readonly frameLodBatch: LodBatch;
  readonly itemLodBatch: LodBatch;
  /** Per segment of segBatch, its edge. */
  readonly segEdge: Uint32Array;
  readonly grid: ItemGrid;
  /** Per item, the op-type colour (or group / io colour) used, rgb. */
  readonly itemColor: Float32Array;
  /** Op types shown as node items, with counts, most frequent first. */
  readonly legend: { op: string; count: number }[];

  /** Per frame (in `frames` order): its lod (min size over it and the frames around it), and its parent frame's. */
  readonly frameLod: Float32Array;
  readonly frameParentLod: Float32Array;
  /** Per item, the lod of its innermost frame (kLodNever when in none). */
  readonly itemLod: Float32Array;
  /** Silhouette triangles of all frames (kPolyStride floats per vertex). */
  readonly polys: Float32Array;
  readonly polyVertexCount: number;
  /** Per silhouette vertex, its frame's parent lod, descending. */
  readonly polyParentLod: Float32Array;
  /** Per item, the value the heat map uses (µs, -1 none), and the range for the legend. */
  readonly itemTime: Float32Array;
  readonly heat: HeatRange;
  /** Node items per status (only when the layout carries node_status). */
  readonly statusCounts: number[] | null;

  constructor(readonly layout: Layout, readonly options: SceneOptions = { colorMode: 'op' }) {
    const l = layout;
    this.grid = new ItemGrid(l);
    // Level of detail: frame sizes, nesting, and each item's innermost frame.
    const F = l.frameCount;
    const frameOfGroup = new Int32Array(l.groupCount).fill(-1);
    for (let k = 0; k < F; ++k) frameOfGroup[l.frames[k]] = k;
    this.frameLod = new Float32Array(F);
    this.frameParentLod = new Float32Array(F);
    for (let k = 0; k < F; ++k) {
      const g = l.frames[k];
      let p = l.groupParent[g];
      while (p > 0 && frameOfGroup[p] < 0) p = l.groupParent[p];
      const pf = p > 0 ? frameOfGroup[p] : -1;
      // Parents come before children in `frames`, so pf < k is done.
      this.frameParentLod[k] = pf >= 0 && pf < k ? this.frameLod[pf] : kLodNever;
      const size = Math.sqrt(Math.max(0, l.groupBounds[4 * g + 2] * l.groupBounds[4 * g + 3]));
      this.frameLod[k] = Math.min(size, this.frameParentLod[k]);
    }
    this.itemLod = new Float32Array(l.itemCount).fill(kLodNever);
    // Per frame: the time of the items inside (µs, -1 none) and their node count.
    const times = itemTimes(l);
    const frameTime = new Float32Array(F).fill(-1);
    const frameNodes = new Uint32Array(F);
    // Colour by status / compare metric: per item (a node, or a folded group's
    // nodes) and per frame, two sums: status: nodes that ran / nodes with
    // link data; compare: time / compared time over the nodes timed in both.
    const mode = options.colorMode;
    const aggMode = mode === 'status' || mode === 'compare' || mode === 'diff';
    const aggA = new Float64Array(aggMode ? l.itemCount : 0), aggB = new Float64Array(aggMode ? l.itemCount : 0);
    const frameA = new Float64Array(aggMode ? F : 0), frameB = new Float64Array(aggMode ? F : 0);
    const ranOf = (n: number): number => {
      const st = l.nodeStatus![n];
      return st === NodeStatus.Executed || st === NodeStatus.Fused || (st === NodeStatus.Inserted && (l.nodeTaskCount?.[n] ?? 0) > 0) ? 1 : 0;
    };
    if (mode === 'status' && l.nodeStatus) {
      for (let n = 0; n < l.nodeCount; ++n) {
        const it = l.nodeItem[n];
        if (it === kNone || it >= l.itemCount || l.nodeStatus[n] === NodeStatus.None) continue;
        aggA[it] += ranOf(n); aggB[it] += 1;
      }
    }
    const cmpTimes = mode === 'compare' ? options.compareTimes : null;
    if (cmpTimes && l.nodeTimeUs) {
      for (let n = 0; n < l.nodeCount; ++n) {
        const it = l.nodeItem[n];
        const t = l.nodeTimeUs[n], tc = cmpTimes.get(l.nodeModelId[n]);
        if (it === kNone || it >= l.itemCount || !(t > 0) || tc === undefined || !(tc > 0)) continue;
        aggA[it] += t; aggB[it] += tc;
      }
    }
    // Colour by diff: per item, nodes that changed in structure / nodes.
    const marks = mode === 'diff' ? options.diffMarks ?? null : null;
    if (mode === 'diff') {
      const n = graphNodeCount(l);
      for (let i = 0; i < n; ++i) {
        const it = l.nodeItem[i];
        if (it === kNone || it >= l.itemCount) continue;
        const m = marks?.get(l.nodeModelId[i]);
        aggA[it] += m && m.kind !== DiffKind.Same ? 1 : 0; aggB[it] += 1;
      }
    }
    /** The colour of an aggregate (a, b) in the status / compare / diff mode. */
    const aggColor = (a: number, b: number): Rgb => {
      if (mode === 'diff') return a > 0 && b > 0 ? mix(kDiffSame, kDiffChanged, 0.3 + 0.7 * Math.min(1, a / b)) : kDiffSame;
      if (!(b > 0)) return mode === 'status' ? kStatusUnlinked : kNoDataFill;
      return mode === 'status' ? mix(kStatusNotRun, kStatusRan, a / b) : divergingColor(Math.log2(a / b));
    };
    {
      const stamp = new Uint32Array(l.itemCount);
      const ib = l.itemBox;
      for (let k = 0; k < F; ++k) {
        const g = l.frames[k];
        const x = l.groupBounds[4 * g], y = l.groupBounds[4 * g + 1], x1 = x + l.groupBounds[4 * g + 2], y1 = y + l.groupBounds[4 * g + 3];
        const lod = this.frameLod[k];
        this.forItemsIn(x, y, x1, y1, stamp, k + 1, (i) => {
          if (ib[4 * i] >= x - 0.5 && ib[4 * i + 1] >= y - 0.5 && ib[4 * i] + ib[4 * i + 2] <= x1 + 0.5 && ib[4 * i + 1] + ib[4 * i + 3] <= y1 + 0.5) {
            this.itemLod[i] = lod; // children come later and overwrite: the innermost wins
            const t = times[i];
            if (t >= 0) frameTime[k] = Math.max(0, frameTime[k]) + t;
            if (aggMode) { frameA[k] += aggA[i]; frameB[k] += aggB[i]; }
            frameNodes[k] += l.itemKind[i] === ItemKind.Group ? l.groupNodeCount[l.itemRef[i]] : l.itemKind[i] === ItemKind.Node ? 1 : 0;
          }
        });
      }
    }
    // Heat map values and range.
    this.itemTime = times;
    let min = Infinity, max = 0, withData = 0, withoutData = 0, totalUs = 0;
    if (l.nodeTimeUs) for (let n = 0; n < l.nodeCount; ++n) if (l.nodeTimeUs[n] > 0) totalUs += l.nodeTimeUs[n];
    for (let i = 0; i < l.itemCount; ++i) {
      const k = l.itemKind[i];
      if (k !== ItemKind.Node && k !== ItemKind.Group) continue;
      const t = this.itemTime[i];
      if (t < 0) { withoutData++; continue; }
      withData++;
      if (t > 0 && t < min) min = t;
      if (t > max) max = t;
    }
    const share = options.colorMode === 'share';
    const norm = share && totalUs > 0 ? 1 / totalUs : 1;
    this.heat = {
      available: !!l.nodeTimeUs && withData > 0,
      min: min === Infinity ? 0 : min * norm, max: max * norm, totalUs, withData, withoutData,
    };
    const heatOf = (t: number): Rgb => {
      if (share) return heatColor(max > 0 ? t / max : 0);
      if (!(t > 0) || !(max > min)) return heatColor(t > 0 ? 1 : 0);
      return heatColor((Math.log(t) - Math.log(min)) / (Math.log(max) - Math.log(min)));
    };
    const heatMode = mode === 'time' || mode === 'share';
    if (mode === 'status') this.heat.status = { ran: 0, fused: 0, inserted: 0, notRun: 0, unlinked: 0 };
    if (mode === 'compare') {
      const cmp = { run: options.compareRun ?? null, reason: options.compareReason ?? null, faster: 0, slower: 0, same: 0, noData: 0 };
      for (let i = 0; i < l.itemCount; ++i) {
        const k = l.itemKind[i];
        if (k !== ItemKind.Node && k !== ItemKind.Group) continue;
        if (!(aggB[i] > 0)) cmp.noData++;
        else if (aggA[i] > aggB[i] * kSameRatio) cmp.slower++;
        else if (aggA[i] * kSameRatio < aggB[i]) cmp.faster++;
        else cmp.same++;
      }
      this.heat.compare = cmp;
    }
    if (mode === 'diff') {
      const d: DiffCounts = {
        side: options.diffSide ?? null, reason: options.diffReason ?? null, added: 0, removed: 0, changed: 0, renamed: 0, same: 0, slower: 0, faster: 0,
        ...options.diffNotes,
      };
      if (marks) {
        const n = graphNodeCount(l);
        for (let i = 0; i < n; ++i) {
          const m = marks.get(l.nodeModelId[i]);
          const kind = m?.kind ?? DiffKind.Same;
          if (kind === DiffKind.Added) d.added++; else if (kind === DiffKind.Removed) d.removed++;
          else if (kind === DiffKind.Changed) d.changed++; else if (kind === DiffKind.Renamed) d.renamed++; else d.same++;
          if (m?.timing === DiffTiming.Slower) d.slower++; else if (m?.timing === DiffTiming.Faster) d.faster++;
        }
      }
      this.heat.diff = d;
    }
    // A silhouette stands for the frame's nodes at once, so it shows their
    // aggregate in the colour mode: the mean time per node with time (so
    // layers compare with one another and with the nodes around them), the
    // most frequent op type's colour by op type.
    const silhouetteColor = (k: number, g: number): Rgb => {
      if (aggMode) return aggColor(frameA[k], frameB[k]);
      if (heatMode) return frameNodes[k] > 0 && frameTime[k] >= 0 ? heatOf(frameTime[k] / frameNodes[k]) : kNoDataFill;
      const top = l.groupTopOps[3 * g];
      if (top >= 0) return mix(opColor(opName(l, top)), [0, 0, 0], 0.12);
      const st = kGroupStyles[l.groupKind[g]] ?? kGroupStyles[0];
      return mix(st.stroke, st.band, 0.25);
    };
    // Silhouettes: one rect per non-empty band, in the kind's outline colour.
    const lrDir = l.direction === 'lr';
    const pb = new FloatBuilder(F * 16 * 6 * kPolyStride);
    const prof = l.frameProfiles;
    if (prof && prof.length >= 2 * kProfileBands * F) {
      // Frames by parent lod, descending (stable): the silhouettes drawn at a
      // zoom are then within a prefix (polyParentLod), the rest not submitted.
      const order = Array.from({ length: F }, (_, k) => k).sort((a, b) => this.frameParentLod[b] - this.frameParentLod[a] || a - b);
      for (const k of order) {
        const g = l.frames[k];
        const c = silhouetteColor(k, g);
        const x = l.groupBounds[4 * g], y = l.groupBounds[4 * g + 1], w = l.groupBounds[4 * g + 2], h = l.groupBounds[4 * g + 3];
        const along0 = lrDir ? x : y, alongLen = lrDir ? w : h;
        const own = this.frameLod[k], parent = this.frameParentLod[k];
        const vtx = (a: number, b: number): void => {
          // (a along the rank axis, b across it) → world x, y
          pb.push(lrDir ? a : b, lrDir ? b : a, c[0], c[1], c[2], own, parent);
        };
        for (let j = 0; j < kProfileBands; ++j) {
          const lo = prof[32 * k + 2 * j], hi = prof[32 * k + 2 * j + 1];
          if (!(hi > lo)) continue;
          const a0 = along0 + (alongLen * j) / kProfileBands, a1 = along0 + (alongLen * (j + 1)) / kProfileBands;
          vtx(a0, lo); vtx(a1, lo); vtx(a0, hi);
          vtx(a0, hi); vtx(a1, lo); vtx(a1, hi);
        }
      }
    }
    this.polys = pb.view();
    this.polyVertexCount = pb.length / kPolyStride;
    this.polyParentLod = new Float32Array(this.polyVertexCount);
    for (let v = 0; v < this.polyVertexCount; ++v) this.polyParentLod[v] = this.polys[v * kPolyStride + 6];

    const status = l.nodeStatus;
    this.statusCounts = status ? [0, 0, 0, 0, 0] : null;

    // Colour by probe statistic: per item the largest value of its nodes
    // (a folded group shows its worst node), linear between the items'
    // smallest and largest; marks per item (a folded group holding a
    // marked node is marked).
    const probeVals = mode === 'probe' ? options.probeValues ?? null : null;
    const itemProbe = new Float64Array(mode === 'probe' ? l.itemCount : 0).fill(NaN);
    const itemMark: (ProbeMark | undefined)[] = [];
    {
      const n = graphNodeCount(l);
      for (let i = 0; i < n; ++i) {
        const it = l.nodeItem[i];
        if (it === kNone || it >= l.itemCount) continue;
        const id = l.nodeModelId[i];
        const m = options.probeMarks?.get(id);
        const cur = itemMark[it];
        if (m && (!cur || kMarkRank[m] > kMarkRank[cur])) itemMark[it] = m;
        const v = probeVals?.get(id);
        if (v !== undefined && Number.isFinite(v) && !(itemProbe[it] >= v)) itemProbe[it] = v;
      }
    }
    let pMin = Infinity, pMax = -Infinity;
    if (mode === 'probe') {
      let withData = 0, withoutData = 0;
      for (let i = 0; i < l.itemCount; ++i) {
        const k = l.itemKind[i];
        if (k !== ItemKind.Node && k !== ItemKind.Group) continue;
        const v = itemProbe[i];
        if (Number.isNaN(v)) { withoutData++; continue; }
        withData++;
        pMin = Math.min(pMin, v); pMax = Math.max(pMax, v);
      }
      this.heat.probe = {
        stat: options.probeStat ?? '', reason: options.probeReason ?? null, min: withData ? pMin : 0, max: withData ? pMax : 0, withData, withoutData,
      };
    }
    const probeOf = (i: number): Rgb | null => {
      const v = itemProbe[i];
      if (Number.isNaN(v)) return null;
      return heatColor(pMax > pMin ? (v - pMin) / (pMax - pMin) : v > 0 ? 1 : 0);
    };
    const rb = new FloatBuilder(kRectStride * (l.itemCount * 2 + l.frameCount * 2));
    // Frames: body with the kind's outline, then the header band.
    for (let k = 0; k < l.frameCount; ++k) {
      const g = l.frames[k];
      const st = kGroupStyles[l.groupKind[g]] ?? kGroupStyles[0];
      const x = l.groupBounds[4 * g], y = l.groupBounds[4 * g + 1];
      const w = l.groupBounds[4 * g + 2], h = l.groupBounds[4 * g + 3];
      const dashed = l.groupKind[g] === GroupKind.Chunk ? kRectDashed : 0;
      const lod = this.frameParentLod[k];
      pushRect(rb, x, y, w, h, st.fill, 1, st.stroke, 1, 8, dashed, lod);
      pushRect(rb, x + 0.5, y + 0.5, w - 1, Math.min(kHeaderHeight, h) - 0.5, st.band, 1, st.band, 0, 7.5, kRectTopRounded, lod);
    }
    this.frameRectCount = rb.length / kRectStride;
    this.itemColor = new Float32Array(3 * l.itemCount);
    const opCounts = new Map<string, number>();
    for (let i = 0; i < l.itemCount; ++i) {
      const x = l.itemBox[4 * i], y = l.itemBox[4 * i + 1], w = l.itemBox[4 * i + 2], h = l.itemBox[4 * i + 3];
      const kind = l.itemKind[i];
      const lod = this.itemLod[i];
      let c: Rgb;
      if (kind === ItemKind.Node) {
        const op = l.str(l.itemTitle[i]);
        opCounts.set(op, (opCounts.get(op) ?? 0) + 1);
        const t = this.itemTime[i];
        const st = status && l.itemRef[i] < status.length ? status[l.itemRef[i]] : NodeStatus.None;
        if (this.statusCounts) this.statusCounts[st] = (this.statusCounts[st] ?? 0) + 1;
        c = heatMode ? (t >= 0 ? heatOf(t) : kNoDataFill) : opColor(op);
        if (mode === 'compare') c = aggColor(aggA[i], aggB[i]);
        if (mode === 'probe') c = probeOf(i) ?? kNoDataFill;
        let diffOutline: Rgb | null = null;
        if (mode === 'diff') {
          const df = diffFill(marks?.get(l.nodeModelId[l.itemRef[i]]));
          c = df.fill;
          diffOutline = df.outline;
        }
        if (mode === 'status') {
          const n = l.itemRef[i];
          c = st === NodeStatus.None ? kStatusUnlinked : st === NodeStatus.Inserted ? kStatusInserted
            : st === NodeStatus.Fused ? kStatusFused : status && ranOf(n) ? kStatusRan : kStatusNotRun;
          const sc = this.heat.status!;
          if (st === NodeStatus.None) sc.unlinked++; else if (st === NodeStatus.Inserted) sc.inserted++;
          else if (st === NodeStatus.Fused) sc.fused++; else if (ranOf(n)) sc.ran++; else sc.notRun++;
        }
        let stroke = (heatMode && t < 0) || (mode === 'compare' && !(aggB[i] > 0)) || (mode === 'probe' && Number.isNaN(itemProbe[i])) ? kNoDataStroke : darker(c);
        let sw = 1, flags = 0;
        if (st === NodeStatus.NotExecuted && mode !== 'diff') { c = mix(c, [1, 1, 1], 0.65); stroke = mix(stroke, [1, 1, 1], 0.5); }
        if (st === NodeStatus.Inserted) { stroke = kInsertedStroke; sw = 2; flags = kRectDashed; }
        if (diffOutline) { stroke = diffOutline; sw = 3; }
        const im = itemMark[i];
        if (im) { stroke = markColor(im); sw = 4; }
        pushRect(rb, x, y, w, h, c, 1, stroke, sw, 6, flags, lod);
        // Fused: a badge at the top-right corner.
        if (st === NodeStatus.Fused && w > 16 && h > 12) pushRect(rb, x + w - 11, y + 3, 8, 8, kFusedMark, 1, darker(kFusedMark), 1, 4, 0, lod);
      } else if (kind === ItemKind.Group) {
        const g = l.itemRef[i];
        const st = kGroupStyles[l.groupKind[g]] ?? kGroupStyles[0];
        const dashed = l.groupKind[g] === GroupKind.Chunk ? kRectDashed : 0;
        const t = this.itemTime[i];
        c = heatMode ? (t >= 0 ? heatOf(t) : kNoDataFill) : aggMode ? aggColor(aggA[i], aggB[i]) : mode === 'probe' ? probeOf(i) ?? kNoDataFill : st.band;
        // A second card behind the box says "folded group", not "node". It
        // starts where the box starts along the main axis (and peeks out 3 px
        // right and below): the culling order sorts by that start, and a card
        // starting later would be drawn over the box, hiding its colour.
        if (lrDir) pushRect(rb, x, y + 3, w + 3, h, st.fill, 1, st.stroke, 1, 8, dashed, lod);
        else pushRect(rb, x + 3, y, w, h + 3, st.fill, 1, st.stroke, 1, 8, dashed, lod);
        const gm = itemMark[i];
        pushRect(rb, x, y, w, h, c, 1, gm ? markColor(gm) : st.stroke, gm ? 4 : 1.4, 8, dashed, lod);
        // Chips along the bottom: the top op types, width by count.
        let total = 0;
        for (let k = 0; k < 3; ++k) if (l.groupTopOps[3 * g + k] >= 0) total += l.groupTopOpCounts[3 * g + k];
        if (total > 0 && h >= 20) {
          let cx = x + 6;
          const cw = w - 12;
          for (let k = 0; k < 3; ++k) {
            const op = l.groupTopOps[3 * g + k];
            if (op < 0) continue;
            const ww = (cw * l.groupTopOpCounts[3 * g + k]) / total;
            const oc = opColor(opName(l, op));
            pushRect(rb, cx, y + h - 7, ww, 4, oc, 1, oc, 0, 1.5, 0, lod);
            cx += ww;
          }
        }
      } else if (kind === ItemKind.MissingInput) {
        // The graph's fault: a red, dashed input.
        c = kFaultFill;
        pushRect(rb, x, y, w, h, kFaultFill, 1, kFaultStroke, 2, h / 2, kRectDashed, lod);
      } else {
        c = kIoFill;
        pushRect(rb, x, y, w, h, kIoFill, 1, kIoStroke, 1, h / 2, 0, lod);
      }
      this.itemColor[3 * i] = c[0]; this.itemColor[3 * i + 1] = c[1]; this.itemColor[3 * i + 2] = c[2];
    }
    this.rects = rb.view();
    this.rectCount = rb.length / kRectStride;
    this.legend = [...opCounts].map(([op, count]) => ({ op, count })).sort((a, b) => b.count - a.count || (a.op < b.op ? -1 : 1));

    // Edges: tessellate each cubic piece adaptively; arrowheads at the end.
    const E = l.edgeCount;
    const sb = new FloatBuilder(kSegStride * (l.points.length + E * 8));
    const ab = new FloatBuilder(6 * E);
    this.segBegin = new Uint32Array(E + 1);
    this.edgeBox = new Float32Array(4 * E);
    const lr = l.direction === 'lr';
    const P = l.points;
    for (let e = 0; e < E; ++e) {
      this.segBegin[e] = sb.length / kSegStride;
      const b = l.edgePointBegin[e], en = l.edgePointBegin[e + 1];
      const width = l.edgeCountArr[e] > 1 ? 1.9 : 1.2;
      const dashed = (l.edgeFlags[e] & kEdgeReversed) ? 1 : 0;
      const f = l.edgeFrom[e], t = l.edgeTo[e];
      const lod = Math.max(f < l.itemCount ? this.itemLod[f] : kLodNever, t < l.itemCount ? this.itemLod[t] : kLodNever);
      let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
      let dist = 0;
      for (let p = b; p < en; ++p) {
        const x = P[2 * p], y = P[2 * p + 1];
        if (x < minX) minX = x; if (x > maxX) maxX = x;
        if (y < minY) minY = y; if (y > maxY) maxY = y;
      }
      this.edgeBox[4 * e] = minX; this.edgeBox[4 * e + 1] = minY;
      this.edgeBox[4 * e + 2] = maxX; this.edgeBox[4 * e + 3] = maxY;
      for (let p = b; p + 1 < en; ++p) {
        const x0 = P[2 * p], y0 = P[2 * p + 1], x1 = P[2 * p + 2], y1 = P[2 * p + 3];
        // Shorten the last piece so the line ends at the arrowhead's base.
        const last = p + 2 === en;
        const straight = lr ? y0 === y1 : x0 === x1;
        const len = Math.hypot(x1 - x0, y1 - y0);
        const n = straight ? 1 : Math.min(16, Math.max(2, Math.ceil(len / 10)));
        const c0x = lr ? x0 + (x1 - x0) / 2 : x0, c0y = lr ? y0 : y0 + (y1 - y0) / 2;
        const c1x = lr ? x1 - (x1 - x0) / 2 : x1, c1y = lr ? y1 : y1 - (y1 - y0) / 2;
        let px = x0, py = y0;
        for (let k = 1; k <= n; ++k) {
          const t = k / n, u = 1 - t;
          let qx = u * u * u * x0 + 3 * u * u * t * c0x + 3 * u * t * t * c1x + t * t * t * x1;
          let qy = u * u * u * y0 + 3 * u * u * t * c0y + 3 * u * t * t * c1y + t * t * t * y1;
          if (last && k === n) {
            // End tangent is the main axis.
            if (lr) qx -= Math.sign(x1 - x0 || 1) * kArrowLength * 0.8;
            else qy -= Math.sign(y1 - y0 || 1) * kArrowLength * 0.8;
          }
          const d = Math.hypot(qx - px, qy - py);
          sb.reserve(kSegStride);
          const s = sb.data;
          let i = sb.length;
          s[i++] = px; s[i++] = py; s[i++] = qx; s[i++] = qy;
          s[i++] = width; s[i++] = dist; s[i++] = dashed; s[i++] = 0; s[i++] = lod;
          sb.length = i;
          dist += d;
          px = qx; py = qy;
        }
        if (last) {
          const dx = lr ? Math.sign(x1 - x0 || 1) : 0, dy = lr ? 0 : Math.sign(y1 - y0 || 1);
          const bx = x1 - dx * kArrowLength, by = y1 - dy * kArrowLength;
          const hw = kArrowLength / 2;
          ab.push(x1, y1, bx - dy * hw, by + dx * hw, bx + dy * hw, by - dx * hw);
        }
      }
    }
    this.segBegin[E] = sb.length / kSegStride;
    this.segs = sb.view();
    this.segCount = sb.length / kSegStride;
    this.arrows = ab.view();
    this.arrowCount = ab.length / 6;
    const ax = lr ? 0 : 1;
    const R = this.rects, S = this.segs, A = this.arrows;
    const rectStart = (i: number): number => R[i * kRectStride + ax];
    const rectEnd = (i: number): number => R[i * kRectStride + ax] + R[i * kRectStride + 2 + ax];
    this.frameBatch = cullOrder(R, kRectStride, this.frameRectCount, rectStart, rectEnd);
    const items = R.subarray(this.frameRectCount * kRectStride);
    this.itemBatch = cullOrder(items, kRectStride, this.rectCount - this.frameRectCount,
      (i) => items[i * kRectStride + ax], (i) => items[i * kRectStride + ax] + items[i * kRectStride + 2 + ax]);
    this.segBatch = cullOrder(S, kSegStride, this.segCount,
      (i) => Math.min(S[i * kSegStride + ax], S[i * kSegStride + 2 + ax]), (i) => Math.max(S[i * kSegStride + ax], S[i * kSegStride + 2 + ax]));
    this.frameLodBatch = lodOrder(R, kRectStride, this.frameRectCount, 14);
    this.itemLodBatch = lodOrder(items, kRectStride, this.rectCount - this.frameRectCount, 14);
    this.arrowBatch = cullOrder(A, 6, this.arrowCount,
      (i) => Math.min(A[6 * i + ax], A[6 * i + 2 + ax], A[6 * i + 4 + ax]), (i) => Math.max(A[6 * i + ax], A[6 * i + 2 + ax], A[6 * i + 4 + ax]));
    // Segment → edge, through the culling order.
    const edgeOfSeg = new Uint32Array(this.segCount);
    for (let e = 0; e < E; ++e) for (let k = this.segBegin[e]; k < this.segBegin[e + 1]; ++k) edgeOfSeg[k] = e;
    this.segEdge = new Uint32Array(this.segCount);
    for (let k = 0; k < this.segCount; ++k) this.segEdge[k] = edgeOfSeg[this.segBatch.perm[k]];
  }

  /** Topmost item containing the world point, or -1. */
  itemAt(wx: number, wy: number): number {
    const g = this.grid, l = this.layout;
    if (wx < 0 || wy < 0 || wx > l.width + g.cell || wy > l.height + g.cell) return -1;
    const c = g.rowOf(wy) * g.cols + g.colOf(wx);
    let best = -1;
    for (let k = g.start[c]; k < g.start[c + 1]; ++k) {
      const i = g.items[k];
      const b = l.itemBox;
      if (wx >= b[4 * i] && wx <= b[4 * i] + b[4 * i + 2] && wy >= b[4 * i + 1] && wy <= b[4 * i + 1] + b[4 * i + 3]) {
        if (i > best) best = i;
      }
    }
    return best;
  }

  /** Innermost visible frame whose header contains the point, or -1 (a group index). */
  frameHeaderAt(wx: number, wy: number): number {
    const l = this.layout;
    for (let k = l.frameCount - 1; k >= 0; --k) {
      const g = l.frames[k];
      const x = l.groupBounds[4 * g], y = l.groupBounds[4 * g + 1], w = l.groupBounds[4 * g + 2];
      if (wx >= x && wx <= x + w && wy >= y && wy <= y + kHeaderHeight) return g;
    }
    return -1;
  }

  /** Innermost frame containing the point, or -1. */
  frameAt(wx: number, wy: number): number {
    const l = this.layout;
    for (let k = l.frameCount - 1; k >= 0; --k) {
      const g = l.frames[k];
      const b = l.groupBounds;
      if (wx >= b[4 * g] && wx <= b[4 * g] + b[4 * g + 2] && wy >= b[4 * g + 1] && wy <= b[4 * g + 1] + b[4 * g + 3]) return g;
    }
    return -1;
  }

  /** Visits items whose cell overlaps the world rect; `stamp` dedupes. */
  forItemsIn(x0: number, y0: number, x1: number, y1: number, stamp: Uint32Array, mark: number, f: (i: number) => void): void {
    const g = this.grid, b = this.layout.itemBox;
    const c0 = g.colOf(x0), c1 = g.colOf(x1), r0 = g.rowOf(y0), r1 = g.rowOf(y1);
    for (let r = r0; r <= r1; ++r) {
      for (let c = c0; c <= c1; ++c) {
        const cell = r * g.cols + c;
        for (let k = g.start[cell]; k < g.start[cell + 1]; ++k) {
          const i = g.items[k];
          if (stamp[i] === mark) continue;
          stamp[i] = mark;
          if (b[4 * i] > x1 || b[4 * i + 1] > y1 || b[4 * i] + b[4 * i + 2] < x0 || b[4 * i + 1] + b[4 * i + 3] < y0) continue;
          f(i);
        }
      }
    }
  }

  /** True when the group is drawn (as a frame or a collapsed item). */
  groupVisible(g: number): boolean {
    return (this.layout.groupFlags[g] & kGroupVisible) !== 0;
  }

  private adj: { outStart: Uint32Array; out: Uint32Array; inStart: Uint32Array; inn: Uint32Array } | null = null;

  /**
   * Ancestors and descendants of item `i` through the visible edges (BFS
   * both ways), and the edges on those paths. Client-side: it is what the
   * current view shows, folded groups included.
   */
  lineage(i: number): { items: number[]; edges: number[] } {
    const l = this.layout, I = l.itemCount, E = l.edgeCount;
    if (i < 0 || i >= I) return { items: [], edges: [] };
    if (!this.adj) {
      const outStart = new Uint32Array(I + 1), inStart = new Uint32Array(I + 1);
      for (let e = 0; e < E; ++e) { outStart[l.edgeFrom[e] + 1]++; inStart[l.edgeTo[e] + 1]++; }
      for (let k = 0; k < I; ++k) { outStart[k + 1] += outStart[k]; inStart[k + 1] += inStart[k]; }
      const out = new Uint32Array(E), inn = new Uint32Array(E);
      const fo = outStart.slice(0, I), fi = inStart.slice(0, I);
      for (let e = 0; e < E; ++e) { out[fo[l.edgeFrom[e]]++] = e; inn[fi[l.edgeTo[e]]++] = e; }
      this.adj = { outStart, out, inStart, inn };
    }
    const { outStart, out, inStart, inn } = this.adj;
    const seen = new Uint8Array(I);
    const items: number[] = [], edges: number[] = [];
    for (const down of [true, false]) {
      const queue = [i];
      const mark = down ? 1 : 2;
      seen[i] |= mark;
      while (queue.length) {
        const v = queue.pop()!;
        const s0 = down ? outStart[v] : inStart[v], s1 = down ? outStart[v + 1] : inStart[v + 1];
        for (let k = s0; k < s1; ++k) {
          const e = down ? out[k] : inn[k];
          edges.push(e);
          const w = down ? l.edgeTo[e] : l.edgeFrom[e];
          if (seen[w] & mark) continue;
          if (!seen[w]) items.push(w);
          seen[w] |= mark;
          queue.push(w);
        }
      }
    }
    return { items, edges };
  }

  /** What the silhouette level of detail does at `scale` (for tests and the status line). */
  lodStats(scale: number): { silhouettes: number; hiddenItems: number; frames: number } {
    const t = lodPx(scale);
    let silhouettes = 0, hiddenItems = 0;
    if (t > 0 && this.polyVertexCount > 0) {
      for (let k = 0; k < this.frameLod.length; ++k) if (this.frameLod[k] * scale < t && this.frameParentLod[k] * scale >= t) silhouettes++;
      for (let i = 0; i < this.itemLod.length; ++i) if (this.itemLod[i] * scale < t) hiddenItems++;
    }
    return { silhouettes, hiddenItems, frames: this.frameLod.length };
  }
}
