// Entry point: builds the store from the URL, the API client, the selection
// controller, the URL sync, the panels and the views, then asks the server
// for its runs. The views are listed here (an explicit list, no
// self-registration): adding a view is a folder under views/ and a line in
// kViews (web/README.md, "Adding a view").

import './style.css';
import { Stats } from './base/stats';
import { installDebugSurface } from './core/debug';
import { DiffController } from './core/diff_controller';
import { SelectionController } from './core/selection_controller';
import { initialState } from './core/state';
import { Store } from './core/store';
import { UrlSync } from './core/url_sync';
import { parseHash } from './core/url_state';
import type { ViewInstance, ViewPlugin } from './core/view';
import { BottomPanel } from './components/bottom_panel';
import { Bookmarks } from './components/bookmarks';
import { Notes } from './components/notes';
import { ProbePanel } from './components/probe_panel';
import { SessionFile } from './components/session_file';
import { ProbeController } from './core/probe_controller';
import { mountDetailsPanel } from './components/details_panel';
import { mountLegend } from './components/legend_panel';
import { RunNotes } from './components/run_notes';
import { ModelPanel } from './components/model_panel';
import { mountSidePanelSizer } from './components/panel_sizes';
import { SearchPanel } from './components/search_panel';
import { mountShortcuts } from './components/shortcuts';
import { mountToolbar } from './components/toolbar';
import { Api } from './rpc/api';
import { CachedApi } from './rpc/cached_api';
import { analysesView } from './views/analyses';
import { clusterView } from './views/cluster';
import { graphView } from './views/graph';
import { historyView } from './views/history';
import { kDefaultMaxItems } from './views/graph/pane';
import { mappingView } from './views/mapping';
import { summaryView } from './views/summary';
import { timelineView } from './views/timeline';
import { trainingView } from './views/training';
import { byId } from './widgets/dom';

/** The views, bottom tabs in tab order (the first is the default tab). */
const kViews: readonly ViewPlugin[] = [graphView, timelineView, mappingView, summaryView, analysesView, clusterView, historyView, trainingView];
/**
 * Bottom views offered only once the server says they apply: the cluster
 * view, when it holds a cluster; the history, when it reads a run history;
 * the training view, when one of its runs is a training snapshot.
 */
const kHiddenUntilServed = [clusterView.id, historyView.id, trainingView.id];

const page = new URLSearchParams(location.search);
const maxItems = page.get('max_items');
const options = {
  forceCanvas2d: page.get('renderer') === 'canvas2d',
  // Visible-item budget of layout requests: ?max_items=N (0 = all expanded).
  maxItems: maxItems !== null && /^\d+$/.test(maxItems) ? parseInt(maxItems, 10) : kDefaultMaxItems,
  // The first view folds the top-level groups (an overview) in the direction that fits the window;
  // ?fold=budget fills the item budget instead, top to bottom (the earlier first screen).
  overview: page.get('fold') !== 'budget',
};
const bottomViews = kViews.filter((v) => v.slot === 'bottom');
const tabs = bottomViews.map((v) => v.id);
const store = new Store(initialState(parseHash(location.hash, tabs), tabs, kHiddenUntilServed));
const hash = new URLSearchParams(location.hash.replace(/^#/, ''));
const api = new CachedApi(new Api());
const stats = new Stats();
new UrlSync(store);
new SelectionController(store, api);
new DiffController(store, api);
new ProbeController(store, api);
mountToolbar(store);
new SearchPanel(byId<HTMLInputElement>('search'), byId<HTMLSelectElement>('search-mode'), byId('results'), store, api);
mountShortcuts(byId<HTMLInputElement>('search'), () => Array.from(document.querySelectorAll<HTMLDetailsElement>('details.menu')));
const bookmarks = new Bookmarks(store, byId('bookmarks'));
const notes = new Notes(store, byId('notes'));
mountDetailsPanel(byId('details'), store, api, bookmarks, notes);
new ProbePanel(store, api, byId('probes'));
new ModelPanel(byId('model'), store, api);
mountSidePanelSizer();
new RunNotes(store, api);
mountLegend(byId('legend'), byId('heat-legend'), byId('status-legend'), store);
const bottom = new BottomPanel(store, bottomViews);
const instances = new Map<string, ViewInstance>();
const ctx = { store, api, stats, options };
for (const v of kViews) {
  const inst = v.create(ctx, v.slot === 'main' ? { root: byId('view'), tools: byId('graph-tools') } : bottom.mount(v.id));
  instances.set(v.id, inst);
  if (v.slot === 'bottom') bottom.attach(v.id, inst);
}
installDebugSurface(store, stats, instances);
const graph = instances.get(graphView.id);
const session = new SessionFile(store, api, bookmarks, notes, {
  get: () => graph?.viewport?.() ?? null,
  restore: (v) => graph?.restoreViewport?.(v) ?? Promise.resolve(false),
  applyHash: (h) => store.dispatch({ type: 'urlChanged', url: parseHash(h, tabs) }),
}, byId<HTMLButtonElement>('save-session'), byId('session-status'));

api.runs().then(async (runs) => {
  // A server started on a cluster of ranks holds its report and opens ranks as runs when asked:
  // its first screen is the cluster view (unless the link names another tab).
  const cluster = await api.cluster().catch(() => null);
  const history = await api.historyRuns(null, 1).catch(() => null);
  store.dispatch({ type: 'runsLoaded', runs });
  // A session `open session.mis` restored: bookmarks, notes, probe settings, view.
  void session.restore(hash.toString());
  if (history) store.dispatch({ type: 'showTab', tab: historyView.id });
  // A training snapshot: its diagnosis is the first thing to see (unless the link names another tab).
  if (runs.some((r) => r.training)) {
    store.dispatch({ type: 'showTab', tab: trainingView.id, focus: !hash.has('tab') && !!store.state.runs[store.state.panes[0].run]?.training });
  }
  if (cluster) {
    store.dispatch({ type: 'showTab', tab: clusterView.id, focus: !hash.has('tab') });
    if (!runs.length && !hash.has('panel')) store.dispatch({ type: 'setPanel', panel: 'bottom' });
  } else if (!runs.length) {
    store.dispatch({ type: 'banner', message: 'the server has no runs' });
  }
}, (e: Error) => {
  store.dispatch({
    type: 'loadFailed',
    message: `${e.message}. You can still open a layout file (.bin from 'model-inspector render --format binary').`,
  });
});
