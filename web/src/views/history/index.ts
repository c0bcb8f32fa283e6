// The history tab: the trend of a model's total time across the runs of the
// run history (`open --history PATH`; GET /api/history/runs and
// /api/history/trend, docs/reference/http-api.md). Offered only when the
// server reads a history (main.ts shows the tab then). One point per
// recorded run, oldest first: the median total time over the run's
// iterations, and a band of its spread (the interquartile range p75 - p25,
// drawn centred on the median); a table of the same runs below. The model
// picker lists the models of the stored runs; the first shown is the one
// recorded last.

import { fmtNs } from '../../base/format';
import type { HistoryRunJson, HistoryTrendJson } from '../../rpc/api';
import type { ViewContext, ViewInstance, ViewMount, ViewPlugin } from '../../core/view';
import { el } from '../../widgets/dom';

export const historyView: ViewPlugin = {
  id: 'history',
  title: 'History',
  slot: 'bottom',
  create: (ctx, mount) => new HistoryTab(ctx, mount),
};

/** Runs asked for to list the models (newest first). */
const kRunsListed = 1000;
const kSvgNs = 'http://www.w3.org/2000/svg';

/** Chart geometry (SVG user units; the SVG scales to the tab's width). */
const kW = 720, kH = 240, kLeft = 70, kRight = 16, kTop = 16, kBottom = 34;

export interface HistoryState {
  models: string[];
  model: string | null;
  trend: HistoryTrendJson | null;
  runs: HistoryRunJson[];
  busy: boolean;
  error: string | null;
}

export class HistoryTab implements ViewInstance {
  readonly state: HistoryState = { models: [], model: null, trend: null, runs: [], busy: false, error: null };
  private readonly picker: HTMLSelectElement;
  private loaded = false;
  private seq = 0;
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: ViewContext, private readonly mount: ViewMount) {
    const label = el('label', undefined, 'model ');
    label.title = 'the model whose runs the trend shows (the run history groups runs by model name)';
    this.picker = el('select');
    this.picker.id = 'history-model';
    label.append(this.picker);
    mount.tools.append(label);
    this.picker.addEventListener('change', () => { this.pending = this.show(this.picker.value); });
    mount.root.classList.add('history-view');
    mount.root.append(el('div', 'tab-message', 'the run history loads when this tab shows'));
  }

  /** Loads the model list when the tab first shows. */
  resize(): void {
    if (this.loaded) return;
    this.loaded = true;
    this.pending = this.load();
  }

  debugHandle(): unknown { return this; }

  /** Resolves once the last request made is answered and drawn. */
  async settled(): Promise<void> {
    let p: Promise<void>;
    do { p = this.pending; await p; } while (p !== this.pending);
  }

  private async load(): Promise<void> {
    this.state.busy = true;
    try {
      const runs = await this.ctx.api.historyRuns(null, kRunsListed);
      if (!runs) { this.message('this server has no run history (model-inspector open --history PATH)'); return; }
      // Newest first: the first model met is the one recorded last.
      const models: string[] = [];
      for (const r of runs.runs) if (!models.includes(r.model)) models.push(r.model);
      this.state.models = models;
      this.state.runs = runs.runs;
      this.picker.textContent = '';
      for (const m of models) {
        const o = el('option', undefined, `${m || '(no model name)'} · ${runs.runs.filter((r) => r.model === m).length} runs`);
        o.value = m;
        this.picker.append(o);
      }
      if (!models.length) { this.message(`the run history ${runs.history} holds no runs yet`); return; }
      await this.show(models[0]);
    } catch (e) {
      this.message(`run history: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.state.busy = false;
    }
  }

  private async show(model: string): Promise<void> {
    const seq = ++this.seq;
    this.state.model = model;
    this.picker.value = model;
    this.state.busy = true;
    try {
      const trend = await this.ctx.api.historyTrend(model);
      if (seq !== this.seq) return;
      this.state.trend = trend;
      this.state.error = null;
      this.draw(trend);
    } catch (e) {
      if (seq === this.seq) this.message(`trend of ${model}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      if (seq === this.seq) this.state.busy = false;
    }
  }

  private message(text: string): void {
    this.state.error = text;
    this.mount.root.textContent = '';
    this.mount.root.append(el('div', 'tab-message', text));
  }

  private draw(trend: HistoryTrendJson): void {
    const root = this.mount.root;
    root.textContent = '';
    const timed = trend.points.filter((p) => p.total_median_ns !== null);
    root.append(el('div', 'history-title',
      `${trend.model}: total time per run (median over its iterations; band: spread p25–p75) · ${trend.points.length} runs, ${timed.length} with a trace`));
    if (timed.length) root.append(trendSvg(trend));
    else root.append(el('div', 'tab-message', 'no run of this model has a trace: no times to draw'));
    const byId = new Map(this.state.runs.map((r) => [r.id, r]));
    const table = el('table', 'history-table');
    const head = el('tr');
    for (const h of ['run', 'recorded', 'label', 'commit', 'total (median)', 'spread', 'nodes (framework / compiled)']) head.append(el('th', undefined, h));
    table.append(head);
    for (const p of [...trend.points].reverse()) {
      const r = byId.get(p.run_id);
      const tr = el('tr');
      tr.dataset.run = String(p.run_id);
      const nodes = r ? `${r.framework_nodes ?? '–'} / ${r.compiled_nodes ?? '–'}` : '';
      for (const v of [String(p.run_id), p.created_utc, p.label, p.git_commit.slice(0, 12),
        p.total_median_ns === null ? '–' : fmtNs(p.total_median_ns), p.total_spread_ns === null ? '–' : fmtNs(p.total_spread_ns), nodes]) {
        tr.append(el('td', undefined, v));
      }
      table.append(tr);
    }
    root.append(table);
  }
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(kSvgNs, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/**
 * The chart: x = the runs in the order recorded (evenly spaced), y = time
 * from 0 to the largest median + half spread; the band joins median ±
 * spread / 2 of consecutive timed runs, the line their medians, a dot per
 * run with its figures on hover.
 */
export function trendSvg(trend: HistoryTrendJson): SVGSVGElement {
  const pts = trend.points;
  const timed = pts.map((p, i) => ({ p, i })).filter(({ p }) => p.total_median_ns !== null);
  const hi = Math.max(...timed.map(({ p }) => p.total_median_ns! + (p.total_spread_ns ?? 0) / 2));
  const yMax = hi > 0 ? hi * 1.1 : 1;
  const X = (i: number): number => kLeft + (pts.length === 1 ? (kW - kLeft - kRight) / 2 : (i * (kW - kLeft - kRight)) / (pts.length - 1));
  const Y = (ns: number): number => kTop + (kH - kTop - kBottom) * (1 - ns / yMax);
  const root = svg('svg', { viewBox: `0 0 ${kW} ${kH}`, class: 'history-chart', role: 'img' });
  root.setAttribute('aria-label', `total time of ${trend.model} across ${pts.length} runs`);
  // Axes and four gridlines with their times.
  for (let k = 0; k <= 4; ++k) {
    const v = (yMax * k) / 4, y = Y(v);
    root.append(svg('line', { x1: kLeft, x2: kW - kRight, y1: y, y2: y, stroke: k ? '#e4e4e4' : '#888', 'stroke-width': 1 }));
    const t = svg('text', { x: kLeft - 6, y: y + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#555' });
    t.textContent = fmtNs(Math.round(v));
    root.append(t);
  }
  // The spread band: upper edge left to right, lower edge back.
  const upper = timed.map(({ p, i }) => `${X(i)},${Y(p.total_median_ns! + (p.total_spread_ns ?? 0) / 2)}`);
  const lower = timed.map(({ p, i }) => `${X(i)},${Y(Math.max(0, p.total_median_ns! - (p.total_spread_ns ?? 0) / 2))}`).reverse();
  root.append(svg('polygon', { points: [...upper, ...lower].join(' '), fill: 'rgba(47,111,222,0.18)', stroke: 'none', class: 'history-band' }));
  root.append(svg('polyline', { points: timed.map(({ p, i }) => `${X(i)},${Y(p.total_median_ns!)}`).join(' '), fill: 'none', stroke: '#2f6fde', 'stroke-width': 2, class: 'history-line' }));
  for (const { p, i } of timed) {
    const c = svg('circle', { cx: X(i), cy: Y(p.total_median_ns!), r: 4, fill: '#2f6fde', class: 'history-point' });
    c.dataset.run = String(p.run_id);
    const title = svg('title', {});
    title.textContent = `run ${p.run_id}${p.label ? ` (${p.label})` : ''}${p.git_commit ? ` @ ${p.git_commit.slice(0, 12)}` : ''} · ${p.created_utc}\n` +
      `total ${fmtNs(p.total_median_ns!)} (median), spread ${fmtNs(p.total_spread_ns ?? 0)}`;
    c.append(title);
    root.append(c);
  }
  // Run ids under the x axis (every one when they fit, else about ten).
  const step = Math.max(1, Math.ceil(pts.length / 10));
  for (let i = 0; i < pts.length; i += step) {
    const t = svg('text', { x: X(i), y: kH - kBottom + 16, 'text-anchor': 'middle', 'font-size': 11, fill: '#555' });
    t.textContent = `#${pts[i].run_id}`;
    root.append(t);
  }
  const cap = svg('text', { x: (kLeft + kW - kRight) / 2, y: kH - 4, 'text-anchor': 'middle', 'font-size': 11, fill: '#777' });
  cap.textContent = 'runs, oldest → newest';
  root.append(cap);
  return root;
}
