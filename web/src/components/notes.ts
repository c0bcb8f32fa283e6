// Notes on nodes: a free-text note per node of a run (what a user found
// there: "NaN starts here", "fp16 overflow after the compiler's cast"),
// edited in the node's details, listed under the bookmarks, kept in
// localStorage per run name like the bookmarks, and saved with the session
// (.mis).

import type { AppState } from '../core/state';
import type { StoreApi } from '../core/store';
import { el, midName } from '../widgets/dom';

export interface Note { level: string; id: number; name: string; op: string; text: string }

const kKey = 'mi.notes';

function loadAll(): Record<string, Note[]> {
  try {
    const v = JSON.parse(localStorage.getItem(kKey) ?? '{}') as unknown;
    return v && typeof v === 'object' ? v as Record<string, Note[]> : {};
  } catch { return {}; }
}

export class Notes {
  private all = loadAll();
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly store: StoreApi, private readonly root: HTMLElement) {
    store.subscribe((s, prev) => { if (s.runs !== prev?.runs || s.panes[0].run !== prev?.panes[0].run) this.render(); });
    window.addEventListener('storage', (e) => { if (e.key === kKey) { this.all = loadAll(); this.changed(); } });
    this.render();
  }

  private runKey(s: AppState = this.store.state, run = s.panes[0].run): string | null {
    return s.runs[run]?.name ?? null;
  }

  /** The notes of run `run` (the main pane's by default), in the order written. */
  list(run?: number): Note[] {
    const k = this.runKey(this.store.state, run);
    return k === null ? [] : this.all[k] ?? [];
  }

  /** Replaces run `run`'s notes (a restored session). */
  replace(run: number, notes: Note[]): void {
    const k = this.runKey(this.store.state, run);
    if (k === null) return;
    if (notes.length) this.all[k] = notes.slice(); else delete this.all[k];
    this.persist();
  }

  /** Sets (or, with empty text, removes) the note on a node of the main pane's run. */
  set(n: Note): void {
    const k = this.runKey();
    if (k === null) return;
    const rest = this.list().filter((x) => !(x.level === n.level && x.id === n.id));
    this.all[k] = n.text.trim() ? [...rest, n] : rest;
    if (!this.all[k].length) delete this.all[k];
    this.persist();
  }

  private persist(): void {
    try { localStorage.setItem(kKey, JSON.stringify(this.all)); } catch { /* storage off: kept until reload */ }
    this.changed();
  }

  onChange(f: () => void): void { this.listeners.push(f); }

  /** The note box of a node's details: saved when it loses focus (or on Ctrl+Enter). */
  editor(n: Omit<Note, 'text'>): HTMLElement {
    const box = el('div', 'note-box');
    const area = el('textarea', 'note');
    area.rows = 2;
    area.placeholder = 'note on this node (saved with the session)';
    area.value = this.list().find((x) => x.level === n.level && x.id === n.id)?.text ?? '';
    const save = (): void => {
      const cur = this.list().find((x) => x.level === n.level && x.id === n.id)?.text ?? '';
      if (area.value !== cur) this.set({ ...n, text: area.value });
    };
    area.addEventListener('change', save);
    area.addEventListener('blur', save);
    area.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { save(); area.blur(); } });
    box.append(area);
    return box;
  }

  private changed(): void {
    this.render();
    for (const f of this.listeners) f();
  }

  private render(): void {
    const root = this.root;
    root.textContent = '';
    const list = this.list();
    if (!list.length) return;
    const ul = el('ul', 'notes');
    for (const n of list) {
      const li = el('li');
      li.dataset.level = n.level;
      li.dataset.node = String(n.id);
      li.append(midName(n.name), el('span', 'note-text', n.text));
      li.title = `${n.name} (${n.op}, ${n.level}): ${n.text}`;
      li.addEventListener('click', () => this.store.dispatch({
        type: 'select', selection: { kind: 'node', level: n.level, id: n.id, run: this.store.state.panes[0].run }, source: 'details',
      }));
      ul.append(li);
    }
    root.append(ul);
  }
}
