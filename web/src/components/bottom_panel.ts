// The bottom panel under the graph: one tab per bottom view (in the order
// main.ts lists them), each with its body and its tools in the bar; the
// splitter above it drags its height; the buttons at its right maximise
// the graph (the panel folds to its tab bar: panel=graph) or the panel
// (the graph hides: panel=bottom), or split again. The bar also says what
// is selected. Without a server there are no runs, so no panel.

import type { AppState, PanelMode } from '../core/state';
import { describeSelection } from '../core/selection';
import type { StoreApi } from '../core/store';
import type { ViewInstance, ViewMount } from '../core/view';
import { byId, el } from '../widgets/dom';
import { savedSize, saveSize } from './panel_sizes';

export class BottomPanel {
  private readonly mounts = new Map<string, ViewMount>();
  private readonly tabs = new Map<string, HTMLButtonElement>();
  private readonly views = new Map<string, ViewInstance>();

  constructor(private readonly store: StoreApi, views: readonly { id: string; title: string }[]) {
    const tabBar = byId('tabs'), body = byId('bottom-body'), tools = byId('tab-tools');
    for (const v of views) {
      const b = el('button', undefined, v.title);
      b.dataset.tab = v.id;
      b.setAttribute('role', 'tab');
      b.addEventListener('click', () => {
        if (store.state.panel === 'graph') store.dispatch({ type: 'setPanel', panel: 'split' });
        store.dispatch({ type: 'setTab', tab: v.id });
      });
      tabBar.append(b);
      this.tabs.set(v.id, b);
      const root = el('div', 'tab-body');
      root.id = v.id;
      body.append(root);
      const t = el('span', 'tab-tools');
      t.id = `${v.id}-tools`;
      tools.append(t);
      this.mounts.set(v.id, { root, tools: t });
    }
    const panel = (m: PanelMode): void => store.dispatch({ type: 'setPanel', panel: m });
    byId('max-graph').addEventListener('click', () => panel(store.state.panel === 'graph' ? 'split' : 'graph'));
    byId('max-split').addEventListener('click', () => panel('split'));
    byId('max-bottom').addEventListener('click', () => panel(store.state.panel === 'bottom' ? 'split' : 'bottom'));
    this.initSplitter();
    new ResizeObserver(() => this.resizeActive()).observe(body);
    store.subscribe((s, prev) => this.render(s, prev));
    this.render(store.state, null);
  }

  /** Where bottom view `id` mounts. */
  mount(id: string): ViewMount {
    const m = this.mounts.get(id);
    if (!m) throw new Error(`no bottom view ${id}`);
    return m;
  }

  /** The view mounted at `id` (told when it shows or resizes). */
  attach(id: string, v: ViewInstance): void {
    this.views.set(id, v);
    if (this.store.state.tab === id) v.resize?.();
  }

  private resizeActive(): void {
    this.views.get(this.store.state.tab)?.resize?.();
  }

  private render(s: AppState, prev: AppState | null): void {
    if (!prev || s.hiddenTabs !== prev.hiddenTabs) {
      for (const [id, b] of this.tabs) b.hidden = s.hiddenTabs.includes(id);
    }
    if (!prev || s.tab !== prev.tab) {
      for (const [id, b] of this.tabs) b.classList.toggle('active', id === s.tab);
      for (const [id, m] of this.mounts) { m.root.hidden = id !== s.tab; m.tools.hidden = id !== s.tab; }
      this.resizeActive();
    }
    if (!prev || s.panel !== prev.panel) {
      document.body.classList.toggle('panel-graph', s.panel === 'graph');
      document.body.classList.toggle('panel-bottom', s.panel === 'bottom');
      for (const [id, m] of [['max-graph', 'graph'], ['max-split', 'split'], ['max-bottom', 'bottom']] as const) byId(id).classList.toggle('active', s.panel === m);
      this.resizeActive();
    }
    if (!prev || s.selection !== prev.selection) byId('bottom-status').textContent = describeSelection(s.selection);
    if (!prev || s.status !== prev.status) {
      // No server: no runs, so no execution views; the graph takes the room.
      const none = s.status === 'error' || (s.status === 'file' && !s.runs.length);
      byId('bottom').hidden = none;
      byId('splitter').hidden = none;
    }
  }

  /** Splitter: drag to resize the bottom panel (the height is kept across reloads; double-click: default). */
  private initSplitter(): void {
    const splitter = byId('splitter'), bottom = byId('bottom'), work = byId('work');
    const restore = (): void => {
      const h = savedSize('bottom');
      bottom.style.height = h === null ? '' : `${Math.min(Math.max(34, work.getBoundingClientRect().height - 80), Math.max(34, h))}px`;
    };
    restore();
    window.addEventListener('resize', restore);
    splitter.addEventListener('dblclick', () => { saveSize('bottom', null); restore(); });
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
        saveSize('bottom', bottom.getBoundingClientRect().height);
        splitter.removeEventListener('pointermove', move);
        splitter.removeEventListener('pointerup', up);
      };
      splitter.addEventListener('pointermove', move);
      splitter.addEventListener('pointerup', up);
    });
  }
}
