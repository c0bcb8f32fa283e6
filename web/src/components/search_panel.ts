// Search box and results list: auto / text / glob / regex / op modes,
// answered by the server (/search) for the active pane's run and level; the
// list says how the server read the query (auto picks glob when the query
// has '*' or '?'). Escape leaves the box for the graph (the results stay). The query lives
// in the store (an op-type selection sets one too); this component runs it
// and publishes the answer, whose matches the graph highlights. Picking a
// result selects its node in that pane, which reveals (expands the
// collapsed groups around it), centres and selects it.

import { opColor, rgbCss } from '../base/palette';
import type { ApiClient, SearchMode, SearchResult } from '../rpc/api';
import { paneHasGraph, type AppState, type SearchResults } from '../core/state';
import type { StoreApi } from '../core/store';
import { chip, el, midName } from '../widgets/dom';

export class SearchPanel {
  /** The query seq last run. */
  private ran = -1;
  /** The run and level whose example the box shows ("run:level"). */
  private exampleOf = '';

  constructor(
    private readonly input: HTMLInputElement,
    private readonly mode: HTMLSelectElement,
    private readonly results: HTMLElement,
    private readonly store: StoreApi,
    private readonly api: ApiClient,
  ) {
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.submit();
      if (e.key === 'Escape') {
        // Leave the box (Chromium would clear a type=search input): focus the graph.
        e.preventDefault();
        input.blur();
        document.getElementById('graph')?.focus();
      }
    });
    // The box's clear button (or an emptied box and Enter) clears the search.
    input.addEventListener('search', () => { if (!input.value) store.dispatch({ type: 'searchClear' }); });
    mode.addEventListener('change', () => { if (input.value) this.submit(); });
    store.subscribe((s, prev) => this.onState(s, prev));
    this.onState(store.state, null);
  }

  private submit(): void {
    const q = this.input.value.trim();
    if (!q) { this.store.dispatch({ type: 'searchClear' }); return; }
    this.store.dispatch({ type: 'search', query: q, mode: this.mode.value as SearchMode });
  }

  private onState(s: AppState, prev: AppState | null): void {
    const q = s.search;
    if (prev && q === prev.search && s.panes === prev.panes && s.status === prev.status) return;
    if (q.fromSelection || !q.query) {
      // Set from outside (an op-type selection) or cleared: the box shows it.
      if (this.input.value !== q.query) this.input.value = q.query;
      if (q.query && this.mode.value !== q.mode) this.mode.value = q.mode;
    }
    if (!prev || q.results !== prev.search.results) this.render(q.results);
    const pane = s.panes[s.active] ?? s.panes[0];
    const key = `${pane.run}:${pane.level}`;
    if (s.status === 'ready' && s.runs[pane.run]?.levels.includes(pane.level) && key !== this.exampleOf) {
      this.exampleOf = key;
      void this.showExample(pane.run, pane.level, key);
    }
    // A pane without a graph (trace-only run) has nothing to search.
    if (q.query && q.seq !== this.ran && s.status === 'ready' && paneHasGraph(s, s.panes[q.pane] ?? s.panes[0])) {
      this.ran = q.seq;
      void this.run(s);
    }
  }

  /** The box's placeholder: a glob that finds something on this level (from one '**' search). */
  private async showExample(run: number, level: string, key: string): Promise<void> {
    const r = await this.api.search(run, level, '**', 'glob').catch(() => null);
    if (!r || key !== this.exampleOf) return;
    this.input.placeholder = `e.g. ${exampleQuery(r.matches as { name: string; scope?: string }[])}  ( / )`;
  }

  private async run(s: AppState): Promise<void> {
    const q = s.search, pane = s.panes[q.pane] ?? s.panes[0];
    this.results.textContent = 'searching…';
    let results: SearchResults;
    try {
      const r = await this.api.search(pane.run, pane.level, q.query, q.mode);
      results = { seq: q.seq, pane: q.pane, run: pane.run, level: pane.level, matches: r.matches, total: r.total, error: null, readAs: readAs(q.mode, q.query, r) };
    } catch (e) {
      results = { seq: q.seq, pane: q.pane, run: pane.run, level: pane.level, matches: [], total: 0, error: (e as Error).message };
    }
    if (this.store.state.search.seq !== q.seq) return;
    this.store.dispatch({ type: 'searchResults', results });
  }

  private render(r: SearchResults | null): void {
    const root = this.results;
    root.textContent = '';
    if (!r) return;
    if (r.error !== null) {
      root.append(el('div', 'error', r.error));
      return;
    }
    const total = r.total, matches = r.matches;
    root.append(el('div', 'muted search-count', total === 0 ? 'no matches' : total > matches.length ? `${total} matches, first ${matches.length}`
      : `${total} match${total === 1 ? '' : 'es'}`));
    if (r.readAs) root.append(el('div', 'muted search-read-as', `read as ${r.readAs}`));
    const list = el('ul', 'results');
    // Long lists: only the first 300 rows get DOM; the rest stay reachable by refining the query.
    for (const m of matches.slice(0, 300)) {
      const li = el('li', 'result');
      li.dataset.node = String(m.id);
      li.append(chip(rgbCss(opColor(m.op_type))), midName(m.name, 'name mid'), el('span', 'op', m.op_type));
      li.addEventListener('click', () => {
        for (const x of list.querySelectorAll('.active')) x.classList.remove('active');
        li.classList.add('active');
        this.store.dispatch({ type: 'select', selection: { kind: 'node', level: r.level, id: m.id, run: r.run }, source: 'search', pane: this.store.state.search.pane });
      });
      list.append(li);
    }
    root.append(list);
  }
}

/** How the query was read: the server's words, else (an older server) what the mode means. */
function readAs(mode: SearchMode, query: string, r: SearchResult): string {
  if (r.read_as) return r.read_as;
  const m = mode === 'auto' ? (/[*?]/.test(query) ? 'glob' : 'text') : mode;
  return m === 'glob' ? 'glob' : m === 'regex' ? 'regex' : m === 'op' ? 'op type' : 'substring of node names';
}

/**
 * An example query for nodes like `matches`: on scope paths of three or
 * more segments "a/*\/c*" (the demo: "layer1/*\/conv*"), of two "a/*";
 * on flat names the most common leading word with '*' ("PlaceHolder*");
 * else the syntax alone.
 */
export function exampleQuery(matches: readonly { name: string; scope?: string }[]): string {
  const stem = (seg: string): string => seg.replace(/[\d_.\-]+$/, '') || seg;
  let two = '';
  for (const m of matches) {
    const segs = (m.scope || '').split('/').filter(Boolean);
    if (segs.length >= 3) return `${segs[0]}/*/${stem(segs[2])}*`;
    if (segs.length === 2 && !two) two = `${segs[0]}/*`;
  }
  if (two) return two;
  const count = new Map<string, number>();
  for (const m of matches) {
    const w = /^[A-Za-z]+/.exec(m.name.replace(/^\//, ''))?.[0];
    if (w && w.length >= 2) count.set(w, (count.get(w) ?? 0) + 1);
  }
  let best = '', n = 1;
  for (const [w, c] of count) if (c > n) { best = w; n = c; }
  return best ? `${best}*` : 'layer1/*/conv*';
}
