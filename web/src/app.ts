// The application: the graph panes (one, or two side by side in compare
// mode) on top, the bottom panel with the execution views (timeline,
// mapping, summary; resizable, either part can be maximised), the side
// panels (details, search, legend), the toolbar, and the UI state mirrored
// in the URL hash. Each pane owns its canvas, camera and layout state
// (pane.ts); the app links their selections: selecting a compiled node
// highlights its fused_from nodes in the other pane, selecting a framework
// node its fused_into node. Across views there is one selection
// (selection.ts): whichever view sets it, `onSelection` resolves it into the
// other views' terms (a node's tasks, a task's node and fused_from) and
// hands each view its part. Drawing is on demand.

import { Api, type CriticalPathJson, type FindingJson, type Grouping, type NodeDetails, type RunInfo, type TaskDetails, type TimelineMeta } from './api';
import { DetailsPanel } from './details_panel';
import { canvasPng, download, sceneSvg } from './export';
import { decodeLayout, ItemKind, kGroupExpanded } from './layout_binary';
import { renderHeatLegend, renderLegend, renderStatusLegend } from './legend';
import { Pane, type PaneHost } from './pane';
import type { ColorMode } from './scene';
import { Search } from './search';
import { MappingView } from './mapping_view';
import { sameSelection, SelectionModel, type Selection, type SelectionSource } from './selection';
import { findingIds, SummaryView } from './summary_view';
import { TimelineView } from './timeline_view';
import { formatHash, parseHash, parseUiState, type BottomTab, type PanelMode, type UiState, type ViewState } from './url_state';

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

  // ---- execution views and the shared selection ----
  readonly selection = new SelectionModel();
  /** Bottom panel tab, maximised part, timeline clock / compare (URL fields besides the main pane's). */
  ui: UiState;
  timeline: TimelineView | null = null;
  readonly mapping: MappingView;
  readonly summaryView: SummaryView;
  /** The main run's /timeline answer (track names, op types, origin of relative times); null without a trace. */
  timelineMeta: TimelineMeta | null = null;
  /** Run each bottom view shows (-1: not opened yet; opened lazily when its tab shows). */
  private readonly viewRun = { timeline: -1, mapping: -1, summary: -1 };
  /** The last resolved task selection (re-applied to the graph after a level switch). */
  lastTask: TaskDetails | null = null;
  /** Tasks highlighted on the timeline for the current selection (tests). */
  selectedTasks: number[] = [];
  /** The op-type filter of the timeline was set by an op-type selection (cleared with it). */
  private opFilterFromSelection = false;
  /** The search list shows an op-type selection's nodes (cleared with it). */
  private searchFromSelection = false;
  private resolveSeq = 0;
  /** Selections resolved into every view (tests poll it). */
  resolvedVersion = 0;

  constructor() {
    this.forceCanvas = new URLSearchParams(location.search).get('renderer') === 'canvas2d';
    this.ui = parseUiState(location.hash);
    const main = new Pane($('graph') as HTMLCanvasElement, $('minimap') as HTMLCanvasElement, this, parseHash(location.hash), this.forceCanvas);
    main.onRendered = () => { document.body.dataset.rendered = String(main.renderCount); };
    main.colorMode = this.ui.color;
    ($('color-by') as HTMLSelectElement).value = this.ui.color;
    this.panes.push(main);
    document.body.dataset.renderer = main.renderer.kind;
    this.details = new DetailsPanel($('details'), {
      openNode: (level, id) => this.selection.set({ kind: 'node', level, id, run: this.main.state.run }, 'details'),
      openTask: (id) => this.selection.set({ kind: 'task', ids: [id] }, 'details'),
    });
    this.details.clear();
    this.mapping = new MappingView($('mapping'), {
      api: this.api,
      selectNode: (level, id) => this.selection.set({ kind: 'node', level, id, run: this.main.state.run }, 'mapping'),
      selectNodeTasks: (_level, id) => void this.selectNodeTasks(id),
      selectTasks: (ids) => this.selection.set({ kind: 'task', ids }, 'mapping'),
      selectOpType: (op) => this.selection.set({ kind: 'op_type', opType: op }, 'mapping'),
      error: (m) => this.banner(m),
    });
    this.summaryView = new SummaryView($('summary'), {
      api: this.api,
      selectOpType: (op) => this.selection.set({ kind: 'op_type', opType: op }, 'summary'),
      selectFinding: (index, f) => this.selection.set({ kind: 'finding', index, nodes: findingIds(f.nodes), tasks: findingIds(f.tasks), label: f.message }, 'summary'),
      showCriticalPath: (cp) => this.showCriticalPath(cp),
      clearRange: () => { if (this.selection.current?.kind === 'range') this.selection.clear('summary'); },
      error: (m) => this.banner(m),
    });
    this.selection.subscribe((sel, source) => void this.onSelection(sel, source));
    this.initBottomPanel();
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
      this.selection.clear('app');
      void this.reloadMain(true);
      this.runChanged();
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
      void this.panes[1]?.switchLevel(level, parseInt(run, 10)).then(() => { this.relink(); this.writeHash(); });
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
      if (location.hash === formatHash(main.state, this.uiState())) return;
      const runBefore = main.state.run;
      main.state = parseHash(location.hash);
      const ui = parseUiState(location.hash);
      this.setTab(ui.tab);
      this.setPanel(ui.panel);
      if (ui.color !== main.colorMode) this.setColorMode(ui.color);
      void this.reloadMain(true).then(() => {
        if (main.state.run !== runBefore) this.runChanged();
        if (ui.selection) { if (!sameSelection(ui.selection, this.selection.current)) this.selection.set(ui.selection, 'url'); }
        else if (main.state.node !== null) void this.revealAndSelect(main.state.node);
        else this.selection.clear('url');
      });
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
      // No server: no runs, so no execution views; the graph takes the room.
      $('bottom').hidden = true;
      $('splitter').hidden = true;
      this.resize();
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
    this.fillCompareRuns();
    await this.reloadMain(true);
    const ui = this.ui;
    if (ui.compare && this.runs[ui.compare.run]?.levels.includes(ui.compare.level)) await this.setCompare(true, ui.compare);
    await this.runChanged();
    // A task / op / finding / range selection wins over node= (which then is
    // only its graph part, e.g. the node of a selected task).
    if (ui.selection) this.selection.set(ui.selection, 'url');
    else if (st.node !== null) await this.revealAndSelect(st.node);
  }

  private resize(): void {
    for (const [k, p] of this.panes.entries()) {
      const el = $(`pane${k}`);
      if (el.clientWidth && el.clientHeight) p.resize(el.clientWidth, el.clientHeight);
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
    const cur = this.selection.current;
    if (cur && cur.kind !== 'range') this.selection.clear('graph');
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
    renderLegend($('legend'), p.scene, (op) => this.selection.set({ kind: 'op_type', opType: op }, 'app'));
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
    const h = formatHash(this.main.state, this.uiState());
    if (location.hash !== h) history.replaceState(null, '', h);
  }

  /** The URL fields besides the main pane's, from the live UI. */
  uiState(): UiState {
    const sel = this.selection.current;
    const p1 = this.panes[1];
    return {
      ...this.ui,
      selection: sel && sel.kind !== 'node' ? sel : null,
      clock: this.timeline ? this.clock : this.ui.clock,
      color: this.main.colorMode,
      compare: this.comparing && p1 ? { run: p1.state.run, level: p1.state.level } : null,
    };
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
    this.reapplyGraphSelection();
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
    p.linkedIds = [];
    p.updateHighlights();
    const sel: Selection = { kind: 'node', level: p.state.level, id, run: p.state.run };
    if (!sameSelection(this.selection.current, sel)) this.selection.set(sel, 'graph');
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

  /** Compare mode on / off: a second pane (the other level of the run by default, or `target`). */
  async setCompare(on: boolean, target?: { run: number; level: string }): Promise<void> {
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
      this.writeHash();
      return;
    }
    const st = this.main.state;
    const levels = this.runs[st.run]?.levels ?? [st.level];
    const otherLevel = levels.find((l) => l !== st.level) ?? st.level;
    let p = this.panes[1];
    if (!p) {
      p = new Pane($('graph2') as HTMLCanvasElement, $('minimap2') as HTMLCanvasElement, this,
        { ...st, run: target?.run ?? st.run, level: target?.level ?? otherLevel, expand: [], collapse: [], node: null }, this.forceCanvas);
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
    this.writeHash();
  }

  setColorMode(mode: ColorMode): void {
    ($('color-by') as HTMLSelectElement).value = mode;
    for (const p of this.panes) p.setColorMode(mode);
    this.renderPanels();
    this.writeHash();
  }

  setLineage(on: boolean): void {
    ($('lineage') as HTMLInputElement).checked = on;
    for (const p of this.panes) { p.lineage = on; p.updateHighlights(); }
    this.renderPanels();
    const sel = this.selection.current;
    if (sel?.kind === 'node') void this.showNodePaths(sel.run ?? this.main.state.run, sel.level, sel.id);
    else if (!on) this.clearNodePaths();
  }

  /** Tasks on the timeline's path overlay for the lineage, not the critical path. */
  private pathIsLineage = false;
  /** Task ids of the last node-paths overlay (tests). */
  lineageTasks: number[] = [];

  /**
   * With lineage on, a selected node's dependency paths (every node on a
   * path from the inputs to it and from it to the outputs, from the server)
   * are drawn on the timeline as the tasks that executed them, while the
   * graph highlights the same lineage through its visible edges.
   */
  private async showNodePaths(run: number, level: string, node: number): Promise<void> {
    if (!this.main.lineage || !this.timeline || run !== this.main.state.run) { this.clearNodePaths(); return; }
    const paths = await this.api.nodePaths(run, level, node).catch(() => null);
    const sel = this.selection.current;
    if (sel?.kind !== 'node' || sel.id !== node || !this.main.lineage) return;
    if (!paths) { this.clearNodePaths(); return; }
    const own = paths.node_tasks ?? this.selectedTasks;
    this.lineageTasks = [...paths.ancestor_tasks, ...own, ...paths.descendant_tasks];
    this.pathIsLineage = true;
    this.timeline.setPath(this.lineageTasks);
  }

  private clearNodePaths(): void {
    this.lineageTasks = [];
    if (this.pathIsLineage) this.timeline?.setPath(null);
    this.pathIsLineage = false;
  }

  // ---- bottom panel: timeline | mapping | summary ----
  private initBottomPanel(): void {
    for (const b of Array.from($('tabs').querySelectorAll<HTMLButtonElement>('button[data-tab]'))) {
      b.addEventListener('click', () => {
        if (this.ui.panel === 'graph') this.setPanel('split');
        this.setTab(b.dataset.tab as BottomTab);
      });
    }
    $('max-graph').addEventListener('click', () => this.setPanel(this.ui.panel === 'graph' ? 'split' : 'graph'));
    $('max-split').addEventListener('click', () => this.setPanel('split'));
    $('max-bottom').addEventListener('click', () => this.setPanel(this.ui.panel === 'bottom' ? 'split' : 'bottom'));
    ($('tl-compare') as HTMLSelectElement).addEventListener('change', (e) => {
      const v = (e.target as HTMLSelectElement).value;
      this.ui.timelineCompare = v === '' ? null : parseInt(v, 10);
      this.timeline?.setCompareRun(this.ui.timelineCompare, this.ui.align);
      this.writeHash();
    });
    ($('tl-align') as HTMLSelectElement).value = this.ui.align;
    ($('tl-align') as HTMLSelectElement).addEventListener('change', (e) => {
      this.ui.align = (e.target as HTMLSelectElement).value === 'first_run' ? 'first_run' : 'start';
      if (this.ui.timelineCompare !== null) this.timeline?.setCompareRun(this.ui.timelineCompare, this.ui.align);
      this.writeHash();
    });
    $('tl-zoom-sel').addEventListener('click', () => this.timeline?.zoomToSelection());
    // The timeline's own toolbar switches the clock: the URL follows (after its handler ran).
    $('timeline').addEventListener('change', () => setTimeout(() => this.writeHash(), 0));
    // Splitter: drag to resize the bottom panel.
    const splitter = $('splitter'), bottom = $('bottom'), work = $('work');
    splitter.addEventListener('pointerdown', (e) => {
      splitter.setPointerCapture(e.pointerId);
      splitter.classList.add('dragging');
      const move = (ev: PointerEvent): void => {
        const r = work.getBoundingClientRect();
        const h = Math.min(r.height - 80, Math.max(34, r.bottom - ev.clientY - 3));
        bottom.style.height = `${h}px`;
      };
      const up = (): void => {
        splitter.classList.remove('dragging');
        splitter.removeEventListener('pointermove', move);
        splitter.removeEventListener('pointerup', up);
      };
      splitter.addEventListener('pointermove', move);
      splitter.addEventListener('pointerup', up);
    });
    new ResizeObserver(() => this.resizeBottom()).observe($('bottom-body'));
    this.setTab(this.ui.tab);
    this.setPanel(this.ui.panel);
  }

  private resizeBottom(): void {
    if (this.ui.tab === 'timeline') this.timeline?.resize();
    if (this.ui.tab === 'mapping') this.mapping.resize();
  }

  /** Shows a tab of the bottom panel (opening its view for the main run on first show). */
  setTab(tab: BottomTab): void {
    this.ui.tab = tab;
    for (const b of Array.from($('tabs').querySelectorAll<HTMLElement>('button[data-tab]'))) b.classList.toggle('active', b.dataset.tab === tab);
    for (const t of ['timeline', 'mapping', 'summary'] as const) $(t).hidden = t !== tab;
    $('timeline-tools').hidden = tab !== 'timeline';
    this.openBottomViews();
    this.resizeBottom();
    this.writeHash();
  }

  /** 'split' | 'graph' (panel folded to its tab bar) | 'bottom' (graph hidden). */
  setPanel(mode: PanelMode): void {
    this.ui.panel = mode;
    document.body.classList.toggle('panel-graph', mode === 'graph');
    document.body.classList.toggle('panel-bottom', mode === 'bottom');
    for (const [id, m] of [['max-graph', 'graph'], ['max-split', 'split'], ['max-bottom', 'bottom']] as const) $(id).classList.toggle('active', mode === m);
    this.resize();
    this.resizeBottom();
    this.writeHash();
  }

  private fillCompareRuns(): void {
    const sel = $('tl-compare') as HTMLSelectElement;
    sel.textContent = '';
    const none = document.createElement('option');
    none.value = '';
    none.textContent = 'none';
    sel.append(none);
    for (const r of this.runs) {
      if (!r.has_trace) continue;
      const o = document.createElement('option');
      o.value = String(r.id);
      o.textContent = `${r.id}: ${r.name}`;
      sel.append(o);
    }
    sel.value = this.ui.timelineCompare !== null ? String(this.ui.timelineCompare) : '';
  }

  /** The main pane's run changed (or was first loaded): the bottom views follow it. */
  private async runChanged(): Promise<void> {
    const run = this.main.state.run;
    this.lastTask = null;
    this.timelineMeta = null;
    if (this.runs[run]?.has_trace) {
      this.timelineMeta = await this.api.timeline(run).catch((e: Error) => { this.banner(`timeline: ${e.message}`); return null; });
    }
    this.summaryOpened = this.summaryView.open(run, this.timelineMeta?.start_ns ?? 0);
    this.viewRun.summary = run;
    await this.openBottomViews();
  }

  /** Resolves when the summary view of the current run has loaded (tests, deep links to findings). */
  summaryOpened: Promise<void> = Promise.resolve();

  private async openBottomViews(): Promise<void> {
    if (!this.runs.length) return;
    const run = this.main.state.run;
    const tab = this.ui.tab;
    if (tab === 'mapping' && this.viewRun.mapping !== run) {
      this.viewRun.mapping = run;
      this.mapping.open(run);
    }
    if (this.viewRun.timeline !== run) {
      this.viewRun.timeline = run;
      const root = $('timeline');
      if (!this.runs[run]?.has_trace) {
        this.timeline?.destroy();
        this.timeline = null;
        root.textContent = '';
        const m = document.createElement('div');
        m.className = 'tab-message';
        m.textContent = `run ${run} has no trace: nothing to show on a timeline. Open a run with a profile (e.g. model-inspector open MODEL PROFILE) for the timeline, mapping times and summary.`;
        root.append(m);
        return;
      }
      if (!this.timeline) {
        root.textContent = '';
        this.timeline = new TimelineView(root, {
          taskClicked: (taskId) => this.selection.set({ kind: 'task', ids: [taskId] }, 'timeline'),
          rangeSelected: (startNs, endNs, tracks) => this.selection.set({ kind: 'range', startNs, endNs, tracks }, 'timeline'),
          rangeCleared: () => { if (this.selection.current?.kind === 'range') this.selection.clear('timeline'); },
        }, { forceCanvas2d: this.forceCanvas });
      }
      const tl = this.timeline;
      try {
        await tl.open(run);
      } catch (e) {
        this.banner(`timeline: ${(e as Error).message}`);
        return;
      }
      if (this.ui.clock !== 'raw') tl.setClock(this.ui.clock);
      const cmp = this.ui.timelineCompare;
      if (cmp !== null && cmp !== run && this.runs[cmp]?.has_trace) tl.setCompareRun(cmp, this.ui.align);
      document.body.dataset.timeline = String(run);
    }
  }

  /** The clock the timeline shows (its own toolbar can switch it). */
  get clock(): 'raw' | 'calibrated' {
    return this.timeline?.state.clock === 'calibrated' ? 'calibrated' : 'raw';
  }

  /** Mapping "tasks" cell of a node row: every task of the node. */
  private async selectNodeTasks(node: number): Promise<void> {
    try {
      const r = await this.api.nodeTasks(this.main.state.run, node);
      if (r.tasks.length) this.selection.set({ kind: 'task', ids: r.tasks }, 'mapping');
    } catch (e) {
      this.banner(`tasks of node ${node}: ${(e as Error).message}`);
    }
  }

  /**
   * The one place a selection reaches every view. `source` need not be told
   * what it already shows (the graph selected its own node, the timeline
   * drew its own range), but is told the rest.
   */
  private async onSelection(sel: Selection | null, source: SelectionSource): Promise<void> {
    const seq = ++this.resolveSeq;
    const run = this.main.state.run;
    const stale = (): boolean => seq !== this.resolveSeq;
    this.writeHash();
    // Undo what the previous selection set up in other views.
    if (this.opFilterFromSelection && sel?.kind !== 'op_type') {
      this.opFilterFromSelection = false;
      this.timeline?.setFilter({});
    }
    if (sel?.kind !== 'range') this.summaryView.clearRange();
    // (A node picked from that list keeps it.)
    if (this.searchFromSelection && sel?.kind !== 'op_type' && sel?.kind !== 'node') {
      this.searchFromSelection = false;
      ($('search') as HTMLInputElement).value = '';
      this.search.clear();
    }
    if (sel?.kind !== 'task') this.lastTask = null;
    if (sel?.kind !== 'node') this.clearNodePaths();
    this.summaryView.setSelection(sel?.kind === 'op_type' ? sel.opType : null, sel?.kind === 'finding' ? sel.index : -1);
    $('bottom-status').textContent = describeSelection(sel);
    if (!sel) {
      this.highlightTasks([], false);
      this.mapping.setHighlight({ nodes: new Set(), tasks: new Set(), opType: null });
      for (const p of this.panes) if (p.linkedIds.length || p.state.node !== null) { p.linkedIds = []; if (source !== 'graph') p.state.node = null; p.updateHighlights(); }
      if (source !== 'graph') this.details.clear();
      this.resolvedVersion++;
      return;
    }
    switch (sel.kind) {
      case 'node': {
        if (source !== 'graph') await this.openNode(sel.level, sel.id);
        if (stale()) return;
        this.mapping.setHighlight({ nodes: new Set([sel.id]), tasks: new Set(), opType: null }, (sel.run ?? run) === run ? { node: sel.id } : null);
        this.summaryView.setSelection(this.opTypeOfNode(sel.id), -1);
        if ((sel.run ?? run) !== run || !this.timeline) { this.highlightTasks([], false); break; }
        const r = await this.api.nodeTasks(run, sel.id).catch(() => null);
        if (stale()) return;
        this.highlightTasks(r?.tasks ?? [], source !== 'timeline' && !!r?.tasks.length, r ?? undefined);
        await this.showNodePaths(run, sel.level, sel.id);
        break;
      }
      case 'task': {
        this.highlightTasks(sel.ids, source !== 'timeline');
        this.details.loading();
        let t: TaskDetails;
        try {
          t = await this.api.task(run, sel.ids[0]);
        } catch (e) {
          if (!stale()) this.details.showError((e as Error).message);
          return;
        }
        if (stale()) return;
        this.lastTask = t;
        this.details.showTask(t, this.timelineMeta?.start_ns ?? 0);
        this.mapping.setHighlight({ nodes: new Set(t.node ? [t.node.id] : []), tasks: new Set(sel.ids), opType: null }, { task: sel.ids[0] });
        this.summaryView.setSelection(t.op_type || null, -1);
        await this.showTaskInGraph(t);
        break;
      }
      case 'op_type': {
        this.mapping.setHighlight({ nodes: new Set(), tasks: new Set(), opType: sel.opType });
        const row = this.summaryView.summary?.op_types.find((o) => o.op_type === sel.opType) ?? null;
        this.details.showOpType(sel.opType, row);
        this.opFilterFromSelection = true;
        this.timeline?.setFilter({ opTypes: [sel.opType] });
        this.highlightTasks([], false);
        this.searchFromSelection = true;
        await this.search.run(sel.opType, 'op');
        break;
      }
      case 'finding': {
        let { nodes, tasks } = sel;
        let f: FindingJson | undefined;
        if (!nodes.length && !tasks.length) {
          await this.summaryOpened;
          if (stale()) return;
          f = this.summaryView.findings[sel.index];
          if (!f) { this.details.showError(`no finding ${sel.index} in this run's analyses`); break; }
          nodes = findingIds(f.nodes);
          tasks = findingIds(f.tasks);
        }
        f ??= this.summaryView.findings[sel.index];
        if (f) this.details.showFinding(f, nodes.length, tasks.length);
        this.mapping.setHighlight({ nodes: new Set(nodes), tasks: new Set(tasks), opType: null },
          nodes.length ? { node: nodes[0] } : tasks.length ? { task: tasks[0] } : null);
        this.highlightTasks(tasks, tasks.length > 0);
        await this.linkNodesInGraph(nodes);
        break;
      }
      case 'range': {
        this.mapping.setHighlight({ nodes: new Set(), tasks: new Set(), opType: null });
        if (source === 'url') this.timeline?.zoomTo(sel.startNs, sel.endNs);
        const s = await this.summaryView.showRange(sel.startNs, sel.endNs, this.clock);
        if (stale()) return;
        if (s) this.details.showRange(s, sel.startNs, sel.endNs, this.timelineMeta?.start_ns ?? 0);
        break;
      }
    }
    if (!stale()) this.resolvedVersion++;
  }

  /** The op type of a node drawn in a pane (its summary row), or null. */
  private opTypeOfNode(id: number): string | null {
    for (const p of this.panes) {
      const l = p.scene?.layout, it = p.itemOfNode(id);
      if (l && it >= 0 && l.itemKind[it] === ItemKind.Node) return l.str(l.itemTitle[it]);
    }
    return null;
  }

  private highlightTasks(ids: number[], focus: boolean, extent?: { start_ns: number; end_ns: number }): void {
    this.selectedTasks = ids;
    if (!this.timeline) return;
    this.timeline.highlightTasks(ids, focus ? { focus: true, startNs: extent?.start_ns, endNs: extent?.end_ns } : undefined);
  }

  /**
   * A task's node in the graph: a pane showing the node's level selects and
   * centres it; a framework pane when the node is compiled outlines (links)
   * its fused_from nodes instead. Details stay on the task.
   */
  private async showTaskInGraph(t: TaskDetails): Promise<void> {
    if (!t.node) return;
    const node = t.node;
    for (const p of this.panes) {
      if (p !== this.main && !this.comparing) continue;
      if (p.state.run !== this.main.state.run) continue;
      if (p.state.level === node.level) {
        p.linkedIds = [];
        if (await p.reveal(node.id)) p.centreOnNode(node.id);
        p.state.node = node.id;
      } else if (p.state.level === 'framework' && t.fused_from.length) {
        const ids = t.fused_from.map((r) => r.id);
        p.state.node = null;
        p.linkedIds = ids;
        for (const id of ids.slice(0, 16)) if (!p.nodeVisible(id)) await p.reveal(id);
        p.centreOnNodes(ids);
      } else {
        continue;
      }
      p.selectedGroup = -1;
      p.updateHighlights();
    }
    this.writeHash();
  }

  /** After a level switch: draw the current selection's graph part on the new level. */
  private reapplyGraphSelection(): void {
    const sel = this.selection.current;
    if (sel?.kind === 'task' && this.lastTask) {
      this.details.showTask(this.lastTask, this.timelineMeta?.start_ns ?? 0);
      void this.showTaskInGraph(this.lastTask);
    } else if (sel?.kind === 'op_type') {
      this.searchFromSelection = true;
      void this.search.run(sel.opType, 'op');
    } else if (sel?.kind === 'finding') {
      void this.linkNodesInGraph(sel.nodes);
    }
  }

  /** Outlines (links) nodes of the main pane — finding evidence, the critical path — revealing the first few. */
  private async linkNodesInGraph(ids: number[]): Promise<void> {
    const p = this.main;
    let present = ids.filter((id) => p.itemOfNode(id) >= 0);
    if (present.length < ids.length && p.state.level === 'framework' && this.runs[p.state.run]?.levels.includes('compiled')) {
      // Compiled nodes (e.g. of the critical path) stand for their fused_from nodes here (the first 64 asked).
      const seq = this.resolveSeq;
      const missing = ids.filter((id) => p.itemOfNode(id) < 0).slice(0, 64);
      const details = await Promise.all(missing.map((id) => this.api.node(p.state.run, 'compiled', id).catch(() => null)));
      if (seq !== this.resolveSeq) return;
      const more = new Set(present);
      for (const d of details) for (const r of d?.fused_from ?? []) if (p.itemOfNode(r.id) >= 0) more.add(r.id);
      present = [...more];
    }
    p.state.node = null;
    p.linkedIds = present;
    for (const id of present.slice(0, 8)) if (!p.nodeVisible(id)) await p.reveal(id);
    if (present.length) p.centreOnNodes(present.slice(0, 8));
    p.updateHighlights();
    this.writeHash();
  }

  /** The critical path on graph (linked outline) and timeline (path); null clears both. */
  private showCriticalPath(cp: CriticalPathJson | null): void {
    this.pathIsLineage = false;
    this.timeline?.setPath(cp ? cp.tasks : null);
    if (cp) void this.linkNodesInGraph(cp.nodes);
    else { this.main.linkedIds = []; this.main.updateHighlights(); }
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

function describeSelection(sel: Selection | null): string {
  if (!sel) return '';
  switch (sel.kind) {
    case 'node': return `selected: ${sel.level} node ${sel.id}`;
    case 'task': return sel.ids.length === 1 ? `selected: task ${sel.ids[0]}` : `selected: ${sel.ids.length} tasks`;
    case 'op_type': return `selected: op type ${sel.opType}`;
    case 'finding': return `selected: finding ${sel.index}`;
    case 'range': return `selected: range of ${((sel.endNs - sel.startNs) / 1e3).toFixed(1)} µs`;
  }
}
