// Details side panel: shows the store's `details` (state.ts), which the
// selection controller sets from the server's answers and the graph view
// for a clicked group or input: one node (op type, name, scope, attributes,
// inputs/outputs with shapes and dtypes, fused_from / fused_into as links,
// tasks with times, status), one task (name, kind, track, raw and
// calibrated times, its node and fused_from as links, the host launch,
// flows), an op type, a finding, the summary of a selected time range, or a
// group of the layout. Its links select what they name.

import { fmtBytes, fmtNs } from '../base/format';
import { opColor, rgbCss } from '../base/palette';
import type { FindingJson, NodeDetails, NodeRef, SummaryJson, SummaryOpType, TaskDetails, ValueInfo } from '../rpc/api';
import type { ApiClient } from '../rpc/api';
import { probeKey, type AppState, type DetailsContent, type GroupInfo } from '../core/state';
import type { StoreApi } from '../core/store';
import { el, midName } from '../widgets/dom';
import type { Bookmarks } from './bookmarks';
import type { Notes } from './notes';
import { probeSection } from './probe_details';
import { peekButton } from './values_peek';

export interface DetailsLinks {
  /** Opens a node of another level (fused_from → framework, fused_into → compiled). */
  openNode(level: string, id: number): void;
  /** Opens a task (a task's launch, a flow's other end). */
  openTask?(id: number): void;
  /** A "values" button for weight `name` of the shown node, showing its peek in `place`. */
  peek?(name: string, place: HTMLElement): HTMLElement | null;
  /** The bookmark star of the shown node. */
  star?(d: NodeDetails): HTMLElement | null;
  /** The note on the shown node (an editable box). */
  note?(d: NodeDetails): HTMLElement | null;
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

/** The details panel as a component of the store. */
export function mountDetailsPanel(root: HTMLElement, store: StoreApi, api?: ApiClient, bookmarks?: Bookmarks, notes?: Notes): DetailsPanel {
  // The level and run of the node shown: the selection's (a stage level of
  // a GE run is not the node's layer level).
  const where = (): { level: string; run: number } | null => {
    const s = store.state.selection;
    return s && s.kind === 'node' ? { level: s.level, run: s.run ?? store.state.panes[0].run } : null;
  };
  const panel = new DetailsPanel(root, {
    openNode: (level, id) => store.dispatch({ type: 'select', selection: { kind: 'node', level, id, run: store.state.panes[0].run }, source: 'details' }),
    openTask: (id) => store.dispatch({ type: 'select', selection: { kind: 'task', ids: [id] }, source: 'details' }),
    peek: (name, place) => {
      const w = where();
      return api && w ? peekButton(api, w.run, w.level, name, place) : null;
    },
    star: (d) => {
      const w = where();
      return bookmarks && w ? bookmarks.star({ level: w.level, id: d.id, name: d.name, op: d.op_type }) : null;
    },
    note: (d) => {
      const w = where();
      return notes && w ? notes.editor({ level: w.level, id: d.id, name: d.name, op: d.op_type }) : null;
    },
  });
  // The shown node's probes, when its run and level have a probe store
  // (asked again when a re-run changed the store).
  let probeSeq = 0;
  const storeOf = (s: AppState): boolean => {
    const w = where();
    const d = w ? s.probeData[probeKey(w.run, w.level)]?.data : null;
    return !!d && d.store !== null && d.runs.length > 0;
  };
  const showProbes = (s: AppState): void => {
    const c = s.details.content, w = where();
    const place = root.querySelector<HTMLElement>('.probes-place');
    if (!api || c.kind !== 'node' || !w || !place || !storeOf(s)) return;
    const seq = ++probeSeq;
    place.dataset.state = 'loading';
    api.probeNode(w.run, w.level, c.node.id).then((data) => {
      if (seq !== probeSeq) return;
      place.textContent = '';
      place.append(el('h3', undefined, `Probes (${data.probes.length})`), probeSection(data));
      place.dataset.state = 'ready';
    }, (e: Error) => {
      if (seq !== probeSeq) return;
      place.textContent = '';
      place.append(el('div', 'error', e.message));
      place.dataset.state = 'error';
    });
  };
  const render = (s: AppState, prev: AppState | null): void => {
    const probesChanged = !!prev && (s.probeVersion !== prev.probeVersion || storeOf(s) !== storeOf(prev));
    if (prev && s.details === prev.details && !probesChanged) return;
    if (!prev || s.details.content !== prev.details.content) {
      panel.show(s.details.content);
      showProbes(s);
    } else if (probesChanged) {
      showProbes(s);
    }
    root.classList.toggle('loading', s.details.loading);
  };
  store.subscribe(render);
  render(store.state, null);
  return panel;
}

export class DetailsPanel {
  constructor(private readonly root: HTMLElement, private readonly links: DetailsLinks) {}

  show(c: DetailsContent): void {
    switch (c.kind) {
      case 'empty': this.clear(c.message); break;
      case 'error': this.showError(c.message); break;
      case 'node': this.showNode(c.node); break;
      case 'task': this.showTask(c.task, c.originNs); break;
      case 'op_type': this.showOpType(c.opType, c.row); break;
      case 'finding': this.showFinding(c.finding, c.nodes, c.tasks); break;
      case 'range': this.showRange(c.summary, c.startNs, c.endNs, c.originNs); break;
      case 'group': this.showGroup(c.group); break;
    }
  }

  clear(message = 'Click a node to see its details.'): void {
    this.root.textContent = '';
    this.root.append(el('div', 'muted', message));
  }

  showError(message: string): void {
    this.root.textContent = '';
    this.root.append(el('div', 'error', message));
  }

  private nodeLink(level: string, r: NodeRef): HTMLElement {
    const a = el('a', 'node-link');
    a.append(midName(r.name), ` (${r.op_type})`);
    a.title = `${r.name} (${r.op_type})`;
    a.href = '#';
    a.dataset.level = level;
    a.dataset.node = String(r.id);
    a.addEventListener('click', (e) => { e.preventDefault(); this.links.openNode(level, r.id); });
    return a;
  }

  showNode(d: NodeDetails): void {
    const root = this.root;
    root.textContent = '';
    const head = el('div', 'details-head');
    const chip = el('span', 'chip');
    chip.style.background = rgbCss(opColor(d.op_type));
    head.append(chip, el('span', 'op-type', d.op_type));
    if (d.status) head.append(el('span', `status status-${d.status.replace(/\W+/g, '_')}`, d.status));
    const star = this.links.star?.(d);
    if (star) head.append(star);
    const name = el('div', 'node-name');
    name.append(midName(d.name, 'mid', 40));
    root.append(head, name);
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
    // What the CANN profiler measured (l2_cache.csv, static_op_mem.csv /
    // operator_memory.csv), named by its source.
    if (d.l2_tasks) {
      const rate = (v: number | null | undefined): string => (v === null || v === undefined ? 'N/A' : `${(v * 100).toFixed(1)}%`);
      info.push(['L2 hit rate', `${rate(d.l2_hit_rate)} (victim ${rate(d.l2_victim_rate)}, ${d.l2_tasks} task(s), l2_cache)`]);
    }
    if (d.measured_memory_bytes !== undefined) {
      info.push(['measured memory', `${fmtBytes(d.measured_memory_bytes)} (${d.measured_memory_source ?? 'profiler'})`]);
    }
    root.append(table(info));
    const note = this.links.note?.(d);
    if (note) root.append(note);
    // Filled by the panel's component when the run has probes.
    root.append(el('div', 'probes-place'));
    if (d.attributes?.length) {
      section(root, `Attributes (${d.attributes.length})`, table(d.attributes.map((a) => [a.name, fmtValue(a.value)])));
    }
    // A layout column only when some tensor has one (Ascend graphs):
    // "NC1HWC0 (NCHW [1,3,224,224])" = the compiler's layout and the
    // framework's format and shape.
    const layoutOf = (v: ValueInfo): string =>
      v.layout ? v.layout + (v.origin_layout || v.origin_shape ? ` (${[v.origin_layout, v.origin_shape].filter(Boolean).join(' ')})` : '') : '';
    // Names elided in the middle, types and shapes kept whole on one line;
    // a weight gets a "values" button (its peek opens in a row below).
    const values = (vs: ValueInfo[]): HTMLTableElement => {
      const withLayout = vs.some((v) => v.layout);
      const t = el('table', 'values');
      const head = el('tr');
      for (const h of withLayout ? ['name', 'dtype', 'shape', 'layout'] : ['name', 'dtype', 'shape']) head.append(el('th', h === 'name' ? undefined : 'nw', h));
      t.append(head);
      for (const v of vs) {
        const tr = el('tr');
        const nm = el('td', 'nm');
        const box = el('div', 'nm-box');
        box.append(midName(v.name));
        if (v.missing) {
          // The graph's fault: no node, graph input or initializer provides it.
          const mark = el('span', 'missing-input', 'missing');
          mark.title = 'produced by no node, graph input or initializer';
          box.append(mark);
        }
        nm.append(box);
        tr.append(nm, el('td', 'nw', v.dtype || ''), el('td', 'nw', fmtShape(v.shape)));
        if (withLayout) tr.append(el('td', 'nw', layoutOf(v)));
        t.append(tr);
        if (v.initializer) {
          const place = el('div');
          place.hidden = true;
          const b = this.links.peek?.(v.name, place);
          if (b) {
            box.append(b);
            const row = el('tr', 'peek-row');
            const cell = el('td');
            cell.colSpan = withLayout ? 4 : 3;
            cell.append(place);
            row.append(cell);
            t.append(row);
          }
        }
      }
      return t;
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
  showFinding(f: FindingJson, nodes: number, tasks: number): void {
    const root = this.root;
    root.textContent = '';
    root.append(el('div', 'details-head', `Finding · ${f.severity}`), el('div', 'node-name', `${f.title ? f.title + ' · ' : ''}${f.rule}`),
      el('p', undefined, f.message));
    if (f.suggestion) section(root, 'Suggestion', el('p', undefined, f.suggestion));
    root.append(el('div', 'muted', `evidence: ${nodes} node(s), ${tasks} task(s), highlighted in the graph and the timeline`));
  }

  /** An op type (from the summary or mapping): its row of the summary, when given. */
  showOpType(op: string, row: SummaryOpType | null): void {
    const root = this.root;
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

  showGroup(g: GroupInfo): void {
    const root = this.root;
    root.textContent = '';
    root.append(el('div', 'details-head', g.kindName), el('div', 'node-name', g.path));
    const rows: string[][] = [['group', String(g.group)], ['nodes', String(g.nodes)], ['state', g.expanded ? 'expanded' : 'collapsed']];
    if (g.sameAs !== null) rows.push(['same as', g.sameAs]);
    if (g.topOps.length) rows.push(['top ops', g.topOps.join(', ')]);
    root.append(table(rows), el('div', 'muted', g.expanded ? 'Double-click the frame header to collapse.' : 'Double-click to expand.'));
  }
}
