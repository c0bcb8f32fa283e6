// The model-properties panel (as Netron has it): what the main pane's level
// says about itself (GET .../properties): file and format, producer,
// opsets, the ONNX header (IR version, model version, domain, doc string,
// metadata_props) or a GE model's name, version and attributes; the graph's
// inputs and outputs with their types; its weights with shapes and sizes,
// each with a peek at its values on demand (values_peek.ts). Fetched when
// the main pane's run or level changes.

import { fmtBytes } from '../base/format';
import type { ApiClient, ModelProperties, PropValue } from '../rpc/api';
import type { AppState } from '../core/state';
import type { StoreApi } from '../core/store';
import { el, midName } from '../widgets/dom';
import { peekButton } from './values_peek';

/** Weights listed at once (the filter finds the others). */
const kMaxWeightRows = 200;

function kvTable(rows: [string, string | Node][]): HTMLTableElement {
  const t = el('table', 'kv');
  for (const [k, v] of rows) {
    const tr = el('tr');
    const td = el('td', 'nm');
    td.append(v);
    tr.append(el('td', undefined, k), td);
    t.append(tr);
  }
  return t;
}

function part(title: string, body: Node, open = false): HTMLDetailsElement {
  const d = el('details', 'model-part');
  d.open = open;
  d.append(el('summary', undefined, title), body);
  return d;
}

function valueTable(vs: PropValue[]): HTMLElement {
  if (!vs.length) return el('div', 'muted', 'none listed by the graph');
  const t = el('table');
  const head = el('tr');
  head.append(el('th', undefined, 'name'), el('th', 'nw', 'type'));
  t.append(head);
  for (const v of vs) {
    const tr = el('tr');
    const nm = el('td', 'nm');
    nm.append(midName(v.name));
    const ty = el('td', 'nw', v.type);
    if (v.layout) ty.title = `layout ${v.layout}${v.origin_layout ? `, framework ${v.origin_layout} ${v.origin_shape ?? ''}` : ''}`;
    tr.append(nm, ty);
    t.append(tr);
  }
  return t;
}

export class ModelPanel {
  private key = '';

  constructor(private readonly root: HTMLElement, store: StoreApi, private readonly api: ApiClient) {
    store.subscribe((s) => this.update(s));
    this.update(store.state);
  }

  private update(s: AppState): void {
    const main = s.panes[0];
    const run = s.runs[main.run];
    const level = main.level;
    const key = run && level && run.levels.includes(level) ? `${main.run}\n${level}` : '';
    if (key === this.key) return;
    this.key = key;
    this.root.textContent = '';
    if (!key) {
      this.root.append(el('div', 'muted', run ? 'This run has no graph.' : ''));
      return;
    }
    this.root.append(el('div', 'muted', 'loading…'));
    this.api.properties(main.run, level).then((p) => {
      if (this.key === key) this.show(p, main.run);
    }, (e: Error) => {
      if (this.key !== key) return;
      this.root.textContent = '';
      this.root.append(el('div', 'error', e.message));
    });
  }

  private show(p: ModelProperties, run: number): void {
    const root = this.root;
    root.textContent = '';
    root.dataset.level = p.level;
    const opsets = p.opset_imports.map((o) => `${o.domain || 'ai.onnx'} ${o.version}`).join(', ');
    const line = [p.format, p.producer, opsets ? `opset ${opsets}` : '', `${p.nodes} nodes`,
      p.initializer_count ? `${p.initializer_count} weights (${fmtBytes(p.initializer_bytes)})` : ''].filter(Boolean).join(' · ');
    root.append(el('div', 'model-summary', line));

    const props: [string, string | Node][] = [['graph', midName(p.graph || '(unnamed)')], ['file', midName(p.file)], ['format', p.format || '?']];
    if (p.producer) props.push(['producer', p.producer]);
    if (p.onnx) {
      props.push(['IR version', String(p.onnx.ir_version)]);
      if (p.onnx.domain) props.push(['domain', p.onnx.domain]);
      if (p.onnx.model_version) props.push(['model version', String(p.onnx.model_version)]);
    }
    if (opsets) props.push(['opsets', opsets]);
    props.push(['nodes', String(p.nodes)]);
    const meta = [...p.metadata, ...(p.onnx?.metadata_props ?? [])];
    for (const m of meta) props.push([m.key, midName(m.value, 'mid', 40)]);
    const propTable = kvTable(props);
    propTable.classList.add('model-props');
    const propBody = el('div');
    propBody.append(propTable);
    if (p.onnx?.doc_string) propBody.append(el('div', 'doc-string', p.onnx.doc_string));
    root.append(part('Properties', propBody, true));
    root.append(part(`Inputs (${p.inputs.length})`, valueTable(p.inputs), true));
    root.append(part(`Outputs (${p.outputs.length})`, valueTable(p.outputs), true));
    if (p.initializers.length) root.append(part(`Weights (${p.initializer_count}, ${fmtBytes(p.initializer_bytes)})`, this.weights(p, run)));
  }

  /** The weights: name, type, size; a filter; "values" peeks at one. */
  private weights(p: ModelProperties, run: number): HTMLElement {
    const box = el('div', 'weights');
    const filter = el('input', 'weights-filter');
    filter.type = 'search';
    filter.placeholder = 'filter weights by name';
    const t = el('table', 'weights-table');
    const draw = (): void => {
      t.textContent = '';
      const q = filter.value.toLowerCase();
      const rows = p.initializers.filter((w) => !q || w.name.toLowerCase().includes(q));
      for (const w of rows.slice(0, kMaxWeightRows)) {
        const tr = el('tr');
        tr.dataset.weight = w.name;
        const nm = el('td', 'nm');
        nm.append(midName(w.name));
        const act = el('td', 'nw');
        const place = el('div');
        place.hidden = true;
        if (p.values_readable) act.append(peekButton(this.api, run, p.level, w.name, place));
        tr.append(nm, el('td', 'nw', w.type), el('td', 'nw', fmtBytes(w.bytes)), act);
        const peekRow = el('tr', 'peek-row');
        const cell = el('td');
        cell.colSpan = 4;
        cell.append(place);
        peekRow.append(cell);
        t.append(tr, peekRow);
      }
      if (rows.length > kMaxWeightRows) {
        const tr = el('tr');
        const td = el('td', 'muted', `${rows.length - kMaxWeightRows} more; filter by name`);
        td.colSpan = 4;
        tr.append(td);
        t.append(tr);
      }
    };
    filter.addEventListener('input', draw);
    draw();
    box.append(filter, t);
    if (!p.values_readable) box.append(el('div', 'muted', `Values are read from binary ONNX files; this level comes from ${p.format || 'another format'}.`));
    return box;
  }
}
