// The application: owns the view state (run, level, grouping, expanded and
// collapsed groups, selected node; mirrored in the URL hash), loads layouts
// from the server, and wires the canvas, camera, minimap, search, details
// and legend together. Drawing is on demand (one requestAnimationFrame per
// change), never a continuous loop.

import { Api, type Grouping, type RunInfo } from './api';
import { attachCameraInput, Camera } from './camera';
import { DetailsPanel } from './details_panel';
import { decodeLayout, graphNodeCount, ItemKind, kGroupExpanded, kNone, type Layout } from './layout_binary';
import { renderLegend } from './legend';
import { Minimap } from './minimap';
import { Canvas2DRenderer } from './renderer_canvas2d';
import { createWebGLRenderer } from './renderer_webgl';
import type { Renderer } from './renderer';
import { Scene } from './scene';
import { Search } from './search';
import { formatHash, parseHash, type ViewState } from './url_state';

export const kDefaultMaxItems = 2000;

function $(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (!e) throw new Error(`missing #${id} in index.html`);
  return e;
}

export class App {
  readonly api = new Api();
  readonly cam = new Camera();
  readonly renderer: Renderer;
  state: ViewState;
  runs: RunInfo[] = [];
  scene: Scene | null = null;
  /** Model NodeId → layout node index (graph nodes only) of the current layout. */
  private nodeIndex = new Map<number, number>();
  private matchIds: number[] = [];
  private selectedItem = -1;
  private selectedGroup = -1;
  private readonly perLevel = new Map<string, { expand: number[]; collapse: number[] }>();
  private loadSeq = 0;
  private pendingFrame = false;
  private readonly canvas = $('graph') as HTMLCanvasElement;
  private readonly minimap: Minimap;
  private readonly details: DetailsPanel;
  private readonly search: Search;
  private fileMode = false;
  // For tests and the benchmark (window.__mi).
  renderCount = 0;
  layoutCount = 0;
  lastLoadMs = { fetch: 0, scene: 0 };
  firstRenderAt = 0;

  constructor() {
    this.state = parseHash(location.hash);
    const forceCanvas = new URLSearchParams(location.search).get('renderer') === 'canvas2d';
    this.renderer = (!forceCanvas && createWebGLRenderer(this.canvas)) || new Canvas2DRenderer(this.canvas);
    document.body.dataset.renderer = this.renderer.kind;
    this.minimap = new Minimap($('minimap') as HTMLCanvasElement, this.cam);
    this.details = new DetailsPanel($('details'), { openNode: (level, id) => void this.openNode(level, id) });
    this.details.clear();
    this.search = new Search($('search') as HTMLInputElement, $('search-mode') as HTMLSelectElement, $('results'), {
      api: this.api,
      run: () => this.state.run,
      level: () => this.state.level,
      pick: (id) => void this.revealAndSelect(id),
      matched: (ids) => { this.matchIds = ids; this.updateHighlights(); },
      error: (m) => this.banner(m),
    });
    this.cam.onChange(() => this.requestRender());
    attachCameraInput(this.canvas, this.cam, {
      fit: () => this.fit(),
      onClick: (sx, sy) => this.click(sx, sy),
      onDoubleClick: (sx, sy) => void this.doubleClick(sx, sy),
    });
    new ResizeObserver(() => this.resize()).observe($('view'));
    this.resize();
    $('fit').addEventListener('click', () => this.fit());
    ($('run') as HTMLSelectElement).addEventListener('change', (e) => {
      const run = parseInt((e.target as HTMLSelectElement).value, 10);
      this.perLevel.clear();
      this.state = { ...this.state, run, level: this.runs[run]?.levels[0] ?? 'framework', expand: [], collapse: [], node: null };
      void this.reload(true);
    });
    ($('grouping') as HTMLSelectElement).addEventListener('change', (e) => {
      this.perLevel.clear();
      this.state = { ...this.state, grouping: (e.target as HTMLSelectElement).value as Grouping, expand: [], collapse: [] };
      void this.reload(true);
    });
    ($('file') as HTMLInputElement).addEventListener('change', (e) => {
      const f = (e.target as HTMLInputElement).files?.[0];
      if (f) void this.openFile(f);
    });
    window.addEventListener('hashchange', () => {
      if (location.hash === formatHash(this.state)) return;
      this.state = parseHash(location.hash);
      void this.reload(true);
    });
  }

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
    if (!this.runs[this.state.run]) this.state.run = 0;
    if (!this.runs[this.state.run].levels.includes(this.state.level)) this.state.level = this.runs[this.state.run].levels[0];
    await this.reload(true);
    if (this.state.node !== null) await this.revealAndSelect(this.state.node);
  }

  private resize(): void {
    const view = $('view');
    const w = view.clientWidth, h = view.clientHeight;
    this.renderer.resize(w, h, window.devicePixelRatio || 1);
    this.cam.setViewport(w, h);
  }

  requestRender(): void {
    if (this.pendingFrame) return;
    this.pendingFrame = true;
    requestAnimationFrame(() => {
      this.pendingFrame = false;
      this.renderer.render(this.cam);
      this.minimap.draw();
      if (this.scene) {
        if (this.renderCount++ === 0) this.firstRenderAt = performance.now();
        document.body.dataset.rendered = String(this.renderCount);
      }
    });
  }

  banner(message: string | null): void {
    const b = $('banner');
    b.hidden = !message;
    b.textContent = message ?? '';
  }

  private status(): void {
    const s = this.scene;
    const l = s?.layout;
    $('status').textContent = l
      ? `${l.itemCount} items · ${l.edgeCount} edges · ${l.nodeCount} nodes · ${this.renderer.kind}`
      : this.renderer.kind;
  }

  private renderLevels(): void {
    const root = $('levels');
    root.textContent = '';
    const levels = this.runs[this.state.run]?.levels ?? [];
    for (const lv of levels) {
      const b = document.createElement('button');
      b.textContent = lv;
      b.dataset.level = lv;
      if (lv === this.state.level) b.classList.add('active');
      b.addEventListener('click', () => void this.switchLevel(lv));
      root.append(b);
    }
    ($('grouping') as HTMLSelectElement).value = this.state.grouping;
    ($('run') as HTMLSelectElement).value = String(this.state.run);
  }

  private writeHash(): void {
    const h = formatHash(this.state);
    if (location.hash !== h) history.replaceState(null, '', h);
  }

  fit(): void {
    const l = this.scene?.layout;
    if (l) this.cam.fit({ x: 0, y: 0, w: l.width, h: l.height });
  }

  /** Fetches the layout for the current state; keeps `anchorGroup` where it was on screen. */
  async reload(fit: boolean, anchorGroup = -1): Promise<boolean> {
    if (this.fileMode) return false;
    this.renderLevels();
    this.writeHash();
    const seq = ++this.loadSeq;
    const t0 = performance.now();
    let layout: Layout;
    try {
      layout = await this.api.layout({
        run: this.state.run, level: this.state.level, grouping: this.state.grouping, direction: this.state.direction,
        maxItems: kDefaultMaxItems, expand: this.state.expand, collapse: this.state.collapse,
      });
    } catch (e) {
      if (seq === this.loadSeq) this.banner((e as Error).message);
      return false;
    }
    if (seq !== this.loadSeq) return false;
    this.banner(null);
    this.lastLoadMs.fetch = performance.now() - t0;
    let anchor: { sx: number; sy: number } | null = null;
    const old = this.scene?.layout;
    if (anchorGroup >= 0 && old && anchorGroup < old.groupCount) {
      const b = old.groupBounds;
      anchor = { sx: this.cam.toScreenX(b[4 * anchorGroup] + b[4 * anchorGroup + 2] / 2), sy: this.cam.toScreenY(b[4 * anchorGroup + 1]) };
    }
    this.setLayout(layout);
    if (anchor && anchorGroup < layout.groupCount) {
      const b = layout.groupBounds;
      this.cam.pin(b[4 * anchorGroup] + b[4 * anchorGroup + 2] / 2, b[4 * anchorGroup + 1], anchor.sx, anchor.sy);
    } else if (fit) {
      this.fit();
    }
    return true;
  }

  private setLayout(layout: Layout): void {
    const t0 = performance.now();
    this.scene = new Scene(layout);
    this.nodeIndex.clear();
    const n = graphNodeCount(layout);
    for (let i = 0; i < n; ++i) this.nodeIndex.set(layout.nodeModelId[i], i);
    this.renderer.setScene(this.scene);
    this.lastLoadMs.scene = performance.now() - t0;
    this.layoutCount++;
    this.minimap.setScene(this.scene);
    renderLegend($('legend'), this.scene, (op) => void this.search.run(op, 'op'));
    this.selectedGroup = -1;
    this.updateHighlights();
    this.status();
    this.requestRender();
  }

  /** The item showing model node `id` (itself or a collapsed group), or -1. */
  itemOfNode(id: number): number {
    const l = this.scene?.layout;
    const n = this.nodeIndex.get(id);
    if (!l || n === undefined) return -1;
    const it = l.nodeItem[n];
    return it === kNone ? -1 : it;
  }

  private updateHighlights(): void {
    if (!this.scene) return;
    const items = new Set<number>();
    for (const id of this.matchIds) {
      const it = this.itemOfNode(id);
      if (it >= 0) items.add(it);
    }
    this.selectedItem = this.state.node !== null ? this.itemOfNode(this.state.node) : -1;
    if (this.selectedItem < 0 && this.selectedGroup >= 0) {
      const l = this.scene.layout;
      for (let i = 0; i < l.itemCount; ++i) {
        if (l.itemKind[i] === ItemKind.Group && l.itemRef[i] === this.selectedGroup) { this.selectedItem = i; break; }
      }
    }
    this.renderer.setHighlights({ selected: this.selectedItem, matches: [...items] });
    this.requestRender();
  }

  private click(sx: number, sy: number): void {
    const s = this.scene;
    if (!s) return;
    const wx = this.cam.toWorldX(sx), wy = this.cam.toWorldY(sy);
    const l = s.layout;
    const i = s.itemAt(wx, wy);
    if (i >= 0) {
      const kind = l.itemKind[i];
      if (kind === ItemKind.Node) { void this.select(l.itemModelId[i]); return; }
      if (kind === ItemKind.Group) { this.selectGroup(l.itemRef[i], false); return; }
      this.state.node = null;
      this.details.clear(`${kind === ItemKind.GraphInput ? 'graph input' : 'graph output'} ${l.str(l.itemTitle[i])}`);
      this.updateHighlights();
      this.writeHash();
      return;
    }
    const g = s.frameAt(wx, wy);
    if (g >= 0) this.selectGroup(g, true);
  }

  private selectGroup(g: number, expanded: boolean): void {
    this.selectedGroup = g;
    this.state.node = null;
    this.details.showGroup(this.scene!.layout, g, expanded);
    this.updateHighlights();
    this.writeHash();
  }

  private async doubleClick(sx: number, sy: number): Promise<void> {
    const s = this.scene;
    if (!s) return;
    const wx = this.cam.toWorldX(sx), wy = this.cam.toWorldY(sy);
    const i = s.itemAt(wx, wy);
    if (i >= 0 && s.layout.itemKind[i] === ItemKind.Group) {
      await this.expandGroup(s.layout.itemRef[i]);
      return;
    }
    if (i < 0) {
      const g = s.frameHeaderAt(wx, wy);
      if (g >= 0) await this.collapseGroup(g);
    }
  }

  async expandGroup(g: number): Promise<boolean> {
    this.state.collapse = this.state.collapse.filter((x) => x !== g);
    if (!this.state.expand.includes(g)) this.state.expand = [...this.state.expand, g];
    return this.reload(false, g);
  }

  async collapseGroup(g: number): Promise<boolean> {
    this.state.expand = this.state.expand.filter((x) => x !== g);
    if (!this.state.collapse.includes(g)) this.state.collapse = [...this.state.collapse, g];
    return this.reload(false, g);
  }

  async switchLevel(level: string): Promise<void> {
    if (level === this.state.level) return;
    this.perLevel.set(this.state.level, { expand: this.state.expand, collapse: this.state.collapse });
    const saved = this.perLevel.get(level) ?? { expand: [], collapse: [] };
    this.state = { ...this.state, level, expand: saved.expand, collapse: saved.collapse, node: null };
    this.details.clear();
    this.search.clear();
    await this.reload(true);
  }

  /** Opens a node of (possibly) another level: fused_from / fused_into links. */
  async openNode(level: string, id: number): Promise<void> {
    if (level !== this.state.level && (this.runs[this.state.run]?.levels ?? []).includes(level)) await this.switchLevel(level);
    await this.revealAndSelect(id);
  }

  /** Expands the collapsed groups around node `id`, centres on it and selects it. */
  async revealAndSelect(id: number): Promise<void> {
    for (let iter = 0; iter < 32; ++iter) {
      const it = this.itemOfNode(id);
      const l = this.scene?.layout;
      if (!l || it < 0) break;
      if (l.itemKind[it] !== ItemKind.Group) {
        const b = l.itemBox;
        this.cam.centreOn(b[4 * it] + b[4 * it + 2] / 2, b[4 * it + 1] + b[4 * it + 3] / 2, Math.max(this.cam.scale, 1));
        break;
      }
      if (!(await this.expandGroup(l.itemRef[it]))) break;
    }
    await this.select(id);
  }

  async select(id: number): Promise<void> {
    this.state.node = id;
    this.selectedGroup = -1;
    this.updateHighlights();
    this.writeHash();
    if (this.fileMode) { this.details.clear(`node ${id} (details need the server)`); return; }
    this.details.loading();
    try {
      const d = await this.api.node(this.state.run, this.state.level, id);
      if (this.state.node === id) this.details.showNode(d);
    } catch (e) {
      this.details.showError((e as Error).message);
    }
  }

  /** Shows a layout binary from a local file (no server needed). */
  async openFile(f: File): Promise<void> {
    try {
      const layout = decodeLayout(await f.arrayBuffer());
      this.fileMode = true;
      this.banner(null);
      this.setLayout(layout);
      this.fit();
      document.body.dataset.ready = 'file';
    } catch (e) {
      this.banner(`${f.name}: ${(e as Error).message}`);
    }
  }

  // ---- test hooks (window.__mi) ----
  /** Screen position (CSS px, relative to the canvas) of the centre of an item. */
  itemScreenCenter(i: number): { x: number; y: number } | null {
    const l = this.scene?.layout;
    if (!l || i < 0 || i >= l.itemCount) return null;
    const b = l.itemBox;
    return { x: this.cam.toScreenX(b[4 * i] + b[4 * i + 2] / 2), y: this.cam.toScreenY(b[4 * i + 1] + b[4 * i + 3] / 2) };
  }

  groupHeaderScreen(g: number): { x: number; y: number } | null {
    const l = this.scene?.layout;
    if (!l || g < 0 || g >= l.groupCount) return null;
    const b = l.groupBounds;
    return { x: this.cam.toScreenX(b[4 * g] + Math.min(40, b[4 * g + 2] / 2)), y: this.cam.toScreenY(b[4 * g + 1] + 10) };
  }

  isExpanded(g: number): boolean {
    const l = this.scene?.layout;
    return !!l && (l.groupFlags[g] & kGroupExpanded) !== 0;
  }

  rendererFrameMs(): number {
    return (this.renderer as unknown as { lastFrameMs: number }).lastFrameMs;
  }
}
