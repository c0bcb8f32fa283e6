// One graph pane: a canvas with its own renderer, camera, minimap, loaded
// layout and highlights. What it shows (run, level, grouping, expanded /
// collapsed groups, selected node) is the store's `PaneState`: the graph
// view hands it over with `show`, and the pane loads the layout when that
// differs from what it has. The pane's own folding changes (a double-click,
// a reveal) load at once, keeping the toggled group in place, and are told
// to the host, which dispatches them to the store. The structure view is
// one pane; compare mode shows two side by side (index.ts links them).

import type { Stats } from '../../base/stats';
import type { ApiClient } from '../../rpc/api';
import { graphNodeCount, ItemKind, kGroupExpanded, kNone, type Layout } from '../../rpc/layout_binary';
import type { ColorMode, PaneState } from '../../core/state';
import { attachCameraInput, Camera } from './camera';
import type { PaneDiff } from './diff_marks';
import { Minimap } from './minimap';
import { Canvas2DRenderer } from './renderer_canvas2d';
import { createWebGLRenderer } from './renderer_webgl';
import { kNoHighlights, type Highlights, type Renderer } from './renderer';
import { Scene, type ProbeMark } from './scene';

export const kDefaultMaxItems = 2000;

/** A pane's probe colouring and marks (index.ts builds it from the state's probe data). */
export interface PaneProbe {
  stat: string;
  reason: string | null;
  values: Map<number, number> | null;
  marks: Map<number, ProbeMark> | null;
}

export interface PaneHost {
  readonly api: ApiClient;
  /** A click on a node (id), a folded group / frame (group), or an input / output (io text). */
  clicked(pane: Pane, what: { node?: number; group?: number; expanded?: boolean; io?: string }): void;
  /** A new layout is shown. */
  layoutChanged(pane: Pane): void;
  /** The pane changed its own folding (double-click, reveal): the store should hold it. */
  foldingChanged(pane: Pane, expand: number[], collapse: number[]): void;
  banner(message: string | null): void;
}

/** The parts of a pane state that decide the layout request. */
function layoutKey(s: PaneState): string {
  return `${s.run}|${s.level}|${s.grouping}|${s.direction}|${s.expand.join(',')}|${s.collapse.join(',')}`;
}

export class Pane {
  readonly cam = new Camera();
  readonly renderer: Renderer;
  readonly minimap: Minimap;
  /** The state shown (or being loaded). */
  view: PaneState;
  scene: Scene | null = null;
  colorMode: ColorMode = 'op';
  /** Colour by compare metric: the compared run's node times (model node id → µs), or why there are none. */
  compare: { run: number | null; reason: string | null; times: Map<number, number> | null } = { run: null, reason: null, times: null };
  /** Colour by diff: this pane's side of the diff of two runs (diff_marks.ts), or why there is none. */
  diff: PaneDiff = { side: null, reason: null, marks: null };
  /** Colour by probe statistic: per model node id its value; marks (first NaN, first divergent) in every mode. */
  probe: PaneProbe = { stat: '', reason: null, values: null, marks: null };
  /** Highlight the ancestors and descendants of the selection. */
  lineage = false;
  /** Nodes matching the search. */
  matchIds: number[] = [];
  /** Nodes linked to the selection elsewhere (compare: fused_from / fused_into; a task's fused_from; a finding's evidence). */
  linkedIds: number[] = [];
  selectedGroup = -1;
  selectedItem = -1;
  fileMode = false;
  /** The latest layout load (resolves false when it failed or a newer one replaced it). */
  loading: Promise<boolean> = Promise.resolve(false);
  /** The highlights last handed to the renderer (SVG export draws the same). */
  highlights: Highlights = kNoHighlights;
  private readonly nodeIndex = new Map<number, number>();
  private loadSeq = 0;
  private requestedKey = '';
  private loadedKey = '';
  private pendingFrame = false;
  /** The raw layout, kept so a colour-mode switch rebuilds the scene without a request. */
  private layout: Layout | null = null;
  /**
   * Direction 'auto' is decided by the server on the first layout of a
   * run / level / grouping (the one that fits the window); later requests
   * (expand, collapse, reveal) keep it, so folding never flips the drawing.
   */
  private readonly autoDirection = new Map<string, 'tb' | 'lr'>();

  constructor(readonly canvas: HTMLCanvasElement, minimapCanvas: HTMLCanvasElement, private readonly host: PaneHost,
    state: PaneState, forceCanvas2d: boolean, private readonly maxItems: number,
    private readonly stats: Stats, private readonly statPrefix: string,
    /** Default view: the top-level groups folded (not with maxItems 0: everything expanded). */
    private readonly overview = true) {
    this.view = state;
    this.renderer = (!forceCanvas2d && createWebGLRenderer(canvas)) || new Canvas2DRenderer(canvas);
    this.minimap = new Minimap(minimapCanvas, this.cam);
    this.cam.onChange(() => this.requestRender());
    attachCameraInput(canvas, this.cam, {
      fit: () => this.fit(),
      onClick: (sx, sy) => this.click(sx, sy),
      onDoubleClick: (sx, sy) => void this.doubleClick(sx, sy),
    });
  }

  resize(w: number, h: number): void {
    this.renderer.resize(w, h, window.devicePixelRatio || 1);
    this.cam.setViewport(w, h);
  }

  requestRender(): void {
    if (this.pendingFrame) return;
    this.pendingFrame = true;
    requestAnimationFrame(() => {
      this.pendingFrame = false;
      this.renderer.render(this.cam);
      this.minimap.selectedItem = this.selectedItem;
      this.minimap.draw();
      if (this.scene) {
        if (!this.stats.num(`${this.statPrefix}.renders`)) this.stats.set(`${this.statPrefix}.first_render_at`, performance.now());
        this.stats.count(`${this.statPrefix}.renders`);
      }
    });
  }

  fit(): void {
    const l = this.scene?.layout;
    if (l) this.cam.fit({ x: 0, y: 0, w: l.width, h: l.height });
  }

  /**
   * Shows `st`: loads its layout (fitted) when it differs from the one
   * shown or loading; updates the selection highlight.
   */
  show(st: PaneState): void {
    this.view = st;
    const key = layoutKey(st);
    if (key !== this.requestedKey && !this.fileMode) {
      this.requestedKey = key;
      this.loading = this.load(st, true);
    }
    this.updateHighlights();
  }

  /**
   * Shows nothing: the pane state names no graph (a trace-only run, a run
   * that could not be opened). The layout of the run left behind is
   * dropped, never left on screen; a later `show` loads again.
   */
  clear(st: PaneState): void {
    this.view = st;
    ++this.loadSeq;
    this.requestedKey = '';
    this.loadedKey = '';
    this.loading = Promise.resolve(false);
    if (!this.scene) return;
    this.layout = null;
    this.scene = null;
    this.nodeIndex.clear();
    this.renderer.setScene(null);
    this.minimap.setScene(null);
    this.selectedGroup = -1;
    this.selectedItem = -1;
    this.host.layoutChanged(this);
    this.requestRender();
  }

  /** Whether the layout shown is the one the pane state asks for. */
  get current(): boolean { return this.scene !== null && (this.fileMode || this.loadedKey === this.requestedKey); }

  /** Waits until the layout the pane state asks for is shown (false when it could not be loaded). */
  async settled(): Promise<boolean> {
    for (let k = 0; k < 8 && !this.current; ++k) {
      const key = this.requestedKey;
      if (!(await this.loading) && key === this.requestedKey) return false;
    }
    return this.current;
  }

  /**
   * Fetches the layout of `st`. With `anchorGroup`, keeps that group's top
   * centre where it was on screen; else fits when `fit`. With `reveal`, the
   * server expands the groups on the path to that node, and the expanded
   * groups it reports (group_flags) that were not expanded before join this
   * pane's `expand` list (told to the host).
   */
  private async load(st: PaneState, fit: boolean, anchorGroup = -1, reveal: number | null = null): Promise<boolean> {
    const seq = ++this.loadSeq;
    const t0 = performance.now();
    let layout: Layout;
    try {
      if (reveal !== null) this.stats.count(`${this.statPrefix}.reveal_requests`);
      const autoKey = `${st.run}|${st.level}|${st.grouping}`;
      // Without the overview (?fold=budget) the first screen is the earlier one: top to bottom.
      const direction = st.direction !== 'auto' ? st.direction : this.overview ? (this.autoDirection.get(autoKey) ?? 'auto') : 'tb';
      layout = await this.host.api.layout({
        run: st.run, level: st.level, grouping: st.grouping, direction, aspect: this.cam.viewW / this.cam.viewH,
        maxItems: this.maxItems, expand: st.expand, collapse: st.collapse, reveal, overview: this.overview && this.maxItems !== 0,
      });
      if (st.direction === 'auto') this.autoDirection.set(autoKey, layout.direction);
    } catch (e) {
      if (seq === this.loadSeq) this.host.banner((e as Error).message);
      return false;
    }
    if (seq !== this.loadSeq) return false;
    this.host.banner(null);
    this.stats.set(`${this.statPrefix}.load_fetch_ms`, performance.now() - t0);
    const old = this.scene?.layout;
    let shown = st;
    if (reveal !== null && old && old.groupCount === layout.groupCount) {
      const expand = new Set(st.expand);
      const collapse = new Set(st.collapse);
      for (let g = 1; g < layout.groupCount; ++g) {
        if ((layout.groupFlags[g] & kGroupExpanded) && !(old.groupFlags[g] & kGroupExpanded)) { expand.add(g); collapse.delete(g); }
      }
      shown = { ...st, expand: [...expand], collapse: [...collapse] };
    }
    let anchor: { sx: number; sy: number } | null = null;
    if (anchorGroup >= 0 && old && anchorGroup < old.groupCount) {
      const b = old.groupBounds;
      anchor = { sx: this.cam.toScreenX(b[4 * anchorGroup] + b[4 * anchorGroup + 2] / 2), sy: this.cam.toScreenY(b[4 * anchorGroup + 1]) };
    }
    this.loadedKey = layoutKey(shown);
    this.stats.count(`${this.statPrefix}.layouts`);
    if (shown !== st) {
      // The state now names the groups the server opened (the URL reproduces the view without reveal=).
      this.view = { ...this.view, expand: shown.expand, collapse: shown.collapse };
      this.requestedKey = this.loadedKey;
    }
    this.setLayout(layout);
    if (anchor && anchorGroup < layout.groupCount) {
      const b = layout.groupBounds;
      this.cam.pin(b[4 * anchorGroup] + b[4 * anchorGroup + 2] / 2, b[4 * anchorGroup + 1], anchor.sx, anchor.sy);
    } else if (fit) {
      this.fit();
    }
    if (shown !== st) this.host.foldingChanged(this, shown.expand, shown.collapse);
    this.host.layoutChanged(this);
    return true;
  }

  private setLayout(layout: Layout): void {
    const t0 = performance.now();
    this.layout = layout;
    this.scene = new Scene(layout, {
      colorMode: this.colorMode, compareTimes: this.compare.times, compareRun: this.compare.run, compareReason: this.compare.reason,
      diffMarks: this.diff.marks, diffSide: this.diff.side, diffReason: this.diff.reason,
      diffNotes: { summary: this.diff.summary, failed: this.diff.failed, nodes: this.diff.nodes },
      probeValues: this.probe.values, probeStat: this.probe.stat, probeReason: this.probe.reason, probeMarks: this.probe.marks,
    });
    this.nodeIndex.clear();
    const n = graphNodeCount(layout);
    for (let i = 0; i < n; ++i) this.nodeIndex.set(layout.nodeModelId[i], i);
    this.renderer.setScene(this.scene);
    this.minimap.setScene(this.scene);
    this.stats.set(`${this.statPrefix}.load_scene_ms`, performance.now() - t0);
    this.selectedGroup = -1;
    this.updateHighlights();
    this.requestRender();
  }

  /** Switches the fill colouring (op type / time / share); rebuilds the scene, no request. */
  setColorMode(mode: ColorMode): void {
    if (mode === this.colorMode) return;
    this.colorMode = mode;
    if (!this.layout) return;
    const cam = { s: this.cam.scale, tx: this.cam.tx, ty: this.cam.ty };
    this.setLayout(this.layout);
    this.cam.scale = cam.s; this.cam.pin(0, 0, cam.tx, cam.ty);
    this.host.layoutChanged(this);
  }

  /** Sets the compared run's node times (colour by compare metric); rebuilds the scene when that mode shows. */
  setCompare(c: { run: number | null; reason: string | null; times: Map<number, number> | null }): void {
    this.compare = c;
    if (this.colorMode !== 'compare' || !this.layout) return;
    const cam = { s: this.cam.scale, tx: this.cam.tx, ty: this.cam.ty };
    this.setLayout(this.layout);
    this.cam.scale = cam.s; this.cam.pin(0, 0, cam.tx, cam.ty);
    this.host.layoutChanged(this);
  }

  /** Sets this pane's side of the diff (colour by diff); rebuilds the scene when that mode shows. */
  setDiff(d: PaneDiff): void {
    this.diff = d;
    if (this.colorMode !== 'diff' || !this.layout) return;
    const cam = { s: this.cam.scale, tx: this.cam.tx, ty: this.cam.ty };
    this.setLayout(this.layout);
    this.cam.scale = cam.s; this.cam.pin(0, 0, cam.tx, cam.ty);
    this.host.layoutChanged(this);
  }

  /** Sets the probe values and marks; rebuilds the scene (marks show in every colour mode). */
  setProbe(p: PaneProbe): void {
    this.probe = p;
    if (!this.layout) return;
    const cam = { s: this.cam.scale, tx: this.cam.tx, ty: this.cam.ty };
    this.setLayout(this.layout);
    this.cam.scale = cam.s; this.cam.pin(0, 0, cam.tx, cam.ty);
    this.host.layoutChanged(this);
  }

  /** The model node at screen point (sx, sy), or null (a right-click's target). */
  nodeAt(sx: number, sy: number): number | null {
    const s = this.scene;
    if (!s) return null;
    const i = s.itemAt(this.cam.toWorldX(sx), this.cam.toWorldY(sy));
    return i >= 0 && s.layout.itemKind[i] === ItemKind.Node ? s.layout.itemModelId[i] : null;
  }

  /** The item showing model node `id` (itself or a collapsed group), or -1. */
  itemOfNode(id: number): number {
    const l = this.scene?.layout;
    const n = this.nodeIndex.get(id);
    if (!l || n === undefined) return -1;
    const it = l.nodeItem[n];
    return it === kNone ? -1 : it;
  }

  /** Whether node `id` is drawn as itself (not inside a folded group). */
  nodeVisible(id: number): boolean {
    const it = this.itemOfNode(id);
    return it >= 0 && this.scene!.layout.itemKind[it] !== ItemKind.Group;
  }

  updateHighlights(): void {
    const s = this.scene;
    if (!s) return;
    const items = (ids: number[]): number[] => {
      const set = new Set<number>();
      for (const id of ids) { const it = this.itemOfNode(id); if (it >= 0) set.add(it); }
      return [...set];
    };
    this.selectedItem = this.view.node !== null ? this.itemOfNode(this.view.node) : -1;
    if (this.selectedItem < 0 && this.selectedGroup >= 0) {
      const l = s.layout;
      for (let i = 0; i < l.itemCount; ++i) {
        if (l.itemKind[i] === ItemKind.Group && l.itemRef[i] === this.selectedGroup) { this.selectedItem = i; break; }
      }
    }
    const lin = this.lineage && this.selectedItem >= 0 ? s.lineage(this.selectedItem) : null;
    this.highlights = {
      selected: this.selectedItem, matches: items(this.matchIds), linked: items(this.linkedIds),
      lineage: lin?.items, lineageEdges: lin?.edges,
    };
    this.renderer.setHighlights(this.highlights);
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
      if (kind === ItemKind.Node) { this.host.clicked(this, { node: l.itemModelId[i] }); return; }
      if (kind === ItemKind.Group) { this.host.clicked(this, { group: l.itemRef[i], expanded: false }); return; }
      const what = kind === ItemKind.GraphInput ? 'graph input' : kind === ItemKind.MissingInput ? 'missing input (produced by no node, graph input or initializer)' : 'graph output';
      this.host.clicked(this, { io: `${what} ${l.str(l.itemTitle[i])}` });
      return;
    }
    const g = s.frameAt(wx, wy);
    this.host.clicked(this, g >= 0 ? { group: g, expanded: true } : {});
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

  /** Expands group `g` (its top centre stays where it is on screen). */
  expandGroup(g: number): Promise<boolean> {
    const st = this.view;
    return this.refold(st.expand.includes(g) ? st.expand : [...st.expand, g], st.collapse.filter((x) => x !== g), g);
  }

  /** Collapses group `g` (its top centre stays where it is on screen). */
  collapseGroup(g: number): Promise<boolean> {
    const st = this.view;
    return this.refold(st.expand.filter((x) => x !== g), st.collapse.includes(g) ? st.collapse : [...st.collapse, g], g);
  }

  private refold(expand: number[], collapse: number[], anchorGroup: number): Promise<boolean> {
    if (this.fileMode) return Promise.resolve(false);
    const st = { ...this.view, expand, collapse };
    this.view = st;
    this.requestedKey = layoutKey(st);
    this.loading = this.load(st, false, anchorGroup);
    this.host.foldingChanged(this, expand, collapse);
    return this.loading;
  }

  /**
   * Makes node `id` visible: one layout request with reveal=id (the server
   * expands the groups on its path); a server without reveal leaves it
   * folded, so then expand the outermost folded group showing it, one
   * request each, until it shows.
   */
  async reveal(id: number): Promise<boolean> {
    if (!this.scene || this.itemOfNode(id) < 0) return false;
    if (this.nodeVisible(id)) return true;
    if (this.fileMode) return false;
    this.requestedKey = layoutKey(this.view);
    this.loading = this.load(this.view, false, -1, id);
    if (!(await this.loading)) return false;
    for (let iter = 0; iter < 32 && !this.nodeVisible(id); ++iter) {
      const it = this.itemOfNode(id);
      if (it < 0) return false;
      if (!(await this.expandGroup(this.scene!.layout.itemRef[it]))) return false;
    }
    return this.nodeVisible(id);
  }

  /** Centres the view on node `id` (zooming in to reading size). */
  centreOnNode(id: number): void {
    const it = this.itemOfNode(id);
    const l = this.scene?.layout;
    if (!l || it < 0) return;
    const b = l.itemBox;
    this.cam.centreOn(b[4 * it] + b[4 * it + 2] / 2, b[4 * it + 1] + b[4 * it + 3] / 2, Math.max(this.cam.scale, 1));
  }

  /** Centres on the bounding box of some nodes (compare mode: the linked ones). */
  centreOnNodes(ids: number[]): void {
    const l = this.scene?.layout;
    if (!l || !ids.length) return;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    const b = l.itemBox;
    for (const id of ids) {
      const it = this.itemOfNode(id);
      if (it < 0) continue;
      x0 = Math.min(x0, b[4 * it]); y0 = Math.min(y0, b[4 * it + 1]);
      x1 = Math.max(x1, b[4 * it] + b[4 * it + 2]); y1 = Math.max(y1, b[4 * it + 1] + b[4 * it + 3]);
    }
    if (x0 === Infinity) return;
    const scale = Math.min(Math.max(this.cam.scale, 1), 1, (this.cam.viewW - 80) / Math.max(1, x1 - x0), (this.cam.viewH - 80) / Math.max(1, y1 - y0));
    this.cam.centreOn((x0 + x1) / 2, (y0 + y1) / 2, scale);
  }

  /** Shows a layout binary from a local file (no server). */
  openLayout(layout: Layout): void {
    this.fileMode = true;
    this.loadSeq++;
    this.stats.count(`${this.statPrefix}.layouts`);
    this.setLayout(layout);
    this.fit();
    this.host.layoutChanged(this);
  }
}
