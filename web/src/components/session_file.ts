// Saved sessions (.mis, docs/reference/saved-session.md): "save session"
// sends the UI's part — bookmarks and notes of every run, the view (the URL
// hash, the main graph's camera, the probe statistic shown) and the main
// run's re-run settings — to the server, which writes it into the session
// file `open` was given (paths relative to it) or, without one, answers the
// document for the browser to download. When the server restored a session
// (`open session.mis`) the page applies it once: bookmarks, notes, re-run
// settings, the view (unless the page's own URL names one) and the camera.

import type { ApiClient } from '../rpc/api';
import type { RerunStateJson, SavedSessionJson } from '../rpc/probe_api';
import { probeSettingsOf } from '../core/state';
import type { StoreApi } from '../core/store';
import type { Bookmarks } from './bookmarks';
import type { Notes } from './notes';

export interface ViewportAccess {
  get(): { x: number; y: number; scale: number } | null;
  restore(v: { x: number; y: number; scale: number }): Promise<boolean>;
  /** Applies a saved URL hash to the state (as an edited URL is). */
  applyHash(hash: string): void;
}

export class SessionFile {
  /** What the last save or restore did, for the status line and the tests. */
  state: { restored: boolean; savedTo: string | null; downloaded: boolean; error: string | null; busy: boolean } = {
    restored: false, savedTo: null, downloaded: false, error: null, busy: false,
  };

  constructor(private readonly store: StoreApi, private readonly api: ApiClient, private readonly bookmarks: Bookmarks,
    private readonly notes: Notes, private readonly viewport: ViewportAccess, private readonly button: HTMLButtonElement,
    private readonly statusEl: HTMLElement) {
    button.addEventListener('click', () => void this.save());
  }

  private show(text: string, error = false): void {
    this.statusEl.textContent = text;
    this.statusEl.classList.toggle('error', error);
  }

  /** The document of the UI's state now. */
  async document(): Promise<SavedSessionJson> {
    const s = this.store.state;
    const bookmarks: SavedSessionJson['bookmarks'] = [];
    const notes: SavedSessionJson['notes'] = [];
    s.runs.forEach((_, run) => {
      for (const b of this.bookmarks.list(run)) bookmarks.push({ run, level: b.level, node: b.id, name: b.name, op: b.op });
      for (const n of this.notes.list(run)) notes.push({ run, level: n.level, node: n.id, name: n.name, op: n.op, text: n.text });
    });
    const run = s.panes[0].run;
    const set = probeSettingsOf(s, run);
    const st: RerunStateJson | null = await this.api.rerunState(run).catch(() => null);
    const inputs = st?.inputs ?? [];
    const vp = this.viewport.get();
    return {
      format: 'model-inspector-session', version: 1, bookmarks, notes,
      probes: { patterns: set.probes, triggers: set.triggers, keep: set.keep, inputs, input: set.input < inputs.length ? set.input : -1 },
      view: { hash: location.hash.replace(/^#/, ''), probe_stat: s.probeStat, ...(vp ? { viewport: vp } : {}) },
    };
  }

  async save(): Promise<void> {
    this.state = { ...this.state, busy: true, error: null };
    this.button.disabled = true;
    this.show('saving…');
    try {
      const r = await this.api.saveSession(await this.document());
      if (r.saved) {
        this.state = { ...this.state, savedTo: r.saved };
        this.show(`saved to ${r.saved}`);
      } else {
        // No session file on the server: the browser downloads the document.
        const a = document.createElement('a');
        a.href = URL.createObjectURL(new Blob([r.document], { type: 'application/json' }));
        a.download = 'session.mis';
        a.click();
        setTimeout(() => URL.revokeObjectURL(a.href), 10000);
        this.state = { ...this.state, downloaded: true };
        this.show('downloaded session.mis (absolute paths; `open --session PATH` saves next to the runs)');
      }
    } catch (e) {
      this.state = { ...this.state, error: (e as Error).message };
      this.show((e as Error).message, true);
    } finally {
      this.state = { ...this.state, busy: false };
      this.button.disabled = false;
    }
  }

  /** Applies the session the server restored, once the runs are in. `pageHash`: the page's own URL state, which wins. */
  async restore(pageHash: string): Promise<void> {
    const got = await this.api.savedSession().catch(() => null);
    if (!got) return;
    if (got.path) this.button.title = `save the session to ${got.path}`;
    const doc = got.session;
    if (!got.restored || !doc) return;
    const s = this.store.state;
    s.runs.forEach((_, run) => {
      this.bookmarks.replace(run, (doc.bookmarks ?? []).filter((b) => b.run === run).map((b) => ({ level: b.level, id: b.node, name: b.name, op: b.op })));
      this.notes.replace(run, (doc.notes ?? []).filter((n) => n.run === run).map((n) => ({ level: n.level, id: n.node, name: n.name, op: n.op, text: n.text })));
    });
    const p = doc.probes;
    if (p) {
      // The input by path: the server lists the inputs it offers for the run.
      const run = s.panes[0].run;
      const st = await this.api.rerunState(run).catch(() => null);
      const path = p.input >= 0 ? p.inputs[p.input] : undefined;
      const input = path && st ? st.inputs.findIndex((x) => x === path || x.endsWith(`/${path}`)) : -1;
      this.store.dispatch({ type: 'setProbeSettings', run, settings: { probes: p.patterns, triggers: p.triggers, keep: p.keep, input } });
    }
    const v = doc.view;
    if (v?.probe_stat) this.store.dispatch({ type: 'setProbeStat', stat: v.probe_stat });
    if (v?.hash && !pageHash.replace(/^#/, '')) this.viewport.applyHash(v.hash);
    if (v?.viewport) {
      // After the layout the hash asks for and its node's centring.
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      await this.viewport.restore(v.viewport);
    }
    this.state = { ...this.state, restored: true };
    this.show(`restored from ${got.path ?? 'the session file'}`);
  }
}
