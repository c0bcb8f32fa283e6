// Asks the server for the diffs the UI shows, once per pair of runs, and
// publishes each one's progress in the state (`diffs`, action `diff`): the
// graph's "diff" colour needs the left pane's run against the right pane's
// (compare mode), the timeline's compare marks the main run against the
// timeline's compare run. The API client keeps each answer (CachedApi), so
// going back to a pair asks nothing; a failed diff is asked again when the
// pair is wanted again after another one.

import type { ApiClient } from '../rpc/api';
import { diffKey, graphDiffPair, timelineDiffPair, type AppState } from './state';
import type { StoreApi } from './store';

export class DiffController {
  constructor(private readonly store: StoreApi, private readonly api: ApiClient) {
    store.subscribe((s) => this.onState(s));
    this.onState(store.state);
  }

  /** The pairs the state wants now. */
  private wanted(s: AppState): { base: number; next: number }[] {
    if (s.status !== 'ready') return [];
    const out: { base: number; next: number }[] = [];
    if (s.color === 'diff') {
      const g = graphDiffPair(s);
      if ('base' in g) out.push(g);
    }
    const t = timelineDiffPair(s);
    if (t) out.push(t);
    return out;
  }

  private onState(s: AppState): void {
    for (const { base, next } of this.wanted(s)) {
      const key = diffKey(base, next);
      const have = s.diffs[key];
      if (have && have.status !== 'error') continue;
      if (have?.status === 'error' && this.failed.has(key)) continue;
      this.fetch(base, next);
    }
    // A failed pair no longer wanted may be asked for again later.
    const now = new Set(this.wanted(s).map((p) => diffKey(p.base, p.next)));
    for (const key of [...this.failed]) if (!now.has(key)) this.failed.delete(key);
  }

  /** Pairs whose request failed while they stayed wanted (not asked again until they are not). */
  private readonly failed = new Set<string>();

  private fetch(base: number, next: number): void {
    const key = diffKey(base, next);
    this.store.dispatch({ type: 'diff', entry: { base, next, status: 'loading', report: null, error: null } });
    this.api.diff(base, next).then(
      (report) => this.store.dispatch({ type: 'diff', entry: { base, next, status: 'ready', report, error: null } }),
      (e: unknown) => {
        this.failed.add(key);
        this.store.dispatch({ type: 'diff', entry: { base, next, status: 'error', report: null, error: e instanceof Error ? e.message : String(e) } });
      });
  }
}
