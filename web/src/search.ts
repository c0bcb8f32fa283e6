// Search box and results list: text / glob / regex / op modes, answered by
// the server (/search); picking a result hands its NodeId to the app, which
// reveals (expands the collapsed groups around it), centres and selects it.

import type { Api, NodeRef, SearchMode } from './api';
import { opColor, rgbCss } from './palette';

export interface SearchHost {
  api: Api;
  run(): number;
  level(): string;
  pick(id: number): void;
  /** Called with the ids of all matches (to highlight), or [] when cleared. */
  matched(ids: number[]): void;
  error(message: string): void;
}

export class Search {
  private seq = 0;
  private matches: NodeRef[] = [];

  constructor(
    private readonly input: HTMLInputElement,
    private readonly mode: HTMLSelectElement,
    private readonly results: HTMLElement,
    private readonly host: SearchHost,
  ) {
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') void this.run();
      if (e.key === 'Escape') { input.value = ''; this.clear(); }
    });
    mode.addEventListener('change', () => { if (input.value) void this.run(); });
  }

  clear(): void {
    this.matches = [];
    this.results.textContent = '';
    this.host.matched([]);
  }

  /** Runs a search (also from the legend: op mode). */
  async run(q?: string, mode?: SearchMode): Promise<void> {
    if (q !== undefined) this.input.value = q;
    if (mode !== undefined) this.mode.value = mode;
    const query = this.input.value.trim();
    if (!query) { this.clear(); return; }
    const seq = ++this.seq;
    this.results.textContent = 'searching…';
    try {
      const r = await this.host.api.search(this.host.run(), this.host.level(), query, this.mode.value as SearchMode);
      if (seq !== this.seq) return;
      this.matches = r.matches;
      this.render(r.total);
      this.host.matched(r.matches.map((m) => m.id));
    } catch (e) {
      if (seq !== this.seq) return;
      this.results.textContent = '';
      const div = document.createElement('div');
      div.className = 'error';
      div.textContent = (e as Error).message;
      this.results.append(div);
      this.host.matched([]);
    }
  }

  private render(total: number): void {
    const root = this.results;
    root.textContent = '';
    const head = document.createElement('div');
    head.className = 'muted';
    head.textContent = total === 0 ? 'no matches' : total > this.matches.length ? `${total} matches, first ${this.matches.length}` : `${total} match${total === 1 ? '' : 'es'}`;
    root.append(head);
    const list = document.createElement('ul');
    list.className = 'results';
    // Long lists: only the first 300 rows get DOM; the rest stay reachable by refining the query.
    for (const m of this.matches.slice(0, 300)) {
      const li = document.createElement('li');
      li.className = 'result';
      li.dataset.node = String(m.id);
      const chip = document.createElement('span');
      chip.className = 'chip';
      chip.style.background = rgbCss(opColor(m.op_type));
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = m.name;
      const op = document.createElement('span');
      op.className = 'op';
      op.textContent = m.op_type;
      li.append(chip, name, op);
      li.addEventListener('click', () => {
        for (const x of list.querySelectorAll('.active')) x.classList.remove('active');
        li.classList.add('active');
        this.host.pick(m.id);
      });
      list.append(li);
    }
    root.append(list);
  }
}
