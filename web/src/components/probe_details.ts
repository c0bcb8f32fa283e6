// The probes of the node shown in the details panel
// (GET /api/runs/{run}/probes/node): per probed tensor its statistics in
// the store's latest run, each with a sparkline over the last runs (the
// store keeps 10), plugin metrics beside them, and for a recurrent op
// (LSTM / GRU / Loop / Scan) the values per time step with a step slider.

import { statValue, type NodeProbeJson, type ProbeNodeJson, type ProbeStats } from '../rpc/probe_api';
import { el } from '../widgets/dom';
import { sparkline } from '../widgets/sparkline';

/** The rows shown per probe: label, statistic (probe_api.statValue names). */
const kRows: [string, string][] = [
  ['NaN', 'nan'], ['Inf', 'inf_count'], ['zero', 'zero_fraction'], ['min', 'min'], ['max', 'max'], ['mean', 'mean'], ['std', 'std'],
  ['L2', 'l2'], ['|max|', 'abs_max'],
];

/** A statistic's value for people: counts as integers, shares in %, others with 5 significant digits. */
export function fmtStat(stat: string, v: number | null): string {
  if (v === null) return '–';
  if (stat === 'zero_fraction' || stat === 'nan_fraction') return `${(v * 100).toFixed(1)} %`;
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-4 || a >= 1e6) ? v.toExponential(3) : String(Number(v.toPrecision(5)));
}

function statsTable(st: ProbeStats, series: (ProbeStats | null)[] | null, runs: number[] | null): HTMLTableElement {
  const t = el('table', 'probe-stats');
  const head = el('tr');
  head.append(el('th', undefined, 'stat'), el('th', 'num', 'value'));
  if (series) head.append(el('th', undefined, `last ${series.length} run${series.length === 1 ? '' : 's'}`));
  t.append(head);
  for (const [label, name] of kRows) {
    const v = statValue(st, name);
    const tr = el('tr');
    tr.dataset.stat = name;
    const value = el('td', 'num', fmtStat(name, v));
    if ((name === 'nan' || name === 'inf_count') && v) value.classList.add('probe-alert');
    tr.append(el('td', undefined, label), value);
    if (series) {
      const vals = series.map((s) => statValue(s, name));
      const alert = series.map((s) => !!s && (s.nan > 0 || s.pos_inf + s.neg_inf > 0));
      const cell = el('td', 'spark');
      cell.append(sparkline(vals, {
        alert: name === 'nan' || name === 'inf_count' ? alert : undefined,
        title: `${label} over runs ${runs?.join(', ') ?? ''}: ${vals.map((x) => fmtStat(name, x)).join(', ')}`,
      }));
      tr.append(cell);
    }
    t.append(tr);
  }
  return t;
}

function pluginTable(p: NodeProbeJson['plugin']): HTMLTableElement | null {
  const rows: [string, string][] = [];
  for (const [plugin, metrics] of Object.entries(p ?? {})) {
    for (const [k, v] of Object.entries(metrics ?? {})) {
      rows.push([`${plugin}.${k}`, typeof v === 'number' ? fmtStat(k, v) : JSON.stringify(v)]);
    }
  }
  if (!rows.length) return null;
  const t = el('table', 'probe-plugin');
  for (const [k, v] of rows) {
    const tr = el('tr');
    tr.dataset.metric = k;
    tr.append(el('td', undefined, k), el('td', 'num', v));
    t.append(tr);
  }
  return t;
}

/** A recurrent op's values per time step: a slider picks the step, the table shows it, a sparkline the mean over steps. */
function stepsBlock(p: NodeProbeJson): HTMLElement {
  const box = el('div', 'probe-steps');
  const steps = p.steps.slice().sort((a, b) => a.step - b.step);
  const label = el('label', 'probe-step-label');
  const slider = el('input');
  slider.type = 'range';
  slider.min = '0';
  slider.max = String(steps.length - 1);
  slider.value = String(steps.length - 1);
  slider.className = 'probe-step';
  slider.setAttribute('aria-label', `time step of ${p.probe}`);
  const text = el('span');
  label.append('step ', slider, ' ', text);
  const body = el('div');
  box.append(label, body);
  const show = (): void => {
    const k = parseInt(slider.value, 10);
    const cur = steps[k];
    text.textContent = `${cur.step} (${k + 1} of ${steps.length})`;
    box.dataset.step = String(cur.step);
    body.textContent = '';
    const means = steps.map((s) => statValue(s.stats, 'mean'));
    const line = el('div', 'probe-step-spark');
    line.append('mean per step ', sparkline(means, { width: 160, current: k, title: `mean per step: ${means.map((m) => fmtStat('mean', m)).join(', ')}` }));
    body.append(line, statsTable(cur.stats, null, null));
  };
  slider.addEventListener('input', show);
  show();
  return box;
}

/** The probes section of a node's details. */
export function probeSection(data: ProbeNodeJson): HTMLElement {
  const root = el('div', 'probes');
  if (!data.probes.length) {
    root.append(el('div', 'muted', 'No probe on this node in the store\'s runs: right-click the node in the graph to add one and re-run.'));
    return root;
  }
  // Outputs first, then inputs and gradients, by index.
  const order = (k: string): number => (k === 'output' ? 0 : k === 'input' ? 1 : 2);
  const probes = data.probes.slice().sort((a, b) => order(a.kind) - order(b.kind) || a.index - b.index);
  for (const p of probes) {
    const box = el('div', 'probe');
    box.dataset.probe = p.probe;
    const head = el('div', 'probe-head');
    const shape = Array.isArray(p.stats.shape) ? p.stats.shape.join('×') : '';
    head.append(el('span', 'probe-name', p.probe), el('span', 'muted', ` ${p.kind} ${p.index} · ${p.stats.dtype ?? ''} ${shape}`));
    box.append(head);
    const series = p.series?.length ? p.series.map((s) => s.stats) : null;
    box.append(statsTable(p.stats, series, p.series?.map((s) => s.run) ?? null));
    const plugins = pluginTable(p.plugin);
    if (plugins) box.append(plugins);
    if (p.steps?.length) box.append(stepsBlock(p));
    root.append(box);
  }
  return root;
}
