// The Training view (web/README.md "Training view"; docs/guides/
// ui-training.md): a training snapshot's diagnosis and what the monitor
// kept around the anomaly. From top to bottom: the model health score and
// the anomaly timeline (loss, gradient norm, trigger marks, the captured
// window); the health heat map layer × step (a row click selects the
// layer's graph node; a node selected elsewhere outlines its row); the
// per-layer sparklines; for a captured step (the step chooser) the
// activation histograms per layer, the attention maps per head, the
// embedding projection (PCA / t-SNE) and the normal vs anomalous sample;
// and the ranked causes with their fixes and the root-cause chain (also
// marked on the graph through the state: producer red, propagators amber).

import type { AppState } from '../../core/state';
import { runUsable } from '../../core/state';
import type { ViewContext } from '../../core/view';
import {
  isId, kSparkMetrics, layerNode, seriesValues, TrainingApi, type DiagCauseJson, type TrainingDiagnosisJson, type TrainingOverviewJson,
  type TrainingSamplesJson, type TrainingSeriesJson,
} from '../../rpc/training_api';
import { el } from '../../widgets/dom';
import { sparkline } from '../../widgets/sparkline';
import {
  attentionCanvas, drawHeat, fmtNum, heatCellAt, heatCellCenter, heatGeometry, histogramSvg, projectionSvg, timelineSvg, type HeatGeometry,
} from './training_draw';

/** One heat map row: a layer of the diagnosis. */
export interface TrainingRow { layer: number; name: string; type: string; node: number | null; score: number | null; flags: string[] }

export interface TrainingViewState {
  run: number;
  status: 'idle' | 'loading' | 'ready' | 'error';
  error: string | null;
  overview: TrainingOverviewJson | null;
  diagnosis: TrainingDiagnosisJson | null;
  rows: TrainingRow[];
  /** The heat map's selected row (-1: none). */
  selectedRow: number;
  /** The captured step the tensor views show (null: none captured). */
  step: number | null;
  attentionLayer: number | null;
  projectionLayer: number | null;
  method: string;
  series: Record<number, TrainingSeriesJson>;
  samples: TrainingSamplesJson | null;
  /** Copies made by a cause's copy button (the last one). */
  copied: string | null;
}

const kLabelW = 190;

export class TrainingView {
  readonly state: TrainingViewState = {
    run: -1, status: 'idle', error: null, overview: null, diagnosis: null, rows: [], selectedRow: -1, step: null,
    attentionLayer: null, projectionLayer: null, method: 'pca', series: {}, samples: null, copied: null,
  };
  private readonly api: TrainingApi;
  private readonly root: HTMLElement;
  private readonly stepPick: HTMLSelectElement;
  private heatCanvas: HTMLCanvasElement | null = null;
  private heatGeom: HeatGeometry | null = null;
  private tooltip: HTMLElement | null = null;
  private sparkBody: HTMLElement | null = null;
  private stepBox: HTMLElement | null = null;
  private seq = 0;
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: ViewContext, root: HTMLElement, tools: HTMLElement, api?: TrainingApi) {
    this.api = api ?? new TrainingApi();
    this.root = root;
    root.classList.add('training-view');
    const label = el('label', undefined, 'captured step ');
    label.title = 'the captured step whose tensors the histograms, attention, projection and samples show';
    this.stepPick = el('select');
    this.stepPick.id = 'training-step';
    label.append(this.stepPick);
    tools.append(label);
    this.stepPick.addEventListener('change', () => { this.pending = this.showStep(Number(this.stepPick.value)); });
    root.append(el('div', 'tab-message', 'the training diagnosis loads when this tab shows'));
    ctx.store.subscribe((s) => this.onSelection(s));
  }

  /** Resolves once the last request made is answered and drawn. */
  async settled(): Promise<void> {
    let p: Promise<void>;
    do { p = this.pending; await p; } while (p !== this.pending);
  }

  /** The heat map cell of layer `layer` at step `step` in client (page) coordinates, or null. */
  cellClientPoint(layer: number, step: number): { x: number; y: number } | null {
    const g = this.heatGeom, c = this.heatCanvas, d = this.state.diagnosis;
    if (!g || !c || !d) return null;
    const row = this.state.rows.findIndex((r) => r.layer === layer), col = d.heatmap.steps.indexOf(step);
    if (row < 0 || col < 0) return null;
    const p = heatCellCenter(g, row, col), r = c.getBoundingClientRect();
    return { x: r.left + p.x, y: r.top + p.y };
  }

  resize(): void {
    if (this.state.status === 'ready') this.drawHeatMap();
  }

  open(run: number): void {
    this.pending = this.load(run);
  }

  private async load(run: number): Promise<void> {
    const seq = ++this.seq;
    Object.assign(this.state, { run, status: 'loading', error: null, overview: null, diagnosis: null, rows: [], selectedRow: -1, step: null, series: {}, samples: null });
    this.message('loading the training diagnosis…');
    try {
      const [overview, diagnosis] = await Promise.all([this.api.overview(run), this.api.diagnosis(run)]);
      if (seq !== this.seq) return;
      this.state.overview = overview;
      this.state.diagnosis = diagnosis;
      const byId = new Map(overview.layers.map((l) => [l.id, l]));
      const diagById = new Map(diagnosis.layers.map((l) => [l.layer, l]));
      this.state.rows = diagnosis.heatmap.layers.map((id) => {
        const o = byId.get(id), dl = diagById.get(id);
        return {
          layer: id, name: dl?.name ?? o?.name ?? String(id), type: dl?.type ?? o?.type ?? '',
          node: layerNode(o?.node ?? dl?.node), score: dl?.score ?? null, flags: dl?.flags ?? [],
        };
      });
      this.state.status = 'ready';
      this.publishMarks();
      this.render();
      this.onSelection(this.ctx.store.state);
      const captured = overview.captured_steps;
      const first = isId(diagnosis.anomaly_step) && captured.includes(diagnosis.anomaly_step) ? diagnosis.anomaly_step : captured[0];
      await Promise.all([this.loadSeries(seq), first === undefined ? Promise.resolve() : this.showStep(first)]);
    } catch (e) {
      if (seq !== this.seq) return;
      this.state.status = 'error';
      this.state.error = e instanceof Error ? e.message : String(e);
      this.message(`training snapshot: ${this.state.error}`);
    }
  }

  private message(text: string): void {
    this.root.textContent = '';
    this.root.append(el('div', 'tab-message', text));
  }

  /** The chain of the diagnosis as graph marks (the graph view draws them on the framework level). */
  private publishMarks(): void {
    const d = this.state.diagnosis;
    const nodes: { id: number; role: 'producer' | 'propagator' }[] = [];
    for (const c of d?.chain ?? []) {
      const node = layerNode(c.node) ?? this.state.rows.find((r) => r.layer === c.layer)?.node ?? null;
      if (node === null || nodes.some((n) => n.id === node)) continue;
      nodes.push({ id: node, role: c.role === 'producer' ? 'producer' : 'propagator' });
    }
    this.ctx.store.dispatch({ type: 'setTrainingMarks', marks: nodes.length ? { run: this.state.run, nodes } : null });
  }

  private selectLayer(layer: number): void {
    const row = this.state.rows.findIndex((r) => r.layer === layer);
    if (row < 0) return;
    this.state.selectedRow = row;
    this.markSelected();
    const node = this.state.rows[row].node;
    if (node !== null) {
      this.ctx.store.dispatch({ type: 'select', selection: { kind: 'node', level: 'framework', id: node, run: this.state.run }, source: 'training' });
    }
  }

  /** A node selected anywhere: its layer's row is outlined. */
  private onSelection(s: AppState): void {
    if (this.state.status !== 'ready') return;
    const sel = s.selection;
    if (!sel || sel.kind !== 'node' || (sel.run ?? s.panes[0].run) !== this.state.run) return;
    const row = this.state.rows.findIndex((r) => r.node === sel.id);
    if (row >= 0 && row !== this.state.selectedRow) {
      this.state.selectedRow = row;
      this.markSelected();
    }
  }

  private markSelected(): void {
    this.drawHeatMap();
    const layer = this.state.rows[this.state.selectedRow]?.layer;
    for (const tr of this.root.querySelectorAll<HTMLElement>('tr[data-layer]')) {
      tr.classList.toggle('selected', Number(tr.dataset.layer) === layer);
    }
  }

  // ---- the page ----

  private render(): void {
    const d = this.state.diagnosis!, o = this.state.overview!;
    const root = this.root;
    root.textContent = '';
    // Header: the model's score and the anomaly.
    const head = el('div', 'training-head');
    const score = el('span', 'training-score');
    score.dataset.score = String(d.score ?? '');
    score.textContent = `${d.score === null || d.score === undefined ? '–' : Math.round(d.score)}/100`;
    score.style.background = d.score === null ? '#eee' : d.score >= 80 ? '#d8f3dc' : d.score >= 50 ? '#fff3bf' : '#ffd6d6';
    head.append(el('span', 'training-label', 'model health'), score);
    const what = isId(d.anomaly_step)
      ? `anomaly at step ${d.anomaly_step}${d.triggers.length ? ` (${[...new Set(d.triggers.map((t) => t.trigger))].join(', ')})` : ''}`
      : 'no trigger fired';
    head.append(el('span', 'training-anomaly', what));
    head.append(el('span', 'muted', `${d.model ?? ''}${d.optimizer ? ` · ${d.optimizer}` : ''} · steps ${d.first_step}–${d.last_step} · captured ${o.captured_steps.length ? `${o.captured_steps[0]}–${o.captured_steps[o.captured_steps.length - 1]}` : 'none'}`));
    root.append(head);

    const top = el('div', 'training-row');
    const tl = section('Anomaly timeline', 'training-timeline-box');
    top.append(tl);
    root.append(top);
    tl.append(timelineSvg({
      steps: d.steps.map((s) => s.step), loss: d.steps.map((s) => s.loss), gradNorm: d.steps.map((s) => s.grad_norm),
      triggers: d.triggers.map((t) => ({ step: t.step, trigger: t.trigger, detail: t.detail })), captured: d.captured_steps, anomalyStep: d.anomaly_step ?? -1,
    }, tl.clientWidth || root.clientWidth - 24));

    // Heat map + sparklines side by side.
    const mid = el('div', 'training-row');
    const heat = section('Health heat map (layer × step; score 100 pale → 0 dark red)', 'training-heat');
    const box = el('div', 'training-heat-box');
    const canvas = el('canvas');
    canvas.id = 'training-heat';
    const tip = el('div', 'cluster-tooltip training-tooltip');
    tip.hidden = true;
    box.append(canvas, tip);
    heat.append(box);
    this.heatCanvas = canvas;
    this.tooltip = tip;
    canvas.addEventListener('mousemove', (e) => this.hover(e));
    canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
    canvas.addEventListener('click', (e) => {
      const c = this.cellAtEvent(e);
      if (c) this.selectLayer(this.state.rows[c.row].layer);
    });
    const spark = section('Per-layer metrics', 'training-sparks');
    const table = el('table', 'training-table');
    const hr = el('tr');
    for (const h of ['layer', 'score', ...kSparkMetrics.map((m) => m.label)]) hr.append(el('th', undefined, h));
    table.append(hr);
    this.sparkBody = table;
    for (const r of this.state.rows) {
      const tr = el('tr');
      tr.dataset.layer = String(r.layer);
      const name = el('td', 'training-name', r.name || '(root)');
      name.title = `${r.name} (${r.type})${r.flags.length ? ` · ${r.flags.join(', ')}` : ''}`;
      tr.append(name, el('td', 'num', r.score === null ? '–' : String(Math.round(r.score))));
      for (const m of kSparkMetrics) {
        const td = el('td', 'spark');
        td.dataset.metric = m.key;
        tr.append(td);
      }
      tr.addEventListener('click', () => this.selectLayer(r.layer));
      table.append(tr);
    }
    const tbox = el('div', 'training-table-box');
    tbox.append(table);
    spark.append(tbox);
    mid.append(heat, spark);
    root.append(mid);

    // Causes and the chain.
    const low = el('div', 'training-row');
    low.append(this.causesSection(d), this.chainSection(d));
    root.append(low);

    // The captured step's tensors.
    this.stepPick.textContent = '';
    for (const s of o.captured_steps) {
      const opt = el('option', undefined, `step ${s}${s === d.anomaly_step ? ' (anomaly)' : ''}`);
      opt.value = String(s);
      this.stepPick.append(opt);
    }
    this.stepPick.disabled = !o.captured_steps.length;
    this.stepBox = el('div', 'training-step-box');
    this.stepBox.append(el('div', 'muted', o.captured_steps.length ? 'loading the captured step…' : 'no step was captured at tensor level (no trigger fired)'));
    root.append(this.stepBox);
    requestAnimationFrame(() => this.drawHeatMap());
    this.drawHeatMap();
  }

  private drawHeatMap(): void {
    const c = this.heatCanvas, d = this.state.diagnosis;
    if (!c || !d || !c.isConnected) return;
    const width = Math.max(300, (c.parentElement?.clientWidth ?? 600) - 2);
    const g = heatGeometry(width, kLabelW, this.state.rows.length, d.heatmap.steps.length);
    this.heatGeom = g;
    const chainRows = new Map<number, string>();
    for (const link of d.chain) {
      const row = this.state.rows.findIndex((r) => r.layer === link.layer);
      if (row >= 0 && (link.role === 'producer' || !chainRows.has(row))) chainRows.set(row, link.role);
    }
    drawHeat(c, g, {
      labels: this.state.rows.map((r) => r.name || '(root)'), steps: d.heatmap.steps, values: d.heatmap.values,
      anomalyStep: d.anomaly_step ?? -1, selectedRow: this.state.selectedRow, chainRows,
    });
  }

  private cellAtEvent(e: MouseEvent): { row: number; col: number } | null {
    const c = this.heatCanvas, g = this.heatGeom;
    if (!c || !g) return null;
    const r = c.getBoundingClientRect();
    return heatCellAt(g, e.clientX - r.left, e.clientY - r.top);
  }

  private hover(e: MouseEvent): void {
    const tip = this.tooltip, d = this.state.diagnosis;
    if (!tip || !d) return;
    const cell = this.cellAtEvent(e);
    if (!cell) { tip.hidden = true; return; }
    const row = this.state.rows[cell.row];
    tip.textContent = '';
    tip.append(el('div', 'tip-title', `${row.name || '(root)'} · ${row.type}`));
    if (cell.col >= 0) {
      const step = d.heatmap.steps[cell.col];
      const v = d.heatmap.values[cell.row]?.[cell.col];
      tip.dataset.layer = String(row.layer);
      tip.dataset.step = String(step);
      tip.append(el('div', undefined, `step ${step} · score ${v === null || v === undefined ? 'not measured' : Math.round(v)}`));
      const s = this.state.series[row.layer];
      const k = s ? s.steps.indexOf(step) : -1;
      if (s && k >= 0) {
        for (const m of kSparkMetrics) tip.append(el('div', 'tip-metric', `${m.label}: ${fmtNum(seriesValues(s, m.key)[k])}`));
      }
    } else {
      tip.dataset.layer = String(row.layer);
      delete tip.dataset.step;
      tip.append(el('div', undefined, `score ${row.score === null ? '–' : Math.round(row.score)}${row.flags.length ? ` · ${row.flags.join(', ')}` : ''}`));
    }
    tip.hidden = false;
    const box = tip.parentElement!.getBoundingClientRect();
    const x = e.clientX - box.left + 14, y = e.clientY - box.top + 12;
    tip.style.left = `${Math.min(x, box.width - tip.offsetWidth - 4)}px`;
    tip.style.top = `${y}px`;
  }

  /** Every layer's series (sparklines), a few requests at a time. */
  private async loadSeries(seq: number): Promise<void> {
    const rows = this.state.rows.slice();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < rows.length && seq === this.seq) {
        const r = rows[next++];
        try {
          const s = await this.api.series(this.state.run, r.layer);
          if (seq !== this.seq) return;
          this.state.series[r.layer] = s;
          this.drawSparks(r.layer);
        } catch (e) {
          const tr = this.sparkBody?.querySelector(`tr[data-layer="${r.layer}"] td.spark`);
          if (tr) tr.textContent = e instanceof Error ? e.message : String(e);
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  }

  private drawSparks(layer: number): void {
    const s = this.state.series[layer];
    const tr = this.sparkBody?.querySelector(`tr[data-layer="${layer}"]`);
    if (!s || !tr) return;
    const d = this.state.diagnosis;
    const cur = d && isId(d.anomaly_step) ? s.steps.indexOf(d.anomaly_step) : -1;
    for (const m of kSparkMetrics) {
      const td = tr.querySelector<HTMLElement>(`td[data-metric="${m.key}"]`);
      if (!td) continue;
      td.textContent = '';
      const vals = seriesValues(s, m.key);
      const finite = vals.filter((v): v is number => v !== null);
      td.append(sparkline(vals, {
        width: 110, height: 20, current: cur >= 0 ? cur : undefined,
        title: `${s.name} ${m.label}: ${finite.length ? `${fmtNum(Math.min(...finite))} … ${fmtNum(Math.max(...finite))}` : 'not measured'}`,
      }));
    }
  }

  // ---- a captured step ----

  private async showStep(step: number): Promise<void> {
    const seq = this.seq, run = this.state.run, o = this.state.overview, box = this.stepBox;
    if (!o || !box) return;
    this.state.step = step;
    this.stepPick.value = String(step);
    box.dataset.step = String(step);
    box.textContent = '';
    const row = el('div', 'training-row');
    const hist = section(`Activation histograms · step ${step}`, 'training-hists');
    const attn = section(`Attention · step ${step}`, 'training-attention');
    const proj = section(`Embedding projection · step ${step}`, 'training-projection');
    const samp = section(`Normal vs anomalous sample · step ${step}`, 'training-samples');
    row.append(hist, attn, proj, samp);
    box.append(row);
    const alive = (): boolean => seq === this.seq && this.state.step === step;
    await Promise.all([
      this.api.histograms(run, step).then((h) => {
        if (!alive()) return;
        const grid = el('div', 'training-hist-grid');
        const names = new Map(this.state.rows.map((r) => [r.layer, r.name]));
        const order = new Map(this.state.rows.map((r, i) => [r.layer, i]));
        const acts = h.histograms.filter((x) => x.kind === 'activation').sort((a, b) => (order.get(a.layer) ?? 1e9) - (order.get(b.layer) ?? 1e9));
        for (const x of acts) {
          const cell = el('div', 'training-hist-cell');
          cell.dataset.layer = String(x.layer);
          const name = names.get(x.layer) ?? o.layers.find((l) => l.id === x.layer)?.name ?? String(x.layer);
          cell.append(el('div', 'training-hist-name', name || '(root)'), histogramSvg(x, name));
          cell.addEventListener('click', () => this.selectLayer(x.layer));
          grid.append(cell);
        }
        hist.append(acts.length ? grid : el('div', 'muted', 'no activation histograms at this step'));
      }).catch((e: unknown) => { if (alive()) hist.append(el('div', 'error', errText(e))); }),
      this.showAttention(attn, step, alive),
      this.showProjection(proj, step, alive),
      (o.samples.includes(step) ? this.api.samples(run, step) : Promise.resolve(null)).then((s) => {
        if (!alive()) return;
        this.state.samples = s;
        samp.append(s && s.samples.length ? this.samplesTable(s) : el('div', 'muted', 'no samples singled out at this step'));
      }).catch((e: unknown) => { if (alive()) samp.append(el('div', 'error', errText(e))); }),
    ]);
  }

  private async showAttention(box: HTMLElement, step: number, alive: () => boolean): Promise<void> {
    const o = this.state.overview!;
    const layers = o.attention.filter((a) => a.step === step);
    if (!layers.length) { box.append(el('div', 'muted', 'no attention layer captured at this step')); return; }
    if (this.state.attentionLayer === null || !layers.some((a) => a.layer === this.state.attentionLayer)) this.state.attentionLayer = layers[0].layer;
    const pick = el('select');
    pick.id = 'training-attn-layer';
    for (const a of layers) {
      const opt = el('option', undefined, `${this.layerName(a.layer)} · ${a.heads} heads`);
      opt.value = String(a.layer);
      pick.append(opt);
    }
    pick.value = String(this.state.attentionLayer);
    const body = el('div', 'training-attn-grid');
    box.append(pick, body);
    const draw = async (layer: number): Promise<void> => {
      this.state.attentionLayer = layer;
      body.textContent = '';
      body.dataset.layer = String(layer);
      try {
        const a = await this.api.attention(this.state.run, step, layer);
        if (!alive() || this.state.attentionLayer !== layer) return;
        body.dataset.heads = String(a.heads);
        a.weights.forEach((w, h) => {
          const cell = el('div', 'training-attn-cell');
          cell.dataset.head = String(h);
          cell.append(attentionCanvas(w, 96), el('div', 'muted', `head ${h}`));
          cell.title = `${this.layerName(layer)} head ${h}: ${a.queries} queries × ${a.keys} keys`;
          body.append(cell);
        });
      } catch (e) {
        if (alive()) body.append(el('div', 'error', errText(e)));
      }
    };
    pick.addEventListener('change', () => { this.pending = draw(Number(pick.value)); });
    await draw(this.state.attentionLayer);
  }

  private async showProjection(box: HTMLElement, step: number, alive: () => boolean): Promise<void> {
    const o = this.state.overview!;
    const here = o.projections.filter((p) => p.step === step);
    if (!here.length) { box.append(el('div', 'muted', 'no projection at this step')); return; }
    const layers = [...new Set(here.map((p) => p.layer))];
    if (this.state.projectionLayer === null || !layers.includes(this.state.projectionLayer)) {
      // The producer of the chain, else the worst layer, else the first with a projection.
      const d = this.state.diagnosis;
      const prefer = [d?.chain.find((c) => c.role === 'producer')?.layer, ...(d?.problem_layers ?? [])];
      this.state.projectionLayer = prefer.find((l): l is number => l !== undefined && layers.includes(l)) ?? layers[0];
    }
    const tools = el('div', 'training-proj-tools');
    const pick = el('select');
    pick.id = 'training-proj-layer';
    for (const l of layers) {
      const opt = el('option', undefined, this.layerName(l));
      opt.value = String(l);
      pick.append(opt);
    }
    pick.value = String(this.state.projectionLayer);
    const seg = el('span', 'seg training-method');
    const body = el('div', 'training-proj-body');
    tools.append(pick, seg);
    box.append(tools, body);
    const draw = async (): Promise<void> => {
      const layer = this.state.projectionLayer!;
      const methods = here.filter((p) => p.layer === layer).map((p) => p.method);
      if (!methods.includes(this.state.method)) this.state.method = methods.includes('pca') ? 'pca' : methods[0];
      seg.textContent = '';
      for (const m of ['pca', 'tsne']) {
        const b = el('button', this.state.method === m ? 'active' : undefined, m === 'pca' ? 'PCA' : 't-SNE');
        b.dataset.method = m;
        b.disabled = !methods.includes(m);
        if (b.disabled) b.title = 't-SNE needs scikit-learn where the snapshot was written (python3-sklearn)';
        b.addEventListener('click', () => { this.state.method = m; this.pending = draw(); });
        seg.append(b);
      }
      body.textContent = '';
      try {
        const p = await this.api.projection(this.state.run, step, layer, this.state.method);
        if (!alive() || this.state.projectionLayer !== layer) return;
        body.dataset.layer = String(layer);
        body.dataset.method = p.method;
        const pts = p.points.map((x) => ({ ...x, anomalous: Boolean(x.anomalous) }));
        body.append(projectionSvg(pts),
          el('div', 'muted', `${pts.length} samples · ${pts.filter((x) => x.anomalous).length} anomalous (red)`));
      } catch (e) {
        if (alive()) body.append(el('div', 'error', errText(e)));
      }
    };
    pick.addEventListener('change', () => { this.state.projectionLayer = Number(pick.value); this.pending = draw(); });
    await draw();
  }

  /** The samples side by side: per layer (forward order) each one's |x| max and rms as bars on a log scale. */
  private samplesTable(s: TrainingSamplesJson): HTMLElement {
    const roles = [...s.samples].sort((a, b) => (a.role === 'normal' ? -1 : 1) - (b.role === 'normal' ? -1 : 1));
    const table = el('table', 'training-table training-sample-table');
    const hr = el('tr');
    hr.append(el('th', undefined, 'layer'));
    for (const r of roles) {
      const th = el('th', undefined, `${r.role} (sample ${r.sample})`);
      th.dataset.sample = String(r.sample);
      th.dataset.role = r.role;
      hr.append(th);
    }
    table.append(hr);
    const order = this.state.rows.map((r) => r.layer);
    const layers = [...new Set(roles.flatMap((r) => r.layers.map((l) => l.layer)))].sort((a, b) => {
      const ia = order.indexOf(a), ib = order.indexOf(b);
      return (ia < 0 ? 1e9 : ia) - (ib < 0 ? 1e9 : ib) || a - b;
    });
    const logs = roles.flatMap((r) => r.layers.map((l) => l.abs_max)).filter((v): v is number => v !== null && v > 0).map(Math.log10);
    const lo = logs.length ? Math.min(...logs) - 0.5 : 0, hi = logs.length ? Math.max(...logs) : 1;
    const bar = (v: number | null, cls: string): HTMLElement => {
      const b = el('div', `training-bar ${cls}`);
      const w = v !== null && v > 0 ? Math.max(2, (100 * (Math.log10(v) - lo)) / Math.max(1e-9, hi - lo)) : 0;
      b.style.width = `${Math.min(100, w)}%`;
      return b;
    };
    for (const layer of layers) {
      const tr = el('tr');
      tr.dataset.layer = String(layer);
      tr.append(el('td', 'training-name', this.layerName(layer)));
      for (const r of roles) {
        const l = r.layers.find((x) => x.layer === layer);
        const td = el('td', 'training-sample-cell');
        td.dataset.role = r.role;
        td.dataset.absMax = String(l?.abs_max ?? '');
        td.dataset.rms = String(l?.rms ?? '');
        const bars = el('div', 'training-bars');
        bars.append(bar(l?.abs_max ?? null, r.role === 'anomalous' ? 'anomalous' : 'normal'), bar(l?.rms ?? null, 'rms'));
        const inner = el('div', 'training-sample-inner');
        td.append(inner);
        inner.append(bars, el('span', 'training-bar-text', `max ${fmtNum(l?.abs_max)} · rms ${fmtNum(l?.rms)}${l?.nonfinite ? ` · ${l.nonfinite} non-finite` : ''}`));
        tr.append(td);
      }
      tr.addEventListener('click', () => this.selectLayer(layer));
      table.append(tr);
    }
    const box = el('div', 'training-table-box');
    box.append(table);
    return box;
  }

  private layerName(layer: number): string {
    const n = this.state.rows.find((r) => r.layer === layer)?.name ?? this.state.overview?.layers.find((l) => l.id === layer)?.name;
    return n === undefined ? `layer ${layer}` : n || '(root)';
  }

  // ---- causes and chain ----

  private causesSection(d: TrainingDiagnosisJson): HTMLElement {
    const box = section('Likely causes (most likely first)', 'training-causes');
    if (!d.causes.length) { box.append(el('div', 'muted', 'no cause found')); return box; }
    const list = el('ol', 'training-cause-list');
    d.causes.forEach((c, i) => list.append(this.causeItem(c, i)));
    box.append(list);
    return box;
  }

  private causeItem(c: DiagCauseJson, i: number): HTMLElement {
    const li = el('li', 'training-cause');
    li.dataset.cause = c.cause;
    li.dataset.index = String(i);
    const title = el('div', 'training-cause-title');
    title.append(el('b', undefined, c.title || c.cause), el('span', 'training-conf', ` ${Math.round(c.confidence * 100)}%`));
    const layer = c.layer;
    if (isId(layer)) {
      const a = el('a', 'training-layer-link', c.layer_name || this.layerName(layer));
      a.href = '#';
      a.addEventListener('click', (e) => { e.preventDefault(); this.selectLayer(layer); });
      title.append(el('span', 'muted', ' · layer '), a);
    }
    if (isId(c.step)) title.append(el('span', 'muted', ` · step ${c.step}`));
    li.append(title);
    if (c.evidence.length) {
      const ul = el('ul', 'training-evidence');
      for (const ev of c.evidence) ul.append(el('li', undefined, ev.text || `${ev.metric} = ${fmtNum(ev.value)} (expected ${fmtNum(ev.expected)})`));
      li.append(ul);
    }
    const fix = el('div', 'training-fix');
    fix.append(el('b', undefined, 'Fix: '), el('span', undefined, c.fix.summary));
    li.append(fix);
    if (c.fix.validation) {
      const v = el('div', 'training-validation');
      v.append(el('b', undefined, 'Check: '), el('span', undefined, c.fix.validation));
      li.append(v);
    }
    if (c.fix.snippet) {
      const wrap = el('div', 'training-snippet');
      const pre = el('pre', undefined, c.fix.snippet);
      const copy = el('button', 'training-copy', 'copy');
      copy.title = 'copy the snippet';
      copy.addEventListener('click', () => {
        this.state.copied = c.fix.snippet;
        const done = (): void => { copy.textContent = 'copied'; setTimeout(() => { copy.textContent = 'copy'; }, 1500); };
        if (navigator.clipboard?.writeText) navigator.clipboard.writeText(c.fix.snippet).then(done, () => selectText(pre));
        else selectText(pre);
      });
      wrap.append(copy, pre);
      li.append(wrap);
    }
    return li;
  }

  private chainSection(d: TrainingDiagnosisJson): HTMLElement {
    const box = section('Root-cause chain (marked on the graph)', 'training-chain');
    if (!d.chain.length) { box.append(el('div', 'muted', 'no propagation chain (no anomalous layer)')); return box; }
    const legend = el('div', 'training-chain-legend');
    legend.append(el('span', 'mark-chip mark-producer'), el('span', undefined, 'producer '), el('span', 'mark-chip mark-propagator'), el('span', undefined, 'propagator'));
    box.append(legend);
    const ol = el('ol', 'training-chain-list');
    for (const link of d.chain) {
      const li = el('li', `chain-${link.role}`);
      li.dataset.layer = String(link.layer);
      li.dataset.role = link.role;
      const a = el('a', undefined, link.layer_name || this.layerName(link.layer));
      a.href = '#';
      a.addEventListener('click', (e) => { e.preventDefault(); this.selectLayer(link.layer); });
      li.append(el('span', `mark-chip mark-${link.role === 'producer' ? 'producer' : 'propagator'}`), a,
        el('span', 'muted', ` · ${link.role} · ${link.direction}${isId(link.step) ? ` · step ${link.step}` : ''}`));
      if (link.evidence) li.append(el('div', 'training-chain-evidence', link.evidence));
      ol.append(li);
    }
    box.append(ol);
    return box;
  }
}

function section(title: string, cls: string): HTMLElement {
  const s = el('section', cls);
  s.append(el('h3', undefined, title));
  return s;
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function selectText(node: HTMLElement): void {
  const r = document.createRange();
  r.selectNodeContents(node);
  const s = getSelection();
  s?.removeAllRanges();
  s?.addRange(r);
}

/** Whether run `run` of the state is a training snapshot the view can ask about. */
export function trainingRun(s: AppState, run: number): boolean {
  return runUsable(s, run) && !!s.runs[run]?.training;
}
