// Legend: the op types of the active pane's layout with their colours and
// counts (a click selects that op type), the heat map's range, and the
// markers on the canvas (node status, lineage, compare links). It draws the
// graph view's published GraphInfo (state.graph).

import { fmtUs } from '../base/format';
import {
  divergingGradientCss, heatGradientCss, kDiffAdded, kDiffChanged, kDiffRemoved, kDiffRenamed, kDiffSame, kDiffSlower, kDiffFaster, kNoDataFill, kStatusFused, kStatusInserted, kStatusNotRun, kStatusRan, kStatusUnlinked, opColor, rgbCss,
} from '../base/palette';
import { NodeStatus } from '../rpc/layout_binary';
import type { AppState, DiffNodeNote, GraphInfo, HeatInfo } from '../core/state';
import type { StoreApi } from '../core/store';
import { chip, el } from '../widgets/dom';

export function mountLegend(ops: HTMLElement, heat: HTMLElement, status: HTMLElement, store: StoreApi): void {
  const render = (s: AppState, prev: AppState | null): void => {
    if (prev && s.graph === prev.graph && s.color === prev.color && s.lineage === prev.lineage && s.comparing === prev.comparing) return;
    renderLegend(ops, s.graph, (op) => store.dispatch({ type: 'select', selection: { kind: 'op_type', opType: op }, source: 'app' }));
    if (s.color === 'diff') {
      renderDiffLegend(heat, s.graph.heat, (n) => store.dispatch({
        type: 'select', selection: { kind: 'node', level: n.level, id: n.id, run: n.run }, source: 'app', pane: n.pane,
      }));
    }
    else if (s.color === 'probe') renderProbeLegend(heat, s.graph.heat);
    else if (s.color === 'status' || s.color === 'compare') renderColourLegend(heat, s.graph.heat);
    else renderHeatLegend(heat, s.color === 'op' ? null : s.graph.heat, s.color === 'share');
    renderStatusLegend(status, s.graph.statusCounts, s.lineage, s.comparing);
  };
  store.subscribe(render);
  render(store.state, null);
}

function renderLegend(root: HTMLElement, g: GraphInfo, onPick: (op: string) => void): void {
  root.textContent = '';
  if (!g.ops) return;
  const max = 24;
  for (const { op, count } of g.ops.slice(0, max)) {
    const row = el('button', 'legend-row');
    row.title = `search op type ${op}`;
    row.append(chip(rgbCss(opColor(op))), el('span', undefined, op), el('span', 'count', String(count)));
    row.addEventListener('click', () => onPick(op));
    root.append(row);
  }
  if (g.ops.length > max) root.append(el('div', 'muted', `${g.ops.length - max} more op types`));
}

/** Colour by probe statistic: the statistic, gradient from its smallest to its largest value, items without a probe; the marks. */
function renderProbeLegend(root: HTMLElement, h: HeatInfo | null): void {
  root.textContent = '';
  root.className = 'heat-legend probe-legend';
  const p = h?.probe;
  if (!p) return;
  const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5 ? v.toExponential(2) : v.toPrecision(4));
  root.append(el('div', undefined, `probe statistic: ${p.stat} (latest run; a folded group shows its largest)`));
  if (p.reason && !p.withData) {
    root.append(el('div', 'muted', p.reason));
  } else {
    const bar = el('div', 'heat-bar');
    bar.style.background = heatGradientCss();
    const range = el('div', 'heat-range');
    range.append(el('span', 'heat-min', fmt(p.min)), el('span', 'heat-max', fmt(p.max)));
    root.append(bar, range);
  }
  const none = el('div', 'status-row');
  none.append(chip(rgbCss(kNoDataFill)), el('span', undefined, 'no probe'), el('span', 'count', `${p.withoutData}`));
  root.append(none);
  for (const [cls, text] of [['mark-nan', 'first NaN / Inf (producer)'], ['mark-divergent', 'first divergent']]) {
    const row = el('div', 'status-row');
    row.append(el('span', `mark-chip ${cls}`), el('span', undefined, text));
    root.append(row);
  }
}

/** Heat map legend (colour by time / share): gradient, min and max, nodes without data. */
function renderHeatLegend(root: HTMLElement, h: HeatInfo | null, share: boolean): void {
  root.textContent = '';
  root.className = 'heat-legend';
  if (!h) return;
  if (!h.available) {
    root.append(el('div', 'muted', 'No per-node times in this view (no trace linked, or a server without node times): nodes are grey.'));
    return;
  }
  const title = el('div', undefined, share ? 'share of the total node time (linear)' : 'total linked task time (log scale)');
  const bar = el('div', 'heat-bar');
  bar.style.background = heatGradientCss();
  const range = el('div', 'heat-range');
  range.append(el('span', 'heat-min', share ? '0 %' : fmtUs(h.min)), el('span', 'heat-max', share ? `${(h.max * 100).toPrecision(3)} %` : fmtUs(h.max)));
  const none = el('div', 'status-row');
  none.append(chip(rgbCss(kNoDataFill)), el('span', undefined, 'no time (not linked)'), el('span', 'count', `${h.withoutData}`));
  root.append(title, bar, range, none, el('div', 'muted', `total ${fmtUs(h.totalUs)} over ${h.withData} item(s)`));
}

/**
 * Legend of colour by status (what each colour means, node counts; a folded
 * group or a silhouette mixes grey to green by the share of its nodes that
 * ran) or by compare metric (the diverging scale, the compared run, counts;
 * or why nothing can be compared).
 */
function renderColourLegend(root: HTMLElement, h: HeatInfo | null): void {
  root.textContent = '';
  root.className = 'heat-legend colour-legend';
  if (!h) return;
  const row = (c: string, text: string, count: number | null): HTMLElement => {
    const r = el('div', 'status-row');
    r.append(chip(c), el('span', undefined, text));
    if (count !== null) r.append(el('span', 'count', String(count)));
    return r;
  };
  if (h.status) {
    const c = h.status;
    root.append(el('div', undefined, 'status: what the trace link says of each node'),
      row(rgbCss(kStatusRan), 'ran (tasks linked)', c.ran), row(rgbCss(kStatusFused), 'fused into a node that ran', c.fused),
      row(rgbCss(kStatusInserted), 'inserted by the compiler', c.inserted), row(rgbCss(kStatusNotRun), 'not executed (no task)', c.notRun),
      row(rgbCss(kStatusUnlinked), 'no link data (no trace linked)', c.unlinked),
      el('div', 'muted', 'folded groups: grey → green by the share of their nodes that ran'));
    return;
  }
  const c = h.compare;
  if (!c) return;
  if (c.run === null || c.reason) {
    root.append(el('div', 'muted compare-reason', c.reason ?? 'no compare run'));
    if (c.run === null) return;
  }
  root.append(el('div', undefined, `time vs run ${c.run} (log₂ of the ratio)`));
  const bar = el('div', 'heat-bar');
  bar.style.background = divergingGradientCss();
  const range = el('div', 'heat-range');
  range.append(el('span', 'heat-min', '½× faster'), el('span', undefined, 'same'), el('span', 'heat-max', '2× slower'));
  root.append(bar, range, row(rgbCss(kNoDataFill), 'no time in one of the runs', c.noData),
    el('div', 'muted', `${c.faster} faster · ${c.slower} slower · ${c.same} within 5 %`));
}

/**
 * Legend of colour by diff: the pane's side of the diff, each structural
 * change with its colour and the pane's node count, the timing scale
 * (slower / faster beyond the noise); or why there is no diff.
 */
function renderDiffLegend(root: HTMLElement, h: HeatInfo | null, onPick: (n: DiffNodeNote) => void): void {
  root.textContent = '';
  root.className = 'heat-legend colour-legend diff-legend';
  const d = h?.diff;
  if (!d) return;
  if (!d.side || d.reason) {
    root.append(el('div', 'muted diff-reason', d.reason ?? 'no diff'));
    return;
  }
  const row = (c: string, text: string, count: number, cls: string): HTMLElement => {
    const r = el('div', `status-row diff-${cls}`);
    r.append(chip(c), el('span', undefined, text), el('span', 'count', String(count)));
    return r;
  };
  for (const [k, line] of (d.summary ?? []).entries()) {
    root.append(el('div', `diff-summary${k === 1 ? (d.failed ? ' diff-gate-failed' : ' diff-gate-passed') : ''}`, line));
  }
  root.append(el('div', 'diff-side', `diff · ${d.side}`),
    row(rgbCss(kDiffAdded), 'added (only in the new run)', d.added, 'added'),
    row(rgbCss(kDiffRemoved), 'removed (only in the base)', d.removed, 'removed'),
    row(rgbCss(kDiffChanged), 'changed (op type, attributes, shapes, dtypes)', d.changed, 'changed'),
    row(rgbCss(kDiffRenamed), 'renamed (matched by structure)', d.renamed, 'renamed'),
    row(rgbCss(kDiffSame), 'unchanged', d.same, 'same'));
  const bar = el('div', 'heat-bar');
  bar.style.background = divergingGradientCss();
  const range = el('div', 'heat-range');
  range.append(el('span', 'heat-min', 'faster'), el('span', undefined, 'time beyond the noise'), el('span', 'heat-max', 'slower'));
  const timing = el('div', 'status-row diff-timing');
  timing.append(chip(rgbCss(kDiffSlower)), el('span', undefined, `${d.slower} slower`), chip(rgbCss(kDiffFaster)), el('span', undefined, `${d.faster} faster`));
  root.append(bar, range, timing, el('div', 'muted', 'a changed node that is also slower / faster has a thick red / blue outline; folded groups: amber by their share of changed nodes'));
  // The side's changed nodes with what changed; a click selects one.
  const nodes = d.nodes ?? [];
  if (!nodes.length) return;
  const list = el('div', 'diff-nodes');
  const colour: Record<string, string> = { added: rgbCss(kDiffAdded), removed: rgbCss(kDiffRemoved), changed: rgbCss(kDiffChanged), renamed: rgbCss(kDiffRenamed) };
  for (const n of nodes) {
    const b = el('button', 'legend-row diff-node');
    b.title = `${n.name}: ${n.what}`;
    b.dataset.node = String(n.id);
    b.append(chip(colour[n.kind] ?? rgbCss(kDiffSame)), el('span', 'diff-node-name', n.name), el('span', 'diff-node-what', n.what));
    b.addEventListener('click', () => onPick(n));
    list.append(b);
  }
  const total = d.added + d.removed + d.changed + d.renamed;
  root.append(el('div', undefined, `changed nodes${total > nodes.length ? ` (first ${nodes.length} of ${total})` : ''}`), list);
}

/** Markers on the canvas: node status (when the layout has it), lineage, compare links. */
function renderStatusLegend(root: HTMLElement, c: number[] | null, lineage: boolean, comparing: boolean): void {
  root.textContent = '';
  root.className = 'status-legend';
  const rows: [string, string, number | null][] = [];
  if (c) {
    rows.push(['mark-fused', 'fused (badge)', c[NodeStatus.Fused]]);
    rows.push(['mark-inserted', comparing ? 'inserted: added by the compiler (dashed)' : 'inserted (dashed)', c[NodeStatus.Inserted]]);
    rows.push(['mark-not_executed', comparing ? 'not executed: removed (dimmed)' : 'not executed (dimmed)', c[NodeStatus.NotExecuted]]);
  }
  if (lineage) rows.push(['mark-lineage', 'ancestors / descendants', null]);
  if (comparing) rows.push(['mark-linked', 'linked to the other pane', null]);
  for (const [cls, text, count] of rows) {
    if (count === 0) continue;
    const row = el('div', 'status-row');
    row.append(el('span', `mark ${cls}`), el('span', undefined, text));
    if (count !== null) row.append(el('span', 'count', String(count)));
    root.append(row);
  }
}
