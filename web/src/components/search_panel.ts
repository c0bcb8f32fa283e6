// Search box and results list: text / glob / regex / op modes, answered by
// the server (/search) for the active pane's run and level. The query lives
// in the store (an op-type selection sets one too); this component runs it
// and publishes the answer, whose matches the graph highlights. Picking a
// result selects its node in that pane, which reveals (expands the
// collapsed groups around it), centres and selects it.

import { opColor, rgbCss } from '../base/palette';
import type { ApiClient, SearchMode } from '../rpc/api';
import type { AppState, SearchResults } from '../core/state';
import type { StoreApi } from '../core/store';
import { chip, el, midName } from '../widgets/dom';

export class SearchPanel {
  /** The query seq last run. */
  private ran = -1;

  constructor(
    private readonly input: HTMLInputElement,
    private readonly mode: HTMLSelectElement,
    private readonly results: HTMLElement,
    private readonly store: StoreApi,
    private readonly api: ApiClient,
  ) {
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.submit();
      if (e.key === 'Escape') { input.value = ''; store.dispatch({ type: 'searchClear' }); }
    });
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
    if (q.query && q.seq !== this.ran && s.status === 'ready') {
      this.ran = q.seq;
      void this.run(s);
    }
  }

  private async run(s: AppState): Promise<void> {
    const q = s.search, pane = s.panes[q.pane] ?? s.panes[0];
    this.results.textContent = 'searching…';
    let results: SearchResults;
    try {
      const r = await this.api.search(pane.run, pane.level, q.query, q.mode);
      results = { seq: q.seq, pane: q.pane, run: pane.run, level: pane.level, matches: r.matches, total: r.total, error: null };
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
    root.append(el('div', 'muted', total === 0 ? 'no matches' : total > matches.length ? `${total} matches, first ${matches.length}`
      : `${total} match${total === 1 ? '' : 'es'}`));
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
