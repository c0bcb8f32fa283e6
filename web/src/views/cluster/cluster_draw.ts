// Canvas drawing of the cluster view's pictures, free of the DOM around
// them: the rank × step heat map and the rank × rank communication matrix
// (both written as pixels into an ImageData at the canvas' device
// resolution, so 1,024 ranks cost one pass over the pixels, never one
// element or one fillRect per cell), and the collective alignment (one
// bar per rank on a shared time axis).

import { heatColor, kNoDataFill, rgbCss, type Rgb } from '../../base/palette';
import { fmtNs } from '../../base/format';

/** A dense grid of values (rows × cols, row-major); NaN where there is none. */
export interface Grid {
  rows: number;
  cols: number;
  values: Float64Array;
}

/** Where a grid is drawn in the canvas (CSS px) and which cells a pixel row / column holds. */
export interface GridPlacement {
  x: number; y: number; w: number; h: number;
  rows: number; cols: number;
}

/** The range of the finite values of a grid (0..0 when none). */
export function gridRange(g: Grid): { min: number; max: number; count: number } {
  let min = Infinity, max = -Infinity, count = 0;
  for (const v of g.values) {
    if (!Number.isFinite(v)) continue;
    count++;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return count ? { min, max, count } : { min: 0, max: 0, count: 0 };
}

/**
 * The cells one device pixel row (or column) covers: [first, last]. When
 * cells are smaller than a pixel, a pixel holds several and shows the
 * largest value among them, so a slow rank never disappears between two
 * fast ones.
 */
function span(px: number, pxCount: number, cells: number): [number, number] {
  const a = Math.floor((px * cells) / pxCount);
  const b = Math.max(a, Math.ceil(((px + 1) * cells) / pxCount) - 1);
  return [a, Math.min(cells - 1, b)];
}

/**
 * Writes the grid as pixels into `ctx` (whose canvas is scaled by `dpr`)
 * at `p`; colour by `colour(t)` of t = (v - min) / (max - min), no-data
 * grey. Returns the time it took (ms).
 */
export function drawGrid(ctx: CanvasRenderingContext2D, dpr: number, g: Grid, p: GridPlacement,
  range: { min: number; max: number }, colour: (t: number) => Rgb = heatColor): number {
  const t0 = performance.now();
  const x0 = Math.round(p.x * dpr), y0 = Math.round(p.y * dpr);
  const w = Math.max(1, Math.round(p.w * dpr)), h = Math.max(1, Math.round(p.h * dpr));
  const img = ctx.createImageData(w, h);
  const data = img.data;
  const colSpan: [number, number][] = [];
  for (let x = 0; x < w; x++) colSpan.push(span(x, w, g.cols));
  const scale = range.max > range.min ? 1 / (range.max - range.min) : 0;
  // Colours quantised to 256 steps of the ramp: one lookup per pixel.
  const lut = new Uint8ClampedArray(256 * 3);
  for (let k = 0; k < 256; k++) {
    const c = colour(k / 255);
    lut[k * 3] = c[0] * 255; lut[k * 3 + 1] = c[1] * 255; lut[k * 3 + 2] = c[2] * 255;
  }
  const none = kNoDataFill.map((c) => c * 255);
  const rowMax = new Float64Array(g.cols);
  for (let y = 0; y < h; y++) {
    const [r0, r1] = span(y, h, g.rows);
    // The largest value per column over the rows this pixel row holds.
    rowMax.fill(NaN);
    for (let r = r0; r <= r1; r++) {
      const base = r * g.cols;
      for (let c = 0; c < g.cols; c++) {
        const v = g.values[base + c];
        if (Number.isFinite(v) && !(rowMax[c] >= v)) rowMax[c] = v;
      }
    }
    let o = y * w * 4;
    for (let x = 0; x < w; x++, o += 4) {
      const [c0, c1] = colSpan[x];
      let v = NaN;
      for (let c = c0; c <= c1; c++) if (Number.isFinite(rowMax[c]) && !(v >= rowMax[c])) v = rowMax[c];
      if (Number.isFinite(v)) {
        const k = Math.round(Math.min(1, Math.max(0, (v - range.min) * scale)) * 255) * 3;
        data[o] = lut[k]; data[o + 1] = lut[k + 1]; data[o + 2] = lut[k + 2];
      } else {
        data[o] = none[0]; data[o + 1] = none[1]; data[o + 2] = none[2];
      }
      data[o + 3] = 255;
    }
  }
  ctx.save();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.putImageData(img, x0, y0);
  ctx.restore();
  return performance.now() - t0;
}

/** The cell under CSS point (x, y) of a placement, or null outside. */
export function cellAt(p: GridPlacement, x: number, y: number): { row: number; col: number } | null {
  if (x < p.x || y < p.y || x >= p.x + p.w || y >= p.y + p.h) return null;
  const row = Math.min(p.rows - 1, Math.floor(((y - p.y) / p.h) * p.rows));
  const col = Math.min(p.cols - 1, Math.floor(((x - p.x) / p.w) * p.cols));
  return { row, col };
}

/** The CSS rectangle of a cell (at least 1 px high / wide). */
export function cellRect(p: GridPlacement, row: number, col: number): { x: number; y: number; w: number; h: number } {
  const ch = p.h / p.rows, cw = p.w / p.cols;
  return { x: p.x + col * cw, y: p.y + row * ch, w: Math.max(1, cw), h: Math.max(1, ch) };
}

/** Axis labels of `count` items along `lengthPx`: every k-th, k a 1/2/5 step so that labels are at least `minPx` apart. */
export function labelStride(count: number, lengthPx: number, minPx: number): number {
  if (count <= 0) return 1;
  const per = lengthPx / count;
  for (const m of [1, 10, 100, 1000, 10000]) {
    for (const s of [1, 2, 5]) if (per * s * m >= minPx) return s * m;
  }
  return count;
}

/** One rank's bar of a collective: arrival (start) to end, in ns of its own clock. */
export interface AlignmentBar { rank: number; start: number; end: number; last: boolean }

/**
 * The collective alignment: a row per rank (in the order given), a shared
 * time axis from the first arrival to the last end; the part of a bar
 * before the last arrival is the rank's wait (light), the rest its
 * transfer (solid); the last rank's row is marked and the arrival skew is
 * a bracket from the first arrival to the last one. Returns the rows'
 * geometry for hit testing.
 */
export function drawAlignment(ctx: CanvasRenderingContext2D, w: number, h: number, bars: AlignmentBar[], skewNs: number):
  { x: number; w: number; y0: number; rowH: number; t0: number; t1: number } {
  ctx.clearRect(0, 0, w, h);
  const left = 64, right = 12, top = 26, bottom = 22;
  const t0 = Math.min(...bars.map((b) => b.start)), t1 = Math.max(...bars.map((b) => b.end));
  const lastArrival = Math.max(...bars.map((b) => b.start));
  const span = Math.max(1, t1 - t0);
  const plotW = Math.max(10, w - left - right);
  const rowH = Math.max(1, Math.min(22, (h - top - bottom) / Math.max(1, bars.length)));
  const X = (t: number): number => left + ((t - t0) / span) * plotW;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  // Axis: 0 at the first arrival.
  ctx.fillStyle = '#555';
  ctx.strokeStyle = '#ccc';
  ctx.lineWidth = 1;
  const axisY = top + rowH * bars.length + 4;
  ctx.beginPath();
  ctx.moveTo(left, axisY + 0.5); ctx.lineTo(left + plotW, axisY + 0.5);
  ctx.stroke();
  // Ticks at least ~110 px apart (a label is "+40.049 ms").
  const ticks = Math.max(1, Math.min(4, Math.floor(plotW / 110)));
  for (let k = 0; k <= ticks; k++) {
    const t = (span * k) / ticks, x = left + (plotW * k) / ticks;
    ctx.textAlign = k === 0 ? 'left' : k === ticks ? 'right' : 'center';
    ctx.fillText(`+${fmtNs(Math.round(t))}`, x, axisY + 10);
  }
  const labelEvery = Math.max(1, Math.ceil(12 / rowH));
  bars.forEach((b, i) => {
    const y = top + i * rowH;
    const bh = Math.max(1, rowH - (rowH >= 6 ? 3 : 0));
    if (b.last) {
      ctx.fillStyle = 'rgba(227, 74, 51, 0.12)';
      ctx.fillRect(0, y, w, rowH);
    }
    // Wait: arrival to the last arrival.
    const xs = X(b.start), xl = X(Math.max(b.start, Math.min(b.end, lastArrival))), xe = X(b.end);
    ctx.fillStyle = '#b9d3f5';
    ctx.fillRect(xs, y, Math.max(0, xl - xs), bh);
    ctx.fillStyle = b.last ? '#e34a33' : '#2f6fde';
    ctx.fillRect(xl, y, Math.max(1, xe - xl), bh);
    // Arrival tick.
    ctx.fillStyle = '#222';
    ctx.fillRect(Math.round(xs), y, 1, bh);
    if (i % labelEvery === 0 || b.last) {
      ctx.fillStyle = b.last ? '#b30000' : '#333';
      ctx.textAlign = 'right';
      ctx.fillText(`rank ${b.rank}`, left - 6, y + bh / 2);
    }
  });
  // The last arrival and the skew bracket.
  const xl = X(lastArrival), xf = X(t0);
  ctx.strokeStyle = '#b30000';
  ctx.setLineDash([4, 3]);
  ctx.beginPath();
  ctx.moveTo(Math.round(xl) + 0.5, top - 4); ctx.lineTo(Math.round(xl) + 0.5, axisY);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.beginPath();
  ctx.moveTo(xf, top - 10); ctx.lineTo(xf, top - 4); ctx.moveTo(xf, top - 7); ctx.lineTo(xl, top - 7); ctx.moveTo(xl, top - 10); ctx.lineTo(xl, top - 4);
  ctx.stroke();
  ctx.fillStyle = '#b30000';
  ctx.textAlign = xl > w / 2 ? 'right' : 'left';
  ctx.fillText(`arrival skew ${fmtNs(skewNs)}`, xl > w / 2 ? xl - 4 : xl + 4, top - 16);
  return { x: left, w: plotW, y0: top, rowH, t0, t1 };
}

export const cssOf = rgbCss;
