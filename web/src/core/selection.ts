// The one selection shared by every view (graph panes, timeline, mapping,
// summary, details): what it can be, its URL form (`sel=`) and its one-line
// description. A view that the user clicks in dispatches `select` to the
// store with what was clicked and its own name as the source; the selection
// controller (selection_controller.ts) resolves what it stands for in the
// other id spaces (a node's tasks, a task's node) once and publishes the
// result (`Resolved`, state.ts), which every view draws.

/** What can be selected; ids are the server's (task = TaskId, node = model NodeId, one space across levels). */
export type Selection =
  | { kind: 'node'; level: string; id: number; /** run of the pane it was picked in (default: the main pane's) */ run?: number }
  | { kind: 'task'; ids: number[] }
  | { kind: 'op_type'; opType: string }
  | { kind: 'finding'; index: number; nodes: number[]; tasks: number[]; label: string }
  | { kind: 'range'; startNs: number; endNs: number; tracks: number[] };

/** Which view made the selection (a view need not centre on its own click). */
export type SelectionSource = 'graph' | 'timeline' | 'mapping' | 'summary' | 'analyses' | 'cluster' | 'details' | 'url' | 'search' | 'app' | 'training';

export function sameSelection(a: Selection | null, b: Selection | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'node': return b.kind === 'node' && a.id === b.id && a.level === b.level;
    case 'task': return b.kind === 'task' && a.ids.length === b.ids.length && a.ids.every((x, k) => x === b.ids[k]);
    case 'op_type': return b.kind === 'op_type' && a.opType === b.opType;
    case 'finding': return b.kind === 'finding' && a.index === b.index;
    case 'range': return b.kind === 'range' && a.startNs === b.startNs && a.endNs === b.endNs && a.tracks.join() === b.tracks.join();
  }
}

/** Encodes a selection for the URL hash (`sel=`); null for nothing. Node selections stay in `node=` (older links). */
export function formatSelection(s: Selection | null): string | null {
  if (!s) return null;
  switch (s.kind) {
    case 'node': return null;
    case 'task': return `task:${s.ids.join(',')}`;
    case 'op_type': return `op:${s.opType}`;
    case 'finding': return `finding:${s.index}`;
    case 'range': return `range:${s.startNs}-${s.endNs}${s.tracks.length ? `:${s.tracks.join(',')}` : ''}`;
  }
}

const kIntList = /^\d+(,\d+)*$/;

/** Parses `sel=` of the hash; null when absent or malformed (a bad link opens without a selection). */
export function parseSelection(text: string | null): Selection | null {
  if (!text) return null;
  const colon = text.indexOf(':');
  if (colon < 0) return null;
  const kind = text.slice(0, colon), rest = text.slice(colon + 1);
  if (kind === 'task' && kIntList.test(rest)) return { kind: 'task', ids: rest.split(',').map(Number) };
  if (kind === 'op' && rest.length) return { kind: 'op_type', opType: rest };
  if (kind === 'finding' && /^\d+$/.test(rest)) return { kind: 'finding', index: Number(rest), nodes: [], tasks: [], label: '' };
  if (kind === 'range') {
    const m = /^(\d+)-(\d+)(?::(\d+(?:,\d+)*))?$/.exec(rest);
    if (m && Number(m[2]) > Number(m[1])) {
      return { kind: 'range', startNs: Number(m[1]), endNs: Number(m[2]), tracks: m[3] ? m[3].split(',').map(Number) : [] };
    }
  }
  return null;
}

/** The bottom panel's one-line description of a selection. */
export function describeSelection(sel: Selection | null): string {
  if (!sel) return '';
  switch (sel.kind) {
    case 'node': return `selected: ${sel.level} node ${sel.id}`;
    case 'task': return sel.ids.length === 1 ? `selected: task ${sel.ids[0]}` : `selected: ${sel.ids.length} tasks`;
    case 'op_type': return `selected: op type ${sel.opType}`;
    case 'finding': return `selected: finding ${sel.index}`;
    case 'range': return `selected: range of ${((sel.endNs - sel.startNs) / 1e3).toFixed(1)} µs`;
  }
}
