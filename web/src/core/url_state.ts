// The URL hash is derived from the UI state by one function (formatHash of
// urlStateOf(state), core/url_sync.ts applies it) and read back by one
// (parseHash), so a link reopens the same view:
//
//   #run=0&level=framework&grouping=scopes&expand=3,17&collapse=5&node=12
//
// (the main graph pane: run, level, grouping, direction, expanded and
// collapsed groups, the selected node), then the rest of the UI, each field
// only when it differs from its default:
//   &sel=task:812        the selection when it is not a node: task:ID[,ID...] |
//                        op:TYPE | finding:N | range:FROM-TO[:TRACK,...] (ns)
//   &tab=mapping         the bottom panel's tab (a bottom view's id)
//   &panel=graph|bottom  one part maximised
//   &color=time|share|status|compare|diff|probe    colour mode of the graph
//   &pstat=mean          with color=probe: the statistic (default nan), a
//                        plugin's metric (plugin:NAME.METRIC) or a compare metric
//   &compare=0:compiled  second graph pane: run:level
//   &tcompare=1          timeline compared with run 1, &align=first_run
//   &clock=calibrated    timeline clock
//   &cpath=1             the critical path drawn on graph and timeline
//   &pin=3,7             timeline tracks pinned to the top (main run's track ids)
// A hash with no fields beyond the main pane's (links written before the
// others existed) parses to the defaults; a malformed field falls back to its default.

import type { Clock } from '../rpc/api';
import { formatSelection, parseSelection, type Selection } from './selection';
import { kDefaultPane, type Align, type ColorMode, type PaneState, type PanelMode } from './state';

/** Everything the URL holds. */
export interface UrlState {
  pane: PaneState;
  /** A selection that is not a node (a node selection is `pane.node`, as older links have it). */
  selection: Selection | null;
  tab: string;
  panel: PanelMode;
  color: ColorMode;
  /** Second graph pane (compare mode): its run and level; null = one pane. */
  compare: { run: number; level: string } | null;
  /** Timeline compared with this run; null = none. */
  timelineCompare: number | null;
  align: Align;
  clock: Clock;
  /** The critical path is drawn ("show" in the summary). */
  criticalPath: boolean;
  /** Timeline tracks pinned to the top, in pin order. */
  pins: number[];
  /** Colour by probe statistic: the statistic shown. */
  probeStat: string;
}

/** The statistic colour by probe shows by default: NaN counts (where do NaNs start?). */
export const kDefaultProbeStat = 'nan';

/** The bottom views' ids in tab order; the first is the default tab. */
export const kDefaultTabs: readonly string[] = ['timeline', 'mapping', 'summary'];

export function defaultUrlState(tabs: readonly string[] = kDefaultTabs): UrlState {
  return {
    pane: { ...kDefaultPane }, selection: null, tab: tabs[0], panel: 'split', color: 'op', compare: null,
    timelineCompare: null, align: 'start', clock: 'raw', criticalPath: false, pins: [], probeStat: kDefaultProbeStat,
  };
}

function ints(s: string | null): number[] {
  if (!s) return [];
  return s.split(',').map((x) => parseInt(x, 10)).filter((x) => Number.isInteger(x) && x >= 0);
}

/** Reads a hash (with or without the leading '#'); `tabs` are the bottom views' ids. */
export function parseHash(hash: string, tabs: readonly string[] = kDefaultTabs): UrlState {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const g = p.get('grouping');
  const nodeStr = p.get('node');
  const tab = p.get('tab'), panel = p.get('panel'), color = p.get('color');
  const cmp = /^(\d+):(.+)$/.exec(p.get('compare') ?? '');
  const tc = p.get('tcompare');
  return {
    pane: {
      run: Math.max(0, parseInt(p.get('run') ?? '0', 10) || 0),
      level: p.get('level') || kDefaultPane.level,
      grouping: g === 'fusion' || g === 'none' ? g : 'scopes',
      direction: p.get('direction') === 'lr' ? 'lr' : p.get('direction') === 'tb' ? 'tb' : 'auto',
      expand: ints(p.get('expand')),
      collapse: ints(p.get('collapse')),
      node: nodeStr !== null && /^\d+$/.test(nodeStr) ? parseInt(nodeStr, 10) : null,
    },
    selection: parseSelection(p.get('sel')),
    tab: tab !== null && tabs.includes(tab) ? tab : tabs[0],
    panel: panel === 'graph' || panel === 'bottom' ? panel : 'split',
    color: color === 'time' || color === 'share' || color === 'status' || color === 'compare' || color === 'diff' || color === 'probe' ? color : 'op',
    compare: cmp ? { run: parseInt(cmp[1], 10), level: cmp[2] } : null,
    timelineCompare: tc !== null && /^\d+$/.test(tc) ? parseInt(tc, 10) : null,
    align: p.get('align') === 'first_run' ? 'first_run' : 'start',
    clock: p.get('clock') === 'calibrated' ? 'calibrated' : 'raw',
    criticalPath: p.get('cpath') === '1',
    pins: [...new Set(ints(p.get('pin')))],
    probeStat: /^[\w:.\-]{1,80}$/.test(p.get('pstat') ?? '') ? p.get('pstat')! : kDefaultProbeStat,
  };
}

/** The hash of a URL state: the main pane's fields always, the others when not at their default. */
export function formatHash(u: UrlState, tabs: readonly string[] = kDefaultTabs): string {
  const s = u.pane;
  const p = new URLSearchParams();
  p.set('run', String(s.run));
  if (s.level) p.set('level', s.level); // none for a run without a graph
  p.set('grouping', s.grouping);
  if (s.direction !== 'auto') p.set('direction', s.direction);
  if (s.expand.length) p.set('expand', s.expand.join(','));
  if (s.collapse.length) p.set('collapse', s.collapse.join(','));
  if (s.node !== null) p.set('node', String(s.node));
  const sel = formatSelection(u.selection);
  if (sel) p.set('sel', sel);
  if (u.tab !== tabs[0]) p.set('tab', u.tab);
  if (u.panel !== 'split') p.set('panel', u.panel);
  if (u.color !== 'op') p.set('color', u.color);
  if (u.compare) p.set('compare', `${u.compare.run}:${u.compare.level}`);
  if (u.timelineCompare !== null) p.set('tcompare', String(u.timelineCompare));
  if (u.align !== 'start') p.set('align', u.align);
  if (u.clock !== 'raw') p.set('clock', u.clock);
  if (u.criticalPath) p.set('cpath', '1');
  if (u.pins.length) p.set('pin', u.pins.join(','));
  if (u.probeStat !== kDefaultProbeStat) p.set('pstat', u.probeStat);
  return '#' + p.toString().replace(/%2C/g, ',').replace(/%3A/g, ':');
}
