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
// A selection made elsewhere marks its rows and, once per selection, asks the
// server where the row holding its node or task is (find_node= / find_task=
// -> found_index) and scrolls it to the centre, loading its page; later
// scrolling is the user's. A row the filter drops gets a note in the bar.

import { fmtNs } from '../../base/format';
import type { Stats } from '../../base/stats';
import { opColor, rgbCss } from '../../base/palette';
import type { ApiClient, MappingPage, MappingRow, MappingSort } from '../../rpc/api';
import { el, midName } from '../../widgets/dom';

export interface MappingHost {
  readonly api: ApiClient;
  readonly stats: Stats;
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

/** What the table shows (the debug surface reads it). */
export interface MappingState {
  run: number; total: number; level: string; sort: MappingSort; desc: boolean; query: string; status: string;
  /** The selection's row index in the current order; -1 when hidden by the filters or absent. */
  foundIndex: number;
  /** A locate request (find_node= / find_task=) is in flight. */
  locating: boolean;
  /** Rows in the DOM (virtualised: only those in sight). */
  domRows: number;
}

/** The node or task whose row a selection should bring into sight. */
export interface MappingTarget { node?: number; task?: number }

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
  private readonly findNote: HTMLElement;
  private pendingRender = false;
  /** The selection's row to locate; `scrollPending` until it was scrolled to once. */
  private target: MappingTarget | null = null;
  private scrollPending = false;
  /** Bumped per locate request (older answers are dropped). */
  private locateSeq = 0;
  /** Bumped when the user scrolls by hand: a locate answer then does not scroll. */
  private userScrolls = 0;
  /** The target's row index in the current order, -1 when hidden or absent. */
  private foundIndex = -1;
  private locating = false;

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
    this.findNote = el('span', 'muted mapping-find-note', 'selected row hidden by the filter');
    this.findNote.title = 'the selection\'s row does not match the filter or status; clear them to see it';
    this.findNote.hidden = true;
    bar.append(filter, status, this.info, this.findNote);
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
    for (const ev of ['wheel', 'pointerdown', 'keydown'] as const) {
      this.viewport.addEventListener(ev, () => { this.userScrolls++; }, { passive: true });
    }
    root.append(bar, this.head, this.viewport);
    this.renderHead();
  }

  get state(): MappingState {
    return {
      run: this.run, total: this.total, level: this.level, sort: this.sort, desc: this.desc, query: this.query, status: this.status,
      foundIndex: this.foundIndex, locating: this.locating, domRows: this.rowsEl.childElementCount,
    };
  }

  /** Shows run `run` (again: drops what was loaded). */
  open(run: number): void {
    this.run = run;
    this.scrollPending = this.target !== null;
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

  /**
   * Marks the rows of a selection; with a `target`, brings its row into
   * sight once (now, or when the view is next shown).
   */
  setHighlight(h: MappingHighlight, target: MappingTarget | null = null): void {
    this.highlight = h;
    this.target = target;
    this.scrollPending = target !== null;
    this.locateSeq++;
    this.locating = false;
    this.foundIndex = -1;
    this.findNote.hidden = true;
    this.maybeLocate();
    this.requestRender();
  }

  /** Call when the view becomes visible or changes size. */
  resize(): void {
    this.maybeLocate();
    this.requestRender();
  }

  /** The loaded row at `index`, if its page is here. */
  rowAt(index: number): MappingRow | null {
    const p = this.pages.get(Math.floor(index / kPageSize));
    return Array.isArray(p) ? p[index % kPageSize] ?? null : null;
  }

  /** Centres row `index` unless it is already wholly in sight. */
  private centreRow(index: number): void {
    const top = index * kMappingRowHeight, h = this.viewport.clientHeight;
    if (top >= this.viewport.scrollTop && top + kMappingRowHeight <= this.viewport.scrollTop + h) return;
    // The spacer must be tall enough first, or the browser clamps scrollTop.
    this.spacer.style.height = `${this.total * kMappingRowHeight}px`;
    this.viewport.scrollTop = Math.max(0, top - (h - kMappingRowHeight) / 2);
    this.requestRender();
  }

  /** Locates the target now if it still waits to be scrolled to and the view can show it. */
  private maybeLocate(): void {
    if (!this.scrollPending || !this.target || this.run < 0 || !this.viewport.clientHeight) return;
    this.scrollPending = false;
    this.locate(true);
  }

  /** Asks the server for the target's row index (no rows); scrolls there if `scroll`. */
  private locate(scroll: boolean): void {
    const target = this.target;
    if (!target || this.run < 0) return;
    const seq = ++this.locateSeq, gen = this.generation, userScrolls = this.userScrolls;
    this.locating = true;
    void this.host.api.mapping(this.run, {
      offset: 0, limit: 0, sort: this.sort, desc: this.desc, q: this.query, status: this.status ? [this.status] : [],
      findNode: target.node, findTask: target.node === undefined ? target.task : undefined,
    }).then((r: MappingPage) => {
      if (seq !== this.locateSeq || gen !== this.generation) return;
      this.locating = false;
      this.total = r.total;
      this.foundIndex = r.found_index ?? -1;
      this.findNote.hidden = !(this.foundIndex < 0 && (this.query !== '' || this.status !== ''));
      if (scroll && this.foundIndex >= 0 && userScrolls === this.userScrolls) this.centreRow(this.foundIndex);
      this.requestRender();
    }, (e: Error) => {
      if (seq !== this.locateSeq) return;
      this.locating = false;
      this.host.error(`mapping: ${e.message}`);
    });
  }

  private reset(): void {
    this.generation++;
    this.locating = false;
    this.pages.clear();
    this.total = 0;
    this.viewport.scrollTop = 0;
    this.foundIndex = -1;
    this.findNote.hidden = true;
    if (this.run < 0) return;
    void this.loadPage(0).then(() => this.requestRender());
    // The selection's row under the new order or filter: scrolled to only
    // when still pending (the view was just opened), else just the note.
    if (this.target) {
      if (this.scrollPending) this.maybeLocate();
      else this.locate(false);
    }
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
    this.host.stats.count('mapping.page_requests');
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
    // The node name elided in the middle: its start and its end stay readable.
    const name = cell('node', '', r.name);
    name.append(midName(r.name));
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
