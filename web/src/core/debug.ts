// The debug surface: the one place the running UI is visible from outside,
// for the browser tests (web/test/*.mjs) and the benchmarks (bench/ui/).
// main.ts installs it; no production class carries members for tests.
//
//   window.__miDebug.state()    a copy of the store's state (state.ts):
//                               selection, resolved selection (tasks,
//                               version, done), panes, tab, ... Changing
//                               it changes nothing.
//   window.__miDebug.version()  bumped on every state change
//   window.__miDebug.stats()    the views' counters and timings (base/stats.ts)
//   window.__miDebug.view(id)   a view's debug handle: 'graph' → panes and
//                               geometry (views/graph/debug.ts), 'timeline' →
//                               the TimelineView (null without a trace),
//                               'mapping' → the MappingView, 'summary' → the
//                               SummaryView
//
// and attributes on <body>, kept by one observer:
//   data-ready     "1" once the server's runs are in, "error" without a
//                  server, "file" when a layout file is shown
//   data-renderer  webgl2 | canvas2d (the main pane's)
//   data-rendered  frames drawn by the main pane with a layout
//   data-timeline  the run the timeline shows
//   data-resolved  the selection version whose resolution is done

import type { Stats } from '../base/stats';
import type { AppState } from './state';
import type { StoreApi } from './store';
import type { ViewInstance } from './view';

export interface MiDebug {
  state(): AppState;
  version(): number;
  stats(): ReturnType<Stats['snapshot']>;
  view(id: string): unknown;
}

declare global {
  interface Window { __miDebug?: MiDebug }
}

export function installDebugSurface(store: StoreApi, stats: Stats, views: ReadonlyMap<string, ViewInstance>): void {
  window.__miDebug = Object.freeze({
    state: () => structuredClone(store.state),
    version: () => store.version,
    stats: () => stats.snapshot(),
    view: (id: string) => views.get(id)?.debugHandle?.() ?? null,
  });
  const body = document.body.dataset;
  const set = (k: string, v: string | undefined): void => {
    if (v === undefined) delete body[k];
    else if (body[k] !== v) body[k] = v;
  };
  const observe = (): void => {
    const s = store.state;
    set('ready', s.status === 'ready' ? '1' : s.status === 'loading' ? undefined : s.status);
    set('resolved', s.resolved.done ? String(s.resolved.version) : undefined);
    const renderer = stats.get('graph.renderer'), run = stats.get('timeline.run');
    set('renderer', renderer === undefined ? undefined : String(renderer));
    set('rendered', String(stats.num('graph.renders')));
    set('timeline', run === undefined ? undefined : String(run));
  };
  store.subscribe(observe);
  stats.onChange(observe);
  observe();
}
