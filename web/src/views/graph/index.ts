// The graph view: one pane, or two side by side in compare mode (pane.ts),
// each showing the store's PaneState. It draws the resolved selection in
// graph terms:
//   - a node selected elsewhere (mapping, details link, search, URL) is
//     revealed and centred in the pane holding it (the reducer picked the
//     pane and level);
//   - compare mode: the other pane outlines the linked nodes (a compiled
//     node → its fused_from on the framework level, a framework node → its
//     fused_into, the same level → the same node); with "sync" on it also
//     reveals and centres them;
//   - a task: a pane at its node's level selects and centres the node, a
//     framework pane outlines the node's fused_from;
//   - a finding: its evidence nodes outlined in the main pane (compiled
//     nodes stand for their fused_from there), the first few revealed;
//   - the critical path ("show" in the summary): its nodes outlined.
// Clicks dispatch selections; the panes' own folding changes are dispatched
// so the URL holds them. Fit, export and "open .bin" act on the pane last
// clicked (state.active).

import type { Layout } from '../../rpc/layout_binary';
import { decodeLayout, graphNodeCount, groupPath, opName } from '../../rpc/layout_binary';
import { compareColourTarget, diffKey, graphDiffPair, kDetailsHint, paneHasGraph, probeKey, type PaneState, visiblePanes, type Action, type AppState, type GraphInfo, type GroupInfo } from '../../core/state';
import { entryValue, firstNanNode } from '../../rpc/probe_api';
import { NodeMenu } from './node_menu';
import type { ViewContext, ViewInstance, ViewMount, ViewPlugin } from '../../core/view';
import { byId } from '../../widgets/dom';
import { graphDebugHandle } from './debug';
import { paneDiff } from './diff_marks';
import { download, ExportMenu } from './export';
import { Pane, type PaneHost } from './pane';
import type { ProbeMark } from './scene';

export const graphView: ViewPlugin = {
  id: 'graph',
  title: 'Graph',
  slot: 'main',
  create: (ctx, mount) => new GraphView(ctx, mount),
};

const kGroupKinds = ['scope', 'fusion group', 'repeated block', 'chunk'];

/** Group `g` of a layout, for the details panel. */
export function groupInfo(l: Layout, g: number, expanded: boolean): GroupInfo {
  const rep = l.groupRepeatOf[g];
  const topOps: string[] = [];
  for (let k = 0; k < 3; ++k) {
    const op = l.groupTopOps[3 * g + k];
    if (op >= 0) topOps.push(`${opName(l, op)} ×${l.groupTopOpCounts[3 * g + k]}`);
  }
  return {
    kindName: kGroupKinds[l.groupKind[g]] ?? 'group', path: groupPath(l, g) || l.title, group: g, nodes: l.groupNodeCount[g],
    expanded, sameAs: rep >= 0 ? groupPath(l, rep) : null, topOps,
  };
}

class GraphView implements ViewInstance, PaneHost {
  readonly api;
  readonly panes: Pane[] = [];
  /** Per pane: what of the selection was last drawn (see linkKey). */
  private readonly applied: string[] = ['', ''];
  private readonly linkSeq = [0, 0];
  private readonly focusSeq = [0, 0];
  private cpShown: AppState['criticalPath'] = null;
  /** The export menu (its last export is in the debug handle). */
  readonly exporter: ExportMenu;
  /** The right-click menu on a node (probes, re-run). */
  readonly nodeMenu: NodeMenu;

  constructor(private readonly ctx: ViewContext, mount: ViewMount) {
    this.api = ctx.api;
    this.nodeMenu = new NodeMenu({ api: ctx.api, state: () => this.state, dispatch: (a) => this.dispatch(a) });
    const s = ctx.store.state;
    const main = this.pane(0, s);
    ctx.stats.set('graph.renderer', main.renderer.kind);
    new ResizeObserver(() => this.resize()).observe(mount.root);
    this.resize();
    byId('fit').addEventListener('click', () => this.activePane().fit());
    // Top to bottom ⇄ left to right; the choice goes to the URL (direction=).
    byId('direction').addEventListener('click', () => {
      const shown = this.panes[0]?.scene?.layout.direction ?? 'tb';
      this.dispatch({ type: 'setDirection', direction: shown === 'lr' ? 'tb' : 'lr' });
    });
    this.exporter = new ExportMenu({
      exportPane: () => {
        const p = this.activePane();
        return { scene: p.scene, cam: p.cam, highlights: p.highlights, selectedGroup: p.selectedGroup, level: p.view.level };
      },
      modelExplorer: (what) => this.downloadModelExplorer(what),
      banner: (m) => this.banner(m),
    }, byId<HTMLDetailsElement>('export'), byId<HTMLSelectElement>('export-extent'), byId<HTMLSelectElement>('export-scale'), byId('export-note'));
    byId<HTMLInputElement>('file').addEventListener('change', (e) => {
      const f = (e.target as HTMLInputElement).files?.[0];
      if (f) void this.openFile(f);
    });
    const sync = byId<HTMLInputElement>('sync');
    sync.checked = s.sync;
    sync.addEventListener('change', () => this.dispatch({ type: 'setSync', on: sync.checked }));
    byId<HTMLSelectElement>('pane1-level').addEventListener('change', (e) => {
      const [run, level] = (e.target as HTMLSelectElement).value.split(':');
      this.dispatch({ type: 'setLevel', pane: 1, level, run: parseInt(run, 10) });
    });
    ctx.store.subscribe((st, prev) => this.onState(st, prev));
    this.onState(s, null);
  }

  private get state(): AppState { return this.ctx.store.state; }
  private dispatch(a: Action): void { this.ctx.store.dispatch(a); }
  private activePane(): Pane { return this.panes[this.state.active] ?? this.panes[0]; }

  /** Pane `k`, created on first use (the second when compare mode first opens). */
  private pane(k: number, s: AppState): Pane {
    let p = this.panes[k];
    if (!p) {
      const o = this.ctx.options;
      p = new Pane(byId<HTMLCanvasElement>(k ? 'graph2' : 'graph'), byId<HTMLCanvasElement>(k ? 'minimap2' : 'minimap'), this, s.panes[k],
        o.forceCanvas2d, o.maxItems, this.ctx.stats, k ? 'graph.compare' : 'graph', o.overview !== false);
      p.setColorMode(s.color);
      p.lineage = s.lineage;
      this.panes[k] = p;
      // Right-click on a node: select it and open the probe menu.
      p.canvas.addEventListener('contextmenu', (e) => {
        const r = p.canvas.getBoundingClientRect();
        const id = p.nodeAt(e.clientX - r.left, e.clientY - r.top);
        if (id === null || p.fileMode) return;
        e.preventDefault();
        const st = this.state.panes[k];
        this.dispatch({ type: 'select', selection: { kind: 'node', level: st.level, id, run: st.run }, source: 'graph', pane: k });
        void this.nodeMenu.open(st.run, st.level, id, e.clientX, e.clientY);
      });
    }
    return p;
  }

  resize(): void {
    for (const [k, p] of this.panes.entries()) {
      const el = byId(`pane${k}`);
      if (el.clientWidth && el.clientHeight) p.resize(el.clientWidth, el.clientHeight);
    }
  }

  debugHandle(): unknown { return { ...graphDebugHandle(this.panes), exporter: this.exporter, nodeMenu: this.nodeMenu }; }

  /** The main pane's camera: the world point at its top-left corner and the zoom (a saved session keeps it). */
  viewport(): { x: number; y: number; scale: number } | null {
    const p = this.panes[0];
    if (!p?.scene) return null;
    return { x: p.cam.toWorldX(0), y: p.cam.toWorldY(0), scale: p.cam.scale };
  }

  /** Puts the main pane's camera at a saved viewport once its layout is shown. */
  async restoreViewport(v: { x: number; y: number; scale: number }): Promise<boolean> {
    const p = this.panes[0];
    if (!p || !(await p.settled())) return false;
    // After what the layout's own load does (fit, a selected node's centring).
    for (let k = 0; k < 3; ++k) await new Promise((r) => requestAnimationFrame(r));
    p.cam.scale = v.scale;
    p.cam.pin(v.x, v.y, 0, 0);
    p.requestRender();
    return true;
  }

  private onState(s: AppState, prev: AppState | null): void {
    if (!prev || s.comparing !== prev.comparing) this.compareChanged(s);
    const shown = s.status === 'ready' || s.status === 'file';
    const visible = visiblePanes(s);
    for (const [k, st] of visible.entries()) {
      const p = this.pane(k, s);
      let changed = false;
      if (shown && (!prev || st !== prev.panes[k] || s.status !== prev.status || s.runs !== prev.runs || (k > 0 && !prev.comparing))) {
        // A run without a graph shows none: the graph of the run left behind goes too.
        if (paneHasGraph(s, st)) p.show(st);
        else p.clear(st);
        changed = true;
      }
      if (!prev || s.color !== prev.color) p.setColorMode(s.color);
      this.compareColour(k, p, s, st);
      this.diffColour(k, p, s, st);
      this.probeColour(k, p, s, st);
      if (!prev || s.lineage !== prev.lineage) { p.lineage = s.lineage; changed = true; }
      const r = s.search.results;
      const matches = r && r.pane === k && r.run === st.run && r.level === st.level && !r.error ? r.matches.map((m) => m.id) : [];
      if (matches.length !== p.matchIds.length || matches.some((id, i) => id !== p.matchIds[i])) { p.matchIds = matches; changed = true; }
      if (changed) p.updateHighlights();
    }
    if (!prev || s.active !== prev.active || s.comparing !== prev.comparing) {
      for (const k of [0, 1]) byId(`pane${k}`).classList.toggle('active-pane', s.comparing && k === s.active);
      this.publishInfo();
    }
    if (s.comparing) {
      const m = s.panes[0], p1 = s.panes[1];
      byId('pane0-title').textContent = `${m.run}: ${m.level}`;
      const sel = byId<HTMLSelectElement>('pane1-level');
      if (!prev || s.runs !== prev.runs || !prev.comparing) this.fillPaneLevels(s);
      sel.value = `${p1.run}:${p1.level}`;
    }
    if (!prev) return;
    // A node selected elsewhere is revealed and centred where the reducer put it.
    const sel = s.selection;
    if (s.selectionVersion !== prev.selectionVersion && sel?.kind === 'node' && s.selectionSource !== 'graph') {
      const k = visible.findIndex((p) => p.node === sel.id);
      if (k >= 0) void this.focusNode(k, sel.id);
    }
    for (let k = 0; k < visible.length; ++k) this.applyLinks(k);
  }

  /** Compare mode on / off: the second pane's canvas, titles, sizes. */
  private compareChanged(s: AppState): void {
    const on = s.comparing;
    document.body.classList.toggle('comparing', on);
    byId('pane1').hidden = !on;
    byId('pane0-title').hidden = !on;
    if (on) {
      const p1 = this.panes[1];
      this.resize();
      if (!p1) {
        this.pane(1, s);
        this.resize();
      } else if (p1.current) {
        p1.fit();
        p1.requestRender();
      }
    } else {
      this.resize();
    }
    this.panes[0].fit();
  }

  private fillPaneLevels(s: AppState): void {
    const sel = byId<HTMLSelectElement>('pane1-level');
    sel.textContent = '';
    for (const r of s.runs) {
      for (const lv of r.levels) {
        const o = document.createElement('option');
        o.value = `${r.id}:${lv}`;
        o.textContent = `${r.id}: ${lv}`;
        sel.append(o);
      }
    }
  }

  private readonly compareKeys: string[] = [];
  /**
   * Colour by compare metric: asks the compared run for its node times (one
   * small layout of the same level: every layout carries all nodes' times)
   * and hands them to the pane; without a compare run, the reason.
   */
  private compareColour(k: number, p: Pane, s: AppState, st: PaneState): void {
    if (s.color !== 'compare' || !paneHasGraph(s, st)) return;
    const { run, reason } = compareColourTarget(s, st);
    const key = `${st.run}|${st.level}|${st.grouping}|${run}|${reason}`;
    if (this.compareKeys[k] === key) return;
    this.compareKeys[k] = key;
    if (run === null) { p.setCompare({ run: null, reason, times: null }); return; }
    p.setCompare({ run, reason: `loading run ${run}'s node times…`, times: null });
    this.ctx.api.layout({ run, level: st.level, grouping: st.grouping, direction: 'tb', maxItems: 1, expand: [], collapse: [], overview: true })
      .then((l) => {
        if (this.compareKeys[k] !== key) return;
        const times = new Map<number, number>();
        const n = graphNodeCount(l);
        if (l.nodeTimeUs) for (let i = 0; i < n; ++i) if (l.nodeTimeUs[i] >= 0) times.set(l.nodeModelId[i], l.nodeTimeUs[i]);
        p.setCompare({ run, reason: times.size ? null : `run ${run} has no node times at this level`, times });
      })
      .catch((e: unknown) => {
        if (this.compareKeys[k] === key) p.setCompare({ run: null, reason: `run ${run}: ${e instanceof Error ? e.message : String(e)}`, times: null });
      });
  }

  private readonly probeKeys: string[] = [];
  /**
   * Colour by probe statistic and the probe marks: the pane's level's probe
   * data (the probe controller asks for it) as values per model node id for
   * the statistic shown, the first NaN / Inf producer and the first
   * divergent node as marks (drawn in every colour mode).
   */
  private probeColour(k: number, p: Pane, s: AppState, st: PaneState): void {
    if (!paneHasGraph(s, st)) return;
    const e = s.probeData[probeKey(st.run, st.level)];
    const tm = s.trainingMarks && s.trainingMarks.run === st.run && st.level === 'framework' ? s.trainingMarks : null;
    const key = `${st.run}|${st.level}|${e?.version}|${e?.status}|${s.color === 'probe' ? s.probeStat : ''}|${tm ? JSON.stringify(tm.nodes) : ''}`;
    if (this.probeKeys[k] === key) return;
    this.probeKeys[k] = key;
    const data = e?.data ?? null;
    const marks = new Map<number, ProbeMark>();
    const div = data?.compare?.first_divergent;
    if (div !== null && div !== undefined) marks.set(div, 'divergent');
    const nan = firstNanNode(data);
    if (nan) marks.set(nan.id, 'nan');
    // The training diagnosis' root-cause chain (the Training view publishes it): producer over the others.
    for (const n of tm?.nodes ?? []) if (n.role === 'producer' || !marks.has(n.id)) marks.set(n.id, n.role);
    let values: Map<number, number> | null = null;
    let reason: string | null = null;
    if (s.color === 'probe') {
      if (!data) {
        reason = e?.status === 'loading' || !e ? 'loading the probe statistics…' : e.message ?? 'no probe data for this level';
      } else {
        values = new Map();
        const stat = s.probeStat;
        for (const [id, entry] of Object.entries(data.nodes)) {
          if (stat.startsWith('compare:')) continue;
          const v = entryValue(entry, stat);
          if (v !== null && Number.isFinite(v)) values.set(Number(id), v);
        }
        // A compare metric: per node of the compare (nodes without a probe in the newest run too).
        if (stat.startsWith('compare:')) {
          for (const [id, m] of Object.entries(data.compare?.nodes ?? {})) {
            const v = m[stat.slice(8)];
            if (typeof v === 'number' && Number.isFinite(v)) values.set(Number(id), v);
          }
        }
        if (!values.size) reason = `no node of this level has a value for ${stat}`;
      }
    }
    p.setProbe({ stat: s.probeStat, reason, values, marks: marks.size ? marks : null });
  }

  private readonly diffKeys: string[] = [];
  /**
   * Colour by diff: this pane's side of the diff of the two panes' runs
   * (the diff controller asks the server; the state holds its answer).
   */
  private diffColour(k: number, p: Pane, s: AppState, st: PaneState): void {
    if (s.color !== 'diff' || !paneHasGraph(s, st)) return;
    const pair = graphDiffPair(s);
    const entry = 'base' in pair ? s.diffs[diffKey(pair.base, pair.next)] : undefined;
    const key = `${k}|${st.run}|${st.level}|${'base' in pair ? diffKey(pair.base, pair.next) : pair.reason}|${entry?.status}`;
    if (this.diffKeys[k] === key) return;
    this.diffKeys[k] = key;
    p.setDiff('base' in pair ? paneDiff(k, st.run, st.level, pair.base, pair.next, entry) : { side: null, reason: pair.reason, marks: null });
  }

  /** The legend's and status line's data: the active pane's op types, heat range, status counts; the main pane's size. */
  private publishInfo(): void {
    const s = this.state;
    const a = this.panes[s.active] ?? this.panes[0], main = this.panes[0];
    const sc = a.scene, l0 = main.scene?.layout, kind = main.renderer.kind;
    const info: GraphInfo = {
      ops: sc ? sc.legend : null,
      heat: sc && sc.options.colorMode !== 'op' ? { ...sc.heat } : null,
      statusCounts: sc?.statusCounts ? sc.statusCounts.slice() : null,
      statusLine: l0 ? `${l0.itemCount} items · ${l0.edgeCount} edges · ${l0.nodeCount} nodes · ${kind}` : kind,
    };
    this.dispatch({ type: 'graphInfo', info });
  }

  // ---- PaneHost ----

  banner(message: string | null): void {
    if (this.state.banner !== message) this.dispatch({ type: 'banner', message });
  }

  layoutChanged(p: Pane): void {
    const k = this.panes.indexOf(p);
    if (k === 0 && p.scene) {
      const lr = p.scene.layout.direction === 'lr', b = byId('direction');
      b.textContent = lr ? '→ LR' : '↓ TB';
      b.dataset.direction = lr ? 'lr' : 'tb';
      b.title = `drawn ${lr ? 'left to right' : 'top to bottom'}${this.state.panes[0].direction === 'auto' ? ' (fits the window)' : ''}; click for ${lr ? 'top to bottom' : 'left to right'}`;
    }
    if (k === this.state.active || k === 0) this.publishInfo();
    if (k >= 0 && k < visiblePanes(this.state).length) this.applyLinks(k);
  }

  foldingChanged(p: Pane, expand: number[], collapse: number[]): void {
    const k = this.panes.indexOf(p);
    if (k >= 0) this.dispatch({ type: 'setFolding', pane: k, expand, collapse });
  }

  clicked(p: Pane, what: { node?: number; group?: number; expanded?: boolean; io?: string }): void {
    const k = this.panes.indexOf(p);
    const st = this.state.panes[k];
    if (what.node !== undefined) {
      this.dispatch({ type: 'select', selection: { kind: 'node', level: st.level, id: what.node, run: st.run }, source: 'graph', pane: k });
      return;
    }
    this.dispatch({ type: 'setActivePane', pane: k });
    // Empty space, a group or an input clears the selection (a time range stays).
    const cur = this.state.selection;
    if (cur && cur.kind !== 'range') this.dispatch({ type: 'select', selection: null, source: 'graph' });
    else this.dispatch({ type: 'setPaneNode', pane: k, node: null });
    p.linkedIds = [];
    if (what.group !== undefined && p.scene) {
      p.selectedGroup = what.group;
      this.dispatch({ type: 'setDetails', content: { kind: 'group', group: groupInfo(p.scene.layout, what.group, !!what.expanded) } });
    } else {
      p.selectedGroup = -1;
      this.dispatch({ type: 'setDetails', content: { kind: 'empty', message: what.io ?? kDetailsHint } });
    }
    p.updateHighlights();
  }

  // ---- the selection in graph terms ----

  /** Reveals node `id` in pane `k` (once its layout is in) and centres on it. */
  private async focusNode(k: number, id: number): Promise<void> {
    const seq = ++this.focusSeq[k];
    const p = this.panes[k];
    if (!(await p.settled()) || seq !== this.focusSeq[k]) return;
    if ((await p.reveal(id)) && seq === this.focusSeq[k]) p.centreOnNode(id);
  }

  /** What pane `k` draws of the selection depends on (it is drawn again when this changes). */
  private linkKey(k: number, s: AppState): string {
    const st = s.panes[k], r = s.resolved;
    return [s.selectionVersion, r.node?.id ?? '', r.task?.id ?? '', r.graphNodes.length, st.run, st.level, s.comparing, s.sync,
      s.criticalPath ? s.criticalPath.nodes.length : -1].join('|');
  }

  /** Draws the selection's part for pane `k` when it changed (and the pane's layout is in). */
  private applyLinks(k: number): void {
    const s = this.state, p = this.panes[k];
    if (!p || !p.current || p.fileMode) return;
    const key = this.linkKey(k, s);
    if (key === this.applied[k]) return;
    this.applied[k] = key;
    void this.drawLinks(k, s);
  }

  private async drawLinks(k: number, s: AppState): Promise<void> {
    const p = this.panes[k], st = s.panes[k], main = s.panes[0], sel = s.selection;
    const seq = ++this.linkSeq[k];
    const stale = (): boolean => seq !== this.linkSeq[k];
    let ids: number[] = [];
    let reveal = 0;
    let centre = false;
    if (sel?.kind === 'node') {
      // Compare mode: the other pane links the node's counterparts.
      const d = s.resolved.node;
      const j = visiblePanes(s).findIndex((q) => q.node === sel.id);
      if (s.comparing && d && d.id === sel.id && j >= 0 && j !== k && s.panes[j].run === st.run) {
        const from = s.panes[j];
        if (st.level === from.level) ids = [d.id];
        else if (st.level === 'framework') ids = (d.fused_from ?? []).map((r) => r.id);
        else if (from.level === 'framework' && d.fused_into) ids = [d.fused_into.id];
        reveal = s.sync ? 16 : 0;
        centre = s.sync && ids.length > 0;
      }
    } else if (sel?.kind === 'task' && s.resolved.task?.node && (k === 0 || s.comparing) && st.run === main.run) {
      const t = s.resolved.task, node = s.resolved.task.node;
      if (st.level === node.level) {
        // The task's node, selected and centred (details stay on the task).
        p.linkedIds = [];
        if (st.node !== node.id) this.dispatch({ type: 'setPaneNode', pane: k, node: node.id });
        p.updateHighlights();
        await this.focusNode(k, node.id);
        return;
      }
      if (st.level === 'framework' && t.fused_from.length) {
        if (st.node !== null) this.dispatch({ type: 'setPaneNode', pane: k, node: null });
        ids = t.fused_from.map((r) => r.id);
        reveal = 16;
        centre = true;
      }
    } else if (sel?.kind === 'finding' && k === 0) {
      ids = await this.presentNodes(p, s.resolved.graphNodes);
      if (stale()) return;
      reveal = 8;
      centre = true;
    }
    // The critical path's nodes, while shown, when the selection links nothing here.
    const cp = s.criticalPath;
    if (!ids.length && k === 0 && cp) {
      ids = await this.presentNodes(p, cp.nodes);
      if (stale()) return;
      const fresh = cp !== this.cpShown;
      reveal = fresh ? 8 : 0;
      centre = fresh;
    }
    if (k === 0) this.cpShown = cp;
    p.linkedIds = ids;
    p.updateHighlights();
    for (const id of ids.slice(0, reveal)) {
      if (!p.nodeVisible(id)) await p.reveal(id);
      if (stale()) return;
    }
    if (centre) p.centreOnNodes(reveal ? ids.slice(0, reveal) : ids);
    p.updateHighlights();
  }

  /**
   * The nodes of `ids` this pane draws; on the framework level, compiled
   * nodes (of the critical path, of a finding) stand for their fused_from
   * nodes (the first 64 asked).
   */
  private async presentNodes(p: Pane, ids: number[]): Promise<number[]> {
    const st = p.view;
    let present = ids.filter((id) => p.itemOfNode(id) >= 0);
    if (present.length < ids.length && st.level === 'framework' && this.state.runs[st.run]?.levels.includes('compiled')) {
      const missing = ids.filter((id) => p.itemOfNode(id) < 0).slice(0, 64);
      const details = await Promise.all(missing.map((id) => this.api.node(st.run, 'compiled', id).catch(() => null)));
      const more = new Set(present);
      for (const d of details) for (const r of d?.fused_from ?? []) if (p.itemOfNode(r.id) >= 0) more.add(r.id);
      present = [...more];
    }
    return present;
  }

  // ---- export ----

  private exportName(ext: string): string {
    const p = this.activePane();
    const title = (p.scene?.layout.title || 'graph').replace(/[^\w.-]+/g, '_');
    return `${title}-${p.view.level}.${ext}`;
  }

  private async downloadModelExplorer(what: 'graph' | 'node-data'): Promise<void> {
    const st = this.activePane().view;
    try {
      const b = await this.api.exportModelExplorer(st.run, st.level, what);
      download(b, this.exportName(`${what === 'graph' ? 'graph' : 'node_data'}.json`));
    } catch (e) {
      this.banner(`Model Explorer export: ${(e as Error).message}`);
    }
  }

  /** Shows a layout binary from a local file (no server needed). */
  private async openFile(f: File): Promise<void> {
    try {
      const layout = decodeLayout(await f.arrayBuffer());
      this.panes[0].openLayout(layout);
      this.dispatch({ type: 'fileOpened' });
    } catch (e) {
      this.banner(`${f.name}: ${(e as Error).message}`);
    }
  }
}
