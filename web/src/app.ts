// The application: the panes (one, or two side by side in compare mode), the
// panels (details, search, legend), the toolbar, and the view state of the
// main pane mirrored in the URL hash. Each pane owns its canvas, camera and
// layout state (pane.ts); the app links their selections: selecting a
// compiled node highlights its fused_from nodes in the other pane, selecting
// a framework node its fused_into node. Drawing is on demand.

import { Api, type Grouping, type NodeDetails, type RunInfo } from './api';
import { DetailsPanel } from './details_panel';
import { canvasPng, download, sceneSvg } from './export';
import { decodeLayout, ItemKind, kGroupExpanded } from './layout_binary';
import { renderHeatLegend, renderLegend, renderStatusLegend } from './legend';
import { Pane, type PaneHost } from './pane';
import type { ColorMode } from './scene';
import { Search } from './search';
import { formatHash, parseHash, type ViewState } from './url_state';

export { kDefaultMaxItems } from './pane';

function $(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (!e) throw new Error(`missing #${id} in index.html`);
  return e;
}

export class App implements PaneHost {
  readonly api = new Api();
  runs: RunInfo[] = [];
  readonly panes: Pane[] = [];
  /** The pane the details, search, legend and export act on. */
  active = 0;
  comparing = false;
  sync = true;
  private readonly details: DetailsPanel;
  private readonly search: Search;
  private readonly forceCanvas: boolean;
  private detailsSeq = 0;
  /** Details of the last selected node per pane (compare-mode links). */
  lastDetails: (NodeDetails | null)[] = [null, null];
  // For tests and the benchmark (window.__mi).
  linkSeq = 0;

  constructor() {
    this.forceCanvas = new URLSearchParams(location.search).get('renderer') === 'canvas2d';
    const main = new Pane($('graph') as HTMLCanvasElement, $('minimap') as HTMLCanvasElement, this, parseHash(location.hash), this.forceCanvas);
    main.onRendered = () => { document.body.dataset.rendered = String(main.renderCount); };
    this.panes.push(main);
    document.body.dataset.renderer = main.renderer.kind;
    this.details = new DetailsPanel($('details'), { openNode: (level, id) => void this.openNode(level, id) });
    this.details.clear();
    this.search = new Search($('search') as HTMLInputElement, $('search-mode') as HTMLSelectElement, $('results'), {
      api: this.api,
      run: () => this.pane.state.run,
      level: () => this.pane.state.level,
      pick: (id) => void this.revealAndSelect(id),
      matched: (ids) => { this.pane.matchIds = ids; this.pane.updateHighlights(); },
      error: (m) => this.banner(m),
    });
    new ResizeObserver(() => this.resize()).observe($('view'));
    this.resize();
    $('fit').addEventListener('click', () => this.pane.fit());
    ($('run') as HTMLSelectElement).addEventListener('change', (e) => {
      const run = parseInt((e.target as HTMLSelectElement).value, 10);
      main.resetFolding();
      main.state = { ...main.state, run, level: this.runs[run]?.levels[0] ?? 'framework', expand: [], collapse: [], node: null };
      void this.reloadMain(true);
    });
    ($('grouping') as HTMLSelectElement).addEventListener('change', (e) => {
      const grouping = (e.target as HTMLSelectElement).value as Grouping;
      for (const p of this.panes) {
        p.resetFolding();
        p.state = { ...p.state, grouping, expand: [], collapse: [] };
      }
      void this.reloadMain(true);
      if (this.comparing) void this.panes[1].reload(true);
    });
    ($('color-by') as HTMLSelectElement).addEventListener('change', (e) => this.setColorMode((e.target as HTMLSelectElement).value as ColorMode));
    ($('lineage') as HTMLInputElement).addEventListener('change', (e) => this.setLineage((e.target as HTMLInputElement).checked));
    $('compare').addEventListener('click', () => void this.setCompare(!this.comparing));
    ($('sync') as HTMLInputElement).addEventListener('change', (e) => { this.sync = (e.target as HTMLInputElement).checked; });
    ($('pane1-level') as HTMLSelectElement).addEventListener('change', (e) => {
      const [run, level] = (e.target as HTMLSelectElement).value.split(':');
      void this.panes[1]?.switchLevel(level, parseInt(run, 10)).then(() => this.relink());
    });
    $('export-png').addEventListener('click', () => void this.exportPng().then((b) => download(b, this.exportName('png'))));
    $('export-svg').addEventListener('click', () => download(new Blob([this.exportSvg()], { type: 'image/svg+xml' }), this.exportName('svg')));
    $('export-me-graph').addEventListener('click', () => void this.downloadModelExplorer('graph'));
    $('export-me-data').addEventListener('click', () => void this.downloadModelExplorer('node-data'));
    ($('file') as HTMLInputElement).addEventListener('change', (e) => {
      const f = (e.target as HTMLInputElement).files?.[0];
      if (f) void this.openFile(f);
    });
    window.addEventListener('hashchange', () => {
      if (location.hash === formatHash(main.state)) return;
      main.state = parseHash(location.hash);
      void this.reloadMain(true);
    });
  }

  // ---- the main pane, as the first slice's API (tests and bench use these) ----
  get pane(): Pane { return this.panes[this.active] ?? this.panes[0]; }
  get main(): Pane { return this.panes[0]; }
  get cam() { return this.main.cam; }
  get scene() { return this.main.scene; }
  get state(): ViewState { return this.main.state; }
  get renderer() { return this.main.renderer; }
  get canvas(): HTMLCanvasElement { return this.main.canvas; }
  get layoutCount(): number { return this.main.layoutCount; }
  get renderCount(): number { return this.main.renderCount; }
  get firstRenderAt(): number { return this.main.firstRenderAt; }
  get lastLoadMs() { return this.main.lastLoadMs; }
  itemOfNode(id: number): number { return this.main.itemOfNode(id); }
  isExpanded(g: number): boolean { return this.main.isExpanded(g); }
  fit(): void { this.main.fit(); }
  rendererFrameMs(): number { return (this.main.renderer as unknown as { lastFrameMs: number }).lastFrameMs; }

  async start(): Promise<void> {
    try {
      this.runs = await this.api.runs();
    } catch (e) {
      this.banner(`${(e as Error).message}. You can still open a layout file (.bin from 'model-inspector render --format binary').`);
      document.body.dataset.ready = 'error';
      return;
    }
    const sel = $('run') as HTMLSelectElement;
    sel.textContent = '';
    for (const r of this.runs) {
      const o = document.createElement('option');
      o.value = String(r.id);
      o.textContent = `${r.id}: ${r.name}`;
      sel.append(o);
    }
    if (!this.runs.length) { this.banner('the server has no runs'); return; }
    const st = this.main.state;
    if (!this.runs[st.run]) st.run = 0;
    if (!this.runs[st.run].levels.includes(st.level)) st.level = this.runs[st.run].levels[0];
    await this.reloadMain(true);
    if (st.node !== null) await this.revealAndSelect(st.node);
  }

  private resize(): void {
    for (const [k, p] of this.panes.entries()) {
      const el = $(`pane${k}`);
      p.resize(el.clientWidth, el.clientHeight);
    }
  }

  banner(message: string | null): void {
    const b = $('banner');
    b.hidden = !message;
    b.textContent = message ?? '';
  }

  // PaneHost
  layoutChanged(p: Pane): void {
    if (p === this.pane) this.renderPanels();
    if (p === this.main) {
      this.renderLevels();
      this.writeHash();
    }
    this.status();
  }

  cameraMoved(): void { /* sync of cameras is by selection (see select) */ }

  clicked(p: Pane, what: { node?: number; group?: number; expanded?: boolean; io?: string }): void {
    this.setActive(this.panes.indexOf(p));
    if (what.node !== undefined) { void this.select(what.node, p); return; }
    p.state.node = null;
    p.linkedIds = [];
    if (what.group !== undefined) {
      p.selectedGroup = what.group;
      this.details.showGroup(p.scene!.layout, what.group, !!what.expanded);
    } else {
      p.selectedGroup = -1;
      this.details.clear(what.io);
    }
    p.updateHighlights();
    if (p === this.main) this.writeHash();
  }

  private setActive(k: number): void {
    if (k < 0 || k === this.active) return;
    this.active = k;
    for (const [i] of this.panes.entries()) $(`pane${i}`).classList.toggle('active-pane', this.comparing && i === k);
    this.renderPanels();
  }

  private renderPanels(): void {
    const p = this.pane;
    renderLegend($('legend'), p.scene, (op) => void this.search.run(op, 'op'));
    renderHeatLegend($('heat-legend'), p.scene);
    renderStatusLegend($('status-legend'), p.scene, p.lineage, this.comparing);
  }

  private status(): void {
    const l = this.main.scene?.layout;
    const kind = this.main.renderer.kind;
    $('status').textContent = l ? `${l.itemCount} items · ${l.edgeCount} edges · ${l.nodeCount} nodes · ${kind}` : kind;
  }

  private renderLevels(): void {
    const root = $('levels');
    root.textContent = '';
    const st = this.main.state;
    const levels = this.runs[st.run]?.levels ?? [];
    for (const lv of levels) {
      const b = document.createElement('button');
      b.textContent = lv;
      b.dataset.level = lv;
      if (lv === st.level) b.classList.add('active');
      b.addEventListener('click', () => void this.switchLevel(lv));
      root.append(b);
    }
    ($('grouping') as HTMLSelectElement).value = st.grouping;
    ($('run') as HTMLSelectElement).value = String(st.run);
    if (this.comparing) $('pane0-title').textContent = `${st.run}: ${st.level}`;
  }

  private writeHash(): void {
    const h = formatHash(this.main.state);
    if (location.hash !== h) history.replaceState(null, '', h);
  }

  async reloadMain(fit: boolean, anchorGroup = -1): Promise<boolean> {
    this.renderLevels();
    this.writeHash();
    return this.main.reload(fit, anchorGroup);
  }

  /** Compatibility with the first slice: reload of the main pane. */
  reload(fit: boolean, anchorGroup = -1): Promise<boolean> { return this.reloadMain(fit, anchorGroup); }
  expandGroup(g: number): Promise<boolean> { return this.main.expandGroup(g); }
  collapseGroup(g: number): Promise<boolean> { return this.main.collapseGroup(g); }

  async switchLevel(level: string): Promise<void> {
    const p = this.main;
    if (level === p.state.level) return;
    this.details.clear();
    this.search.clear();
    this.writeHash();
    await p.switchLevel(level);
    this.writeHash();
    this.renderLevels();
    if (this.comparing) this.relink();
  }

  /** Opens a node of (possibly) another level: fused_from / fused_into links. */
  async openNode(level: string, id: number): Promise<void> {
    // In compare mode, a pane that shows that level answers.
    if (this.comparing) {
      const k = this.panes.findIndex((p) => p.state.level === level && p.state.run === this.pane.state.run);
      if (k >= 0) { this.setActive(k); await this.revealAndSelect(id); return; }
    }
    this.setActive(0);
    if (level !== this.main.state.level && (this.runs[this.main.state.run]?.levels ?? []).includes(level)) await this.switchLevel(level);
    await this.revealAndSelect(id);
  }

  /** Expands the collapsed groups around node `id` (reveal), centres on it and selects it. */
  async revealAndSelect(id: number, p: Pane = this.pane): Promise<void> {
    if (await p.reveal(id)) p.centreOnNode(id);
    await this.select(id, p);
  }

  async select(id: number, p: Pane = this.pane): Promise<void> {
    p.state.node = id;
    p.selectedGroup = -1;
    p.updateHighlights();
    if (p === this.main) this.writeHash();
    if (p.fileMode) { this.details.clear(`node ${id} (details need the server)`); return; }
    const seq = ++this.detailsSeq;
    this.details.loading();
    try {
      const d = await this.api.node(p.state.run, p.state.level, id);
      if (p.state.node !== id) return;
      this.lastDetails[this.panes.indexOf(p)] = d;
      if (seq === this.detailsSeq) this.details.showNode(d);
      if (this.comparing) await this.link(p, d);
    } catch (e) {
      if (seq === this.detailsSeq) this.details.showError((e as Error).message);
    }
  }

  /**
   * Compare mode: highlights in the other pane the nodes linked to `d`
   * (compiled → its fused_from, framework → its fused_into, the same level →
   * the same node); with sync on, reveals and centres them there.
   */
  private async link(p: Pane, d: NodeDetails): Promise<void> {
    const other = this.panes[1 - this.panes.indexOf(p)];
    if (!other) return;
    let ids: number[] = [];
    if (other.state.run === p.state.run) {
      if (other.state.level === p.state.level) ids = [d.id];
      else if (other.state.level === 'framework') ids = (d.fused_from ?? []).map((r) => r.id);
      else if (p.state.level === 'framework' && d.fused_into) ids = [d.fused_into.id];
    }
    other.linkedIds = ids;
    other.state.node = null;
    if (this.sync && ids.length) {
      for (const id of ids.slice(0, 16)) if (!other.nodeVisible(id)) await other.reveal(id);
      other.centreOnNodes(ids);
    }
    other.updateHighlights();
    this.linkSeq++;
  }

  private relink(): void {
    const k = this.active;
    const d = this.lastDetails[k];
    if (this.comparing && d && this.panes[k].state.node === d.id) void this.link(this.panes[k], d);
  }

  /** Compare mode on / off: a second pane (the other level of the run by default). */
  async setCompare(on: boolean): Promise<void> {
    if (on === this.comparing) return;
    if (on && !this.runs.length) { this.banner('compare needs the server (model-inspector open)'); return; }
    this.comparing = on;
    document.body.classList.toggle('comparing', on);
    $('compare').classList.toggle('active', on);
    $('pane1').hidden = !on;
    $('pane0-title').hidden = !on;
    if (!on) {
      this.setActive(0);
      $('pane0').classList.remove('active-pane');
      this.main.linkedIds = [];
      this.main.updateHighlights();
      this.resize();
      return;
    }
    const st = this.main.state;
    const levels = this.runs[st.run]?.levels ?? [st.level];
    const otherLevel = levels.find((l) => l !== st.level) ?? st.level;
    let p = this.panes[1];
    if (!p) {
      p = new Pane($('graph2') as HTMLCanvasElement, $('minimap2') as HTMLCanvasElement, this,
        { ...st, level: otherLevel, expand: [], collapse: [], node: null }, this.forceCanvas);
      p.colorMode = this.main.colorMode;
      p.lineage = this.main.lineage;
      this.panes.push(p);
    }
    const sel = $('pane1-level') as HTMLSelectElement;
    sel.textContent = '';
    for (const r of this.runs) {
      for (const lv of r.levels) {
        const o = document.createElement('option');
        o.value = `${r.id}:${lv}`;
        o.textContent = `${r.id}: ${lv}`;
        sel.append(o);
      }
    }
    sel.value = `${p.state.run}:${p.state.level}`;
    this.resize();
    this.renderLevels();
    $('pane0').classList.toggle('active-pane', this.active === 0);
    if (!p.scene) await p.reload(true);
    else { p.fit(); p.requestRender(); }
    this.main.fit();
    this.relink();
  }

  setColorMode(mode: ColorMode): void {
    ($('color-by') as HTMLSelectElement).value = mode;
    for (const p of this.panes) p.setColorMode(mode);
    this.renderPanels();
  }

  setLineage(on: boolean): void {
    ($('lineage') as HTMLInputElement).checked = on;
    for (const p of this.panes) { p.lineage = on; p.updateHighlights(); }
    this.renderPanels();
  }

  // ---- export ----
  private exportName(ext: string): string {
    const st = this.pane.state;
    const title = (this.pane.scene?.layout.title || 'graph').replace(/[^\w.-]+/g, '_');
    return `${title}-${st.level}.${ext}`;
  }

  /** The active pane's view as a PNG (drawn once more so the buffer is current). */
  async exportPng(): Promise<Blob> {
    const p = this.pane;
    p.renderer.render(p.cam);
    return canvasPng(p.renderer.canvas);
  }

  /** The active pane's view as SVG text. */
  exportSvg(): string {
    const p = this.pane;
    if (!p.scene) return '<svg xmlns="http://www.w3.org/2000/svg"/>';
    return sceneSvg(p.scene, p.cam, p.highlights);
  }

  async downloadModelExplorer(what: 'graph' | 'node-data'): Promise<Blob | null> {
    const st = this.pane.state;
    try {
      const b = await this.api.exportModelExplorer(st.run, st.level, what);
      download(b, this.exportName(`${what === 'graph' ? 'graph' : 'node_data'}.json`));
      return b;
    } catch (e) {
      this.banner(`Model Explorer export: ${(e as Error).message}`);
      return null;
    }
  }

  /** Shows a layout binary from a local file (no server needed). */
  async openFile(f: File): Promise<void> {
    try {
      const layout = decodeLayout(await f.arrayBuffer());
      this.banner(null);
      this.main.openLayout(layout);
      document.body.dataset.ready = 'file';
    } catch (e) {
      this.banner(`${f.name}: ${(e as Error).message}`);
    }
  }

  // ---- test hooks (window.__mi) ----
  /** Screen position (CSS px, relative to the canvas) of the centre of an item. */
  itemScreenCenter(i: number, p: Pane = this.main): { x: number; y: number } | null {
    const l = p.scene?.layout;
    if (!l || i < 0 || i >= l.itemCount) return null;
    const b = l.itemBox;
    return { x: p.cam.toScreenX(b[4 * i] + b[4 * i + 2] / 2), y: p.cam.toScreenY(b[4 * i + 1] + b[4 * i + 3] / 2) };
  }

  groupHeaderScreen(g: number): { x: number; y: number } | null {
    const p = this.main, l = p.scene?.layout;
    if (!l || g < 0 || g >= l.groupCount) return null;
    const b = l.groupBounds;
    return { x: p.cam.toScreenX(b[4 * g] + Math.min(40, b[4 * g + 2] / 2)), y: p.cam.toScreenY(b[4 * g + 1] + 10) };
  }

  /** Items of a kind in the main layout (tests). */
  countItems(kind: ItemKind): number {
    const l = this.main.scene?.layout;
    let n = 0;
    if (l) for (let i = 0; i < l.itemCount; ++i) if (l.itemKind[i] === kind) n++;
    return n;
  }

  expandedGroups(p: Pane = this.main): number[] {
    const l = p.scene?.layout, out: number[] = [];
    if (l) for (let g = 1; g < l.groupCount; ++g) if (l.groupFlags[g] & kGroupExpanded) out.push(g);
    return out;
  }
}
