// View state in the URL hash, so a link reopens the same view:
// #run=0&level=framework&grouping=scopes&expand=3,17&collapse=5&node=12

import type { Grouping } from './api';

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

export function formatHash(s: ViewState): string {
  const p = new URLSearchParams();
  p.set('run', String(s.run));
  p.set('level', s.level);
  p.set('grouping', s.grouping);
  if (s.direction !== 'tb') p.set('direction', s.direction);
  if (s.expand.length) p.set('expand', s.expand.join(','));
  if (s.collapse.length) p.set('collapse', s.collapse.join(','));
  if (s.node !== null) p.set('node', String(s.node));
  return '#' + p.toString().replace(/%2C/g, ',');
}
