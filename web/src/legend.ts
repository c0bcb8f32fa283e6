// Legend: the op types of the current layout with their colours and counts.

import { NodeStatus } from './layout_binary';
import { heatGradientCss, kNoDataFill, opColor, rgbCss } from './palette';
import type { Scene } from './scene';

export function renderLegend(el: HTMLElement, scene: Scene | null, onPick: (op: string) => void): void {
  el.textContent = '';
  if (!scene) return;
  const max = 24;
  for (const { op, count } of scene.legend.slice(0, max)) {
    const row = document.createElement('button');
    row.className = 'legend-row';
    row.title = `search op type ${op}`;
    const chip = document.createElement('span');
    chip.className = 'chip';
    chip.style.background = rgbCss(opColor(op));
    const name = document.createElement('span');
    name.textContent = op;
    const n = document.createElement('span');
    n.className = 'count';
    n.textContent = String(count);
    row.append(chip, name, n);
    row.addEventListener('click', () => onPick(op));
    el.append(row);
  }
  if (scene.legend.length > max) {
    const more = document.createElement('div');
    more.className = 'muted';
    more.textContent = `${scene.legend.length - max} more op types`;
    el.append(more);
  }
}

function fmtUs(us: number): string {
  if (us >= 1e6) return `${(us / 1e6).toPrecision(3)} s`;
  if (us >= 1e3) return `${(us / 1e3).toPrecision(3)} ms`;
  return `${us.toPrecision(3)} µs`;
}

/** Heat map legend (colour by time / share): gradient, min and max, nodes without data. */
export function renderHeatLegend(el: HTMLElement, scene: Scene | null): void {
  el.textContent = '';
  el.className = 'heat-legend';
  if (!scene || scene.options.colorMode === 'op') return;
  const h = scene.heat;
  const title = document.createElement('div');
  if (!h.available) {
    title.className = 'muted';
    title.textContent = 'No per-node times in this view (no trace linked, or a server without node times): nodes are grey.';
    el.append(title);
    return;
  }
  const share = scene.options.colorMode === 'share';
  title.textContent = share ? 'share of the total node time (linear)' : 'total linked task time (log scale)';
  const bar = document.createElement('div');
  bar.className = 'heat-bar';
  bar.style.background = heatGradientCss();
  const range = document.createElement('div');
  range.className = 'heat-range';
  const lo = document.createElement('span'), hi = document.createElement('span');
  lo.className = 'heat-min'; hi.className = 'heat-max';
  lo.textContent = share ? '0 %' : fmtUs(h.min);
  hi.textContent = share ? `${(h.max * 100).toPrecision(3)} %` : fmtUs(h.max);
  range.append(lo, hi);
  const none = document.createElement('div');
  none.className = 'status-row';
  const chip = document.createElement('span');
  chip.className = 'chip';
  chip.style.background = rgbCss(kNoDataFill);
  const t = document.createElement('span');
  t.textContent = 'no time (not linked)';
  const n = document.createElement('span');
  n.className = 'count';
  n.textContent = `${h.withoutData}`;
  none.append(chip, t, n);
  const total = document.createElement('div');
  total.className = 'muted';
  total.textContent = `total ${fmtUs(h.totalUs)} over ${h.withData} item(s)`;
  el.append(title, bar, range, none, total);
}

/** Markers on the canvas: node status (when the layout has it), lineage, compare links. */
export function renderStatusLegend(el: HTMLElement, scene: Scene | null, lineage: boolean, comparing: boolean): void {
  el.textContent = '';
  el.className = 'status-legend';
  const rows: [string, string, number | null][] = [];
  const c = scene?.statusCounts;
  if (c) {
    rows.push(['mark-fused', 'fused (badge)', c[NodeStatus.Fused]]);
    rows.push(['mark-inserted', comparing ? 'inserted: added by the compiler (dashed)' : 'inserted (dashed)', c[NodeStatus.Inserted]]);
    rows.push(['mark-not_executed', comparing ? 'not executed: removed (dimmed)' : 'not executed (dimmed)', c[NodeStatus.NotExecuted]]);
  }
  if (lineage) rows.push(['mark-lineage', 'ancestors / descendants', null]);
  if (comparing) rows.push(['mark-linked', 'linked to the other pane', null]);
  for (const [cls, text, count] of rows) {
    if (count === 0) continue;
    const row = document.createElement('div');
    row.className = 'status-row';
    const m = document.createElement('span');
    m.className = `mark ${cls}`;
    const t = document.createElement('span');
    t.textContent = text;
    row.append(m, t);
    if (count !== null) {
      const n = document.createElement('span');
      n.className = 'count';
      n.textContent = String(count);
      row.append(n);
    }
    el.append(row);
  }
}
