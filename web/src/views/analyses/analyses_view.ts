// The generic analysis view: every analysis the server registers
// (GET /analysis-list) in a picker, its parameters as a form, and its result
// (GET /analyses/{id}) laid out as tables by base/result_tables.ts, so a
// new analysis is visible the moment it is registered, before (or without)
// a view of its own. Task ids in the tables ("task", "*_task" columns)
// select their task.

import type { AnalysisInfo, ApiClient } from '../../rpc/api';
import { headerOf, resultBlocks, type ResultBlock, type ResultCell } from '../../base/result_tables';
import { el } from '../../widgets/dom';

export interface AnalysesHost {
  api: ApiClient;
  selectTask(id: number): void;
}

/** What the view shows (read by the tests through the debug surface). */
export interface AnalysesState {
  run: number;
  /** The registered analyses of the run, once listed. */
  list: AnalysisInfo[];
  /** The analysis picked, and the parameters its result was asked with. */
  id: string | null;
  params: Record<string, string>;
  busy: boolean;
  error: string | null;
  /** The result shown (the server's JSON), null while none. */
  result: unknown;
  /** Results received so far (each Run adds one). */
  results: number;
}

export class AnalysesView {
  readonly state: AnalysesState = { run: -1, list: [], id: null, params: {}, busy: false, error: null, result: null, results: 0 };
  private readonly picker = el('select', 'analysis-picker');
  private readonly form = el('span', 'analysis-params');
  private readonly runButton = el('button', undefined, 'Run');
  private readonly head = el('div', 'analysis-head');
  private readonly body = el('div', 'analysis-body');
  private inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
  private seq = 0;
  private blocksShown: ResultBlock[] = [];

  constructor(root: HTMLElement, tools: HTMLElement, private readonly host: AnalysesHost) {
    root.classList.add('analyses-view');
    root.append(this.head, this.body);
    this.picker.title = 'the analysis (docs/reference/analyses.md)';
    this.runButton.title = 'run the analysis with these parameters';
    tools.append(this.picker, this.form, this.runButton);
    this.picker.addEventListener('change', () => this.pick(this.picker.value));
    this.runButton.addEventListener('click', () => void this.run());
    this.form.addEventListener('keydown', (e) => { if (e.key === 'Enter') void this.run(); });
    this.message('Pick an analysis.');
  }

  /** The blocks on screen (tests). */
  blocks(): ResultBlock[] { return this.blocksShown; }

  /** Lists the analyses of run `run` and shows the first that applies. */
  async open(run: number): Promise<void> {
    this.state.run = run;
    this.state.list = [];
    this.state.result = null;
    this.picker.replaceChildren();
    this.message('Loading the analyses…');
    let list: AnalysisInfo[];
    try {
      list = await this.host.api.analysisList(run);
    } catch (e) {
      this.fail(`analyses: ${(e as Error).message}`);
      return;
    }
    if (run !== this.state.run) return;
    this.state.list = list;
    for (const a of list) {
      const o = el('option', undefined, a.applies ? a.title : `${a.title} (needs ${a.needs.join(' and ')})`);
      o.value = a.id;
      o.disabled = !a.applies;
      o.title = a.summary;
      this.picker.append(o);
    }
    const keep = list.find((a) => a.id === this.state.id && a.applies) ?? list.find((a) => a.applies);
    if (!keep) {
      this.message(list.length ? 'No analysis applies to this run.' : 'This server lists no analyses.');
      return;
    }
    this.pick(keep.id);
  }

  /** Shows analysis `id`'s parameter form and runs it with its defaults. */
  pick(id: string): void {
    const a = this.state.list.find((x) => x.id === id);
    if (!a) return;
    this.state.id = id;
    this.picker.value = id;
    this.inputs = new Map();
    this.form.replaceChildren();
    for (const p of a.parameters) {
      const label = el('label', 'analysis-param', `${p.name} `);
      label.title = p.help;
      let input: HTMLInputElement | HTMLSelectElement;
      if (p.choices.length) {
        input = el('select');
        for (const c of p.choices) {
          const o = el('option', undefined, c);
          o.value = c;
          input.append(o);
        }
      } else {
        input = el('input');
        input.size = Math.max(4, Math.min(12, p.default.length + 2));
      }
      input.name = p.name;
      input.value = p.default;
      label.append(input);
      this.form.append(label);
      this.inputs.set(p.name, input);
    }
    void this.run();
  }

  /** Asks for the picked analysis with the form's values (those changed from the defaults). */
  async run(): Promise<void> {
    const a = this.state.list.find((x) => x.id === this.state.id);
    if (!a) return;
    const params: Record<string, string> = {};
    for (const p of a.parameters) {
      const v = this.inputs.get(p.name)?.value ?? p.default;
      if (v !== p.default) params[p.name] = v;
    }
    const seq = ++this.seq;
    this.state.params = params;
    this.state.busy = true;
    this.state.error = null;
    this.head.textContent = `${a.title}: running…`;
    try {
      const result = await this.host.api.runAnalysis(this.state.run, a.id, params);
      if (seq !== this.seq) return;
      this.state.result = result;
      this.state.results++;
      this.show(a, result);
    } catch (e) {
      if (seq !== this.seq) return;
      this.fail(`${a.title}: ${(e as Error).message}`);
    } finally {
      if (seq === this.seq) this.state.busy = false;
    }
  }

  resize(): void { /* tables reflow by themselves */ }

  private message(text: string): void {
    this.head.textContent = '';
    this.blocksShown = [];
    this.body.replaceChildren(el('div', 'tab-message', text));
  }

  private fail(text: string): void {
    this.state.error = text;
    this.state.result = null;
    this.message(text);
    this.body.firstElementChild?.classList.add('analysis-error');
  }

  private show(a: AnalysisInfo, result: unknown): void {
    this.head.replaceChildren(el('span', 'analysis-summary', a.summary));
    this.blocksShown = resultBlocks(result, a.title);
    const out: HTMLElement[] = [];
    for (const b of this.blocksShown) out.push(this.block(b));
    this.body.replaceChildren(...out);
  }

  private block(b: ResultBlock): HTMLElement {
    const box = el('section', 'analysis-block');
    box.dataset.title = b.title;
    box.append(el('h3', undefined, b.title));
    if (b.kind === 'fields') {
      const t = el('table', 'analysis-fields');
      for (const c of b.rows) {
        const tr = el('tr');
        tr.append(el('th', undefined, headerOf(c.key)), this.cell(c, typeof c.value === 'number'));
        t.append(tr);
      }
      box.append(t);
      return box;
    }
    const t = el('table', 'analysis-table');
    const hr = el('tr');
    b.header.forEach((h, i) => {
      const th = el('th', b.numeric[i] ? 'num' : undefined, h);
      th.title = b.keys[i];
      hr.append(th);
    });
    t.append(hr);
    for (const row of b.rows) {
      const tr = el('tr');
      row.forEach((c, i) => tr.append(this.cell(c, b.numeric[i])));
      t.append(tr);
    }
    box.append(t);
    if (b.total > b.rows.length) box.append(el('div', 'muted', `first ${b.rows.length} of ${b.total} rows`));
    return box;
  }

  private cell(c: ResultCell, numeric: boolean): HTMLTableCellElement {
    const td = el('td', numeric ? 'num' : undefined);
    const last = c.key.slice(c.key.lastIndexOf('.') + 1);
    if ((last === 'task' || last.endsWith('_task')) && typeof c.value === 'number') {
      const link = el('a', 'task-link', c.text);
      link.href = '#';
      link.title = `select task ${c.value}`;
      const id = c.value;
      link.addEventListener('click', (e) => { e.preventDefault(); this.host.selectTask(id); });
      td.append(link);
    } else {
      td.textContent = c.text;
    }
    return td;
  }
}
