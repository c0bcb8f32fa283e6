// The Training view's pictures, free of the state around them: the health
// heat map layer × step (canvas), the anomaly timeline (SVG: loss and
// gradient norm over the steps, trigger marks, the captured window), an
// activation histogram, an attention head (canvas), the embedding
// projection (SVG scatter), and a sample's per-layer bars. Each keeps the
// numbers it drew in data-* attributes, so a test reads what was drawn.

import { heatColor, kNoDataFill, rgbCss, type Rgb } from '../../base/palette';

const kSvgNs = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}): SVGElementTagNameMap[K] {
  const e = document.createElementNS(kSvgNs, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

function svgTitle(parent: SVGElement, text: string): void {
  const t = svg('title');
  t.textContent = text;
  parent.append(t);
}

/** A number in 4 significant digits, exponent form outside 1e-3..1e5; "–" for none. */
export function fmtNum(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

/** Health colour of a 0-100 score: 100 (healthy) pale, 0 dark red; null / NaN grey. */
export function scoreColor(score: number | null | undefined): Rgb {
  if (score === null || score === undefined || !Number.isFinite(score)) return kNoDataFill;
  return heatColor((100 - Math.max(0, Math.min(100, score))) / 100);
}

// ---- heat map ----

/** Geometry of the heat map (CSS px inside its canvas). */
export interface HeatGeometry {
  labelW: number; top: number; rowH: number; colW: number; rows: number; cols: number; width: number; height: number;
}

export const kHeatRowH = 16;
export const kHeatTop = 18;

export function heatGeometry(width: number, labelW: number, rows: number, cols: number): HeatGeometry {
  const colW = Math.max(1, (width - labelW - 4) / Math.max(1, cols));
  return { labelW, top: kHeatTop, rowH: kHeatRowH, colW, rows, cols, width, height: kHeatTop + rows * kHeatRowH + 4 };
}

/** The cell under CSS point (x, y), or null. */
export function heatCellAt(g: HeatGeometry, x: number, y: number): { row: number; col: number } | null {
  const row = Math.floor((y - g.top) / g.rowH);
  if (row < 0 || row >= g.rows || y < g.top) return null;
  if (x < g.labelW) return { row, col: -1 };
  const col = Math.floor((x - g.labelW) / g.colW);
  if (col < 0 || col >= g.cols) return null;
  return { row, col };
}

/** The centre of a cell (CSS px in the canvas). */
export function heatCellCenter(g: HeatGeometry, row: number, col: number): { x: number; y: number } {
  return { x: g.labelW + (col + 0.5) * g.colW, y: g.top + (row + 0.5) * g.rowH };
}

export interface HeatDraw {
  labels: string[];
  steps: number[];
  /** [row][col] score, null where not measured */
  values: (number | null)[][];
  anomalyStep: number;
  selectedRow: number;
  /** Rows of the root-cause chain: row → role. */
  chainRows: Map<number, string>;
}

export function drawHeat(canvas: HTMLCanvasElement, g: HeatGeometry, d: HeatDraw): void {
  const dpr = window.devicePixelRatio || 1;
  canvas.style.width = `${g.width}px`;
  canvas.style.height = `${g.height}px`;
  canvas.width = Math.round(g.width * dpr);
  canvas.height = Math.round(g.height * dpr);
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, g.width, g.height);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  // Cells: whole pixels, so a cell's centre pixel is its colour.
  for (let r = 0; r < g.rows; ++r) {
    const y0 = Math.round(g.top + r * g.rowH), y1 = Math.round(g.top + (r + 1) * g.rowH) - 1;
    for (let c = 0; c < g.cols; ++c) {
      const x0 = Math.round(g.labelW + c * g.colW), x1 = Math.round(g.labelW + (c + 1) * g.colW);
      ctx.fillStyle = rgbCss(scoreColor(d.values[r]?.[c]));
      ctx.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
    }
  }
  // Step labels along the top (about ten), the anomaly step marked.
  ctx.fillStyle = '#555';
  ctx.textAlign = 'center';
  const every = Math.max(1, Math.ceil(g.cols / Math.max(1, Math.floor((g.width - g.labelW) / 40))));
  for (let c = 0; c < g.cols; c += every) ctx.fillText(String(d.steps[c]), g.labelW + (c + 0.5) * g.colW, g.top / 2);
  const ac = d.steps.indexOf(d.anomalyStep);
  if (ac >= 0) {
    ctx.strokeStyle = '#d50000';
    ctx.lineWidth = 1.5;
    const x = Math.round(g.labelW + ac * g.colW) + 0.5;
    ctx.beginPath();
    ctx.moveTo(x, 2); ctx.lineTo(x, g.top - 2);
    ctx.stroke();
    ctx.fillStyle = '#d50000';
    ctx.fillText('▼', g.labelW + (ac + 0.5) * g.colW, g.top / 2);
  }
  // Layer names on the left; chain rows marked, the selected row outlined.
  ctx.textAlign = 'right';
  for (let r = 0; r < g.rows; ++r) {
    const y = g.top + (r + 0.5) * g.rowH;
    const role = d.chainRows.get(r);
    ctx.fillStyle = r === d.selectedRow ? '#000' : '#333';
    ctx.font = r === d.selectedRow ? 'bold 11px system-ui, sans-serif' : '11px system-ui, sans-serif';
    let label = d.labels[r];
    while (label.length > 4 && ctx.measureText(label).width > g.labelW - 14) label = `…${label.slice(2)}`;
    ctx.fillText(label, g.labelW - 6, y);
    if (role) {
      ctx.fillStyle = role === 'producer' ? '#d50000' : '#ff8f00';
      ctx.fillRect(1, Math.round(g.top + r * g.rowH) + 2, 4, g.rowH - 5);
    }
  }
  if (d.selectedRow >= 0 && d.selectedRow < g.rows) {
    ctx.strokeStyle = '#2f6fde';
    ctx.lineWidth = 2;
    ctx.strokeRect(1, g.top + d.selectedRow * g.rowH - 0.5, g.width - 3, g.rowH);
  }
}

// ---- anomaly timeline ----

export interface TimelineDraw {
  steps: number[];
  loss: (number | null)[];
  gradNorm: (number | null)[];
  triggers: { step: number; trigger: string; detail: string }[];
  captured: number[];
  anomalyStep: number;
}

/** Loss (top) and global gradient norm (bottom, log scale) over the steps, trigger marks and the captured window. */
export function timelineSvg(d: TimelineDraw, width = 900): SVGSVGElement {
  const W = Math.max(300, Math.round(width)), H = 170, L = 56, R = 10, T = 8, B = 20, gap = 12;
  const ph = (H - T - B - gap) / 2;
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'training-timeline' });
  root.dataset.steps = JSON.stringify(d.steps);
  const s0 = d.steps[0] ?? 0, s1 = d.steps[d.steps.length - 1] ?? 1;
  const X = (s: number): number => L + ((W - L - R) * (s - s0)) / Math.max(1, s1 - s0);
  if (d.captured.length) {
    const a = Math.min(...d.captured), b = Math.max(...d.captured);
    const half = (W - L - R) / Math.max(1, s1 - s0) / 2;
    const r = svg('rect', { x: X(a) - half, y: T, width: X(b) - X(a) + 2 * half, height: H - T - B, fill: 'rgba(47,111,222,0.12)', class: 'captured-window' });
    r.dataset.first = String(a);
    r.dataset.last = String(b);
    svgTitle(r, `captured window: steps ${a}–${b} (tensors kept)`);
    root.append(r);
  }
  const panel = (vals: (number | null)[], top: number, colour: string, label: string, log: boolean, cls: string): void => {
    const f = (v: number): number => (log ? Math.log10(Math.max(v, 1e-12)) : v);
    const finite = vals.filter((v): v is number => v !== null && Number.isFinite(v)).map(f);
    const lo = finite.length ? Math.min(...finite) : 0, hi = finite.length ? Math.max(...finite) : 1;
    const Y = (v: number): number => top + ph - (ph * (f(v) - lo)) / Math.max(1e-12, hi - lo);
    root.append(svg('line', { x1: L, x2: W - R, y1: top + ph, y2: top + ph, stroke: '#bbb' }));
    const t = svg('text', { x: L + 6, y: top + 11, 'font-size': 11, 'font-weight': 600, fill: colour });
    t.textContent = label;
    root.append(t);
    for (const [v, y] of [[hi, top + 8], [lo, top + ph]] as const) {
      const tt = svg('text', { x: L - 4, y, 'font-size': 10, fill: '#666', 'text-anchor': 'end' });
      tt.textContent = fmtNum(log ? 10 ** v : v);
      root.append(tt);
    }
    let pts: string[] = [];
    const line = svg('g', { class: cls });
    line.dataset.values = JSON.stringify(vals);
    const flush = (): void => {
      if (pts.length > 1) line.append(svg('polyline', { points: pts.join(' '), fill: 'none', stroke: colour, 'stroke-width': 1.5 }));
      pts = [];
    };
    vals.forEach((v, i) => {
      if (v === null || !Number.isFinite(v)) {
        flush();
        // Not finite: a red cross at the top of the panel.
        const c = svg('text', { x: X(d.steps[i]), y: top + 9, 'font-size': 10, fill: '#d50000', 'text-anchor': 'middle', class: 'nonfinite' });
        c.textContent = '×';
        line.append(c);
        return;
      }
      pts.push(`${X(d.steps[i]).toFixed(1)},${Y(v).toFixed(1)}`);
    });
    flush();
    root.append(line);
  };
  panel(d.loss, T, '#2f6fde', 'loss', false, 'series-loss');
  panel(d.gradNorm, T + ph + gap, '#e08a1e', 'grad norm (log)', true, 'series-grad-norm');
  for (const tr of d.triggers) {
    const x = X(tr.step);
    const g = svg('g', { class: 'trigger-mark' });
    g.dataset.step = String(tr.step);
    g.dataset.trigger = tr.trigger;
    g.append(svg('line', { x1: x, x2: x, y1: T, y2: H - B, stroke: '#d50000', 'stroke-width': 1.5, 'stroke-dasharray': '4 2' }));
    svgTitle(g, `step ${tr.step}: ${tr.trigger}${tr.detail ? ` — ${tr.detail}` : ''}`);
    root.append(g);
  }
  const every = Math.max(1, Math.ceil(d.steps.length / 12));
  for (let i = 0; i < d.steps.length; i += every) {
    const t = svg('text', { x: X(d.steps[i]), y: H - 6, 'font-size': 10, fill: '#555', 'text-anchor': 'middle' });
    t.textContent = String(d.steps[i]);
    root.append(t);
  }
  return root;
}

// ---- histogram ----

export function histogramSvg(h: { lo: number; hi: number; counts: number[]; nan: number; inf: number }, title: string, colour = '#2f6fde'): SVGSVGElement {
  const W = 160, H = 70, B = 14;
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'training-hist' });
  root.dataset.counts = JSON.stringify(h.counts);
  root.dataset.lo = String(h.lo);
  root.dataset.hi = String(h.hi);
  svgTitle(root, `${title}: ${h.counts.reduce((a, b) => a + b, 0)} values in [${fmtNum(h.lo)}, ${fmtNum(h.hi)}]; NaN ${h.nan}, Inf ${h.inf}`);
  const max = Math.max(1, ...h.counts);
  const bw = W / Math.max(1, h.counts.length);
  h.counts.forEach((c, i) => {
    if (!c) return;
    const bh = ((H - B - 2) * c) / max;
    root.append(svg('rect', { x: i * bw, y: H - B - bh, width: Math.max(0.6, bw - 0.4), height: bh, fill: colour }));
  });
  root.append(svg('line', { x1: 0, x2: W, y1: H - B, y2: H - B, stroke: '#999' }));
  for (const [v, x, anchor] of [[h.lo, 1, 'start'], [h.hi, W - 1, 'end']] as const) {
    const t = svg('text', { x, y: H - 3, 'font-size': 9, fill: '#555', 'text-anchor': anchor });
    t.textContent = fmtNum(v);
    root.append(t);
  }
  if (h.nan || h.inf) {
    const t = svg('text', { x: W - 2, y: 10, 'font-size': 9, fill: '#d50000', 'text-anchor': 'end' });
    t.textContent = `NaN ${h.nan} · Inf ${h.inf}`;
    root.append(t);
  }
  return root;
}

// ---- attention head ----

/** One head's q × k weights as a canvas (cell colour by weight over [0, the head's max]). */
export function attentionCanvas(w: number[][], size: number): HTMLCanvasElement {
  const q = w.length, k = w[0]?.length ?? 0;
  const c = document.createElement('canvas');
  const cell = Math.max(1, Math.floor(size / Math.max(q, k, 1)));
  c.width = Math.max(1, cell * k);
  c.height = Math.max(1, cell * q);
  c.className = 'training-attn';
  let max = 0;
  for (const row of w) for (const v of row) if (Number.isFinite(v) && v > max) max = v;
  c.dataset.max = String(max);
  c.dataset.queries = String(q);
  c.dataset.keys = String(k);
  const ctx = c.getContext('2d');
  if (!ctx) return c;
  for (let i = 0; i < q; ++i) {
    for (let j = 0; j < k; ++j) {
      const v = w[i][j];
      ctx.fillStyle = rgbCss(Number.isFinite(v) ? heatColor(max > 0 ? v / max : 0) : kNoDataFill);
      ctx.fillRect(j * cell, i * cell, cell, cell);
    }
  }
  return c;
}

// ---- projection ----

export function projectionSvg(points: { sample: number; x: number; y: number; anomalous: boolean }[]): SVGSVGElement {
  const W = 260, H = 220, P = 10;
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'training-proj' });
  const xs = points.map((p) => p.x), ys = points.map((p) => p.y);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const X = (v: number): number => P + ((W - 2 * P) * (v - x0)) / Math.max(1e-12, x1 - x0);
  const Y = (v: number): number => H - P - ((H - 2 * P) * (v - y0)) / Math.max(1e-12, y1 - y0);
  root.append(svg('rect', { x: 0.5, y: 0.5, width: W - 1, height: H - 1, fill: '#fff', stroke: '#ddd' }));
  // Normal samples first, anomalous ones on top.
  for (const p of [...points].sort((a, b) => Number(a.anomalous) - Number(b.anomalous))) {
    const c = svg('circle', {
      cx: X(p.x).toFixed(2), cy: Y(p.y).toFixed(2), r: p.anomalous ? 5 : 3,
      fill: p.anomalous ? '#d50000' : 'rgba(47,111,222,0.7)', stroke: p.anomalous ? '#fff' : 'none', class: p.anomalous ? 'point anomalous' : 'point',
    });
    c.dataset.sample = String(p.sample);
    c.dataset.x = String(p.x);
    c.dataset.y = String(p.y);
    svgTitle(c, `sample ${p.sample}${p.anomalous ? ' (anomalous)' : ''}: (${fmtNum(p.x)}, ${fmtNum(p.y)})`);
    root.append(c);
  }
  return root;
}
