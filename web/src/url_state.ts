// View state in the URL hash, so a link reopens the same view:
// #run=0&level=framework&grouping=scopes&expand=3,17&collapse=5&node=12
// (the main graph pane: `ViewState`), then the rest of the UI (`UiState`),
// each field only when it differs from its default:
// &sel=task:812 (the selection when it is not a node: task:ID[,ID...] |
// op:TYPE | finding:N | range:FROM-TO[:TRACK,...], ns) &tab=mapping
// (bottom panel tab) &panel=graph|bottom (one part maximised) &color=time
// (colour mode) &compare=0:compiled (second graph pane: run:level)
// &tcompare=1 (timeline compared with run 1) &align=first_run &clock=calibrated.
// A hash of the first slice (no UiState fields) parses to the defaults.

import type { Grouping } from './api';
import type { ColorMode } from './scene';
import { formatSelection, parseSelection, type Selection } from './selection';

export interface ViewState {
  run: number;
  level: string;
  grouping: Grouping;
  direction: 'tb' | 'lr';
  expand: number[];
  collapse: number[];
  /** Selected model NodeId at this level, or null. */
  node: number | null;
}

export const kDefaultState: ViewState = {
  run: 0, level: 'framework', grouping: 'scopes', direction: 'tb', expand: [], collapse: [], node: null,
};

function ints(s: string | null): number[] {
  if (!s) return [];
  return s.split(',').map((x) => parseInt(x, 10)).filter((x) => Number.isInteger(x) && x >= 0);
}

export function parseHash(hash: string): ViewState {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const g = p.get('grouping');
  const nodeStr = p.get('node');
  const node = nodeStr !== null && /^\d+$/.test(nodeStr) ? parseInt(nodeStr, 10) : null;
  return {
    run: Math.max(0, parseInt(p.get('run') ?? '0', 10) || 0),
    level: p.get('level') || kDefaultState.level,
    grouping: g === 'fusion' || g === 'none' ? g : 'scopes',
    direction: p.get('direction') === 'lr' ? 'lr' : 'tb',
    expand: ints(p.get('expand')),
    collapse: ints(p.get('collapse')),
    node,
  };
}

export type BottomTab = 'timeline' | 'mapping' | 'summary';
export type PanelMode = 'split' | 'graph' | 'bottom';

export interface UiState {
  tab: BottomTab;
  panel: PanelMode;
  /** A selection that is not a node (nodes stay in ViewState.node, as old links have them). */
  selection: Selection | null;
  color: ColorMode;
  /** Second graph pane (compare mode): its run and level; null = one pane. */
  compare: { run: number; level: string } | null;
  /** Timeline compared with this run; null = none. */
  timelineCompare: number | null;
  align: 'start' | 'first_run';
  clock: 'raw' | 'calibrated';
}

export const kDefaultUi: UiState = {
  tab: 'timeline', panel: 'split', selection: null, color: 'op', compare: null, timelineCompare: null, align: 'start', clock: 'raw',
};

export function parseUiState(hash: string): UiState {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const tab = p.get('tab'), panel = p.get('panel'), color = p.get('color');
  const cmp = /^(\d+):(.+)$/.exec(p.get('compare') ?? '');
  const tc = p.get('tcompare');
  return {
    tab: tab === 'mapping' || tab === 'summary' ? tab : 'timeline',
    panel: panel === 'graph' || panel === 'bottom' ? panel : 'split',
    selection: parseSelection(p.get('sel')),
    color: color === 'time' || color === 'share' ? color : 'op',
    compare: cmp ? { run: parseInt(cmp[1], 10), level: cmp[2] } : null,
    timelineCompare: tc !== null && /^\d+$/.test(tc) ? parseInt(tc, 10) : null,
    align: p.get('align') === 'first_run' ? 'first_run' : 'start',
    clock: p.get('clock') === 'calibrated' ? 'calibrated' : 'raw',
  };
}

/** The hash of the main pane's state and (when given) the rest of the UI. */
export function formatHash(s: ViewState, ui?: UiState): string {
  const p = new URLSearchParams();
  p.set('run', String(s.run));
  p.set('level', s.level);
  p.set('grouping', s.grouping);
  if (s.direction !== 'tb') p.set('direction', s.direction);
  if (s.expand.length) p.set('expand', s.expand.join(','));
  if (s.collapse.length) p.set('collapse', s.collapse.join(','));
  if (s.node !== null) p.set('node', String(s.node));
  if (ui) {
    const sel = formatSelection(ui.selection);
    if (sel) p.set('sel', sel);
    if (ui.tab !== kDefaultUi.tab) p.set('tab', ui.tab);
    if (ui.panel !== kDefaultUi.panel) p.set('panel', ui.panel);
    if (ui.color !== kDefaultUi.color) p.set('color', ui.color);
    if (ui.compare) p.set('compare', `${ui.compare.run}:${ui.compare.level}`);
    if (ui.timelineCompare !== null) p.set('tcompare', String(ui.timelineCompare));
    if (ui.align !== kDefaultUi.align) p.set('align', ui.align);
    if (ui.clock !== kDefaultUi.clock) p.set('clock', ui.clock);
  }
  return '#' + p.toString().replace(/%2C/g, ',').replace(/%3A/g, ':');
}
