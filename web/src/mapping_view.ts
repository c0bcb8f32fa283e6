// Mapping view: one row per compiled node (framework nodes when the run has
// no compiled graph) with the framework ops it replaced (fused_from), its
// tasks (count, total time, streams, kernel names) and status, plus a row per
// distinct unlinked task name. Virtualised: only the rows in sight (and a
// few around) are DOM nodes; rows arrive in pages from GET /mapping as the
// user scrolls, and sorting and filtering are the server's (sort=, q=,
// status=), so a million-task run costs the same as a small one.
// Clicking a cell selects its object everywhere: the node cell selects the
// node, a fused_from entry the framework node, the op type cell the op type,
// the tasks / time / streams / kernels cells the row's tasks.

import type { Api, MappingPage, MappingRow, MappingSort } from './api';
import { fmtNs } from './details_panel';
import { opColor, rgbCss } from './palette';

export interface MappingHost {
  readonly api: Api;
  selectNode(level: string, id: number): void;
  /** All tasks of a node row (the app asks the server for them). */
  selectNodeTasks(level: string, id: number): void;
  selectTasks(ids: number[]): void;
  selectOpType(op: string): void;
  error(message: string): void;
}

/** Rows highlighted because of the current selection. */
export interface MappingHighlight {
  nodes: ReadonlySet<number>;
  tasks: ReadonlySet<number>;
  opType: string | null;
}

interface Column { key: string; title: string; sort: MappingSort | null; numeric: boolean }

const kColumns: Column[] = [
  { key: 'node', title: 'node', sort: 'name', numeric: false },
  { key: 'op_type', title: 'op type', sort: 'op_type', numeric: false },
  { key: 'status', title: 'status', sort: 'status', numeric: false },
  { key: 'fused_from', title: 'fused from', sort: null, numeric: false },
  { key: 'tasks', title: 'tasks', sort: 'task_count', numeric: true },
  { key: 'total', title: 'total time', sort: 'total_ns', numeric: true },
  { key: 'streams', title: 'streams', sort: 'streams', numeric: true },
  { key: 'kernels', title: 'kernel names', sort: null, numeric: false },
];

export const kMappingRowHeight = 24;
const kPageSize = 100;
/** Rows kept in the DOM beyond the visible ones, each side. */
const kOverscan = 10;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export class MappingView {
  private run = -1;
  private sort: MappingSort = 'total_ns';
  private desc = true;
  private query = '';
  private status = '';
  /** Pages by index; a promise while loading. */
  private readonly pages = new Map<number, MappingRow[] | Promise<void>>();
  /** Bumped when the query changes; answers of an older query are dropped. */
  private generation = 0;
  total = 0;
  level = '';
  private highlight: MappingHighlight = { nodes: new Set(), tasks: new Set(), opType: null };
  private readonly head: HTMLElement;
  private readonly viewport: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly rowsEl: HTMLElement;
  private readonly info: HTMLElement;
  private pendingRender = false;
  /** Page requests made (tests: scrolling fetches pages on demand). */
  pageRequests = 0;

  constructor(root: HTMLElement, private readonly host: MappingHost) {
    root.classList.add('mapping-view');
    const bar = el('div', 'view-bar');
    const filter = el('input', 'mapping-filter');
    filter.type = 'search';
    filter.placeholder = 'filter by name, op type or kernel';
    filter.spellcheck = false;
    let timer = 0;
    filter.addEventListener('input', () => {
      clearTimeout(timer);
      timer = window.setTimeout(() => this.setQuery(filter.value.trim(), this.status), 200);
    });
    const status = el('select', 'mapping-status');
    status.title = 'status filter';
    for (const [v, t] of [['', 'any status'], ['executed', 'executed'], ['fused', 'fused'], ['not_executed', 'not executed'],
      ['inserted', 'inserted'], ['unlinked', 'unlinked tasks']]) {
      const o = el('option', undefined, t);
      o.value = v;
      status.append(o);
    }
    status.addEventListener('change', () => this.setQuery(this.query, status.value));
    this.info = el('span', 'muted mapping-info');
    bar.append(filter, status, this.info);
    this.head = el('div', 'mapping-row mapping-head');
    for (const c of kColumns) {
      const h = el('div', `cell col-${c.key}${c.numeric ? ' num' : ''}`, c.title);
      h.dataset.col = c.key;
      if (c.sort) {
        h.classList.add('sortable');
        h.title = `sort by ${c.title} (the server sorts; click again to reverse)`;
        h.addEventListener('click', () => this.setSort(c.sort!, this.sort === c.sort ? !this.desc : c.numeric));
      } else {
        h.title = 'the server cannot sort by this column';
      }
      this.head.append(h);
    }
    this.viewport = el('div', 'mapping-viewport');
    this.spacer = el('div', 'mapping-spacer');
    this.rowsEl = el('div', 'mapping-rows');
    this.viewport.append(this.spacer, this.rowsEl);
    this.viewport.addEventListener('scroll', () => this.requestRender());
    root.append(bar, this.head, this.viewport);
    this.renderHead();
  }

  get sortKey(): MappingSort { return this.sort; }
  get sortDesc(): boolean { return this.desc; }

  /** Shows run `run` (again: drops what was loaded). */
  open(run: number): void {
    this.run = run;
    this.reset();
  }

  setSort(sort: MappingSort, desc: boolean): void {
    this.sort = sort;
    this.desc = desc;
    this.renderHead();
    this.reset();
  }

  setQuery(q: string, status: string): void {
    if (q === this.query && status === this.status) return;
    this.query = q;
    this.status = status;
    this.reset();
  }

  setHighlight(h: MappingHighlight): void {
    this.highlight = h;
    this.requestRender();
  }

  /** Call when the view becomes visible or changes size. */
  resize(): void { this.requestRender(); }

  /** Rows currently in the DOM (tests: virtualisation). */
  domRowCount(): number { return this.rowsEl.childElementCount; }

  /** The loaded row at `index`, if its page is here. */
  rowAt(index: number): MappingRow | null {
    const p = this.pages.get(Math.floor(index / kPageSize));
    return Array.isArray(p) ? p[index % kPageSize] ?? null : null;
  }

  /** Resolves when the page holding `index` is loaded (tests, deep links). */
  async ensureRow(index: number): Promise<MappingRow | null> {
    await this.loadPage(Math.floor(index / kPageSize));
    return this.rowAt(index);
  }

  /** Scrolls so that row `index` is in sight. */
  scrollToRow(index: number): void {
    const top = index * kMappingRowHeight, h = this.viewport.clientHeight;
    if (top < this.viewport.scrollTop || top + kMappingRowHeight > this.viewport.scrollTop + h) {
      this.viewport.scrollTop = Math.max(0, top - h / 3);
    }
    this.requestRender();
  }

  private reset(): void {
    this.generation++;
    this.pages.clear();
    this.total = 0;
    this.viewport.scrollTop = 0;
    if (this.run < 0) return;
    void this.loadPage(0).then(() => this.requestRender());
  }

  private renderHead(): void {
    for (const h of Array.from(this.head.children) as HTMLElement[]) {
      const c = kColumns.find((x) => x.key === h.dataset.col)!;
      h.classList.toggle('sorted', c.sort === this.sort);
      h.textContent = c.title + (c.sort === this.sort ? (this.desc ? ' ▼' : ' ▲') : '');
    }
  }

  private loadPage(page: number): Promise<void> {
    const have = this.pages.get(page);
    if (Array.isArray(have)) return Promise.resolve();
    if (have) return have;
    const gen = this.generation;
    this.pageRequests++;
    const p = this.host.api.mapping(this.run, {
      offset: page * kPageSize, limit: kPageSize, sort: this.sort, desc: this.desc, q: this.query, status: this.status ? [this.status] : [],
    }).then((r: MappingPage) => {
      if (gen !== this.generation) return;
      this.total = r.total;
      this.level = r.level;
      this.pages.set(page, r.rows);
      this.requestRender();
    }, (e: Error) => {
      if (gen !== this.generation) return;
      this.pages.delete(page);
      this.info.textContent = '';
      this.host.error(`mapping: ${e.message}`);
    });
    this.pages.set(page, p);
    return p;
  }

  private requestRender(): void {
    if (this.pendingRender) return;
    this.pendingRender = true;
    requestAnimationFrame(() => { this.pendingRender = false; this.render(); });
  }

  private render(): void {
    this.spacer.style.height = `${this.total * kMappingRowHeight}px`;
    this.info.textContent = this.run < 0 ? '' : `${this.total} rows${this.level ? ` · ${this.level} nodes` : ''}`;
    const h = this.viewport.clientHeight;
    if (!h || !this.total) { this.rowsEl.textContent = ''; return; }
    const first = Math.max(0, Math.floor(this.viewport.scrollTop / kMappingRowHeight) - kOverscan);
    const last = Math.min(this.total - 1, Math.ceil((this.viewport.scrollTop + h) / kMappingRowHeight) + kOverscan);
    for (let pg = Math.floor(first / kPageSize); pg <= Math.floor(last / kPageSize); ++pg) void this.loadPage(pg);
    this.rowsEl.style.transform = `translateY(${first * kMappingRowHeight}px)`;
    const frag = document.createDocumentFragment();
    for (let i = first; i <= last; ++i) frag.append(this.renderRow(i, this.rowAt(i)));
    this.rowsEl.replaceChildren(frag);
  }

  private isHighlighted(r: MappingRow): boolean {
    const h = this.highlight;
    if (r.node && h.nodes.has(r.node.id)) return true;
    if (r.fused_from.some((f) => h.nodes.has(f.id))) return true;
    if (h.opType !== null && r.op_type === h.opType) return true;
    return r.first_task !== null && h.tasks.has(r.first_task) && r.kind === 'unlinked';
  }

  private renderRow(index: number, r: MappingRow | null): HTMLElement {
    const row = el('div', 'mapping-row');
    row.dataset.index = String(index);
    if (!r) {
      row.classList.add('pending');
      row.append(el('div', 'cell muted', '…'));
      return row;
    }
    if (r.kind === 'unlinked') row.classList.add('unlinked');
    if (this.isHighlighted(r)) row.classList.add('selected');
    if (r.node) row.dataset.node = String(r.node.id);
    const cell = (key: string, text: string, title = text): HTMLElement => {
      const c = el('div', `cell col-${key}`, text);
      c.dataset.col = key;
      c.title = title;
      row.append(c);
      return c;
    };
    const name = cell('node', r.name);
    if (r.node) {
      const node = r.node;
      name.addEventListener('click', () => this.host.selectNode(node.level, node.id));
    } else if (r.first_task !== null) {
      const t = r.first_task;
      name.addEventListener('click', () => this.host.selectTasks([t]));
      name.title = `${r.name}: unlinked task(s); click selects the first`;
    }
    const op = cell('op_type', r.op_type);
    if (r.op_type) {
      const chip = el('span', 'chip');
      chip.style.background = rgbCss(opColor(r.op_type));
      op.prepend(chip);
      op.addEventListener('click', () => this.host.selectOpType(r.op_type));
    }
    cell('status', r.status.replace(/_/g, ' ')).classList.add(`status-${r.status}`);
    const ff = cell('fused_from', '', r.fused_from.map((f) => `${f.name} (${f.op_type})`).join('\n'));
    for (const f of r.fused_from) {
      const a = el('span', 'ff-link', f.name);
      a.dataset.node = String(f.id);
      a.addEventListener('click', (e) => { e.stopPropagation(); this.host.selectNode('framework', f.id); });
      ff.append(a);
    }
    const selectTasks = (): void => {
      if (r.node) this.host.selectNodeTasks(r.node.level, r.node.id);
      else if (r.first_task !== null) this.host.selectTasks([r.first_task]);
    };
    const numeric = (key: string, text: string): void => {
      const c = cell(key, text);
      c.classList.add('num');
      if (r.task_count > 0) c.addEventListener('click', selectTasks);
    };
    numeric('tasks', String(r.task_count));
    numeric('total', r.task_count ? fmtNs(r.total_ns) : '');
    numeric('streams', r.streams.join(', '));
    const k = cell('kernels', r.kernels.join(', '));
    if (r.task_count > 0) k.addEventListener('click', selectTasks);
    return row;
  }
}
