// Details side panel: one node from the API (op type, name, scope,
// attributes, inputs/outputs with shapes and dtypes, fused_from / fused_into
// as links, tasks with times, status), one task (name, kind, track, raw and
// calibrated times, its node and fused_from as links, the host launch, flows),
// the summary of a selected time range, or a summary of a group from the
// layout itself.

import type { NodeDetails, NodeRef, SummaryJson, TaskDetails, ValueInfo } from './api';
import { groupPath, opName, type Layout } from './layout_binary';
import { opColor, rgbCss } from './palette';

export interface DetailsLinks {
  /** Opens a node of another level (fused_from → framework, fused_into → compiled). */
  openNode(level: string, id: number): void;
  /** Opens a task (a task's launch, a flow's other end). */
  openTask?(id: number): void;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmtShape(s: ValueInfo['shape']): string {
  if (s === null || s === undefined) return '?';
  if (Array.isArray(s)) return s.join('×');
  return String(s);
}

function fmtValue(v: unknown): string {
  if (typeof v === 'string') return v;
  const s = JSON.stringify(v);
  return s.length > 200 ? s.slice(0, 200) + '…' : s;
}

export function fmtNs(ns: number): string {
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${ns} ns`;
}

function table(rows: (string | Node)[][], head?: string[]): HTMLTableElement {
  const t = el('table');
  // Key / value rows: the key column keeps its words whole.
  if (!head) t.classList.add('kv');
  if (head) {
    const tr = el('tr');
    for (const h of head) tr.append(el('th', undefined, h));
    t.append(tr);
  }
  for (const r of rows) {
    const tr = el('tr');
    for (const c of r) {
      const td = el('td');
      td.append(c);
      tr.append(td);
    }
    t.append(tr);
  }
  return t;
}

function section(root: HTMLElement, title: string, body: Node): void {
  root.append(el('h3', undefined, title), body);
}

export class DetailsPanel {
  constructor(private readonly root: HTMLElement, private readonly links: DetailsLinks) {}

  clear(message = 'Click a node to see its details.'): void {
    this.root.textContent = '';
    this.root.append(el('div', 'muted', message));
  }

  loading(): void {
    this.root.classList.add('loading');
  }

  showError(message: string): void {
    this.root.classList.remove('loading');
    this.root.textContent = '';
    this.root.append(el('div', 'error', message));
  }

  private nodeLink(level: string, r: NodeRef): HTMLElement {
    const a = el('a', 'node-link', `${r.name} (${r.op_type})`);
    a.href = '#';
    a.dataset.level = level;
    a.dataset.node = String(r.id);
    a.addEventListener('click', (e) => { e.preventDefault(); this.links.openNode(level, r.id); });
    return a;
  }

  showNode(d: NodeDetails): void {
    const root = this.root;
    root.classList.remove('loading');
    root.textContent = '';
    const head = el('div', 'details-head');
    const chip = el('span', 'chip');
    chip.style.background = rgbCss(opColor(d.op_type));
    head.append(chip, el('span', 'op-type', d.op_type));
    if (d.status) head.append(el('span', `status status-${d.status.replace(/\W+/g, '_')}`, d.status));
    root.append(head, el('div', 'node-name', d.name));
    if (d.doc && d.doc.summary) {
      // ONNX operator documentation: collapsible, closed by default (it can be long).
      const doc = el('details', 'doc');
      const sum = el('summary', undefined, `${d.doc.domain || 'ai.onnx'} ${d.op_type}, since opset ${d.doc.since_version}`);
      doc.append(sum, el('p', 'doc-summary', d.doc.summary));
      root.append(doc);
    }
    const info: string[][] = [['id', String(d.id)]];
    if (d.scope) info.push(['scope', d.scope]);
    if (d.domain) info.push(['domain', d.domain]);
    if (d.task_total_ns !== undefined && d.task_count) info.push(['time', `${fmtNs(d.task_total_ns)} in ${d.task_count} task(s)`]);
    root.append(table(info));
    if (d.attributes?.length) {
      section(root, `Attributes (${d.attributes.length})`, table(d.attributes.map((a) => [a.name, fmtValue(a.value)])));
    }
    // A layout column only when some tensor has one (Ascend graphs):
    // "NC1HWC0 (NCHW [1,3,224,224])" = the compiler's layout and the
    // framework's format and shape.
    const layoutOf = (v: ValueInfo): string =>
      v.layout ? v.layout + (v.origin_layout || v.origin_shape ? ` (${[v.origin_layout, v.origin_shape].filter(Boolean).join(' ')})` : '') : '';
    const values = (vs: ValueInfo[]): HTMLTableElement => {
      const withLayout = vs.some((v) => v.layout);
      return withLayout
        ? table(vs.map((v) => [v.name, v.dtype || '', fmtShape(v.shape), layoutOf(v)]), ['name', 'dtype', 'shape', 'layout'])
        : table(vs.map((v) => [v.name, v.dtype || '', fmtShape(v.shape)]), ['name', 'dtype', 'shape']);
    };
    if (d.inputs?.length) section(root, `Inputs (${d.inputs.length})`, values(d.inputs));
    if (d.outputs?.length) section(root, `Outputs (${d.outputs.length})`, values(d.outputs));
    if (d.fused_from?.length) {
      const ul = el('ul', 'links');
      for (const r of d.fused_from) { const li = el('li'); li.append(this.nodeLink('framework', r)); ul.append(li); }
      section(root, `Fused from (${d.fused_from.length})`, ul);
    }
    if (d.fused_into) {
      const ul = el('ul', 'links');
      const li = el('li');
      li.append(this.nodeLink('compiled', d.fused_into));
      ul.append(li);
      section(root, 'Fused into', ul);
    }
    if (d.tasks?.length) {
      const total = d.task_count ?? d.tasks.length;
      const sum = d.tasks.reduce((a, t) => a + t.duration_ns, 0);
      const t = table(d.tasks.map((k) => [k.name, fmtNs(k.start_ns), fmtNs(k.duration_ns), String(k.track)]), ['task', 'start', 'duration', 'track']);
      section(root, `Tasks (${total}${total > d.tasks.length ? `, first ${d.tasks.length}` : ''}; ${fmtNs(sum)})`, t);
    }
  }

  private taskLink(id: number, text: string): HTMLElement {
    const a = el('a', 'task-link', text);
    a.href = '#';
    a.dataset.task = String(id);
    a.addEventListener('click', (e) => { e.preventDefault(); this.links.openTask?.(id); });
    return a;
  }

  /** One task of the trace (GET /tasks/{id}); times relative to `originNs` (the trace start) and absolute. */
  showTask(t: TaskDetails, originNs = 0): void {
    const root = this.root;
    root.classList.remove('loading');
    root.textContent = '';
    const head = el('div', 'details-head');
    const label = t.op_type || t.name;
    const chip = el('span', 'chip');
    chip.style.background = rgbCss(opColor(label));
    head.append(chip, el('span', 'op-type', label), el('span', 'status', t.kind));
    root.append(head, el('div', 'node-name task-name', t.name));
    const rel = (ns: number): string => `${fmtNs(ns - originNs)} (${ns} ns)`;
    const info: (string | Node)[][] = [
      ['task', String(t.id)],
      ['track', t.track.name],
      ['start', rel(t.start_ns)],
    ];
    if (t.calibrated_start_ns !== undefined && t.calibrated_start_ns !== t.start_ns) info.push(['start, calibrated', rel(t.calibrated_start_ns)]);
    info.push(['duration', fmtNs(t.duration_ns)]);
    if (t.category) info.push(['category', t.category]);
    if (t.run !== null && t.run !== undefined) info.push(['run', String(t.run)]);
    if (t.correlation !== undefined && t.correlation !== null && t.correlation !== '') info.push(['correlation', String(t.correlation)]);
    if (t.bytes) info.push(['bytes', String(t.bytes)]);
    if (t.shapes) info.push(['shapes', fmtValue(t.shapes)]);
    if (t.parent !== null && t.parent !== undefined) info.push(['parent', this.taskLink(t.parent, `task ${t.parent}`)]);
    root.append(table(info));
    if (t.node) {
      const ul = el('ul', 'links');
      const li = el('li');
      li.append(this.nodeLink(t.node.level, t.node), el('span', 'muted', ` ${t.node.level}`));
      ul.append(li);
      section(root, 'Node', ul);
    } else {
      section(root, 'Node', el('div', 'muted', 'not linked to a graph node'));
    }
    if (t.fused_from?.length) {
      const ul = el('ul', 'links');
      for (const r of t.fused_from) { const li = el('li'); li.append(this.nodeLink('framework', r)); ul.append(li); }
      section(root, `Fused from (${t.fused_from.length})`, ul);
    }
    if (t.launch) {
      const l = t.launch;
      section(root, 'Launch', table([[this.taskLink(l.id, l.name), `track ${l.track}`, fmtNs(l.start_ns - originNs)]]));
    }
    if (t.flows?.length) {
      const rows = t.flows.slice(0, 50).map((f) => {
        const other = f.from_task === t.id ? f.to_task : f.from_task;
        return [f.kind, f.from_task === t.id ? 'to' : 'from', this.taskLink(other, `task ${other}`), fmtNs(Math.abs(f.to_ns - f.from_ns))];
      });
      section(root, `Flows (${t.flows.length})`, table(rows, ['kind', '', 'task', 'gap']));
    }
  }

  /** The summary of a selected time range (GET /summary?from_ns&to_ns): the main figures, top op types and streams. */
  showRange(s: SummaryJson, startNs: number, endNs: number, originNs = 0): void {
    const root = this.root;
    root.classList.remove('loading');
    root.textContent = '';
    root.append(el('div', 'details-head', 'Time range'),
      el('div', 'node-name', `${fmtNs(startNs - originNs)} – ${fmtNs(endNs - originNs)} (${fmtNs(endNs - startNs)})`));
    root.append(table([['tasks', String(s.tasks)], ['task time', fmtNs(s.total_us * 1000)]]));
    const ops = s.op_types.slice(0, 10).map((o) => [o.op_type, String(o.calls), fmtNs(o.total_us * 1000), `${(o.share * 100).toFixed(1)} %`]);
    if (ops.length) section(root, `Op types (${s.op_types.length})`, table(ops, ['op type', 'calls', 'total', 'share']));
    const st = s.streams.map((t) => [t.name, fmtNs(t.busy_us * 1000), `${(t.utilisation * 100).toFixed(1)} %`]);
    if (st.length) section(root, 'Streams', table(st, ['stream', 'busy', 'busy share']));
  }

  /** A diagnosis finding: message, suggestion, its evidence (the views highlight it). */
  showFinding(f: { rule: string; title?: string; severity: string; message: string; suggestion?: string }, nodes: number, tasks: number): void {
    const root = this.root;
    root.classList.remove('loading');
    root.textContent = '';
    root.append(el('div', 'details-head', `Finding · ${f.severity}`), el('div', 'node-name', `${f.title ? f.title + ' · ' : ''}${f.rule}`),
      el('p', undefined, f.message));
    if (f.suggestion) section(root, 'Suggestion', el('p', undefined, f.suggestion));
    root.append(el('div', 'muted', `evidence: ${nodes} node(s), ${tasks} task(s), highlighted in the graph and the timeline`));
  }

  /** An op type (from the summary or mapping): its row of the summary, when given. */
  showOpType(op: string, row: { calls: number; total_us: number; share: number; nodes: number } | null): void {
    const root = this.root;
    root.classList.remove('loading');
    root.textContent = '';
    const head = el('div', 'details-head');
    const chip = el('span', 'chip');
    chip.style.background = rgbCss(opColor(op));
    head.append(chip, el('span', 'op-type', op), el('span', 'status', 'op type'));
    root.append(head);
    if (row) {
      root.append(table([['nodes', String(row.nodes)], ['calls', String(row.calls)], ['total', fmtNs(Math.round(row.total_us * 1000))],
        ['share', `${(row.share * 100).toFixed(1)} %`]]));
    }
    root.append(el('div', 'muted', 'Its nodes are highlighted in the graph, its tasks filtered on the timeline.'));
  }

  showGroup(l: Layout, g: number, expanded: boolean): void {
    const root = this.root;
    root.classList.remove('loading');
    root.textContent = '';
    const kinds = ['scope', 'fusion group', 'repeated block', 'chunk'];
    root.append(el('div', 'details-head', kinds[l.groupKind[g]] ?? 'group'), el('div', 'node-name', groupPath(l, g) || l.title));
    const rows: string[][] = [['group', String(g)], ['nodes', String(l.groupNodeCount[g])], ['state', expanded ? 'expanded' : 'collapsed']];
    const rep = l.groupRepeatOf[g];
    if (rep >= 0) rows.push(['same as', groupPath(l, rep)]);
    const ops: string[] = [];
    for (let k = 0; k < 3; ++k) {
      const op = l.groupTopOps[3 * g + k];
      if (op >= 0) ops.push(`${opName(l, op)} ×${l.groupTopOpCounts[3 * g + k]}`);
    }
    if (ops.length) rows.push(['top ops', ops.join(', ')]);
    root.append(table(rows), el('div', 'muted', expanded ? 'Double-click the frame header to collapse.' : 'Double-click to expand.'));
  }
}
