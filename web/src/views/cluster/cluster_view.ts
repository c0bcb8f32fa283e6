// The cluster view's content (GET /api/cluster, the report of a
// distributed job's ranks): the rank × step heat map of one metric (step
// time, exposed communication, idle, compute), the rank × rank
// communication matrix (bytes or bandwidth), the collectives ranked by
// exposed time with the alignment of the chosen one (each rank's arrival,
// wait and transfer on a shared time axis, the last rank and the arrival
// skew marked), the slow ranks with their reasons, and the findings.
// Everything is drawn from the report in the browser; what reaches the
// rest of the UI goes through `ClusterHost` (index.ts): opening a rank at
// a step, selecting a collective.

import { fmtBytes, fmtNs, pct } from '../../base/format';
import { heatGradientCss, type Rgb } from '../../base/palette';
import type { Stats } from '../../base/stats';
import type { ClusterCollectiveJson, ClusterReportJson, ClusterStepJson, ClusterStepRankJson } from '../../rpc/api';
import { el } from '../../widgets/dom';
import {
  cellAt, cellRect, drawAlignment, drawGrid, gridRange, labelStride, type Grid, type GridPlacement,
} from './cluster_draw';

export type HeatMetric = 'wall' | 'exposed' | 'idle' | 'compute';
export type MatrixMeasure = 'bytes' | 'bandwidth';

export const kHeatMetrics: { id: HeatMetric; title: string; field: keyof ClusterStepRankJson }[] = [
  { id: 'wall', title: 'step time', field: 'wall_ns' },
  { id: 'exposed', title: 'exposed communication', field: 'exposed_communication_ns' },
  { id: 'idle', title: 'idle', field: 'idle_ns' },
  { id: 'compute', title: 'compute', field: 'compute_ns' },
];

/** What the view asks of the rest of the UI. */
export interface ClusterHost {
  /** Opens rank `rank` as a run and shows its timeline at step `step`. */
  openRankStep(rank: number, step: ClusterStepJson): Promise<void>;
  /** Collective `index` with its per-rank rows (the report the view is given may leave them out). */
  collective(index: number): Promise<ClusterCollectiveJson>;
  /** Opens (or reuses) the run of the collective's ranks and highlights its kernels. */
  selectCollective(c: ClusterCollectiveJson): Promise<void>;
}

export interface ClusterViewState {
  metric: HeatMetric;
  matrixMeasure: MatrixMeasure;
  /** The heat map cell last clicked (rank, step index), or null. */
  cell: { rank: number; step: number } | null;
  /** The rank marked across the pictures (a slow rank or a finding picked), or -1. */
  rank: number;
  /** Index into report.collectives of the collective shown, or -1. */
  collective: number;
  /** A host action in progress. */
  busy: boolean;
  /** What the last action said (an error, or what it opened). */
  message: string;
}

/** The blue ramp of the communication matrix (light → dark blue), distinct from the heat map's. */
function blueColor(t: number): Rgb {
  const a: Rgb = [0.93, 0.96, 1], b: Rgb = [0.03, 0.19, 0.42];
  const x = Math.min(1, Math.max(0, t));
  return [a[0] + (b[0] - a[0]) * x, a[1] + (b[1] - a[1]) * x, a[2] + (b[2] - a[2]) * x];
}

const kHeatLeft = 62, kHeatTop = 22, kHeatRight = 8, kHeatBottom = 6;

export class ClusterView {
  readonly state: ClusterViewState = { metric: 'wall', matrixMeasure: 'bytes', cell: null, rank: -1, collective: -1, busy: false, message: '' };
  /** Ranks in row order (ascending). */
  readonly ranks: number[];
  private readonly rowOf = new Map<number, number>();
  private readonly heatCanvas: HTMLCanvasElement;
  private readonly heatBox: HTMLElement;
  private readonly heatLegend: HTMLElement;
  private readonly tooltip: HTMLElement;
  private readonly matrixCanvas: HTMLCanvasElement;
  private readonly matrixNote: HTMLElement;
  private readonly alignCanvas: HTMLCanvasElement;
  private readonly alignInfo: HTMLElement;
  private readonly status: HTMLElement;
  private readonly collectiveRows: HTMLTableRowElement[] = [];
  private heat: { grid: Grid; place: GridPlacement; range: { min: number; max: number } } | null = null;
  private matrix: { grid: Grid; place: GridPlacement; ranks: number[]; range: { min: number; max: number } } | null = null;
  private frame = 0;
  private readonly dirty = new Set<'heat' | 'matrix' | 'align'>();

  constructor(private readonly root: HTMLElement, tools: HTMLElement, readonly report: ClusterReportJson,
    private readonly host: ClusterHost, private readonly stats: Stats) {
    this.ranks = report.ranks.map((r) => r.rank).sort((a, b) => a - b);
    this.ranks.forEach((r, i) => this.rowOf.set(r, i));
    root.textContent = '';
    root.classList.add('cluster-view');

    // Tools: the heat map's metric, the matrix's measure.
    const metric = el('select');
    metric.id = 'cluster-metric';
    metric.title = 'what the rank × step heat map shows';
    for (const m of kHeatMetrics) {
      const o = el('option', undefined, m.title);
      o.value = m.id;
      metric.append(o);
    }
    metric.addEventListener('change', () => this.setMetric(metric.value as HeatMetric));
    const measure = el('select');
    measure.id = 'cluster-matrix-measure';
    measure.title = 'what the communication matrix shows';
    for (const [v, t] of [['bytes', 'bytes'], ['bandwidth', 'bandwidth']]) {
      const o = el('option', undefined, t);
      o.value = v;
      measure.append(o);
    }
    measure.addEventListener('change', () => this.setMatrixMeasure(measure.value as MatrixMeasure));
    const l1 = el('label', undefined, 'heat map ');
    l1.append(metric);
    const l2 = el('label', undefined, 'matrix ');
    l2.append(measure);
    tools.append(l1, l2);

    this.status = el('div', 'cluster-status muted');
    this.status.id = 'cluster-status';
    root.append(this.head(), this.status);

    const heat = el('section', 'cluster-heat');
    const heatTitle = el('h3', undefined, 'Ranks × steps');
    this.heatLegend = el('span', 'cluster-legend');
    heatTitle.append(this.heatLegend);
    this.heatBox = el('div', 'cluster-canvas-box');
    this.heatCanvas = el('canvas');
    this.heatCanvas.id = 'cluster-heat';
    this.heatCanvas.setAttribute('aria-label', 'rank by step heat map');
    this.tooltip = el('div', 'cluster-tooltip');
    this.tooltip.hidden = true;
    this.heatBox.append(this.heatCanvas, this.tooltip);
    heat.append(heatTitle, this.heatBox, el('div', 'muted cluster-hint', 'click a cell: that rank\'s timeline at that step'));
    // Rows: 14 px a rank up to 30 ranks, then the box keeps 420 px and a pixel row holds several ranks.
    this.heatBox.style.height = `${Math.min(420, Math.max(120, this.ranks.length * 14 + kHeatTop + kHeatBottom))}px`;

    const mat = el('section', 'cluster-matrix');
    mat.append(el('h3', undefined, 'Communication matrix (source rank → destination rank)'));
    const matBox = el('div', 'cluster-canvas-box cluster-square');
    this.matrixCanvas = el('canvas');
    this.matrixCanvas.id = 'cluster-matrix';
    matBox.append(this.matrixCanvas);
    this.matrixNote = el('div', 'muted cluster-hint');
    mat.append(matBox, this.matrixNote);

    const pics = el('div', 'cluster-row');
    pics.append(heat, mat);

    const coll = el('section', 'cluster-collectives');
    coll.append(el('h3', undefined, `Collectives by exposed time (${report.collectives.length} of ${report.collective_instances} instances listed)`));
    coll.append(this.collectiveTable());
    const align = el('section', 'cluster-align');
    align.append(el('h3', undefined, 'Collective alignment'));
    this.alignInfo = el('div', 'cluster-align-info muted', 'pick a collective in the list');
    const alignBox = el('div', 'cluster-canvas-box');
    alignBox.style.height = `${Math.min(360, Math.max(120, this.ranks.length * 18 + 52))}px`;
    this.alignCanvas = el('canvas');
    this.alignCanvas.id = 'cluster-align';
    alignBox.append(this.alignCanvas);
    align.append(this.alignInfo, alignBox);
    const colls = el('div', 'cluster-row');
    colls.append(coll, align);

    const slow = el('section', 'cluster-slow');
    slow.append(el('h3', undefined, 'Slow ranks'), this.slowRanks());
    const findings = el('section', 'cluster-findings');
    findings.append(el('h3', undefined, 'Findings'), this.findings());
    const lists = el('div', 'cluster-row');
    lists.append(slow, findings);

    root.append(pics, colls, lists);
    this.buildHeat();
    this.buildMatrix();
    this.heatCanvas.addEventListener('mousemove', (e) => this.hover(e));
    this.heatCanvas.addEventListener('mouseleave', () => { this.tooltip.hidden = true; });
    this.heatCanvas.addEventListener('click', (e) => void this.clickHeat(e));
    new ResizeObserver(() => this.resize()).observe(root);
  }

  /** The cluster in one line: world size, ranks, missing ranks, steps, collectives, hosts and clock skew. */
  private head(): HTMLElement {
    const r = this.report;
    const d = el('div', 'cluster-head');
    d.id = 'cluster-head';
    const parts = [
      `world size ${r.world_size ?? '?'}${r.world_size_from ? ` (from ${r.world_size_from})` : ''}`,
      `${r.ranks.length} rank${r.ranks.length === 1 ? '' : 's'} read`,
      r.missing_ranks.length ? `missing ranks: ${r.missing_ranks.join(', ')}` : 'no rank missing',
      `${r.steps.length} step${r.steps.length === 1 ? '' : 's'}`,
      `${r.collective_instances} collective instance${r.collective_instances === 1 ? '' : 's'}`,
    ];
    if (r.clock.hosts > 0) parts.push(`${r.clock.hosts} host${r.clock.hosts === 1 ? '' : 's'}`);
    d.textContent = parts.join(' · ');
    if (r.missing_ranks.length) d.classList.add('cluster-missing');
    if (r.clock.note) d.title = r.clock.note;
    return d;
  }

  // ---- heat map -------------------------------------------------------

  private metricField(): keyof ClusterStepRankJson {
    return kHeatMetrics.find((m) => m.id === this.state.metric)!.field;
  }

  private buildHeat(): void {
    const rows = this.ranks.length, cols = this.report.steps.length;
    const values = new Float64Array(rows * cols).fill(NaN);
    const field = this.metricField();
    this.report.steps.forEach((s, c) => {
      for (const r of s.ranks) {
        const row = this.rowOf.get(r.rank);
        if (row !== undefined) values[row * cols + c] = Number(r[field]);
      }
    });
    const grid = { rows, cols, values };
    const g = gridRange(grid);
    this.heat = { grid, place: { x: 0, y: 0, w: 0, h: 0, rows, cols }, range: { min: g.min, max: g.max } };
    const title = kHeatMetrics.find((m) => m.id === this.state.metric)!.title;
    this.heatLegend.textContent = '';
    const bar = el('span', 'cluster-ramp');
    bar.style.background = heatGradientCss();
    this.heatLegend.append(` ${title}: ${fmtNs(g.min)} `, bar, ` ${fmtNs(g.max)}`);
    this.heatLegend.dataset.min = String(g.min);
    this.heatLegend.dataset.max = String(g.max);
  }

  setMetric(m: HeatMetric): void {
    if (m === this.state.metric) return;
    this.state.metric = m;
    const sel = document.getElementById('cluster-metric') as HTMLSelectElement | null;
    if (sel) sel.value = m;
    this.buildHeat();
    this.draw(['heat']);
  }

  /** Sizes a canvas to its box at the device pixel ratio; its context in CSS px. */
  private fit(canvas: HTMLCanvasElement): { ctx: CanvasRenderingContext2D; w: number; h: number; dpr: number } | null {
    const box = canvas.parentElement!;
    const w = box.clientWidth, h = box.clientHeight;
    if (w <= 0 || h <= 0) return null;
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
      canvas.style.width = `${w}px`;
      canvas.style.height = `${h}px`;
    }
    const ctx = canvas.getContext('2d')!;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return { ctx, w, h, dpr };
  }

  private drawHeat(): void {
    const f = this.fit(this.heatCanvas);
    if (!f || !this.heat) return;
    const { ctx, w, h, dpr } = f;
    const { grid, range } = this.heat;
    ctx.clearRect(0, 0, w, h);
    const place: GridPlacement = {
      x: kHeatLeft, y: kHeatTop, w: Math.max(10, w - kHeatLeft - kHeatRight), h: Math.max(10, h - kHeatTop - kHeatBottom),
      rows: grid.rows, cols: grid.cols,
    };
    this.heat.place = place;
    if (!grid.rows || !grid.cols) {
      ctx.fillStyle = '#666';
      ctx.font = '12px system-ui, sans-serif';
      ctx.fillText('no steps in the ranks\' profiles', kHeatLeft, kHeatTop + 16);
      return;
    }
    const ms = drawGrid(ctx, dpr, grid, place, range);
    this.stats.count('cluster.heat_draws');
    this.stats.sample('cluster.heat_ms', ms);
    // Labels: ranks on the left, steps on top.
    ctx.fillStyle = '#444';
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    const rowH = place.h / grid.rows, colW = place.w / grid.cols;
    const rs = labelStride(grid.rows, place.h, 13);
    for (let r = 0; r < grid.rows; r += rs) ctx.fillText(`rank ${this.ranks[r]}`, kHeatLeft - 5, place.y + (r + 0.5) * rowH);
    ctx.textAlign = 'center';
    const cs = labelStride(grid.cols, place.w, 54);
    for (let c = 0; c < grid.cols; c += cs) {
      const s = this.report.steps[c];
      ctx.fillText(s.step !== null ? `step ${s.step}` : s.label || `#${c}`, place.x + (c + 0.5) * colW, kHeatTop / 2);
    }
    // The marked rank (a band) and the clicked cell (an outline).
    if (this.state.rank >= 0 && this.rowOf.has(this.state.rank)) {
      const row = this.rowOf.get(this.state.rank)!;
      const y = place.y + row * rowH;
      ctx.strokeStyle = '#2f6fde';
      ctx.lineWidth = 2;
      ctx.strokeRect(place.x - 1, y - 1, place.w + 2, Math.max(1, rowH) + 2);
    }
    if (this.state.cell && this.rowOf.has(this.state.cell.rank)) {
      const rc = cellRect(place, this.rowOf.get(this.state.cell.rank)!, this.state.cell.step);
      ctx.strokeStyle = '#ff6a00';
      ctx.lineWidth = 2;
      ctx.strokeRect(rc.x - 1, rc.y - 1, rc.w + 2, rc.h + 2);
    }
  }

  /**
   * The rank under a heat map point: when a pixel row holds several ranks,
   * the one with the largest value in that step (the one drawn).
   */
  private cellUnder(x: number, y: number): { rank: number; step: number } | null {
    if (!this.heat) return null;
    const { place, grid } = this.heat;
    const c = cellAt(place, x, y);
    if (!c) return null;
    const perPx = grid.rows / place.h;
    let row = c.row;
    if (perPx > 1) {
      const py = Math.floor(y - place.y);
      const r0 = Math.floor(py * perPx), r1 = Math.min(grid.rows - 1, Math.ceil((py + 1) * perPx) - 1);
      let best = -Infinity;
      for (let r = r0; r <= r1; r++) {
        const v = grid.values[r * grid.cols + c.col];
        if (Number.isFinite(v) && v > best) { best = v; row = r; }
      }
    }
    return { rank: this.ranks[row], step: c.col };
  }

  private stepRank(rank: number, step: number): ClusterStepRankJson | undefined {
    return this.report.steps[step]?.ranks.find((r) => r.rank === rank);
  }

  private hover(e: MouseEvent): void {
    const b = this.heatCanvas.getBoundingClientRect();
    const c = this.cellUnder(e.clientX - b.left, e.clientY - b.top);
    if (!c) { this.tooltip.hidden = true; return; }
    const s = this.report.steps[c.step], r = this.stepRank(c.rank, c.step);
    this.tooltip.textContent = r
      ? `rank ${c.rank} · ${s.label || `step ${s.step}`}: step ${fmtNs(r.wall_ns)}, compute ${fmtNs(r.compute_ns)}, ` +
        `exposed comm ${fmtNs(r.exposed_communication_ns)}, idle ${fmtNs(r.idle_ns)}`
      : `rank ${c.rank} · ${s.label}: no figures`;
    this.tooltip.hidden = false;
    const x = e.clientX - b.left + 12, y = e.clientY - b.top + 12;
    this.tooltip.style.left = `${Math.min(x, b.width - 320)}px`;
    this.tooltip.style.top = `${y}px`;
  }

  private async clickHeat(e: MouseEvent): Promise<void> {
    const b = this.heatCanvas.getBoundingClientRect();
    const c = this.cellUnder(e.clientX - b.left, e.clientY - b.top);
    if (!c || !this.stepRank(c.rank, c.step)) return;
    await this.openCell(c.rank, c.step);
  }

  /** Opens rank `rank`'s timeline at step index `step` (what a cell click does). */
  async openCell(rank: number, step: number): Promise<void> {
    this.state.cell = { rank, step };
    this.draw(['heat']);
    await this.act(`opening rank ${rank} at ${this.report.steps[step].label || `step ${step}`}…`,
      () => this.host.openRankStep(rank, this.report.steps[step]));
  }

  /** The CSS centre of a heat map cell (for the tests), relative to the page. */
  cellCenter(rank: number, step: number): { x: number; y: number } | null {
    const row = this.rowOf.get(rank);
    if (!this.heat || row === undefined) return null;
    const rc = cellRect(this.heat.place, row, step), b = this.heatCanvas.getBoundingClientRect();
    return { x: b.left + rc.x + rc.w / 2, y: b.top + rc.y + rc.h / 2 };
  }

  /** The heat map's geometry and colour range (for the tests). */
  heatInfo(): { place: GridPlacement; min: number; max: number } | null {
    return this.heat && { place: { ...this.heat.place }, min: this.heat.range.min, max: this.heat.range.max };
  }

  // ---- communication matrix ------------------------------------------

  private buildMatrix(): void {
    const entries = this.report.matrix;
    // msprof-analyze writes per op type a "-total" statistic beside top / middle / bottom ones: the totals
    // alone, when there are any, so that nothing counts twice.
    const totals = entries.filter((m) => m.statistic.endsWith('-total'));
    const use = totals.length ? totals : entries;
    const rankSet = new Set<number>(this.ranks);
    for (const m of use) { rankSet.add(m.src_rank); rankSet.add(m.dst_rank); }
    const ranks = [...rankSet].filter((r) => r >= 0).sort((a, b) => a - b);
    const index = new Map(ranks.map((r, i) => [r, i]));
    const n = ranks.length;
    const bytes = new Float64Array(n * n).fill(NaN), ns = new Float64Array(n * n).fill(0);
    for (const m of use) {
      const i = index.get(m.src_rank), j = index.get(m.dst_rank);
      if (i === undefined || j === undefined) continue;
      const k = i * n + j;
      bytes[k] = (Number.isFinite(bytes[k]) ? bytes[k] : 0) + Math.max(0, m.size_bytes);
      ns[k] += Math.max(0, m.transit_ns);
    }
    const values = this.state.matrixMeasure === 'bytes'
      ? bytes
      : bytes.map((b, k) => (Number.isFinite(b) && ns[k] > 0 ? b / ns[k] : NaN)); // bytes / ns = GB/s
    const grid = { rows: n, cols: n, values };
    const g = gridRange(grid);
    this.matrix = { grid, ranks, place: { x: 0, y: 0, w: 0, h: 0, rows: n, cols: n }, range: { min: g.min, max: g.max } };
    const inGroup = use.some((m) => !m.global);
    const fmt = (v: number): string => (this.state.matrixMeasure === 'bytes' ? fmtBytes(v) : `${v.toFixed(2)} GB/s`);
    this.matrixNote.textContent = !use.length
      ? 'the ranks\' profiles have no communication matrix (communication_matrix.json / CommAnalyzerMatrix)'
      : `${use.length} links${totals.length ? ' (the "-total" statistics)' : ''}; ${this.state.matrixMeasure} ${fmt(g.min)} to ${fmt(g.max)}` +
        (inGroup ? '; some ranks are in-group ranks (no parallel_group_info maps them to global ranks)' : '');
  }

  setMatrixMeasure(m: MatrixMeasure): void {
    if (m === this.state.matrixMeasure) return;
    this.state.matrixMeasure = m;
    const sel = document.getElementById('cluster-matrix-measure') as HTMLSelectElement | null;
    if (sel) sel.value = m;
    this.buildMatrix();
    this.draw(['matrix']);
  }

  private drawMatrix(): void {
    const f = this.fit(this.matrixCanvas);
    if (!f || !this.matrix) return;
    const { ctx, w, h, dpr } = f;
    ctx.clearRect(0, 0, w, h);
    const { grid, ranks } = this.matrix;
    if (!grid.rows) return;
    const side = Math.max(10, Math.min(w - 50, h - 30));
    const place: GridPlacement = { x: 44, y: 22, w: side, h: side, rows: grid.rows, cols: grid.cols };
    this.matrix.place = place;
    drawGrid(ctx, dpr, grid, place, this.matrix.range, blueColor);
    ctx.fillStyle = '#444';
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    const st = labelStride(grid.rows, side, 13);
    ctx.textAlign = 'right';
    for (let r = 0; r < grid.rows; r += st) ctx.fillText(String(ranks[r]), place.x - 4, place.y + ((r + 0.5) * side) / grid.rows);
    ctx.textAlign = 'center';
    const cst = labelStride(grid.cols, side, 8 + 7 * String(ranks[ranks.length - 1]).length);
    for (let c = 0; c < grid.cols; c += cst) ctx.fillText(String(ranks[c]), place.x + ((c + 0.5) * side) / grid.cols, place.y - 9);
    if (this.state.rank >= 0) {
      const i = ranks.indexOf(this.state.rank);
      if (i >= 0) {
        ctx.strokeStyle = '#2f6fde';
        ctx.lineWidth = 2;
        ctx.strokeRect(place.x, place.y + (i * side) / grid.rows, side, Math.max(1, side / grid.rows));
      }
    }
  }

  // ---- collectives ----------------------------------------------------

  private collectiveTable(): HTMLElement {
    const box = el('div', 'cluster-table-box');
    const table = el('table', 'cluster-table');
    table.id = 'cluster-collectives';
    const head = el('tr');
    for (const t of ['collective', 'type', 'step', 'group', 'bytes', 'arrival skew', 'last rank', 'exposed', 'bus bw', 'of peak']) head.append(el('th', undefined, t));
    table.append(head);
    this.report.collectives.forEach((c, i) => {
      const tr = el('tr');
      tr.dataset.index = String(i);
      const name = el('td', 'cluster-name', c.name);
      name.title = `${c.name} (matched by ${c.matched_by})`;
      tr.append(
        name, el('td', undefined, c.type), el('td', undefined, c.step_label || (c.step !== null ? String(c.step) : '')),
        el('td', 'cluster-group', c.group), el('td', 'num', c.bytes !== null ? fmtBytes(c.bytes) : '–'),
        el('td', 'num', fmtNs(c.arrival_skew_ns)), el('td', 'num', c.last_rank !== null ? String(c.last_rank) : '–'),
        el('td', 'num', fmtNs(c.exposed_ns)), el('td', 'num', c.busbw_gbps !== null ? `${c.busbw_gbps.toFixed(2)} GB/s` : '–'),
        el('td', 'num', c.efficiency !== null ? pct(c.efficiency) : '–'),
      );
      tr.addEventListener('click', () => void this.selectCollective(i));
      this.collectiveRows.push(tr);
      table.append(tr);
    });
    if (!this.report.collectives.length) box.append(el('div', 'muted', 'no collective matched across ranks'));
    box.append(table);
    return box;
  }

  /** Shows collective `i`'s alignment and asks the host to highlight it on the ranks' timelines. */
  async selectCollective(i: number): Promise<void> {
    if (!this.report.collectives[i]) return;
    this.state.collective = i;
    for (const [k, tr] of this.collectiveRows.entries()) tr.classList.toggle('selected', k === i);
    this.collectiveRows[i]?.scrollIntoView({ block: 'nearest' });
    let c = this.report.collectives[i];
    if (!c.ranks.length) {
      // Its per-rank rows, asked for now (kept in the report for the next time).
      try {
        c = this.report.collectives[i] = await this.host.collective(i);
      } catch (e) {
        this.status.textContent = `collective ${i}: ${(e as Error).message}`;
        this.status.classList.add('error');
        return;
      }
      if (this.state.collective !== i) return;
    }
    const last = c.ranks.find((r) => r.rank === c.last_rank);
    const by = last && (last.node_name || last.issued_by);
    this.alignInfo.textContent =
      `${c.name} · ${c.type} · ${c.ranks.length} ranks · last: rank ${c.last_rank ?? '?'} (skew ${fmtNs(c.arrival_skew_ns)})` +
      ` · transfer ${fmtNs(c.transfer_ns)}` + (c.busbw_gbps !== null ? ` · bus bw ${c.busbw_gbps.toFixed(2)} GB/s` : '') +
      (c.link_type ? ` on ${c.link_type}` : '') + (by ? ` · issued by ${by}` : '');
    this.alignInfo.classList.remove('muted');
    this.draw(['align']);
    await this.act(`opening the ranks of ${c.name}…`, () => this.host.selectCollective(c));
  }

  private drawAlign(): void {
    const c = this.report.collectives[this.state.collective];
    const f = this.fit(this.alignCanvas);
    if (!f) return;
    if (!c || !c.ranks.length) { f.ctx.clearRect(0, 0, f.w, f.h); return; }
    const bars = c.ranks.slice().sort((a, b) => a.rank - b.rank).map((r) => ({ rank: r.rank, start: r.start_ns, end: r.end_ns, last: r.rank === c.last_rank }));
    drawAlignment(f.ctx, f.w, f.h, bars, c.arrival_skew_ns);
  }

  // ---- slow ranks and findings ----------------------------------------

  private slowRanks(): HTMLElement {
    const box = el('div', 'cluster-list');
    box.id = 'cluster-slow';
    if (!this.report.slow_ranks.length) box.append(el('div', 'muted', 'no rank arrives last at collectives more often than the others'));
    for (const s of this.report.slow_ranks) {
      const d = el('div', 'cluster-item');
      d.dataset.rank = String(s.rank);
      d.append(el('div', 'cluster-item-head',
        `rank ${s.rank}: last at ${s.last_arrivals} of ${s.collectives} collectives (${pct(s.last_arrival_share)}), ` +
        `late by ${fmtNs(s.mean_lateness_ns)} on average; the others waited ${fmtNs(s.others_wait_ns)}`));
      const ul = el('ul');
      for (const r of s.reasons) {
        const li = el('li', undefined, r.message);
        li.dataset.kind = r.kind;
        const ops = r.op_types.slice(0, 3).map((o) => `${o.op_type} +${fmtNs(o.excess_ns)}`);
        const nodes = r.nodes.slice(0, 3).map((n) => `${n.name} +${fmtNs(n.excess_ns)}`);
        if (ops.length || nodes.length) li.append(el('div', 'muted', [...ops, ...nodes].join(' · ')));
        ul.append(li);
      }
      d.append(ul);
      d.addEventListener('click', () => this.markRank(s.rank));
      box.append(d);
    }
    return box;
  }

  private findings(): HTMLElement {
    const box = el('div', 'cluster-list');
    box.id = 'cluster-findings';
    if (!this.report.findings.length) box.append(el('div', 'muted', 'no cluster rule fired'));
    for (const f of this.report.findings) {
      const d = el('div', `cluster-item severity-${f.severity}`);
      d.dataset.rule = f.rule;
      d.append(el('div', 'cluster-item-head', `${f.severity}: ${f.title}`), el('div', undefined, f.message));
      if (f.suggestion) d.append(el('div', 'muted', f.suggestion));
      d.addEventListener('click', () => {
        if (f.ranks.length) this.markRank(f.ranks[0]);
        if (f.collectives.length) void this.selectCollective(f.collectives[0]);
      });
      box.append(d);
    }
    return box;
  }

  /** Marks a rank across the heat map and the matrix. */
  markRank(rank: number): void {
    this.state.rank = this.state.rank === rank ? -1 : rank;
    for (const d of this.root.querySelectorAll<HTMLElement>('#cluster-slow .cluster-item')) d.classList.toggle('selected', Number(d.dataset.rank) === this.state.rank);
    this.draw(['heat', 'matrix']);
  }

  // ---- common ---------------------------------------------------------

  private async act(what: string, f: () => Promise<void>): Promise<void> {
    this.state.busy = true;
    this.state.message = what;
    this.status.textContent = what;
    this.status.classList.remove('error');
    try {
      await f();
      this.state.message = '';
      this.status.textContent = '';
    } catch (e) {
      this.state.message = (e as Error).message;
      this.status.textContent = (e as Error).message;
      this.status.classList.add('error');
    } finally {
      this.state.busy = false;
    }
  }

  /** Redraws the pictures named (all by default) on the next animation frame. */
  draw(what: readonly ('heat' | 'matrix' | 'align')[] = ['heat', 'matrix', 'align']): void {
    for (const w of what) this.dirty.add(w);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const d = new Set(this.dirty);
      this.dirty.clear();
      if (d.has('heat')) this.drawHeat();
      if (d.has('matrix')) this.drawMatrix();
      if (d.has('align')) this.drawAlign();
    });
  }

  resize(): void { this.draw(); }

  /** Whether the pictures are drawn (no frame pending). */
  settled(): boolean { return this.frame === 0; }
}

export { kHeatLeft };
export type { ClusterCollectiveJson };
