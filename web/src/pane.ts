// One graph pane: a canvas with its own renderer, camera, minimap, layout
// state (run, level, grouping, expanded / collapsed groups, selection) and
// highlights. The structure view is one pane; compare mode shows two side by
// side (app.ts links their selections). Loading, folding and revealing live
// here; the panels (details, search, legend) belong to the app.

import { Api, type Grouping } from './api';
import { attachCameraInput, Camera } from './camera';
import { decodeLayout, graphNodeCount, ItemKind, kGroupExpanded, kNone, type Layout } from './layout_binary';
import { Minimap } from './minimap';
import { Canvas2DRenderer } from './renderer_canvas2d';
import { createWebGLRenderer } from './renderer_webgl';
import { kNoHighlights, type Highlights, type Renderer } from './renderer';
import { Scene, type ColorMode } from './scene';
import type { ViewState } from './url_state';

export const kDefaultMaxItems = 2000;

/** Visible-item budget of layout requests: ?max_items=N on the page URL (0 = all expanded), else 2000. */
function maxItemsFromUrl(): number {
  const v = new URLSearchParams(location.search).get('max_items');
  return v !== null && /^\d+$/.test(v) ? parseInt(v, 10) : kDefaultMaxItems;
}

export interface PaneHost {
  readonly api: Api;
  /** A click on a node (id), a folded group / frame (group), or an input / output (io text). */
  clicked(pane: Pane, what: { node?: number; group?: number; expanded?: boolean; io?: string }): void;
  /** A new layout is shown (legend, status line). */
  layoutChanged(pane: Pane): void;
  /** The camera moved (compare mode: sync). */
  cameraMoved?(pane: Pane): void;
  banner(message: string | null): void;
}

export class Pane {
  readonly cam = new Camera();
  readonly renderer: Renderer;
  readonly minimap: Minimap;
  state: ViewState;
  scene: Scene | null = null;
  colorMode: ColorMode = 'op';
  /** Highlight the ancestors and descendants of the selection. */
  lineage = false;
  matchIds: number[] = [];
  /** Nodes linked to the other pane's selection (fused_from / fused_into). */
  linkedIds: number[] = [];
  selectedGroup = -1;
  selectedItem = -1;
  fileMode = false;
  private readonly nodeIndex = new Map<number, number>();
  private readonly perLevel = new Map<string, { expand: number[]; collapse: number[] }>();
  private loadSeq = 0;
  private pendingFrame = false;
  /** The raw layout, kept so a colour-mode switch rebuilds the scene without a request. */
  private layout: Layout | null = null;
  // For tests and the benchmark.
  renderCount = 0;
  layoutCount = 0;
  lastLoadMs = { fetch: 0, scene: 0 };
  firstRenderAt = 0;
  /** Layout requests that carried reveal= (tests). */
  revealRequests = 0;
  onRendered: (() => void) | null = null;

  constructor(readonly canvas: HTMLCanvasElement, minimapCanvas: HTMLCanvasElement, private readonly host: PaneHost,
    state: ViewState, forceCanvas2d: boolean) {
    this.state = state;
    this.renderer = (!forceCanvas2d && createWebGLRenderer(canvas)) || new Canvas2DRenderer(canvas);
    this.minimap = new Minimap(minimapCanvas, this.cam);
    this.cam.onChange(() => { this.requestRender(); this.host.cameraMoved?.(this); });
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
      this.minimap.draw();
      if (this.scene) {
        if (this.renderCount++ === 0) this.firstRenderAt = performance.now();
        this.onRendered?.();
      }
    });
  }

  fit(): void {
    const l = this.scene?.layout;
    if (l) this.cam.fit({ x: 0, y: 0, w: l.width, h: l.height });
  }

  /**
   * Fetches the layout for the current state; keeps `anchorGroup` where it
   * was on screen. With `reveal`, the server expands the groups on the path
   * to that node, and the expanded groups it reports (group_flags) that were
   * not expanded before join this pane's `expand` list.
   */
  async reload(fit: boolean, anchorGroup = -1, reveal: number | null = null): Promise<boolean> {
    if (this.fileMode) return false;
    const seq = ++this.loadSeq;
    const t0 = performance.now();
    let layout: Layout;
    try {
      if (reveal !== null) this.revealRequests++;
      layout = await this.host.api.layout({
        run: this.state.run, level: this.state.level, grouping: this.state.grouping, direction: this.state.direction,
        maxItems: maxItemsFromUrl(), expand: this.state.expand, collapse: this.state.collapse, reveal,
      });
    } catch (e) {
      if (seq === this.loadSeq) this.host.banner((e as Error).message);
      return false;
    }
    if (seq !== this.loadSeq) return false;
    this.host.banner(null);
    this.lastLoadMs.fetch = performance.now() - t0;
    const old = this.scene?.layout;
    if (reveal !== null && old && old.groupCount === layout.groupCount) {
      const expand = new Set(this.state.expand);
      const collapse = new Set(this.state.collapse);
      for (let g = 1; g < layout.groupCount; ++g) {
        if ((layout.groupFlags[g] & kGroupExpanded) && !(old.groupFlags[g] & kGroupExpanded)) { expand.add(g); collapse.delete(g); }
      }
      this.state.expand = [...expand];
      this.state.collapse = [...collapse];
    }
    let anchor: { sx: number; sy: number } | null = null;
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

  setLayout(layout: Layout): void {
    const t0 = performance.now();
    this.layout = layout;
    this.scene = new Scene(layout, { colorMode: this.colorMode });
    this.nodeIndex.clear();
    const n = graphNodeCount(layout);
    for (let i = 0; i < n; ++i) this.nodeIndex.set(layout.nodeModelId[i], i);
    this.renderer.setScene(this.scene);
    this.lastLoadMs.scene = performance.now() - t0;
    this.layoutCount++;
    this.minimap.setScene(this.scene);
    this.selectedGroup = -1;
    this.updateHighlights();
    this.host.layoutChanged(this);
    this.requestRender();
  }

  /** Switches the fill colouring (op type / time / share); rebuilds the scene, no request. */
  setColorMode(mode: ColorMode): void {
    if (mode === this.colorMode) return;
    this.colorMode = mode;
    if (!this.layout) return;
    const cam = { s: this.cam.scale, tx: this.cam.tx, ty: this.cam.ty };
    this.setLayout(this.layout);
    this.layoutCount--; // not a new layout
    this.cam.scale = cam.s; this.cam.pin(0, 0, cam.tx, cam.ty);
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
    this.selectedItem = this.state.node !== null ? this.itemOfNode(this.state.node) : -1;
    if (this.selectedItem < 0 && this.selectedGroup >= 0) {
      const l = s.layout;
      for (let i = 0; i < l.itemCount; ++i) {
        if (l.itemKind[i] === ItemKind.Group && l.itemRef[i] === this.selectedGroup) { this.selectedItem = i; break; }
      }
    }
    const lin = this.lineage && this.selectedItem >= 0 ? s.lineage(this.selectedItem) : null;
    this.lineageCount = lin ? lin.items.length : 0;
    this.highlights = {
      selected: this.selectedItem, matches: items(this.matchIds), linked: items(this.linkedIds),
      lineage: lin?.items, lineageEdges: lin?.edges,
    };
    this.renderer.setHighlights(this.highlights);
    this.requestRender();
  }

  /** The highlights last handed to the renderer (SVG export draws the same). */
  highlights: Highlights = kNoHighlights;
  /** Items on the selection's lineage at the last highlight update (tests). */
  lineageCount = 0;

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
      this.host.clicked(this, { io: `${kind === ItemKind.GraphInput ? 'graph input' : 'graph output'} ${l.str(l.itemTitle[i])}` });
      return;
    }
    const g = s.frameAt(wx, wy);
    if (g >= 0) this.host.clicked(this, { group: g, expanded: true });
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

  /** Switches level, keeping each level's folding while away. */
  async switchLevel(level: string, run = this.state.run): Promise<boolean> {
    if (level === this.state.level && run === this.state.run) return true;
    this.perLevel.set(`${this.state.run}:${this.state.level}`, { expand: this.state.expand, collapse: this.state.collapse });
    const saved = this.perLevel.get(`${run}:${level}`) ?? { expand: [], collapse: [] };
    this.state = { ...this.state, run, level, expand: saved.expand, collapse: saved.collapse, node: null };
    this.matchIds = [];
    this.linkedIds = [];
    return this.reload(true);
  }

  resetFolding(): void {
    this.perLevel.clear();
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
    if (!(await this.reload(false, -1, id))) return false;
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
    this.setLayout(layout);
    this.fit();
  }

  static decode(buf: ArrayBuffer): Layout {
    return decodeLayout(buf);
  }

  /** Whether group `g` is expanded in the current layout. */
  isExpanded(g: number): boolean {
    const l = this.scene?.layout;
    return !!l && (l.groupFlags[g] & kGroupExpanded) !== 0;
  }

  get grouping(): Grouping { return this.state.grouping; }
}
