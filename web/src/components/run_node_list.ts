// A list of entries on nodes kept per run (bookmarks, notes): stored in
// localStorage under one key, by run name, so they survive reloads and a
// later `open` of the same run; another tab of the same server changing
// them is picked up; a restored session replaces a run's list. Subclasses
// render the list and add their own edits.

import type { AppState } from '../core/state';
import type { StoreApi } from '../core/store';

export interface NodeEntry { level: string; id: number; name: string; op: string }

export abstract class RunNodeList<T extends NodeEntry> {
  private all: Record<string, T[]>;
  private readonly listeners: (() => void)[] = [];

  constructor(protected readonly store: StoreApi, protected readonly root: HTMLElement,
              private readonly storageKey: string) {
    this.all = this.load();
    store.subscribe((s, prev) => { if (s.runs !== prev?.runs || s.panes[0].run !== prev?.panes[0].run) this.render(); });
    window.addEventListener('storage', (e) => { if (e.key === storageKey) { this.all = this.load(); this.changed(); } });
  }

  private load(): Record<string, T[]> {
    try {
      const v = JSON.parse(localStorage.getItem(this.storageKey) ?? '{}') as unknown;
      return v && typeof v === 'object' ? v as Record<string, T[]> : {};
    } catch { return {}; }
  }

  private runKey(s: AppState = this.store.state, run = s.panes[0].run): string | null {
    return s.runs[run]?.name ?? null;
  }

  /** The entries of run `run` (the main pane's by default), in the order added. */
  list(run?: number): T[] {
    const k = this.runKey(this.store.state, run);
    return k === null ? [] : this.all[k] ?? [];
  }

  /** Replaces run `run`'s entries (a restored session). */
  replace(run: number, list: T[]): void {
    this.write(this.runKey(this.store.state, run), list.slice());
  }

  /** The main pane's run's entries become `list`. */
  protected setCurrent(list: T[]): void {
    this.write(this.runKey(), list);
  }

  private write(k: string | null, list: T[]): void {
    if (k === null) return;
    if (list.length) this.all[k] = list; else delete this.all[k];
    try { localStorage.setItem(this.storageKey, JSON.stringify(this.all)); } catch { /* storage off: kept until reload */ }
    this.changed();
  }

  /** Called after every change (the details panel follows). */
  onChange(f: () => void): void { this.listeners.push(f); }

  private changed(): void {
    this.render();
    for (const f of this.listeners) f();
  }

  protected abstract render(): void;
}
