// Bookmarks on nodes (as Model Explorer has them): the star in a node's
// details adds or removes it; the side panel lists the current run's
// bookmarks, a click selects the node (its level switches in, the graph
// reveals and centres it). Kept in localStorage per run name, so they
// survive reloads and a later `open` of the same run; the URL stays the
// selection's.

import { opColor, rgbCss } from '../base/palette';
import type { AppState } from '../core/state';
import type { StoreApi } from '../core/store';
import { chip, el, midName } from '../widgets/dom';

export interface Bookmark { level: string; id: number; name: string; op: string }

const kKey = 'mi.bookmarks';

function loadAll(): Record<string, Bookmark[]> {
  try {
    const v = JSON.parse(localStorage.getItem(kKey) ?? '{}') as unknown;
    return v && typeof v === 'object' ? v as Record<string, Bookmark[]> : {};
  } catch { return {}; }
}

export class Bookmarks {
  private all = loadAll();
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly store: StoreApi, private readonly root: HTMLElement) {
    store.subscribe((s, prev) => { if (s.runs !== prev?.runs || s.panes[0].run !== prev?.panes[0].run) this.render(); });
    // Another tab of the same server changed them.
    window.addEventListener('storage', (e) => { if (e.key === kKey) { this.all = loadAll(); this.changed(); } });
    this.render();
  }

  private runKey(s: AppState = this.store.state, run = s.panes[0].run): string | null {
    return s.runs[run]?.name ?? null;
  }

  /** The bookmarks of run `run` (the main pane's by default), in the order added. */
  list(run?: number): Bookmark[] {
    const k = this.runKey(this.store.state, run);
    return k === null ? [] : this.all[k] ?? [];
  }

  /** Replaces run `run`'s bookmarks (a restored session). */
  replace(run: number, list: Bookmark[]): void {
    const k = this.runKey(this.store.state, run);
    if (k === null) return;
    if (list.length) this.all[k] = list.slice(); else delete this.all[k];
    try { localStorage.setItem(kKey, JSON.stringify(this.all)); } catch { /* storage off: kept until reload */ }
    this.changed();
  }

  has(level: string, id: number): boolean {
    return this.list().some((b) => b.level === level && b.id === id);
  }

  toggle(b: Bookmark): void {
    const k = this.runKey();
    if (k === null) return;
    const list = this.list();
    const i = list.findIndex((x) => x.level === b.level && x.id === b.id);
    this.all[k] = i >= 0 ? list.filter((_, j) => j !== i) : [...list, b];
    if (!this.all[k].length) delete this.all[k];
    try { localStorage.setItem(kKey, JSON.stringify(this.all)); } catch { /* storage off: kept until reload */ }
    this.changed();
  }

  /** Called after every change (the details panel's star follows). */
  onChange(f: () => void): void { this.listeners.push(f); }

  /** The star button of a node's details. */
  star(b: Bookmark): HTMLButtonElement {
    const btn = el('button', 'bookmark');
    btn.type = 'button';
    const show = (): void => {
      const on = this.has(b.level, b.id);
      btn.textContent = on ? '★ bookmarked' : '☆ bookmark';
      btn.classList.toggle('on', on);
      btn.title = on ? 'remove this node from the bookmarks' : 'add this node to the bookmarks (listed in the side panel)';
    };
    btn.addEventListener('click', () => this.toggle(b));
    this.onChange(show);
    show();
    return btn;
  }

  private changed(): void {
    this.render();
    for (const f of this.listeners) f();
  }

  private render(): void {
    const root = this.root;
    root.textContent = '';
    const list = this.list();
    if (!list.length) {
      root.append(el('div', 'muted', 'None yet: ☆ in a node\'s details adds it.'));
      return;
    }
    const ul = el('ul', 'bookmarks');
    for (const b of list) {
      const li = el('li');
      li.dataset.level = b.level;
      li.dataset.node = String(b.id);
      const rm = el('button', undefined, '×');
      rm.title = 'remove the bookmark';
      rm.addEventListener('click', (e) => { e.stopPropagation(); this.toggle(b); });
      li.append(chip(rgbCss(opColor(b.op))), midName(b.name), el('span', 'op', `${b.op} · ${b.level}`), rm);
      li.title = `${b.name} (${b.op}, ${b.level}): click to select`;
      li.addEventListener('click', () => this.store.dispatch({
        type: 'select', selection: { kind: 'node', level: b.level, id: b.id, run: this.store.state.panes[0].run }, source: 'details',
      }));
      ul.append(li);
    }
    root.append(ul);
  }
}
