// Drawing of the timeline (Canvas2D): lanes (one per track, grouped by device
// / host process), time axis, task boxes, aggregates as density, copies and
// sync as hatched fills, selection / highlight / path overlays, flows and the
// area selection. Pure with respect to the view: timeline_view.ts owns state,
// input and fetching, and hands a TimelineFrame to drawTimeline() once per
// animation frame.
//
// Cost per frame is bounded by what the server sends (level of detail: ~2 items
// per pixel column per row at most): each visible row is culled by binary
// search, rectangles are bucketed by fill style so the style is set once per
// bucket, and text is drawn only in boxes wide enough for it.

import { kLineageColor, kMatchColor, kSelectColor, opColor, rgbCss, type Rgb } from '../../base/palette';
import { firstVisible, kFlagAggregate, rowKey, TaskKind, type TimelineWindow } from '../../rpc/timeline_binary';
import type { TimelineTrack } from '../../rpc/timeline_api';

export const kAxisH = 26;
export const kGutterW = 190;
export const kGroupH = 22;
export const kRowH = 18;
export const kLanePad = 3;
export const kCollapsedBandH = 10;
/** Height of a lane left out by the stream filter. */
export const kFilteredLaneH = 14;

/** One track on screen: y in content coordinates (before vertical scroll). */
/**
 * A counter lane's points: the whole series from the metadata (downsampled
 * there when long) and, once fetched, the detail of the window around the
 * view (raw clock, as `t`).
 */
export interface CounterSeries {
  t: number[]; v: number[]; max: number; unit: string;
  detail?: { start: number; end: number; t: number[]; v: number[] };
}

/** The points to draw for a view [a, b) (the series' clock): the window's detail when it covers the view, else the whole series. */
export function counterPoints(c: CounterSeries, a: number, b: number): { t: number[]; v: number[] } {
  return c.detail && a >= c.detail.start && b <= c.detail.end ? c.detail : c;
}

export interface Lane {
  source: number;
  track: TimelineTrack;
  y: number;
  h: number;
  /** Rows drawn (the track's nesting depth); 0 for a track left out by the stream filter. */
  rows: number;
  group: GroupBand;
  /** A counter track (memory over time) instead of tasks: drawn as a step line. */
  counter?: CounterSeries;
  /** Pinned to the top (drawn with a filled pin mark). */
  pinned?: boolean;
}
export interface GroupBand {
  source: number;
  name: string;
  y: number;
  collapsed: boolean;
  lanes: Lane[];
  taskCount: number;
}

/** Where (source, track, row) is drawn: y and height in content coordinates. */
export function rowBox(lane: Lane, row: number): { y: number; h: number } {
  if (lane.group.collapsed) return { y: lane.group.y + (kGroupH - kCollapsedBandH) - 2, h: kCollapsedBandH };
  return { y: lane.y + kLanePad + row * kRowH, h: kRowH - 2 };
}

/** A task drawn as an overlay (selection, highlight, path): known from /tasks/{id}. */
export interface OverlayTask {
  id: number; source: number; track: number; startNs: number; endNs: number;
  /** Nesting row when the server said; else the overlay spans the lane. */
  row?: number;
}
export interface FlowArrow {
  kind: string; fromTrack: number; toTrack: number; fromNs: number; toNs: number; source: number;
  /** Nesting rows of the two ends (0 until known). */
  fromRow: number; toRow: number;
}

export interface Source {
  win: TimelineWindow | null;
  /** Added to this source's times to place them on the shared axis (compare mode). */
  offsetNs: number;
}

export interface TimelineFrame {
  width: number;
  height: number;
  viewStart: number;
  viewEnd: number;
  /** Axis labels count from here (the main run's start). */
  originNs: number;
  scrollY: number;
  groups: GroupBand[];
  lanes: Lane[];
  sources: Source[];
  hover: { source: number; item: number } | null;
  selected: OverlayTask[];
  highlighted: OverlayTask[];
  path: OverlayTask[];
  flows: FlowArrow[];
  area: { startNs: number; endNs: number; y0: number; y1: number } | null;
  /** Shown over the plot (loading / error / empty). */
  message: string | null;
  /** Denominator of the busy % in the gutter (the main run's span). */
  traceSpanNs: number;
  /** The pointer's x (time cursor line), or null. */
  cursorX: number | null;
  /** The main run's runs / iterations (trace `runs`), drawn as a band under the axis ticks. */
  runs: { startNs: number; endNs: number }[];
  /**
   * Compare marks of a diff: tasks of `source` whose label (op type) got
   * slower beyond the noise get a red bar along their top; null: none.
   */
  slower?: { source: number; labels: ReadonlySet<string> } | null;
  /** Compare marks of a diff: tasks of nodes that got slower (outlined in kSlowerMark). */
  slowerTasks?: OverlayTask[];
}

/** The compare marks' colour (the diff's "slower"). */
export const kSlowerMark = '#b2182b';

// ---- time formatting ----

const kUnits: [number, string][] = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];

/** A duration in the unit that keeps 1-3 integer digits: "1.25 ms", "830 ns". */
export function formatDuration(ns: number): string {
  const a = Math.abs(ns);
  for (const [f, u] of kUnits) {
    if (a >= f || f === 1) {
      const v = ns / f;
      const digits = f === 1 ? 0 : Math.abs(v) >= 100 ? 1 : Math.abs(v) >= 10 ? 2 : 3;
      return `${trimZeros(v.toFixed(digits))} ${u}`;
    }
  }
  return `${ns} ns`;
}

function trimZeros(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** The smallest 1/2/5 x 10^k step (ns) that is at least `minNs`. */
export function niceStep(minNs: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(1, minNs))));
  for (const m of [1, 2, 5, 10]) if (m * p >= minNs) return m * p;
  return 10 * p;
}

/** Axis label of time t (ns from the origin) for ticks `step` apart. */
export function formatTick(t: number, step: number): string {
  // The unit in which the step is at least 0.1 (500 µs steps read "2.5 ms").
  const [f, u] = kUnits.find(([f]) => step * 10 >= f) ?? [1, 'ns'];
  // Decimals so that consecutive ticks differ: step / f is 1, 2, 5 x 10^k.
  const decimals = Math.max(0, -Math.floor(Math.log10(step / f) + 1e-9));
  return `${trimZeros((t / f).toFixed(decimals))} ${u}`;
}

/** The time under the cursor: in the axis ticks' unit, to `resolutionNs`. */
export function formatCursor(t: number, step: number, resolutionNs: number): string {
  const [f, u] = kUnits.find(([f]) => step * 10 >= f) ?? [1, 'ns'];
  const decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10(Math.max(1, resolutionNs) / f))));
  return `${(t / f).toFixed(decimals)} ${u}`;
}

// ---- styles ----

export const kCopyFill = '#cdeaf2';
export const kCopyStripe = '#1d7893';
export const kSyncFill = '#f7d0cc';
export const kSyncStripe = '#c0262d';
const kIdleFill = '#f3f4f6';
const kGroupFill = '#e7eaf0';
const kGutterFill = '#fafbfc';
export const kCounterFill = 'rgba(46, 125, 190, 0.28)';
export const kCounterLine = 'rgb(46, 125, 190)';
const kPinColor = '#d2691e';
/** x of the pin mark in the gutter; clicks left of kPinHitW toggle the pin. */
export const kPinX = 7;
export const kPinHitW = 14;
/** Height of a counter track. */
export const kCounterH = 40;

/** Bytes for people: "1.5 GiB". */
export function formatBytes(b: number): string {
  const u: [number, string][] = [[2 ** 30, 'GiB'], [2 ** 20, 'MiB'], [2 ** 10, 'KiB']];
  for (const [f, n] of u) if (Math.abs(b) >= f) return `${trimZeros((b / f).toFixed(2))} ${n}`;
  return `${b} B`;
}
const kGridColor = 'rgba(0,0,0,0.07)';
const kTextColor = '#1d2330';
const kMutedText = '#6b7385';

/** Hatched fill: `stripe` diagonals over `fill`, 6 px period. */
function hatch(ctx: CanvasRenderingContext2D, fill: string, stripe: string, vertical: boolean): CanvasPattern | string {
  const c = document.createElement('canvas');
  c.width = c.height = 6;
  const g = c.getContext('2d');
  if (!g) return stripe;
  g.fillStyle = fill;
  g.fillRect(0, 0, 6, 6);
  g.strokeStyle = stripe;
  g.lineWidth = 2;
  g.beginPath();
  if (vertical) {
    g.moveTo(1, 0); g.lineTo(1, 6);
  } else {
    // Diagonal that tiles seamlessly.
    g.moveTo(-1, 7); g.lineTo(7, -1);
    g.moveTo(-1, 1); g.lineTo(1, -1);
    g.moveTo(5, 7); g.lineTo(7, 5);
  }
  g.stroke();
  return ctx.createPattern(c, 'repeat') ?? stripe;
}

/** Rectangles of one fill style collected during a frame, drawn together. */
class Bucket {
  xywh: number[] = [];
  /** The last rectangle may be extended by the next (narrow or aggregate) item. */
  mergeable = false;
  constructor(readonly style: string | CanvasPattern) {}
}

export class TimelineRenderer {
  private readonly ctx: CanvasRenderingContext2D;
  private dpr = 1;
  private readonly copyStyle: CanvasPattern | string;
  private readonly syncStyle: CanvasPattern | string;
  /** Fill buckets by op label (solid) plus the two hatched kinds. */
  private readonly buckets = new Map<string, Bucket>();
  private readonly copyBucket: Bucket;
  private readonly syncBucket: Bucket;
  private charW = 6.2;
  lastFrameMs = 0;
  lastItemsDrawn = 0;
  /** Boxes given a compare mark in the last frame (the tests read it). */
  lastSlowerMarked = 0;
  lastRectsDrawn = 0;

  constructor(readonly canvas: HTMLCanvasElement) {
    const ctx = canvas.getContext('2d', { alpha: false });
    if (!ctx) throw new Error('no Canvas2D context');
    this.ctx = ctx;
    this.copyStyle = hatch(ctx, kCopyFill, kCopyStripe, false);
    this.syncStyle = hatch(ctx, kSyncFill, kSyncStripe, true);
    this.copyBucket = new Bucket(this.copyStyle);
    this.syncBucket = new Bucket(this.syncStyle);
  }

  resize(cssW: number, cssH: number, dpr: number): void {
    this.dpr = dpr;
    this.canvas.width = Math.max(1, Math.round(cssW * dpr));
    this.canvas.height = Math.max(1, Math.round(cssH * dpr));
    this.canvas.style.width = `${cssW}px`;
    this.canvas.style.height = `${cssH}px`;
  }

  /** Per window: bucket by string index, filled on first use (no string / map lookup per item). */
  private readonly windowBuckets = new WeakMap<TimelineWindow, (Bucket | undefined)[]>();
  private labelBuckets(w: TimelineWindow): (Bucket | undefined)[] {
    let b = this.windowBuckets.get(w);
    if (!b) {
      b = new Array(w.stringCount);
      this.windowBuckets.set(w, b);
    }
    return b;
  }

  private bucketFor(label: string): Bucket {
    let b = this.buckets.get(label);
    if (!b) {
      b = new Bucket(rgbCss(opColor(label)));
      this.buckets.set(label, b);
    }
    return b;
  }

  draw(f: TimelineFrame): void {
    const t0 = performance.now();
    const ctx = this.ctx;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, f.width, f.height);
    ctx.font = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
    this.charW = ctx.measureText('abcdefghijklmnopqrstuvwxyz').width / 26 || 6.2;
    const plotX = kGutterW, plotW = Math.max(1, f.width - kGutterW);
    const span = Math.max(1e-9, f.viewEnd - f.viewStart);
    const pxPerNs = plotW / span;
    const X = (t: number): number => plotX + (t - f.viewStart) * pxPerNs;
    const Y = (y: number): number => kAxisH + y - f.scrollY;
    const plotTop = kAxisH, plotBottom = f.height;

    // Lane backgrounds (idle = light grey; busy boxes are drawn over them).
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, plotTop, f.width, plotBottom - plotTop);
    ctx.clip();
    for (const g of f.groups) {
      const gy = Y(g.y);
      if (gy > plotBottom) break;
      if (gy + kGroupH >= plotTop) {
        ctx.fillStyle = kGroupFill;
        ctx.fillRect(0, gy, f.width, kGroupH);
      }
      if (g.collapsed) continue;
      for (const l of g.lanes) {
        const ly = Y(l.y);
        if (ly > plotBottom || ly + l.h < plotTop) continue;
        ctx.fillStyle = kIdleFill;
        if (l.rows) ctx.fillRect(plotX, ly + kLanePad, plotW, l.rows * kRowH - 2);
        ctx.fillStyle = kGridColor;
        ctx.fillRect(0, ly + l.h - 1, f.width, 1);
      }
    }

    // Counter tracks: a step line (the value holds until the next point),
    // filled below, scaled to the series' own maximum.
    for (const l of f.lanes) {
      const c = l.counter;
      if (!c || l.group.collapsed || !c.t.length) continue;
      // (a detail window always holds a point: the one before it at least)
      const ly = Y(l.y);
      if (ly > plotBottom || ly + l.h < plotTop) continue;
      const top = ly + kLanePad + 2, bottom = ly + l.h - kLanePad - 1;
      const yOf = (v: number): number => bottom - (c.max > 0 ? (v / c.max) * (bottom - top) : 0);
      const off = f.sources[l.source]?.offsetNs ?? 0;
      const p = counterPoints(c, f.viewStart - off, f.viewEnd - off);
      ctx.beginPath();
      ctx.moveTo(Math.max(plotX, X(p.t[0] + off)), bottom);
      let lastY = bottom;
      for (let i = 0; i < p.t.length; ++i) {
        const x = Math.min(plotX + plotW, Math.max(plotX, X(p.t[i] + off)));
        ctx.lineTo(x, lastY);
        lastY = yOf(p.v[i]);
        ctx.lineTo(x, lastY);
      }
      ctx.lineTo(plotX + plotW, lastY);
      ctx.lineTo(plotX + plotW, bottom);
      ctx.closePath();
      ctx.fillStyle = kCounterFill;
      ctx.fill();
      ctx.strokeStyle = kCounterLine;
      ctx.lineWidth = 1;
      ctx.stroke();
    }

    // Grid lines under the items.
    const step = niceStep(100 / pxPerNs);
    const firstTick = Math.ceil((f.viewStart - f.originNs) / step) * step + f.originNs;
    ctx.fillStyle = kGridColor;
    for (let t = firstTick; t <= f.viewEnd; t += step) ctx.fillRect(Math.round(X(t)), plotTop, 1, plotBottom - plotTop);

    // Items, culled per row by binary search, bucketed by style.
    ctx.beginPath();
    ctx.rect(plotX, plotTop, plotW, plotBottom - plotTop);
    ctx.clip();
    for (const b of this.buckets.values()) b.xywh.length = 0;
    this.copyBucket.xywh.length = 0;
    this.syncBucket.xywh.length = 0;
    const texts: number[] = []; // x, y, w, source, item
    const slowRects: number[] = []; // x, y, w: the compare marks
    let drawn = 0;
    for (const l of f.lanes) {
      const src = f.sources[l.source];
      const w = src?.win;
      if (!w) continue;
      const collapsed = l.group.collapsed;
      const gy = Y(l.group.y);
      if (collapsed && (gy > plotBottom || gy + kGroupH < plotTop)) continue;
      if (!collapsed && (Y(l.y) > plotBottom || Y(l.y) + l.h < plotTop)) continue;
      const off = src.offsetNs;
      const vs = f.viewStart - off, ve = f.viewEnd - off;
      const byLabel = this.labelBuckets(w);
      // Compare marks: per label string of this window, whether it got slower.
      const slow = f.slower && f.slower.source === l.source ? f.slower.labels : null;
      const slowOf: (boolean | undefined)[] = [];
      for (let r = 0; r < l.rows; ++r) {
        const ri = w.rows.get(rowKey(l.track.id, r));
        if (!ri) continue;
        const box = rowBox(l, r);
        const ry = Y(box.y), rh = box.h;
        if (ry > plotBottom || ry + rh < plotTop) continue;
        const items = ri.items;
        for (let j = firstVisible(items, w.start, w.end, vs); j < items.length; ++j) {
          const i = items[j];
          const s = w.start[i];
          if (s > ve) break;
          // Differences first: absolute times can be ~1e18 ns (epoch based).
          let x0 = plotX + (s - vs) * pxPerNs, x1 = plotX + (w.end[i] - vs) * pxPerNs;
          if (x0 < plotX - 2) x0 = plotX - 2;
          if (x1 > plotX + plotW + 2) x1 = plotX + plotW + 2;
          let bw = x1 - x0;
          if (bw < 1) bw = 1;
          const kind = w.kind[i];
          const bucket = kind === TaskKind.DataMovement ? this.copyBucket
            : kind === TaskKind.Sync ? this.syncBucket : (byLabel[w.label[i]] ??= this.bucketFor(w.str(w.label[i])));
          if (slow && (slowOf[w.label[i]] ??= slow.has(w.str(w.label[i])))) slowRects.push(x0, ry, bw);
          if (w.flags[i] & kFlagAggregate || bw <= 3) {
            // Density: an aggregate's bar height is the busy fraction of its extent.
            const bh = w.flags[i] & kFlagAggregate ? Math.max(1, Math.round(rh * Math.min(1, w.busy[i]))) : rh;
            const y = ry + rh - bh;
            // Merge with the bucket's previous rectangle when it is the same
            // height on this row and touches (gaps under a pixel do not show):
            // dense stretches become one fill instead of one per pixel column.
            const a = bucket.xywh, n = a.length;
            if (n && a[n - 3] === y && a[n - 1] === bh && x0 <= a[n - 4] + a[n - 2] + 1 && bucket.mergeable) {
              a[n - 2] = Math.max(a[n - 2], x0 + bw - a[n - 4]);
            } else {
              a.push(x0, y, bw, bh);
              bucket.mergeable = true;
            }
          } else {
            // A 1 px gap keeps neighbours of the same op apart.
            bucket.xywh.push(x0, ry, bw - 1, rh);
            bucket.mergeable = false;
            if (!collapsed && bw >= 28) texts.push(x0, ry, bw, l.source, i);
          }
          ++drawn;
        }
      }
    }
    for (const b of [...this.buckets.values(), this.copyBucket, this.syncBucket]) {
      const a = b.xywh;
      if (!a.length) continue;
      ctx.fillStyle = b.style;
      for (let k = 0; k < a.length; k += 4) ctx.fillRect(a[k], a[k + 1], a[k + 2], a[k + 3]);
    }
    // The compare marks over the boxes: a 3 px bar along the top of each.
    if (slowRects.length) {
      ctx.fillStyle = kSlowerMark;
      for (let k = 0; k < slowRects.length; k += 3) ctx.fillRect(slowRects[k], slowRects[k + 1], Math.max(2, slowRects[k + 2]), 3);
    }
    this.lastSlowerMarked = slowRects.length / 3;
    this.lastItemsDrawn = drawn;
    let rects = 0;
    for (const b of [...this.buckets.values(), this.copyBucket, this.syncBucket]) rects += b.xywh.length / 4;
    this.lastRectsDrawn = rects;

    // Text inside boxes wide enough (truncated to fit; no per-box clip).
    ctx.fillStyle = kTextColor;
    ctx.textBaseline = 'middle';
    for (let k = 0; k < texts.length; k += 5) {
      const x = texts[k], y = texts[k + 1], bw = texts[k + 2];
      const w = f.sources[texts[k + 3]].win!;
      const i = texts[k + 4];
      const vis0 = Math.max(x, plotX), vis1 = Math.min(x + bw, plotX + plotW);
      const room = Math.floor((vis1 - vis0 - 6) / this.charW);
      if (room < 3) continue;
      const label = w.str(w.label[i]);
      const text = label.length <= room ? label : `${label.slice(0, room - 1)}…`;
      if (w.kind[i] === TaskKind.DataMovement || w.kind[i] === TaskKind.Sync) {
        // Hatching under text is unreadable: a light plate behind it.
        ctx.fillStyle = 'rgba(255,255,255,0.85)';
        ctx.fillRect(vis0 + 1, y + 2, Math.min(vis1 - vis0 - 2, ctx.measureText(text).width + 4), kRowH - 6);
        ctx.fillStyle = kTextColor;
      }
      ctx.fillText(text, vis0 + 3, y + (kRowH - 2) / 2 + 0.5);
    }

    // Overlays: highlighted tasks, path, hover, selection.
    const overlay = (o: OverlayTask, color: string, lw: number): { x: number; y: number; w: number; h: number } | null => {
      const l = f.lanes.find((ln) => ln.source === o.source && ln.track.id === o.track);
      if (!l || l.rows === 0) return null;
      const off = f.sources[o.source]?.offsetNs ?? 0;
      // The task's own row (a kernel inside model_run > Execute is outlined
      // alone); a collapsed group or an unknown row: the whole lane.
      const ownRow = !l.group.collapsed && o.row !== undefined && o.row < l.rows;
      const box = rowBox(l, ownRow ? o.row! : 0);
      const x0 = X(o.startNs + off), x1 = Math.max(x0 + 2, X(o.endNs + off));
      const y = Y(box.y), h = ownRow || l.group.collapsed ? box.h : l.rows * kRowH - 2;
      ctx.strokeStyle = color;
      ctx.lineWidth = lw;
      ctx.strokeRect(x0 - lw / 2, y - lw / 2, x1 - x0 + lw, h + lw);
      return { x: x0, y, w: x1 - x0, h };
    };
    for (const o of f.slowerTasks ?? []) overlay(o, kSlowerMark, 2);
    for (const o of f.highlighted) overlay(o, rgbCss(kMatchColor), 3);
    if (f.path.length) {
      const pts: [number, number][] = [];
      for (const o of f.path) {
        const b = overlay(o, rgbCss(kLineageColor), 2);
        if (b) pts.push([b.x + b.w / 2, b.y + b.h / 2]);
      }
      ctx.strokeStyle = rgbCss(kLineageColor, 0.7);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      pts.forEach(([x, y], k) => (k ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
      ctx.stroke();
    }
    if (f.hover) {
      const w = f.sources[f.hover.source]?.win;
      const i = f.hover.item;
      if (w && i < w.itemCount) {
        const l = f.lanes.find((ln) => ln.source === f.hover!.source && ln.track.id === w.track[i]);
        if (l) {
          const off = f.sources[f.hover.source].offsetNs;
          const box = rowBox(l, w.row[i]);
          const x0 = X(w.start[i] + off), x1 = Math.max(x0 + 1, X(w.end[i] + off));
          ctx.strokeStyle = 'rgba(0,0,0,0.75)';
          ctx.lineWidth = 1;
          ctx.strokeRect(x0 - 0.5, Y(box.y) - 0.5, x1 - x0 + 1, box.h + 1);
        }
      }
    }
    for (const o of f.selected) overlay(o, rgbCss(kSelectColor), 2.5);

    // Flows of the selection: curved arrows between tracks.
    for (const fl of f.flows) this.arrow(f, fl, X, Y);

    // Area selection.
    if (f.area) {
      const a0 = X(Math.min(f.area.startNs, f.area.endNs)), a1 = X(Math.max(f.area.startNs, f.area.endNs));
      const y0 = Y(f.area.y0), y1 = Y(f.area.y1);
      ctx.fillStyle = 'rgba(47,111,222,0.12)';
      ctx.fillRect(a0, y0, a1 - a0, y1 - y0);
      ctx.strokeStyle = 'rgba(47,111,222,0.9)';
      ctx.lineWidth = 1;
      ctx.strokeRect(a0 + 0.5, y0 + 0.5, Math.max(0, a1 - a0 - 1), Math.max(0, y1 - y0 - 1));
      ctx.fillStyle = 'rgba(47,111,222,0.9)';
      ctx.fillRect(Math.round(a0), plotTop, 1, plotBottom - plotTop);
      ctx.fillRect(Math.round(a1), plotTop, 1, plotBottom - plotTop);
    }
    if (f.cursorX !== null && f.cursorX >= plotX) {
      ctx.fillStyle = 'rgba(0,0,0,0.3)';
      ctx.fillRect(Math.round(f.cursorX), plotTop, 1, plotBottom - plotTop);
    }
    ctx.restore();

    // Gutter: group headers and track labels over the plot's left edge.
    this.gutter(f, Y, plotTop, plotBottom);
    // Axis on top.
    this.axis(f, X, step, firstTick, plotX, plotW);
    if (f.message) {
      ctx.fillStyle = 'rgba(255,255,255,0.85)';
      const tw = ctx.measureText(f.message).width;
      ctx.fillRect(plotX + plotW / 2 - tw / 2 - 10, plotTop + 12, tw + 20, 22);
      ctx.fillStyle = kMutedText;
      ctx.textAlign = 'center';
      ctx.fillText(f.message, plotX + plotW / 2, plotTop + 23);
      ctx.textAlign = 'left';
    }
    this.lastFrameMs = performance.now() - t0;
  }

  private gutter(f: TimelineFrame, Y: (y: number) => number, top: number, bottom: number): void {
    const ctx = this.ctx;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, top, kGutterW, bottom - top);
    ctx.clip();
    ctx.fillStyle = kGutterFill;
    ctx.fillRect(0, top, kGutterW, bottom - top);
    ctx.textBaseline = 'middle';
    const fit = (s: string, room: number): string => {
      const n = Math.floor(room / this.charW);
      return s.length <= n ? s : `${s.slice(0, Math.max(1, n - 1))}…`;
    };
    const expanded: number[] = []; // y, group index
    for (const g of f.groups) {
      const gy = Y(g.y);
      if (gy > bottom) break;
      if (gy + kGroupH >= top) {
        ctx.fillStyle = kGroupFill;
        ctx.fillRect(0, gy, kGutterW, kGroupH);
        ctx.fillStyle = kTextColor;
        ctx.font = '600 11px system-ui, -apple-system, "Segoe UI", sans-serif';
        if (g.collapsed) {
          // The header band carries the group's items: keep the name in the gutter.
          ctx.fillText(`▸ ${fit(g.name, kGutterW - 24)}`, 6, gy + kGroupH / 2);
        } else {
          expanded.push(gy, f.groups.indexOf(g));
        }
        ctx.font = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
      }
      if (g.collapsed) continue;
      for (const l of g.lanes) {
        const ly = Y(l.y);
        if (ly > bottom || ly + l.h < top) continue;
        if (l.rows === 0) {
          ctx.fillStyle = kMutedText;
          ctx.fillText(fit(`${l.track.name} (filtered out)`, kGutterW - 24), 16, ly + l.h / 2);
          ctx.fillStyle = kGridColor;
          ctx.fillRect(0, ly + l.h - 1, kGutterW, 1);
          continue;
        }
        // The pin mark: click it to pin the track to the top (filled: pinned).
        if (!l.counter) {
          ctx.beginPath();
          ctx.arc(kPinX, ly + kLanePad + (kRowH - 2) / 2, 3.5, 0, 2 * Math.PI);
          ctx.fillStyle = l.pinned ? kPinColor : kGutterFill;
          ctx.fill();
          ctx.strokeStyle = l.pinned ? kPinColor : kMutedText;
          ctx.lineWidth = 1;
          ctx.stroke();
        }
        ctx.fillStyle = kTextColor;
        ctx.fillText(fit(l.track.name, kGutterW - 62), 16, ly + kLanePad + (kRowH - 2) / 2);
        if (l.counter) {
          ctx.fillStyle = kMutedText;
          ctx.textAlign = 'right';
          ctx.fillText(`peak ${formatBytes(l.counter.max)}`, kGutterW - 8, ly + l.h - kLanePad - 7);
          ctx.textAlign = 'left';
        } else if (f.traceSpanNs > 0) {
          ctx.fillStyle = kMutedText;
          ctx.textAlign = 'right';
          ctx.fillText(`${Math.round((100 * l.track.busy_ns) / f.traceSpanNs)}%`, kGutterW - 8, ly + kLanePad + (kRowH - 2) / 2);
          ctx.textAlign = 'left';
        }
        ctx.fillStyle = kGridColor;
        ctx.fillRect(0, ly + l.h - 1, kGutterW, 1);
      }
    }
    ctx.fillStyle = 'rgba(0,0,0,0.18)';
    ctx.fillRect(kGutterW - 1, top, 1, bottom - top);
    ctx.restore();
    // Expanded groups' names run on over the (empty) header band of the plot.
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, top, f.width, bottom - top);
    ctx.clip();
    ctx.textBaseline = 'middle';
    for (let k = 0; k < expanded.length; k += 2) {
      const g = f.groups[expanded[k + 1]], y = expanded[k] + kGroupH / 2;
      const title = `▾ ${g.name}`;
      ctx.font = '600 11px system-ui, -apple-system, "Segoe UI", sans-serif';
      ctx.fillStyle = kTextColor;
      ctx.fillText(title, 6, y);
      const w = ctx.measureText(title).width;
      ctx.font = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
      ctx.fillStyle = kMutedText;
      ctx.fillText(`${g.lanes.length === 1 ? '1 track' : `${g.lanes.length} tracks`} · ${g.taskCount.toLocaleString()} tasks`, 16 + w, y);
    }
    ctx.restore();
  }

  private axis(f: TimelineFrame, X: (t: number) => number, step: number, firstTick: number, plotX: number, plotW: number): void {
    const pxPerNs = plotW / Math.max(1e-9, f.viewEnd - f.viewStart);
    const ctx = this.ctx;
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, f.width, kAxisH);
    ctx.fillStyle = 'rgba(0,0,0,0.25)';
    ctx.fillRect(0, kAxisH - 1, f.width, 1);
    ctx.fillStyle = kTextColor;
    ctx.textBaseline = 'middle';
    ctx.save();
    ctx.beginPath();
    ctx.rect(plotX, 0, plotW, kAxisH);
    ctx.clip();
    // Runs (iterations): alternating shades along the axis' bottom edge.
    f.runs.forEach((r, k) => {
      const x0 = Math.max(plotX, X(r.startNs)), x1 = Math.min(plotX + plotW, X(r.endNs));
      if (x1 <= x0) return;
      ctx.fillStyle = k % 2 ? '#9fb3d9' : '#6f8cc4';
      ctx.fillRect(x0, kAxisH - 4, Math.max(1, x1 - x0 - 1), 3);
    });
    ctx.fillStyle = kTextColor;
    for (let t = firstTick; t <= f.viewEnd; t += step) {
      const x = Math.round(X(t));
      ctx.fillRect(x, kAxisH - 7, 1, 6);
      ctx.fillText(formatTick(t - f.originNs, step), x + 3, kAxisH / 2 - 2);
    }
    if (f.area) {
      const a = Math.min(f.area.startNs, f.area.endNs), b = Math.max(f.area.startNs, f.area.endNs);
      const label = formatDuration(b - a);
      const x = (X(a) + X(b)) / 2, tw = ctx.measureText(label).width + 10;
      ctx.fillStyle = 'rgb(47,111,222)';
      ctx.fillRect(x - tw / 2, 3, tw, kAxisH - 8);
      ctx.fillStyle = '#fff';
      ctx.textAlign = 'center';
      ctx.fillText(label, x, kAxisH / 2 - 1);
      ctx.textAlign = 'left';
    }
    if (f.cursorX !== null && f.cursorX >= plotX) {
      // The time under the pointer, to 1/10 of a pixel's worth.
      const t = f.viewStart + (f.cursorX - plotX) / pxPerNs - f.originNs;
      const label = formatCursor(t, step, 0.1 / pxPerNs);
      const tw = ctx.measureText(label).width + 8;
      const x = Math.min(f.cursorX + 2, plotX + plotW - tw);
      ctx.fillStyle = '#3b3f4a';
      ctx.fillRect(x, 3, tw, kAxisH - 8);
      ctx.fillStyle = '#fff';
      ctx.fillText(label, x + 4, kAxisH / 2 - 1);
    }
    ctx.restore();
    ctx.fillStyle = kMutedText;
    ctx.fillText(`window ${formatDuration(f.viewEnd - f.viewStart)}`, 8, kAxisH / 2 - 1);
  }

  private arrow(f: TimelineFrame, fl: FlowArrow, X: (t: number) => number, Y: (y: number) => number): void {
    const find = (track: number): Lane | undefined => f.lanes.find((l) => l.source === fl.source && l.track.id === track);
    const a = find(fl.fromTrack), b = find(fl.toTrack);
    if (!a || !b || !a.rows || !b.rows) return;
    const off = f.sources[fl.source]?.offsetNs ?? 0;
    const ra = rowBox(a, Math.min(fl.fromRow, a.rows - 1)), rb = rowBox(b, Math.min(fl.toRow, b.rows - 1));
    // From the source box's edge facing the target to the target box's facing edge.
    const down = rb.y >= ra.y;
    const x0 = X(fl.fromNs + off), y0 = Y(down ? ra.y + ra.h : ra.y);
    const x1 = X(fl.toNs + off), y1 = Y(down ? rb.y : rb.y + rb.h);
    const ctx = this.ctx;
    const color = fl.kind === 'launch' ? '#3b3f4a' : '#8a3ffc';
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = 1.5;
    ctx.setLineDash(fl.kind === 'launch' ? [] : [5, 3]);
    const dy = Math.max(20, Math.abs(y1 - y0) / 2);
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.bezierCurveTo(x0, y0 + Math.sign(y1 - y0 || 1) * dy, x1, y1 - Math.sign(y1 - y0 || 1) * dy, x1, y1);
    ctx.stroke();
    ctx.setLineDash([]);
    // Arrowhead pointing along the curve's end tangent (vertical).
    const dir = Math.sign(y1 - y0 || 1);
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - 4, y1 - 7 * dir);
    ctx.lineTo(x1 + 4, y1 - 7 * dir);
    ctx.closePath();
    ctx.fill();
    ctx.beginPath();
    ctx.arc(x0, y0, 2.5, 0, 2 * Math.PI);
    ctx.fill();
  }
}

/** Colour of an item's fill for a test or a legend: op colour, or the hatched kinds' base colour. */
export function itemFillRgb(kind: number, label: string): Rgb {
  if (kind === TaskKind.DataMovement) return hexRgb(kCopyFill);
  if (kind === TaskKind.Sync) return hexRgb(kSyncFill);
  return opColor(label);
}
export function hexRgb(hex: string): Rgb {
  const v = parseInt(hex.slice(1), 16);
  return [((v >> 16) & 255) / 255, ((v >> 8) & 255) / 255, (v & 255) / 255];
}
