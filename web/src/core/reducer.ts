// The reducer: (state, action) → the next state, without side effects, so
// every rule of the UI state is testable in Node (test/unit/store_test.mjs).
// An action that changes nothing returns the same object.

import { sameSelection, type Selection, type SelectionSource } from './selection';
import {
  diffKey, emptyResolved, kDefaultPane, probeSettingsOf, type Action, type AppState, type PaneState, type SavedFolding, type SearchState,
} from './state';
import type { UrlState } from './url_state';

const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, k) => x === b[k]);

function setPane(s: AppState, k: number, p: PaneState): AppState {
  const panes = s.panes.slice();
  panes[k] = p;
  return { ...s, panes };
}

/** The second pane's default: the main pane's run at its other level. */
function defaultSecondPane(s: AppState): PaneState {
  const main = s.panes[0];
  const levels = s.runs[main.run]?.levels ?? [main.level];
  return { ...main, level: levels.find((l) => l !== main.level) ?? main.level, expand: [], collapse: [], node: null };
}

/**
 * Pane `k` shows `level` of `run`: the folding of the level it leaves is
 * kept, the folding it had on the new one comes back; no node is selected.
 */
function switchLevel(s: AppState, k: number, level: string, run: number): AppState {
  const p = s.panes[k];
  if (p.level === level && p.run === run) return s;
  const saved: SavedFolding = { ...(s.savedFolding[k] ?? {}), [`${p.run}:${p.level}`]: { expand: p.expand, collapse: p.collapse } };
  const back = saved[`${run}:${level}`] ?? { expand: [], collapse: [] };
  const savedFolding = s.savedFolding.slice();
  savedFolding[k] = saved;
  const next = setPane({ ...s, savedFolding }, k, { ...p, run, level, expand: back.expand, collapse: back.collapse, node: null });
  return { ...next, search: searchAfterLevelChange(next.search, k) };
}

/** The search answered for a pane's old level: dropped; one an op-type selection set runs again. */
function searchAfterLevelChange(q: SearchState, k: number): SearchState {
  if (q.pane !== k) return q;
  if (q.fromSelection && q.query) return { ...q, seq: q.seq + 1, results: null };
  return q.results ? { ...q, results: null } : q;
}

function clearedSearch(q: SearchState): SearchState {
  return { ...q, query: '', fromSelection: false, seq: q.seq + 1, results: null };
}

/** Runs and levels a link names that the server lacks fall back to the first run / level. */
function validPane(s: AppState, p: PaneState): PaneState {
  if (!s.runs.length) return p;
  let { run, level } = p;
  if (!s.runs[run]) run = 0;
  // A run without a graph (a trace alone, a run that could not be opened) has no level: ''.
  if (!s.runs[run].levels.includes(level)) level = s.runs[run].levels[0] ?? '';
  return run === p.run && level === p.level ? p : { ...p, run, level, expand: [], collapse: [], node: null };
}

/** A new selection: bumps the version, resets what was resolved, and updates the panes and the search it concerns. */
function select(s: AppState, sel: Selection | null, source: SelectionSource, pane?: number): AppState {
  // Re-picking what is selected (a click on the selected node, the same link) changes nothing.
  if ((source === 'graph' || source === 'search' || source === 'url') && sameSelection(s.selection, sel)) {
    if (pane === undefined || sel?.kind !== 'node' || s.panes[pane]?.node === sel.id) return s;
  }
  const version = s.selectionVersion + 1;
  let next: AppState = { ...s, selection: sel, selectionSource: source, selectionVersion: version, resolved: emptyResolved(version) };
  // The search list an op-type selection set goes with it (a node picked from that list keeps it).
  if (sel?.kind === 'op_type') {
    next.search = { ...s.search, query: sel.opType, mode: 'op', fromSelection: true, seq: s.search.seq + 1, pane: s.active, results: null };
  } else if (s.search.fromSelection && sel?.kind !== 'node') {
    next.search = clearedSearch(s.search);
  }
  if (sel === null) {
    if (next.panes.some((p) => p.node !== null)) next.panes = next.panes.map((p) => (p.node === null ? p : { ...p, node: null }));
    return next;
  }
  if (sel.kind === 'finding' && next.panes[0].node !== null) next = setPane(next, 0, { ...next.panes[0], node: null });
  if (sel.kind !== 'node') return next;
  let k = pane ?? -1;
  if (k < 0 || k >= next.panes.length || (k > 0 && !next.comparing)) {
    // A node of another level: a pane showing that level answers (compare
    // mode), else the main pane, switching to the level when its run has it.
    const run = next.panes[next.active]?.run ?? next.panes[0].run;
    k = next.comparing ? next.panes.findIndex((p) => p.level === sel.level && p.run === run) : -1;
    if (k < 0) {
      k = 0;
      const main = next.panes[0];
      if (sel.level !== main.level && (next.runs[main.run]?.levels ?? []).includes(sel.level)) next = switchLevel(next, 0, sel.level, main.run);
    }
  }
  next.active = k;
  next.panes = next.panes.map((p, i) => (i === k ? (p.node === sel.id ? p : { ...p, node: sel.id }) : p.node === null ? p : { ...p, node: null }));
  return next;
}

/** The state a URL names (the user edited the hash), applied over the current one. */
function applyUrl(s: AppState, u: UrlState): AppState {
  const before = s.panes[0];
  const main: PaneState = validPane(s, { ...u.pane });
  let next: AppState = {
    ...s, tab: s.tabs.includes(u.tab) ? u.tab : s.tab, panel: u.panel, color: u.color, timelineCompare: u.timelineCompare, align: u.align,
    clock: u.clock, criticalPathOn: u.criticalPath, criticalPath: u.criticalPath ? s.criticalPath : null,
    timelinePins: u.pins.join(',') === s.timelinePins.join(',') ? s.timelinePins : u.pins,
    probeStat: u.probeStat,
  };
  // Another run: the folding kept for its levels does not apply.
  if (main.run !== before.run) next.savedFolding = [{}, ...next.savedFolding.slice(1)];
  next.panes = [main, ...next.panes.slice(1)];
  if (u.compare && (!s.runs.length || s.runs[u.compare.run]?.levels.includes(u.compare.level))) {
    const p1 = next.panes[1];
    next.panes = [main, p1 && p1.run === u.compare.run && p1.level === u.compare.level ? p1
      : { ...main, run: u.compare.run, level: u.compare.level, expand: [], collapse: [], node: null }];
    while (next.savedFolding.length < 2) next.savedFolding = [...next.savedFolding, {}];
    next.comparing = true;
  } else {
    next.comparing = false;
    next.active = 0;
  }
  const sel: Selection | null = u.selection ?? (main.node !== null ? { kind: 'node', level: main.level, id: main.node, run: main.run } : null);
  if (!sameSelection(sel, s.selection)) next = select(next, sel, 'url', sel?.kind === 'node' ? 0 : undefined);
  return next;
}

export function reduce(s: AppState, a: Action): AppState {
  switch (a.type) {
    case 'runsLoaded': {
      let next: AppState = { ...s, status: 'ready', runs: a.runs };
      next.panes = next.panes.map((p) => validPane(next, p));
      const p1 = s.panes[1];
      if (next.comparing && (!p1 || !a.runs[p1.run]?.levels.includes(p1.level))) next = { ...next, comparing: false, active: 0 };
      // The link's selection takes effect now that its run and level are known to exist
      // (an op type's search, a finding's pane); node= without sel= selects that node.
      const main = next.panes[0];
      const sel = next.selection ?? (main.node !== null ? { kind: 'node' as const, level: main.level, id: main.node, run: main.run } : null);
      if (sel) next = select({ ...next, selection: null }, sel, 'url', sel.kind === 'node' ? 0 : undefined);
      return next;
    }
    case 'loadFailed':
      return { ...s, status: 'error', banner: a.message };
    case 'fileOpened':
      return { ...s, status: 'file', banner: null };
    case 'urlChanged':
      return applyUrl(s, a.url);
    case 'setRun': {
      if (a.run === s.panes[0].run) return s;
      const level = s.runs[a.run] ? s.runs[a.run].levels[0] ?? '' : kDefaultPane.level;
      let next = setPane(s, 0, { ...s.panes[0], run: a.run, level, expand: [], collapse: [], node: null });
      next = { ...next, savedFolding: [{}, ...next.savedFolding.slice(1)], search: next.search.results ? { ...next.search, results: null } : next.search };
      // The critical path is the old run's: it goes (the new run's "show" draws its own).
      next = { ...next, criticalPath: null, criticalPathOn: false };
      return select(next, null, 'app');
    }
    case 'setLevel': {
      const p = s.panes[a.pane];
      if (!p) return s;
      return switchLevel(s, a.pane, a.level, a.run ?? p.run);
    }
    case 'setGrouping': {
      if (s.panes.every((p) => p.grouping === a.grouping)) return s;
      return {
        ...s, panes: s.panes.map((p) => ({ ...p, grouping: a.grouping, expand: [], collapse: [] })), savedFolding: s.panes.map(() => ({})),
      };
    }
    case 'setDirection': {
      if (s.panes.every((p) => p.direction === a.direction)) return s;
      return { ...s, panes: s.panes.map((p) => ({ ...p, direction: a.direction })) };
    }
    case 'setFolding': {
      const p = s.panes[a.pane];
      if (!p || (sameList(p.expand, a.expand) && sameList(p.collapse, a.collapse))) return s;
      return setPane(s, a.pane, { ...p, expand: a.expand.slice(), collapse: a.collapse.slice() });
    }
    case 'setPaneNode': {
      const p = s.panes[a.pane];
      if (!p || p.node === a.node) return s;
      return setPane(s, a.pane, { ...p, node: a.node });
    }
    case 'setActivePane':
      return a.pane === s.active || a.pane < 0 || a.pane >= s.panes.length ? s : { ...s, active: a.pane };
    case 'setCompare': {
      if (a.on === s.comparing) return s;
      if (!a.on) return { ...s, comparing: false, active: 0 };
      if (!s.runs.length) return { ...s, banner: 'compare needs the server (model-inspector open)' };
      const panes = s.panes[1] ? s.panes : [...s.panes, defaultSecondPane(s)];
      const savedFolding = s.savedFolding.length > 1 ? s.savedFolding : [...s.savedFolding, {}];
      return { ...s, comparing: true, panes, savedFolding };
    }
    case 'setSync':
      return a.on === s.sync ? s : { ...s, sync: a.on };
    case 'setColor':
      return a.color === s.color ? s : { ...s, color: a.color };
    case 'setLineage':
      return a.on === s.lineage ? s : { ...s, lineage: a.on };
    case 'setTab':
      return a.tab === s.tab || !s.tabs.includes(a.tab) ? s : { ...s, tab: a.tab };
    case 'showTab': {
      if (!s.tabs.includes(a.tab)) return s;
      const hiddenTabs = s.hiddenTabs.includes(a.tab) ? s.hiddenTabs.filter((t) => t !== a.tab) : s.hiddenTabs;
      const tab = a.focus ? a.tab : s.tab;
      return hiddenTabs === s.hiddenTabs && tab === s.tab ? s : { ...s, hiddenTabs, tab };
    }
    case 'setPanel':
      return a.panel === s.panel ? s : { ...s, panel: a.panel };
    case 'setClock':
      return a.clock === s.clock ? s : { ...s, clock: a.clock };
    case 'setTimelineCompare': {
      const align = a.align ?? s.align;
      return a.run === s.timelineCompare && align === s.align ? s : { ...s, timelineCompare: a.run, align };
    }
    case 'setTimelinePins':
      return a.pins.join(',') === s.timelinePins.join(',') ? s : { ...s, timelinePins: a.pins.slice() };
    case 'select':
      return select(s, a.selection, a.source, a.pane);
    case 'resolved': {
      if (a.version !== s.selectionVersion) return s;
      return { ...s, resolved: { ...s.resolved, ...a.patch, version: a.version, done: a.done ?? s.resolved.done } };
    }
    case 'setDetails':
      if (a.version !== undefined && a.version !== s.selectionVersion) return s;
      return { ...s, details: { content: a.content, loading: a.loading ?? false } };
    case 'detailsLoading':
      if (a.version !== undefined && a.version !== s.selectionVersion) return s;
      return s.details.loading ? s : { ...s, details: { ...s.details, loading: true } };
    case 'search': {
      const q = s.search;
      return { ...s, search: { ...q, query: a.query, mode: a.mode, fromSelection: false, seq: q.seq + 1, pane: s.active, results: null } };
    }
    case 'searchResults':
      return a.results.seq !== s.search.seq ? s : { ...s, search: { ...s.search, results: a.results } };
    case 'searchClear':
      return !s.search.query && !s.search.results ? s : { ...s, search: clearedSearch(s.search) };
    case 'setCriticalPath':
      return a.path === s.criticalPath && s.criticalPathOn === (a.path !== null) ? s : { ...s, criticalPath: a.path, criticalPathOn: a.path !== null };
    case 'banner':
      return a.message === s.banner ? s : { ...s, banner: a.message };
    case 'graphInfo':
      return { ...s, graph: a.info };
    case 'diff':
      return { ...s, diffs: { ...s.diffs, [diffKey(a.entry.base, a.entry.next)]: a.entry } };
    case 'setProbeStat':
      return a.stat === s.probeStat ? s : { ...s, probeStat: a.stat };
    case 'probesChanged':
      return { ...s, probeVersion: s.probeVersion + 1 };
    case 'probeData':
      return { ...s, probeData: { ...s.probeData, [`${a.entry.run}:${a.entry.level}`]: a.entry } };
    case 'startRerun': {
      const cur = s.reruns[a.run];
      if (cur && (cur.status === 'starting' || cur.status === 'running')) return s;
      const entry = { run: a.run, request: a.request, status: 'starting' as const, job: null, error: null, seq: (cur?.seq ?? 0) + 1 };
      return { ...s, reruns: { ...s.reruns, [a.run]: entry } };
    }
    case 'rerun':
      if (s.reruns[a.entry.run]?.seq !== a.entry.seq) return s;
      return { ...s, reruns: { ...s.reruns, [a.entry.run]: a.entry } };
    case 'setProbeSettings': {
      const cur = probeSettingsOf(s, a.run);
      return { ...s, probeSettings: { ...s.probeSettings, [a.run]: { ...cur, ...a.settings } } };
    }
    case 'setTrainingMarks': {
      const same = (x: typeof a.marks, y: typeof a.marks): boolean => x === y || (!!x && !!y && x.run === y.run &&
        x.nodes.length === y.nodes.length && x.nodes.every((n, k) => n.id === y.nodes[k].id && n.role === y.nodes[k].role));
      return same(s.trainingMarks, a.marks) ? s : { ...s, trainingMarks: a.marks };
    }
  }
}
